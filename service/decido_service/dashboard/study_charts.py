"""What the study page's charts draw of a whole study, bounded whatever its size: the best
value so far of every objective over all its completed trials, and a sample of them for
the dots and the parallel coordinates (every k-th completed trial, so at most
:data:`CHART_SAMPLE`, and always the best and the front's).

:class:`Charts` takes the completed trials page after page (by number, as the store reads
them; :meth:`Charts.take` decodes only their values and the sampled trials) and gives the
page's data (:meth:`Charts.data`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import orjson

from decido_service.dashboard.study_facts import chart_trial
from decido_service.studies.views import trial_json

__all__ = ["BEST_POINTS", "CHART_SAMPLE", "Charts", "thin"]

#: the most trials drawn as dots and lines (a sample of a larger study)
CHART_SAMPLE = 2_000
#: the most steps of a best-so-far line (a line of more is thinned)
BEST_POINTS = 2_000


def thin(points: list[list[float]], most: int) -> list[list[float]]:
    """At most ``most`` of ``points`` (a best-so-far step line): evenly spaced ones, the
    first and the last always among them."""
    if len(points) <= most:
        return points
    step = (len(points) - 1) / (most - 1)
    return [points[round(i * step)] for i in range(most)]


class Charts:
    """The charts' data of a study with ``completed`` completed trials and ``goals`` (one
    per objective); ``keep``: trial numbers always drawn (the best, the front)."""

    def __init__(self, completed: int, goals: Sequence[str], keep: Sequence[int]) -> None:
        self.every = max(1, math.ceil(completed / CHART_SAMPLE))
        self.maximize = [g == "maximize" for g in goals]
        self.keep = set(keep)
        self.seen = 0
        self.best: list[float | None] = [None] * len(goals)
        self.lines: list[list[list[float]]] = [[] for _ in goals]
        self.trials: list[dict[str, Any]] = []
        self.last = -1

    def take(self, rows: Sequence[dict[str, Any]]) -> None:
        """The next completed trials' rows (the store's, by number)."""
        for row in rows:
            number = int(row["number"])
            values = orjson.loads(row["vals"]) if row["vals"] else []
            for k, v in enumerate(values[:len(self.best)]):
                self._better(k, number, v)
            if self.seen % self.every == 0 or number in self.keep:
                self.trials.append(chart_trial(trial_json(row)))
            self.seen += 1
            self.last = number

    def _better(self, k: int, number: int, v: Any) -> None:
        if not isinstance(v, (int, float)) or not math.isfinite(v):
            return
        best = self.best[k]
        if best is None or (v > best if self.maximize[k] else v < best):
            self.best[k] = float(v)
            self.lines[k].append([number, float(v)])

    def data(self) -> dict[str, Any]:
        """``trials`` (the sample, as :func:`chart_trial` makes them), ``best_lines`` (per
        objective, ``[number, best]`` where the best so far improved, and at the last
        completed trial; thinned to :data:`BEST_POINTS`), ``completed`` (how many were
        read), ``sampled`` (whether ``trials`` is a sample) and ``every`` (its step)."""
        lines = []
        for k, line in enumerate(self.lines):
            best = self.best[k]
            if best is not None and line[-1][0] != self.last:
                line = [*line, [self.last, best]]
            lines.append(thin(line, BEST_POINTS))
        return {"trials": self.trials, "best_lines": lines, "completed": self.seen,
                "sampled": self.every > 1, "every": self.every}
