"""Value checks a method's row names (``Method.check_values``, ``Method.check_support``):
rules that need the feasible options' values (or, under uncertainty, every value's
support), each fault to ``faults``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from decido.decisions.faults import Faults

Array = NDArray[np.float64]


class Named(Protocol):
    """A criterion as the checks read it: the attribute it scores."""

    @property
    def attribute(self) -> str: ...


class Plan(Protocol):
    """What a value check reads of a decision and writes to it: its ``params`` (a check
    leaves what it finds there), its criteria (``names``, ``criteria``), the option index
    of a feasible option and its warnings.  ``decido.decisions.decision.Decision`` is one;
    typed here so that the method table, which names the checks, sits below the decision
    (whose module reads that table through its uncertainty)."""

    params: dict[str, Any]

    @property
    def names(self) -> Sequence[str]: ...

    @property
    def criteria(self) -> Sequence[Named]: ...

    def option(self, i: int) -> int: ...

    def warn(self, code: str, message: str, path: str | None = None) -> None: ...


def spotis_bounds(d: Plan, Xc: Array, faults: Faults) -> None:
    """SPOTIS: every feasible value inside its criterion's given bounds; the bounds not
    given are the feasible options' min and max (a warning says so).  Leaves the (k, 2)
    bounds in ``d.params["bounds"]``."""
    given = d.params["bounds"]
    bounds = np.column_stack([Xc.min(axis=0), Xc.max(axis=0)])
    criteria = d.names
    for j, name in enumerate(criteria):
        if name in given:
            lo, hi = given[name]
            for i in np.flatnonzero((Xc[:, j] < lo) | (Xc[:, j] > hi)).tolist():
                faults.add(
                    ("options", d.option(i), "attributes", name),
                    "out_of_bounds",
                    f"value {Xc[i, j]} is outside the SPOTIS bounds [{lo}, {hi}]",
                )
            bounds[j] = lo, hi
    taken = [name for name in criteria if name not in given]
    if taken:
        d.warn(
            "bounds_from_data",
            "SPOTIS bounds taken from the feasible options (scores then depend on the "
            f"option set): {', '.join(taken)}",
            "params.bounds",
        )
    d.params["bounds"] = np.ascontiguousarray(bounds)


def spotis_support(plan: Plan, lows: Array, highs: Array, faults: Faults) -> None:
    """SPOTIS under uncertainty: every value's support (``lows``, ``highs``: criteria x
    options) inside the given bounds; the bounds not given are the supports' (finite)."""
    given = plan.params["bounds"]
    bounds = np.column_stack([lows.min(axis=1), highs.max(axis=1)])
    taken = []
    for j, c in enumerate(plan.criteria):
        if c.attribute in given:
            lo, hi = given[c.attribute]
            for i in np.flatnonzero((lows[j] < lo) | (highs[j] > hi)).tolist():
                faults.add(("options", i, "attributes", c.attribute), "out_of_bounds",
                           f"values from {lows[j, i]} to {highs[j, i]} leave the SPOTIS "
                           f"bounds [{lo}, {hi}]")
            bounds[j] = lo, hi
        elif not np.isfinite(bounds[j]).all():
            faults.add(("params", "bounds", c.attribute), "invalid_params",
                       "SPOTIS needs bounds for a criterion with unclipped normal values")
        else:
            taken.append(c.attribute)
    if taken:
        plan.warn("bounds_from_data", "SPOTIS bounds taken from the options' values (their "
                  f"supports): {', '.join(taken)}", "params.bounds")
    plan.params["bounds"] = np.ascontiguousarray(bounds)
