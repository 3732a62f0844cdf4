"""A decision in progress: what the request asks (filled by ``decido.decisions.request``) and
what has been found so far (filled by ``decido.decide``), carried as one object."""

from __future__ import annotations

from dataclasses import dataclass
from math import fsum
from typing import Any

import numpy as np
from numpy.typing import NDArray

from decido.decisions.uncertain import Uncertainty


@dataclass
class Criterion:
    """One criterion: its attribute, whether it is maximized, its weight (None when
    absent or an interval) and its weight interval (under uncertainty)."""

    attribute: str
    benefit: bool
    weight: float | None
    interval: tuple[float, float] | None = None


class Decision:
    """A validated request and the state of its computation.

    The request: ``method``, ``normalization`` (None for methods with their own),
    ``weighting``, ``criteria``, ``params``, ``constraints``, ``expression``,
    ``higher_is_better``, ``top_k``, ``explain``, ``sensitivity``, ``request_id``,
    ``fixed_weights`` (weights found before any option is read: AHP or a group's),
    ``extra`` (answer members those add: ``consistency``, ``group``) and
    ``uncertainty``.  The computation: ``ids`` of the options, ``names`` of the
    criteria, ``feasible`` (the option index of each feasible option, None when every
    option is), ``infeasible`` (the answer's list) and ``warnings``.

    A plain class with slots and its own ``__init__`` (compiled with the module), not a
    dataclass: one is made per decision, and a dataclass's generated ``__init__`` is
    interpreted bytecode.
    """

    __slots__ = (
        "method", "normalization", "weighting", "criteria", "params", "constraints",
        "expression", "higher_is_better", "top_k", "explain", "sensitivity", "request_id",
        "warnings", "fixed_weights", "extra", "uncertainty", "ids", "names", "feasible",
        "infeasible",
    )

    def __init__(self, method: str, constraints: list[str], higher_is_better: bool,
                 top_k: int | None, explain: bool, sensitivity: bool,
                 request_id: Any) -> None:
        self.method = method
        self.normalization: str | None = None
        self.weighting: str | None = None
        self.criteria: list[Criterion] = []
        self.params: dict[str, Any] = {}
        self.constraints = constraints
        self.expression: str | None = None
        self.higher_is_better = higher_is_better
        self.top_k = top_k
        self.explain = explain
        self.sensitivity = sensitivity
        self.request_id = request_id
        self.warnings: list[dict[str, Any]] = []
        self.fixed_weights: list[float] | None = None
        self.extra: dict[str, Any] | None = None
        self.uncertainty: Uncertainty | None = None
        self.ids: list[Any] = []
        self.names: list[str] = []
        self.feasible: NDArray[np.intp] | None = None
        self.infeasible: list[dict[str, Any]] = []

    def warn(self, code: str, message: str, path: str | None = None) -> None:
        """Add a warning to the answer."""
        item: dict[str, Any] = {"code": code, "message": message}
        if path is not None:
            item["path"] = path
        self.warnings.append(item)

    def option(self, i: int) -> int:
        """The option index of the i-th feasible option."""
        return i if self.feasible is None else int(self.feasible[i])

    def weights_now(self) -> list[float]:
        """The weights known before any option is read: AHP's or a group's, equal
        weights, or the given weights over their correctly rounded sum (``math.fsum``:
        the same bits in any order; first over the largest of them when that sum is
        beyond the largest double)."""
        if self.fixed_weights is not None:
            return self.fixed_weights
        k = len(self.criteria)
        if self.weighting == "equal":
            return [1.0 / k] * k
        given = [c.weight if c.weight is not None else 1.0 for c in self.criteria]
        try:
            total = fsum(given)
        except OverflowError:
            top = max(given)
            given = [x / top for x in given]
            total = fsum(given)
        return [x / total for x in given]
