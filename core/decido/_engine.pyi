from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

def engines() -> list[dict[str, Any]]: ...
def default_engine() -> str: ...
def run(
    engine: str,
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
    objective: Any,
    vectorized: bool,
    maximize: bool,
    max_evaluations: int,
    time_limit: float,
    target: float | None,
    seed: int,
    options: dict[str, float],
    callback: Callable[[dict[str, Any]], Any] | None,
    history_capacity: int,
) -> dict[str, Any]: ...
