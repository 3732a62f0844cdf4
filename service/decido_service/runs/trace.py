"""A run's convergence trace: ``[evaluations, elapsed_ms, best]`` at every improvement
(``[evaluations, elapsed_ms, hypervolume]`` for a run of several objectives: its front's).

The engine records ``(evaluations, best)`` at each improvement (its history); the time of
each is not recorded by the engine, so the run's executing worker keeps a time sample
``(evaluations, elapsed_ms)`` at every progress write (every 0.25 s) and at the end, and a
point's ``elapsed_ms`` is interpolated linearly in evaluations between the two samples
around it (exact at a sample; between two samples an engine spends about the same time
per evaluation). A trace longer than :data:`TRACE_POINTS` points is thinned evenly by
index, its first and last points kept.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any, Literal

__all__ = ["COLUMNS", "TRACE_POINTS", "Column", "columns_of", "thin_trace", "timed"]

#: the most points a stored trace keeps (:func:`thin_trace`)
TRACE_POINTS = 1000
#: the name of a trace point's column
Column = Literal["evaluations", "elapsed_ms", "best", "hypervolume"]
#: the columns of a trace point of a run of one objective
COLUMNS: list[Column] = ["evaluations", "elapsed_ms", "best"]


def columns_of(several: bool) -> list[Column]:
    """The columns of a run's trace points: its third is the front's hypervolume for a
    run of ``several`` objectives, the best value otherwise."""
    return [*COLUMNS[:2], "hypervolume"] if several else COLUMNS


def thin_trace(points: list[Any], limit: int = TRACE_POINTS) -> list[Any]:
    """``points`` when there are at most ``limit`` of them; otherwise ``limit`` of them
    evenly spaced by index, the first and the last always kept (an improvement curve is
    monotone, so every kept point lies on it and its shape stays)."""
    n = len(points)
    if n <= limit:
        return points
    step = (n - 1) / (limit - 1)
    return [points[round(i * step)] for i in range(limit)]


def timed(history: Sequence[tuple[int, float]],
          samples: Sequence[tuple[int, float]]) -> list[list[float | None]]:
    """``[evaluations, elapsed_ms, best]`` of each ``(evaluations, best)`` of
    ``history``, its time interpolated between ``samples`` (``(evaluations,
    elapsed_ms)``, ascending; a start ``(0, 0.0)`` is implied)."""
    known = [(0, 0.0), *sorted(samples)]
    evals = [e for e, _ in known]
    out: list[list[float | None]] = []
    for e, best in history:
        i = bisect.bisect_left(evals, e)
        if i < len(known) and known[i][0] == e:
            ms = known[i][1]
        elif i >= len(known):
            ms = known[-1][1]
        else:
            (e0, t0), (e1, t1) = known[i - 1], known[i]
            ms = t0 + (t1 - t0) * (e - e0) / (e1 - e0)
        out.append([int(e), round(ms, 3), float(best)])
    return out

