import numpy as np
from numpy.typing import NDArray

def competition_ranks(
    score: NDArray[np.float64], higher_is_better: bool, rel_tol: float
) -> tuple[NDArray[np.int64], NDArray[np.int64]]: ...

TOPSIS_FAST_MAX_OPTIONS: int

def topsis_vector(
    X: NDArray[np.float64], benefit: bytes, w: NDArray[np.float64], constant: bytes | None
) -> tuple[
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
]: ...
