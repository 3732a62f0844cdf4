"""The vocabulary of decision requests, each fact written once.

One row per decision method (:data:`METHODS`: its scoring function and kernel, default
normalization, direction, whether it needs values > 0, whether its score is linear in
the weights, its parameters) and one per parameter (:data:`PARAMS`: kind, default and
range), beside the members of a request, the weightings, the goals and the limits.  The
validation (``decido._mcdm_request``), the scoring (``decido.decide``), the sensitivity
analysis, the JSON Schema (``decido._mcdm_schema``), ``decido.decision_methods()`` and
the service's dashboard all read these tables, as ``engines.def`` serves the engines.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from decido import _mcdm_methods as m
from decido._mcdm_methods import PREFERENCES, Scored
from decido.metadata import DESCRIPTION as METADATA_DESCRIPTION

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

#: members of a request, each with what it holds (the JSON Schema reads this table)
FIELDS = {
    "id": "an id echoed first in the answer",
    "options": "the options",
    "method": "the scoring method",
    "criteria": "the criteria of the multi-criteria methods",
    "normalization": "the normalization (wsm, wpm, topsis, waspas)",
    "weighting": "how the weights are found",
    "params": "method parameters",
    "constraints": "expressions every feasible option satisfies",
    "top_k": "length of the returned ranking",
    "explain": "add an explanation to each ranking entry",
    "sensitivity": "add the weight intervals that keep the top choice",
    "log": "read by the service (decision log); ignored here",
    "metadata": "the logged decision's " + METADATA_DESCRIPTION
                + "; read by the service, checked and ignored here",
    "expression": "the score of method 'expression'",
    "goal": "maximize (default) or minimize the score of method 'expression' ('max' and "
            "'min' are aliases)",
    "pairwise": "weighting 'ahp': the pairwise comparison matrix of the criteria",
    "ahp_method": "weighting 'ahp': eigenvector (default) or geometric_mean",
    "decision_makers": "several decision makers' pairwise matrices or weights",
    "aggregation": "how the decision makers' pairwise judgments are combined: aij or aip",
    "uncertainty": "sample uncertain values and weights (SMAA-2): {samples, seed}",
}
#: boolean members of a request
FLAGS = ("explain", "sensitivity", "log")
CRITERION_FIELDS = ("attribute", "goal", "weight")


# ---------------------------------------------------------------- parameters
@dataclass(frozen=True)
class Param:
    """A method parameter: ``kind`` is ``"unit"`` (a number in [low, high]),
    ``"choice"`` (one of ``choices``), ``"per_criterion"`` (an object {attribute:
    number}, ``low`` the least value, ``open_low`` whether it is excluded) or
    ``"bounds"`` ({attribute: [low, high]})."""

    name: str
    kind: str
    description: str
    default: Any = None
    low: float = -math.inf
    high: float = math.inf
    open_low: bool = False
    choices: tuple[str, ...] = ()


PARAMS: dict[str, Param] = {
    p.name: p
    for p in (
        Param("v", "unit", "weight of the group utility S against the regret R", 0.5, 0.0, 1.0),
        Param("lambda", "unit", "share of WSM in the WASPAS score", 0.5, 0.0, 1.0),
        Param("preference", "choice", "the preference function", PREFERENCES[0],
              choices=PREFERENCES),
        Param("q", "per_criterion", "indifference threshold per criterion, in its units",
              low=0.0),
        Param("p", "per_criterion", "preference threshold per criterion, in its units",
              low=0.0, open_low=True),
        Param("bounds", "bounds", "[low, high] per criterion (default: the feasible "
              "options' min and max)"),
    )
}
#: per-criterion parameters (PROMETHEE II) each preference function needs
PREFERENCE_NEEDS = {
    "usual": (),
    "u_shape": ("q",),
    "v_shape": ("p",),
    "level": ("q", "p"),
    "linear": ("q", "p"),
}


# ---------------------------------------------------------------- methods
MethodFn = Callable[[NDArray[np.float64], NDArray[np.bool_], NDArray[np.float64],
                     dict[str, Any]], Scored]


@dataclass(frozen=True)
class Method:
    """One decision method.

    ``score`` scores a feasible-options x criteria matrix (None for ``expression``,
    which the expression VM scores); ``kernel`` says where (``"C"``: one C pass per
    matrix, ``decido._mcdm``; ``"NumPy"``; ``"VM"``); ``normalization`` is the default
    of a method that takes one (None: its own); ``ascending``: lower scores are better;
    ``positive``: values must be > 0 (for a method that takes a normalization: unless it
    is ``minmax``); ``linear_in_weights``: the score is sum_j w_j c_ij with c
    independent of w (sensitivity intervals are solved exactly)."""

    name: str
    summary: str
    score: MethodFn | None
    kernel: str
    normalization: str | None = None
    ascending: bool = False
    positive: bool = False
    linear_in_weights: bool = False
    params: tuple[str, ...] = ()


METHODS: dict[str, Method] = {
    row.name: row
    for row in (
        Method("expression", "the value of an expression over the attributes", None, "VM"),
        Method("wsm", "weighted sum of the normalized values", m.wsm, "C", "minmax",
               linear_in_weights=True),
        Method("wpm", "weighted product of the normalized values", m.wpm, "NumPy", "linear",
               positive=True),
        Method("topsis", "closeness to the ideal of the weighted normalized matrix",
               m.topsis, "C", "vector"),
        Method("vikor", "compromise Q of group utility S and regret R", m.vikor, "C",
               ascending=True, params=("v",)),
        Method("promethee2", "net outranking flow", m.promethee2, "NumPy",
               linear_in_weights=True, params=("preference", "q", "p")),
        Method("waspas", "WSM and WPM on one normalized matrix", m.waspas, "NumPy", "linear",
               positive=True, params=("lambda",)),
        Method("copras", "utility degree of the proportional assessment", m.copras, "NumPy",
               positive=True),
        Method("moora", "ratio system of the vector-normalized values", m.moora, "C",
               linear_in_weights=True),
        Method("edas", "distances from the average solution", m.edas, "NumPy", positive=True),
        Method("aras", "utility relative to the ideal option", m.aras, "NumPy", positive=True),
        Method("spotis", "weighted distance to the ideal point of the bounds", m.spotis, "C",
               ascending=True, linear_in_weights=True, params=("bounds",)),
    )
}
ALL_METHODS = tuple(METHODS)
ALL_PARAMS = tuple(dict.fromkeys(name for row in METHODS.values() for name in row.params))
#: the parameters that are one number between fixed bounds
UNIT_PARAMS = {p.name: p for p in PARAMS.values() if p.kind == "unit"}
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
DECISION_MAKER_FIELDS = ("id", "weight", "pairwise", "weights")
#: Saaty's random consistency index RI(n), n = 3..10 (n = 2 is always consistent)
RANDOM_INDEX = {3: 0.58, 4: 0.90, 5: 1.12, 6: 1.24, 7: 1.32, 8: 1.41, 9: 1.45, 10: 1.49}
#: a consistency ratio above this gives the warning ``inconsistent_judgments``
ACCEPTABLE_RATIO = 0.1
#: ``a_ij * a_ji`` must be 1 within this where both are given
RECIPROCAL_TOLERANCE = 1e-6


# ---------------------------------------------------------------- uncertainty
UNCERTAINTY_FIELDS = ("samples", "seed")
DEFAULT_SAMPLES = 10_000
DEFAULT_SEED = 0
#: an uncertain value: uniform {low, high}; normal {mean, sd}, optionally clipped
UNIFORM_FIELDS = ("low", "high")
NORMAL_FIELDS = ("mean", "sd", "low", "high")


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
