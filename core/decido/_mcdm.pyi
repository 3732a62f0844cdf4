import numpy as np
from numpy.typing import NDArray

def competition_ranks(
    score: NDArray[np.float64], higher_is_better: bool, rel_tol: float
) -> tuple[NDArray[np.int64], NDArray[np.int64]]: ...
