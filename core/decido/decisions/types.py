"""The request and result types of the decision API, each member once.

A request and an answer are JSON objects (``decido.decide`` takes a mapping and returns a
dict), so their types are ``TypedDict``\\ s: a member's Python type says its shape, an
``Annotated`` :class:`~decido.decisions.rules.Rule` its limits, choices, default and
description (choices and ranges read from the method table,
:mod:`decido.decisions.vocabulary`).  :mod:`decido.decisions.schema` derives the JSON
Schema from these types, and the validation reads the member names from them
(:data:`REQUEST_MEMBERS`...).  Request types are closed (an unknown member is refused);
answer types are open.  The types name their members' rules; checks that need the options'
values (an attribute every option has, positivity, bounds) are the method table's.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict

from decido.decisions._kernels import NORMALIZATIONS
from decido.decisions.params import PARAMS
from decido.decisions.rules import Limit, Rule, members
from decido.decisions.vocabulary import (
    AGGREGATIONS,
    AHP_METHODS,
    ALL_METHODS,
    DEFAULT_GOAL,
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    DEFAULT_WEIGHT,
    EXPRESSION_METHOD,
    WEIGHTINGS,
)
from decido.goals import GOAL_NAMES
from decido.metadata import DESCRIPTION as METADATA_DESCRIPTION
from decido.metadata import KEY_PATTERN, MAX_KEY_LENGTH, MAX_KEYS, MAX_VALUE_LENGTH

#: an option's id
Id = str | int
#: a number in [0, 1]
Share = Annotated[float, Rule(minimum=0, maximum=1)]
Positive = Annotated[float, Rule(exclusive_minimum=0)]
Method = Annotated[str, Rule(enum=ALL_METHODS)]
Normalization = Annotated[str, Rule(enum=NORMALIZATIONS)]
Weighting = Annotated[str, Rule(enum=tuple(WEIGHTINGS))]
#: n x n pairwise judgments
Matrix = Annotated[
    list[list[Positive | None]],
    Rule(min_items=2, max_items=Limit("max_criteria"),
         description="n x n judgments a_ij (criterion i over j) in the order of the "
         "criteria; the diagonal 1; null below the diagonal for 1 / a_ji"),
]
MetadataKey = Annotated[str, Rule(min_length=1, max_length=MAX_KEY_LENGTH, pattern=KEY_PATTERN)]
MetadataValue = Annotated[str, Rule(max_length=MAX_VALUE_LENGTH)]


# ---------------------------------------------------------------- requests
class _IntervalBounds(TypedDict):
    low: Annotated[float, Rule(minimum=0)]
    high: float


class DecisionInterval(_IntervalBounds):
    """A weight interval ``{low, high}`` (under ``uncertainty``)."""


class _CriterionName(TypedDict):
    attribute: Annotated[str, Rule(min_length=1)]


class DecisionCriterion(_CriterionName, total=False):
    """One criterion of a multi-criteria method."""

    goal: Annotated[str, Rule(enum=GOAL_NAMES, default=DEFAULT_GOAL, description=(
        "minimize or maximize ('min' and 'max' are aliases)"))]
    weight: Annotated[Positive | None | DecisionInterval, Rule(
        default=DEFAULT_WEIGHT, description="a weight > 0 (default 1 under weighting "
        "'given'); under uncertainty also an interval")]


def _param(name: str) -> Rule:
    """The rule of method parameter ``name``, from its row (:data:`PARAMS`)."""
    p = PARAMS[name]
    if p.kind == "unit":
        return Rule(minimum=p.low, maximum=p.high, default=p.default, description=p.description)
    if p.kind == "choice":
        return Rule(enum=p.choices, default=p.default, description=p.description)
    return Rule(description=p.description)


def _per_criterion(name: str) -> Rule:
    """The rule of one value of per-criterion parameter ``name``."""
    p = PARAMS[name]
    return Rule(exclusive_minimum=p.low) if p.open_low else Rule(minimum=p.low)


#: the method parameters (each method reads its own: its row's ``params``)
DecisionParams = TypedDict("DecisionParams", {
    "v": Annotated[float, _param("v")],
    "lambda": Annotated[float, _param("lambda")],
    "preference": Annotated[str, _param("preference")],
    "q": Annotated[dict[str, Annotated[float, _per_criterion("q")]], _param("q")],
    "p": Annotated[dict[str, Annotated[float, _per_criterion("p")]], _param("p")],
    "bounds": Annotated[dict[str, tuple[float, float]], _param("bounds")],
}, total=False)


class _MakerId(TypedDict):
    id: Id


class DecisionMaker(_MakerId, total=False):
    """One decision maker: pairwise judgments or weights, and the maker's own weight."""

    weight: Annotated[Positive, Rule(default=1)]
    pairwise: Matrix
    weights: dict[str, Positive]


