"""A decision in progress: what the request asks (filled by ``decido._mcdm_request``) and
what has been found so far (filled by ``decido.decide``), carried as one object."""

from __future__ import annotations

from dataclasses import dataclass, field
from math import fsum
from typing import Any

import numpy as np
from numpy.typing import NDArray

from decido._mcdm_uncertain import Uncertainty


@dataclass
class Criterion:
    """One criterion: its attribute, whether it is maximized, its weight (None when
    absent or an interval) and its weight interval (under uncertainty)."""

    attribute: str
    benefit: bool
    weight: float | None
    interval: tuple[float, float] | None = None


@dataclass
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
    """

    method: str
    normalization: str | None
    weighting: str | None
    criteria: list[Criterion]
    params: dict[str, Any]
    constraints: list[str]
    expression: str | None
    higher_is_better: bool
    top_k: int | None
    explain: bool
    sensitivity: bool
    request_id: Any
    warnings: list[dict[str, Any]] = field(default_factory=list)
    fixed_weights: list[float] | None = None
    extra: dict[str, Any] | None = None
    uncertainty: Uncertainty | None = None
    ids: list[Any] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    feasible: NDArray[np.intp] | None = None
    infeasible: list[dict[str, Any]] = field(default_factory=list)

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
