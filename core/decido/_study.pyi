from typing import Any

import numpy as np
from numpy.typing import NDArray

MAX_ASK: int
OK: int
FAILED: int
INFEASIBLE: int

class CStudy:
    """One C study (dc_study)."""

    n: int
    m: int

    def __init__(
        self,
        engine: str,
        lower: NDArray[np.float64],
        upper: NDArray[np.float64],
        integer: NDArray[np.uint8] | None,
        discrete: list[NDArray[np.float64] | None] | None,
        log_scale: NDArray[np.uint8] | None,
        n_objectives: int,
        maximized: NDArray[np.uint8] | None,
        seed: int,
        budget: int,
        options: dict[str, float],
        constrained: bool,
    ) -> None: ...
    def ask(self, k: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]: ...
    def tell(self, trial: int, status: int, values: Any, excess: float) -> None: ...
    def tell_point(self, x: NDArray[np.float64], status: int, values: Any,
                   excess: float) -> int: ...
    @property
    def n_trials(self) -> int: ...
    @property
    def best(self) -> int: ...
    @property
    def n_batches(self) -> int: ...
