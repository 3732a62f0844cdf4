"""The vocabulary of decision requests, each fact written once.

One row per decision method (:data:`METHODS`: its scoring function and kernel, default
normalization, direction, whether it needs values > 0, whether its score is linear in
the weights, its parameters and their reader, its limits and its value checks) beside the
weightings and the limits; the parameters' rows are :mod:`decido.decisions.params`', the
members of a request are its types' (:mod:`decido.decisions.types`).  The validation
(``decido.decisions.request``), the scoring (``decido.decisions.pipeline``), the sensitivity
analysis, the JSON Schema (``decido.decisions.schema``), ``decido.decision_methods()`` and
the service's dashboard all read these tables, as ``engines.def`` serves the engines.  No
code outside the table branches on a method's name: what differs between methods is a
column of its row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from decido.decisions import checks
from decido.decisions import methods as m
from decido.decisions import params as prm
from decido.decisions.checks import Array, Plan
from decido.decisions.faults import Faults
from decido.decisions.methods import Scored
from decido.decisions.params import PARAMS, Param

#: Limits of the library, read at each call (the service sets tighter per-plan
#: limits).  ``max_promethee_options`` bounds the feasible options of PROMETHEE II,
#: which compares every pair: O(m^2 k) time.  ``max_samples`` bounds the samples of a
#: decision under uncertainty, ``max_smaa_options`` its options (each gets a vector of
#: rank acceptabilities as long as the option list) and ``max_smaa_values`` the sampled
#: values, samples x options x criteria.
LIMITS = {
    "max_options": 100_000,
    "max_criteria": 64,
    "max_constraints": 256,
    "max_promethee_options": 5_000,
    "max_batch": 1_000,
    "max_samples": 100_000,
    "max_smaa_options": 1_000,
    "max_smaa_values": 50_000_000,
}

#: a criterion's goal (and a request's, method 'expression') when it has none
DEFAULT_GOAL = "maximize"
#: a criterion's weight when it has none (weighting 'given')
DEFAULT_WEIGHT = 1.0


# ---------------------------------------------------------------- methods
MethodFn = Callable[[NDArray[np.float64], NDArray[np.bool_], NDArray[np.float64],
                     dict[str, Any]], Scored]
#: reads a method's parameters that hold one value per criterion: (params, criteria, faults)
ParamsReader = Callable[[Mapping[str, Any], list[str], Faults], dict[str, Any]]
#: checks the feasible values (options x criteria) of a decision
ValueCheck = Callable[[Plan, Array, Faults], None]
#: checks the supports (criteria x options: lows, highs) of a decision under uncertainty
SupportCheck = Callable[[Plan, Array, Array, Faults], None]


@dataclass(frozen=True)
class Method:
    """One decision method.

    ``score`` scores a feasible-options x criteria matrix (None for ``expression``,
    which the expression VM scores); ``kernel`` says where (``"C"``: one C pass per
    matrix, ``decido.decisions._kernels``; ``"NumPy"``; ``"VM"``); ``normalization`` is the
    default of a method that takes one (None: its own); ``ascending``: lower scores are
    better; ``positive``: values must be > 0 (for a method that takes a normalization:
    unless it is ``minmax``); ``linear_in_weights``: the score is sum_j w_j c_ij with c
    independent of w (sensitivity intervals are solved exactly); ``params``: its
    parameters, ``read_params`` the reader of those given per criterion.  Its own limits
    and value checks: ``max_options`` names the row of :data:`LIMITS` that bounds its
    (feasible) options and ``max_options_reason`` says why; ``check_values`` checks the
    feasible values, ``check_support`` every value's support under uncertainty.
    ``params_in_units``: some parameters are in the units of the criteria (the matrix
    is scaled with them); ``by_expression``: an expression scores the options (no
    criteria, weights or parameters; ``score`` is None)."""

    name: str
    summary: str
    score: MethodFn | None
    kernel: str
    normalization: str | None = None
    ascending: bool = False
    positive: bool = False
    linear_in_weights: bool = False
    params: tuple[str, ...] = ()
    read_params: ParamsReader | None = None
    max_options: str | None = None
    max_options_reason: str = ""
    check_values: ValueCheck | None = None
    check_support: SupportCheck | None = None
    params_in_units: bool = False
    by_expression: bool = False


METHODS: dict[str, Method] = {
    row.name: row
    for row in (
        Method("expression", "the value of an expression over the attributes", None, "VM",
               by_expression=True),
        Method("wsm", "weighted sum of the normalized values", m.wsm, "C", "minmax",
               linear_in_weights=True),
        Method("wpm", "weighted product of the normalized values", m.wpm, "NumPy", "linear",
               positive=True),
        Method("topsis", "closeness to the ideal of the weighted normalized matrix",
               m.topsis, "C", "vector"),
        Method("vikor", "compromise Q of group utility S and regret R", m.vikor, "C",
               ascending=True, params=("v",)),
        Method("promethee2", "net outranking flow", m.promethee2, "NumPy",
               linear_in_weights=True, params=("preference", "q", "p"),
               read_params=prm.preference_params, max_options="max_promethee_options",
               max_options_reason="compares every pair", params_in_units=True),
        Method("waspas", "WSM and WPM on one normalized matrix", m.waspas, "NumPy", "linear",
               positive=True, params=("lambda",)),
        Method("copras", "utility degree of the proportional assessment", m.copras, "NumPy",
               positive=True),
        Method("moora", "ratio system of the vector-normalized values", m.moora, "C",
               linear_in_weights=True),
        Method("edas", "distances from the average solution", m.edas, "NumPy", positive=True),
        Method("aras", "utility relative to the ideal option", m.aras, "NumPy", positive=True),
        Method("spotis", "weighted distance to the ideal point of the bounds", m.spotis, "C",
               ascending=True, linear_in_weights=True, params=("bounds",),
               read_params=prm.bounds_params, check_values=checks.spotis_bounds,
               check_support=checks.spotis_support, params_in_units=True),
    )
}
ALL_METHODS = tuple(METHODS)
assert all((row.score is None) == row.by_expression for row in METHODS.values())
#: the method of a request that names none: this, or with an expression ...
DEFAULT_METHOD = "wsm"
#: ... the method that scores by expression
EXPRESSION_METHOD = next(row.name for row in METHODS.values() if row.by_expression)
ALL_PARAMS = tuple(dict.fromkeys(name for row in METHODS.values() for name in row.params))
#: normalizations that divide by the values or by their maximum: values must be > 0
POSITIVE_NORMALIZATIONS = frozenset({"sum", "max", "linear"})


# ---------------------------------------------------------------- weights
#: how the weights are found
WEIGHTINGS = {
    "given": "the criteria's weights (or the decision makers'), over their sum",
    "equal": "1/k each",
    "entropy": "1 - the entropy of each criterion's values",
    "critic": "contrast times conflict of the min-max scaled values",
    "std": "the standard deviation of each criterion's values",
    "ahp": "from pairwise comparisons (pairwise, or the decision makers')",
    "unknown": "uniform on the simplex, restricted by weight intervals (needs uncertainty)",
}
WEIGHTING_NAMES = tuple(WEIGHTINGS)
#: weightings computed from the options' values
AUTOMATIC_WEIGHTINGS = frozenset({"entropy", "critic", "std"})
#: automatic weightings that read the raw values and need them >= 0
NON_NEGATIVE_WEIGHTINGS = frozenset({"entropy"})
AHP_METHODS = ("eigenvector", "geometric_mean")
AGGREGATIONS = ("aij", "aip")
#: Saaty's random consistency index RI(n), n = 3..10 (n = 2 is always consistent)
RANDOM_INDEX = {3: 0.58, 4: 0.90, 5: 1.12, 6: 1.24, 7: 1.32, 8: 1.41, 9: 1.45, 10: 1.49}
#: a consistency ratio above this gives the warning ``inconsistent_judgments``
ACCEPTABLE_RATIO = 0.1
#: ``a_ij * a_ji`` must be 1 within this where both are given
RECIPROCAL_TOLERANCE = 1e-6


# ---------------------------------------------------------------- uncertainty
DEFAULT_SAMPLES = 10_000
DEFAULT_SEED = 0


def decision_methods() -> list[dict[str, Any]]:
    """The decision methods, one dict each, in the order of the API: ``name``,
    ``summary``, ``kernel`` (``"C"``, ``"NumPy"`` or ``"VM"``), ``normalization`` (the
    default of a method that takes one, else None), ``higher_is_better``,
    ``positive_values`` (needs every value > 0), ``linear_in_weights`` and ``params``
    ({name: {"kind", "description", "default", "low", "high", "choices"?}})."""
    return [
        {
            "name": row.name,
            "summary": row.summary,
            "kernel": row.kernel,
            "normalization": row.normalization,
            "higher_is_better": not row.ascending,
            "positive_values": row.positive,
            "linear_in_weights": row.linear_in_weights,
            "params": {name: _param(PARAMS[name]) for name in row.params},
        }
        for row in METHODS.values()
    ]


def _param(p: Param) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": p.kind, "description": p.description, "default": p.default,
                           "low": p.low if math.isfinite(p.low) else None,
                           "high": p.high if math.isfinite(p.high) else None}
    if p.open_low:
        out["low_excluded"] = True
    if p.choices:
        out["choices"] = list(p.choices)
    return out