class DecisionUncertainty(TypedDict, total=False):
    """Sampling of a decision under uncertainty (SMAA-2)."""

    samples: Annotated[int, Rule(minimum=1, maximum=Limit("max_samples"),
                                 default=DEFAULT_SAMPLES)]
    seed: Annotated[int, Rule(minimum=0, maximum=2**63 - 1, default=DEFAULT_SEED)]


class _Uniform(TypedDict):
    low: float
    high: float


class _NormalCentre(TypedDict):
    mean: float
    sd: Annotated[float, Rule(minimum=0)]


class _Normal(_NormalCentre, total=False):
    low: float
    high: float


#: an uncertain attribute value
DecisionUncertainValue = Annotated[_Uniform | _Normal, Rule(description=(
    "an uncertain value: uniform {low, high} or normal {mean, sd}, clipped to low and high "
    "when given"))]


class DecisionOption(TypedDict):
    """One option: its id and its attribute values."""

    id: Id
    attributes: Annotated[dict[str, Any], Rule(description=(
        "attribute values: numbers (true and false count as 1 and 0), or under uncertainty a "
        "DecisionUncertainValue; values no criterion, constraint or expression uses are not "
        "read"))]


class _Options(TypedDict):
    options: Annotated[list[DecisionOption], Rule(min_items=1, max_items=Limit("max_options"),
                                                  description="the options")]


class DecideRequest(_Options, total=False):
    """The body of ``POST /v1/decide``: a decision.  An item of a batch
    (``DecisionItem``) is the same object, its members merged over the batch's
    ``defaults``."""

    id: Annotated[Id | None, Rule(description="an id echoed first in the answer")]
    method: Annotated[Method | None, Rule(description="the scoring method")]
    criteria: Annotated[list[DecisionCriterion] | None, Rule(
        min_items=1, max_items=Limit("max_criteria"),
        description="the criteria of the multi-criteria methods")]
    normalization: Annotated[Normalization | None, Rule(
        description="the normalization (wsm, wpm, topsis, waspas)")]
    weighting: Annotated[Weighting | None, Rule(description="how the weights are found")]
    params: Annotated[DecisionParams | None, Rule(description="method parameters")]
    constraints: Annotated[list[str] | None, Rule(
        max_items=Limit("max_constraints"),
        description="expressions every feasible option satisfies")]
    top_k: Annotated[int | None, Rule(minimum=1, description="length of the returned ranking")]
    explain: Annotated[bool | None, Rule(default=False, description=(
        "add an explanation to each ranking entry"))]
    sensitivity: Annotated[bool | None, Rule(default=False, description=(
        "add the weight intervals that keep the top choice"))]
    log: Annotated[bool | None, Rule(default=False, description=(
        "read by the service (decision log); ignored here"))]
    metadata: Annotated[dict[MetadataKey, MetadataValue] | None, Rule(
        max_properties=MAX_KEYS, description="the logged decision's " + METADATA_DESCRIPTION
        + "; read by the service, checked and ignored here")]
    expression: Annotated[str | None, Rule(description="the score of method 'expression'")]
    goal: Annotated[Annotated[str, Rule(enum=GOAL_NAMES)] | None, Rule(
        description="maximize (default) or minimize the score of method 'expression' "
        "('max' and 'min' are aliases)")]
    pairwise: Annotated[Matrix | None, Rule(
        description="weighting 'ahp': the pairwise comparison matrix of the criteria")]
    ahp_method: Annotated[Annotated[str, Rule(enum=AHP_METHODS)] | None, Rule(
        default=AHP_METHODS[0], description="weighting 'ahp': eigenvector (default) or "
        "geometric_mean")]
    decision_makers: Annotated[list[DecisionMaker] | None, Rule(
        min_items=1, description="several decision makers' pairwise matrices or weights")]
    aggregation: Annotated[Annotated[str, Rule(enum=AGGREGATIONS)] | None, Rule(
        default=AGGREGATIONS[0], description="how the decision makers' pairwise judgments "
        "are combined: aij or aip")]
    uncertainty: Annotated[DecisionUncertainty | None, Rule(
        description="sample uncertain values and weights (SMAA-2): {samples, seed}")]


#: what a decision needs besides its options, as far as a schema can say it (a rule
#: between members, which no member's type holds): an expression (a string) when the
#: method is "expression" -- named, or implied by an expression when none is named --,
#: criteria (a list) otherwise
DECIDE_REQUEST_CONDITIONS: dict[str, Any] = {
    "if": {"anyOf": [
        {"required": ["method"], "properties": {"method": {"const": EXPRESSION_METHOD}}},
        {"required": ["expression"], "properties": {"method": {"const": None},
                                                    "expression": {"type": "string"}}}]},
    "then": {"required": ["expression"], "properties": {"expression": {"type": "string"}}},
    "else": {"required": ["criteria"], "properties": {"criteria": {"type": "array"}}},
}


class _Decisions(TypedDict):
    decisions: Annotated[list[Annotated[dict[str, Any], Rule(
        description="a decision (DecisionItem), valid or not on its own")]],
        Rule(max_items=Limit("max_batch"))]


