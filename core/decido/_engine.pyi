from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

class RunMonitor:
    """Progress and cancellation of a run, from any thread, without the GIL."""

    def __init__(self) -> None: ...
    def stop(self) -> None:
        """Ask the run to stop (thread-safe; idempotent; never waits)."""
    @property
    def stopped(self) -> bool:
        """True once ``stop()`` was called (it stays True)."""
    def progress(self) -> dict[str, Any]:
        """``{"evaluations": int, "iterations": int, "best": float | None,
        "elapsed": float, "running": bool, "hypervolume": float | None,
        "front_size": int}`` from the latest publication."""

MAX_OBJECTIVES: int
DEFAULT_ARCHIVE: int

def engines() -> list[dict[str, Any]]: ...
def default_engine() -> str: ...
def stop_names() -> list[str]: ...
def hypervolume(points: NDArray[np.float64], reference: NDArray[np.float64],
                time_limit: float = 0.0) -> float: ...
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
    monitor: RunMonitor | None = None,
    x0: NDArray[np.float64] | None = None,
    integer: NDArray[np.uint8] | None = None,
    discrete: list[NDArray[np.float64] | None] | None = None,
    constraints: list[Any] | None = None,
    senses: list[int] | None = None,
    constraint_tolerance: float = 0.0,
    n_objectives: int = 0,
    objectives: list[Any] | None = None,
    maximized: NDArray[np.uint8] | None = None,
    reference_point: NDArray[np.float64] | None = None,
    archive_capacity: int = 0,
) -> dict[str, Any]: ...