class BatchRequest(_Decisions, total=False):
    """The body of ``POST /v1/batch``.  Each item is checked on its own and answered in its
    own result (a ``DecisionItemError`` when invalid), so the envelope asks only for
    objects; ``DecisionItem`` says what makes an item valid."""

    defaults: Annotated[dict[str, Any] | None, Rule(
        description="members merged into every item (DecisionItem)")]


# ---------------------------------------------------------------- answers
class _Ranked(TypedDict):
    id: Id
    rank: Annotated[int, Rule(minimum=1)]
    score: float | None


class _RankingEntry(_Ranked, total=False):
    explanation: dict[str, Any]


class _Infeasible(TypedDict):
    id: Id
    violated: list[str]


class _WarningText(TypedDict):
    code: str
    message: str


class _Warning(_WarningText, total=False):
    path: str


class DecisionConsistency(TypedDict):
    """The consistency of pairwise judgments (Saaty's ratio)."""

    lambda_max: float
    index: Annotated[float, Rule(minimum=0)]
    ratio: Annotated[float, Rule(minimum=0)]
    acceptable: bool
    most_inconsistent: tuple[str, str] | None


class _GroupMember(TypedDict):
    id: Id
    weight: Share
    weights: dict[str, Share]
    consistency: DecisionConsistency | None


class DecisionGroup(TypedDict):
    """The weights of a group of decision makers."""

    aggregation: Annotated[str, Rule(enum=(*AGGREGATIONS, "mean"))]
    members: list[_GroupMember]
    consistency: DecisionConsistency | None
    consensus: Share


class DecisionSmaa(TypedDict):
    """The rank acceptabilities of a decision under uncertainty."""

    samples: Annotated[int, Rule(minimum=1)]
    seed: Annotated[int, Rule(minimum=0)]
    acceptability: dict[str, list[Share]]
    central_weights: dict[str, dict[str, Share] | None]
    confidence: dict[str, Share | None]


class _WeightInterval(TypedDict):
    attribute: str
    weight: Share
    lower: Share
    upper: Share
    lower_changes_to: Id | None
    upper_changes_to: Id | None


class DecisionSensitivity(TypedDict):
    """The weight intervals that keep the top choice."""

    margin: Annotated[float | None, Rule(minimum=0)]
    criteria: list[_WeightInterval]


class _Answer(TypedDict):
    status: Literal["ok", "infeasible"]
    method: Method
    normalization: Normalization | None
    weighting: Weighting | None
    weights: dict[str, float]
    higher_is_better: bool
    best: Id | None
    best_is_tied: bool
    ties: list[Annotated[list[Id], Rule(min_items=2)]]
    n_options: Annotated[int, Rule(minimum=1)]
    n_feasible: Annotated[int, Rule(minimum=0)]
    ranking: list[_RankingEntry]
    infeasible: list[_Infeasible]
    warnings: list[_Warning]


class DecideResult(_Answer, total=False):
    """The answer of ``POST /v1/decide`` (and of ``decido.decide``)."""

    id: Id | None
    compromise: list[Id]
    sensitivity: DecisionSensitivity
    consistency: DecisionConsistency
    group: DecisionGroup
    smaa: DecisionSmaa


class _FaultText(TypedDict):
    pointer: Annotated[str, Rule(description="JSON pointer of the field")]
    code: str
    message: str


class _Fault(_FaultText, total=False):
    position: Annotated[int, Rule(minimum=0)]


class _ErrorText(TypedDict):
    code: str
    message: str
    path: str


class DecisionErrorDetail(_ErrorText, total=False):
    """A refused decision: the first fault, and every fault found."""

    position: Annotated[int, Rule(minimum=0)]
    errors: list[_Fault]


class DecisionItemError(TypedDict):
    """The result of a batch item that was refused."""

    id: Id | None
    status: Literal["error"]
    error: DecisionErrorDetail


class BatchResult(TypedDict):
    """The answer of ``POST /v1/batch``: one result per item, in input order."""

    results: list[DecideResult | DecisionItemError]
    n_decisions: Annotated[int, Rule(minimum=0)]
    n_ok: Annotated[int, Rule(minimum=0)]
    n_error: Annotated[int, Rule(minimum=0)]


#: the member names the validation reads from the types
REQUEST_MEMBERS = frozenset(members(DecideRequest))
CRITERION_MEMBERS = members(DecisionCriterion)
DECISION_MAKER_MEMBERS = members(DecisionMaker)
UNCERTAINTY_MEMBERS = members(DecisionUncertainty)
UNIFORM_MEMBERS = members(_Uniform)
NORMAL_MEMBERS = members(_Normal)
#: the request types: closed objects (an unknown member is refused)
REQUEST_TYPES: tuple[Any, ...] = (
    DecideRequest, DecisionCriterion, DecisionParams, BatchRequest, DecisionMaker,
    DecisionUncertainty, DecisionInterval, _Uniform, _Normal)
