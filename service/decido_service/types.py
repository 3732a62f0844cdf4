"""The request and response bodies of the service, as msgspec Structs: the one source.

Decoding (:mod:`decido_service.schemas`), the 422 error list and the OpenAPI components
(:mod:`decido_service.openapi`) all come from these types. Limits are the library's
(:data:`decido.DEFAULT_LIMITS`, :data:`decido.optimize.SEED_END`), engine ids are read from
:func:`decido.engines` at import, problem codes from :data:`decido_service.errors.TITLES`.
What a type cannot say (``lower <= upper``, options within the engine's ranges, a valid
expression) is checked by :func:`decido.optimize.problems` and the expression compiler.

A class's docstring is its schema's description: it is written for API users.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

import decido
from decido.optimize import SEED_END
from decido_service.errors import PROBLEM_BASE, TITLES
from decido_service.store import RUN_STATES

__all__ = [
    "MAX_LABEL",
    "DecisionLogEntry",
    "DecisionLogPage",
    "DecisionLogRecord",
    "REQUEST_TYPES",
    "RESPONSE_TYPES",
    "SCHEMA_EXTRAS",
    "Engine",
    "EngineOption",
    "Engines",
    "ErrorEntry",
    "ConstraintValue",
    "Health",
    "KeyCreated",
    "KeyRequest",
    "KeyUsage",
    "MinuteUsage",
    "MonthUsage",
    "OptimizationUsage",
    "OptimizeEvent",
    "OptimizeRequest",
    "OptimizeResult",
    "Problem",
    "ProgressEvent",
    "DecisionUsage",
    "ErrorEvent",
    "ResultEvent",
    "Run",
    "RunList",
    "RunProgress",
    "RunResult",
    "RunTrace",
    "RunsDeleted",
    "Usage",
    "Variable",
    "with_extras",
]

#: what a run id looks like: ``run_`` and 24 lowercase hex digits (``store.ordered_id``)
RUN_ID_PATTERN = "^run_[0-9a-f]{24}$"
#: the longest key label (characters)
MAX_LABEL = 200

if TYPE_CHECKING:
    EngineId = str
    ProblemCode = str
    RunState = str
else:
    EngineId = Literal[tuple(e["id"] for e in decido.engines())]
    ProblemCode = Literal[tuple(sorted(TITLES))]
    RunState = Literal[RUN_STATES]

Goal = Literal["minimize", "maximize"]
Count = Annotated[int, Meta(ge=0)]
Epoch = Annotated[int, Meta(description="Unix epoch seconds")]
Timestamp = Annotated[str, Meta(extra_json_schema={"format": "date-time"})]
#: a limit or cap; null: unlimited
Limit = Annotated[int | None, Meta(description="null: unlimited")]


# ---------------------------------------------------------------- requests

class Variable(Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """A named variable: a real or integer range (`lower`, `upper`, `type`), or a discrete
    set (`values`, e.g. standard sizes). The objective and constraints use its name."""

    name: Annotated[str, Meta(min_length=1, max_length=64, pattern="^[A-Za-z_][A-Za-z0-9_]*$",
                              description="a name of the expression language")]
    lower: float | None = None
    upper: float | None = None
    type: Annotated[Literal["real", "integer"] | None, Meta(
        description="default real; integer: the integers in [ceil(lower), floor(upper)]")
    ] = None
    values: Annotated[list[float], Meta(
        min_length=1, description="a discrete set instead of lower/upper/type")] | None = None


class OptimizeRequest(Struct, forbid_unknown_fields=True, kw_only=True):
    """One optimization run (`POST /v1/optimize`). Absent or null optional numbers take
    their defaults."""

    bounds: Annotated[list[tuple[float, float]], Meta(
        min_length=1,
        description="one [lower, upper] pair per dimension (finite, lower <= upper); their "
                    "number is the run's dims (Max Dims per tier); or give variables")
    ] | UnsetType = UNSET
    objective_expression: Annotated[str, Meta(
        min_length=1, max_length=decido.DEFAULT_LIMITS["max_length"],
        description="the objective in decido's expression language over the vector x (or "
                    "the names of variables)",
        examples=["sum(x**2)"])]
    engine: Annotated[EngineId, Meta(
        description="an engine id from /v1/engines")] = decido.default_engine()
    goal: Goal = "minimize"
    max_evaluations: Annotated[int, Meta(
        ge=1, description="default min(max(10000, 2000 n), tier cap); above the cap: 403")
    ] | None = None
    time_limit: Annotated[float, Meta(
        gt=0, description="seconds; default the tier's cap; above it: 403")] | None = None
    target: Annotated[float | None, Meta(
        description="stop once the best value is at least this good")] = None
    seed: Annotated[int, Meta(
        ge=0, extra_json_schema={"maximum": SEED_END - 1},
        description="replays a run; drawn and reported when absent")] | None = None
    options: Annotated[dict[str, float], Meta(
        description="the engine's options by name (see /v1/engines)")] = {}
    variables: Annotated[list[Variable], Meta(
        min_length=1, description="named variables instead of bounds; their number is the "
                                  "run's dims")] | None = None
    integers: Annotated[list[int], Meta(
        description="indices of x that take integer values (bounds rounded inward)")
    ] | None = None
    x0: Annotated[list[float | list[float]], Meta(
        description="a start point (dims numbers) or a list of them, within the bounds")
    ] | None = None
    constraints: Annotated[list[Annotated[str, Meta(
        min_length=1, max_length=decido.DEFAULT_LIMITS["max_length"])]], Meta(
        description="'[name:] lhs <= rhs' (or >=, ==) in the expression language over the "
                    "objective's variables", examples=[["budget: x[0] + x[1] <= 1"]])
    ] | None = None
    constraint_tolerance: Annotated[float, Meta(
        gt=0, description="largest violation that counts as feasible (default 1e-6)")
    ] | None = None

    def __post_init__(self) -> None:
        # msgspec's range constraints stop at 64-bit signed integers: the seed's upper end
        # (in the schema as its maximum) is checked here, so decoding refuses it too
        if self.seed is not None and self.seed >= SEED_END:
            raise ValueError(f"seed must be below {SEED_END}")

    @property
    def dims(self) -> int:
        """Number of dimensions (= number of bounds or variables)."""
        return len(self.bounds or self.variables or ())


class KeyRequest(Struct, forbid_unknown_fields=True):
    """The optional body of `POST /v1/keys` (the body may also be empty)."""

    label: Annotated[str, Meta(
        max_length=MAX_LABEL, description="free text to recognise the key by")
    ] | UnsetType = UNSET


# ---------------------------------------------------------------- problems

class ErrorEntry(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """One fault of a request (422 `errors`)."""

    pointer: Annotated[str, Meta(
        description="RFC 6901 JSON pointer of the member at fault, e.g. /bounds/3 "
                    "('' for the whole body)")]
    field: Annotated[str, Meta(description="the same place written bounds[3] or "
                                           "options.popsize ('' for the whole body)")]
    code: Annotated[str, Meta(description="stable machine code of this fault")]
    message: str
    position: Annotated[int, Meta(
        ge=0, description="for expressions: 0-based character offset of the fault")
    ] | UnsetType = UNSET


class Problem(Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """An error (RFC 9457 problem document, `application/problem+json`)."""

    type: Annotated[str, Meta(extra_json_schema={"format": "uri"},
                              description=f"{PROBLEM_BASE}<code>")]
    title: str
    status: Annotated[int, Meta(ge=400, le=599)]
    detail: str
    code: ProblemCode
    instance: Annotated[str, Meta(description="the request path")]
    request_id: Annotated[str, Meta(description="the X-Request-Id header's value")]
    errors: Annotated[list[ErrorEntry], Meta(
        description="422: every fault of the request")] | UnsetType = UNSET
    limit: Annotated[str, Meta(
        description="429: the counter that refused (decide.minute, decide.month, "
                    "decide.refused, optimize.minute, optimize.month, optimize.refused, "
                    "keys.hour)")] | UnsetType = UNSET
    limit_value: Annotated[int | None, Meta(
        description="429, 403: the limit or cap")] | UnsetType = UNSET
    reset: Annotated[int, Meta(
        description="429: epoch seconds at which the counter's window ends")
    ] | UnsetType = UNSET
    field: Annotated[str, Meta(description="403: the field beyond the cap")] | UnsetType = UNSET
    requested: Annotated[float, Meta(
        description="403: what the request asked for")] | UnsetType = UNSET


# ---------------------------------------------------------------- meta

class Health(Struct, forbid_unknown_fields=True):
    """Liveness and readiness."""

    status: Literal["ok", "unavailable"]
    version: str
    store: Literal["ok", "unavailable"]
    engines: Annotated[int, Meta(ge=0, description="number of engines")]


class EngineOption(Struct, forbid_unknown_fields=True):
    """One option of an engine, its default and its range."""

    name: str
    default: float
    min: float
    max: float
    integer: bool
    description: str


class Engine(Struct, forbid_unknown_fields=True):
    """An optimization engine."""

    id: EngineId
    name: str
    summary: str
    kind: str
    max_dims: Annotated[int | None, Meta(description="null: no limit of the engine's own")]
    options: list[EngineOption]
    supports: Annotated[dict[str, bool], Meta(
        description="what it takes besides a box: constraints, integers (integer and "
                    "discrete variables), x0 (start points)")]


class Engines(Struct, forbid_unknown_fields=True):
    """Every engine; `default` is used when a request names none."""

    default: EngineId
    engines: list[Engine]


# ---------------------------------------------------------------- account

class KeyCreated(Struct, forbid_unknown_fields=True):
    """A new key. The secret (`key`) is shown in this answer only."""

    key: Annotated[str, Meta(pattern="^dk_[A-Za-z0-9_-]{43}$",
                             description="the secret: shown once, never again")]
    id: str
    prefix: str
    plan: str
    tier: str
    label: str | None
    created_at: Timestamp


class MinuteUsage(Struct, forbid_unknown_fields=True):
    """A per-minute counter."""

    limit: Limit
    remaining: Limit
    reset: Epoch


class MonthUsage(Struct, forbid_unknown_fields=True):
    """A per-month counter (UTC calendar month; `period_end` exclusive)."""

    limit: Limit
    used: Count
    remaining: Limit
    period_start: Timestamp
    period_end: Timestamp
    reset: Epoch


class KeyUsage(Struct, forbid_unknown_fields=True):
    """The key (never its secret)."""

    id: str
    prefix: str
    label: str | None
    created: Timestamp


class DecisionUsage(Struct, forbid_unknown_fields=True):
    """The key's decision plan and its usage."""

    plan: str
    minute: MinuteUsage
    month: MonthUsage
    batch_max: Limit
    refused_per_minute: Annotated[Limit, Meta(
        description="refused requests a minute before 429 too_many_refused")]


class OptimizationUsage(Struct, forbid_unknown_fields=True):
    """The key's optimization tier, its usage and per-run caps."""

    tier: str
    minute: MinuteUsage
    month: MonthUsage
    max_dims: Limit
    max_evaluations: Limit
    max_time_limit: Annotated[float, Meta(description="seconds")]
    refused_per_minute: Annotated[Limit, Meta(
        description="refused requests a minute before 429 too_many_refused")]


class Usage(Struct, forbid_unknown_fields=True):
    """The key, its plan and tier, their limits and current usage."""

    key: KeyUsage
    decision: DecisionUsage
    optimization: OptimizationUsage


# ---------------------------------------------------------------- optimize

class ConstraintValue(Struct, forbid_unknown_fields=True):
    """A constraint at the result's x: its name, value (lhs - rhs) and violation."""

    name: str
    value: float | None
    violation: float | None


class OptimizeResult(Struct, forbid_unknown_fields=True):
    """The outcome of a run."""

    id: Annotated[str, Meta(description="the run's id (as run_id)")]
    run_id: Annotated[str, Meta(description="the run's id: GET /v1/runs/{run_id} reads it")]
    engine: EngineId
    status: Annotated[Literal["converged", "target_reached", "max_evaluations", "time_limit",
                              "stopped", "infeasible"], Meta(
        description="infeasible: no point met every constraint (x is the least violating)")]
    message: str
    x: list[float]
    value: Annotated[float | None, Meta(description="objective at x (null if not finite)")]
    goal: Goal
    evaluations: Count
    iterations: Count
    elapsed_ms: float
    seed: Annotated[int, Meta(ge=0)]
    dims: Annotated[int, Meta(ge=1)]
    # pairs as 2-item lists, not tuples: schemathesis 4 misreads a response schema's
    # prefixItems (it validates them as an OpenAPI 3.0 "items" list)
    history: Annotated[list[Annotated[list[float | None], Meta(min_length=2, max_length=2)]],
                       Meta(description="[evaluations, best] at each improvement")]
    feasible: Annotated[bool, Meta(description="every constraint holds at x")]
    max_violation: Annotated[float | None, Meta(description="largest violation at x")]
    constraints: Annotated[list[ConstraintValue], Meta(
        description="each constraint at x, in request order")]
    variables: Annotated[dict[str, float] | None, Meta(
        description="x by name (requests with variables)")]


class ProgressEvent(Struct, forbid_unknown_fields=True, tag_field="event", tag="progress"):
    """A streamed run's progress (every 0.25 s while it lasts)."""

    evaluations: Count
    iterations: Count
    best: Annotated[float | None, Meta(
        description="best value so far (goal's sense); null before the first evaluation")]
    elapsed_ms: float


class ResultEvent(OptimizeResult, tag_field="event", tag="result"):
    """A streamed run's last line: its result."""


class ErrorEvent(Problem, tag_field="event", tag="error"):
    """A streamed run's last line when it failed after the stream began."""


# ---------------------------------------------------------------- decision log

OptionId = str | int | None


class DecisionLogEntry(Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """One logged `/v1/decide` or `/v1/batch` call, as a list shows it."""

    id: Annotated[str, Meta(description="`dec_` and 24 hex digits")]
    created_at: Annotated[str, Meta(extra_json_schema={"format": "date-time"})]
    kind: Literal["decide", "batch"]
    status: Annotated[str | None, Meta(
        description="decide: ok or infeasible; batch: ok or partial")]
    elapsed_ms: float
    answer_truncated: Annotated[bool, Meta(
        description="the answer was above the size cap and is not kept")]
    top: Annotated[list[dict[str, Any]], Meta(
        description="decide: the first 10 of the ranking (id, rank, score); batch: the "
                    "first 10 items (id, best, status)")]
    method: str | None | UnsetType = UNSET
    best: OptionId | UnsetType = UNSET
    best_is_tied: bool | None | UnsetType = UNSET
    n_options: int | None | UnsetType = UNSET
    n_feasible: int | None | UnsetType = UNSET
    n_decisions: int | None | UnsetType = UNSET
    n_ok: int | None | UnsetType = UNSET
    n_error: int | None | UnsetType = UNSET


class DecisionLogPage(Struct, forbid_unknown_fields=True):
    """A page of the key's decision log, newest first."""

    data: list[DecisionLogEntry]
    has_more: Annotated[bool, Meta(description="pass the last id as starting_after for more")]


class DecisionLogRecord(DecisionLogEntry, forbid_unknown_fields=True, omit_defaults=True,
                        kw_only=True):
    """One logged call with its request and (unless truncated) its answer."""

    request: Any
    answer: dict[str, Any] | None


# ---------------------------------------------------------------- runs


class RunProgress(Struct, forbid_unknown_fields=True):
    """A running run's progress (written at most every 0.25 s by the worker running it)."""

    evaluations: Count
    iterations: Count
    best: Annotated[float | None, Meta(
        description="best value so far (goal's sense); null before the first evaluation")]
    elapsed_ms: float


class RunResult(Struct, forbid_unknown_fields=True):
    """A finished run's outcome (x, iterations and message are null on runs recorded
    before runs were resources)."""

    status: Annotated[str, Meta(description="the engine's status (converged, "
                                            "target_reached, max_evaluations, time_limit, "
                                            "stopped), or error on old rows")]
    x: list[float] | None
    value: Annotated[float | None, Meta(description="objective at x (null if not finite)")]
    evaluations: Count | None
    iterations: Count | None
    message: str | None
    elapsed_ms: float | None
    seed: Annotated[int, Meta(ge=0)] | str | None
    feasible: bool | None = None
    max_violation: float | None = None
    constraints: list[ConstraintValue] | None = None
    variables: dict[str, float] | None = None


class Run(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A run (`/v1/runs/{id}`): queued -> running -> succeeded | failed | cancelled."""

    id: Annotated[str, Meta(pattern=RUN_ID_PATTERN, description="run_ + 24 hex digits")]
    state: RunState
    created_at: Timestamp
    started_at: Timestamp | None
    finished_at: Timestamp | None
    engine: str | None
    goal: str | None
    dims: int | None
    request: Annotated[OptimizeRequest | None, Meta(
        description="the body as admitted, defaults filled in (null on runs recorded "
                    "before runs were resources)")]
    progress: RunProgress | None
    result: RunResult | None
    problem: Annotated[Problem | None, Meta(description="why a failed run failed")]
    cancel_requested: bool


class RunList(Struct, forbid_unknown_fields=True):
    """A page of runs, newest first (`GET /v1/runs`)."""

    data: list[Run]
    has_more: Annotated[bool, Meta(
        description="more runs follow: ask again with starting_after=<last id>")]


class RunTrace(Struct, forbid_unknown_fields=True):
    """A run's convergence: ``[evaluations, elapsed_ms, best]`` at each improvement (at
    most 1,000 points: a longer history is thinned evenly, its first and last points
    kept). ``elapsed_ms`` is interpolated between the run's progress samples (every
    0.25 s) by evaluations; it is null in traces recorded before it was kept."""

    run_id: str
    columns: list[Literal["evaluations", "elapsed_ms", "best"]]
    points: list[Annotated[list[float | None], Meta(min_length=3, max_length=3)]]


class RunsDeleted(Struct, forbid_unknown_fields=True):
    """The answer of ``DELETE /v1/runs``."""

    deleted: Annotated[int, Meta(ge=0, description="finished runs deleted")]


#: one line of a streamed run (`Accept: application/x-ndjson`)
OptimizeEvent = ProgressEvent | ResultEvent | ErrorEvent

#: the request bodies, by OpenAPI component name
REQUEST_TYPES: dict[str, Any] = {"OptimizeRequest": OptimizeRequest, "KeyRequest": KeyRequest}
#: what the generated component schemas cannot say, added to them by name
SCHEMA_EXTRAS: dict[str, dict[str, Any]] = {
    "OptimizeRequest": {"anyOf": [
        {"required": ["bounds"]},
        {"required": ["variables"], "properties": {"variables": {"type": "array"}}}]}}


def with_extras(components: dict[str, Any]) -> dict[str, Any]:
    """``components`` (from ``msgspec.json.schema_components``) with :data:`SCHEMA_EXTRAS`."""
    for name, extra in SCHEMA_EXTRAS.items():
        if name in components:
            components[name].update(extra)
    return components
#: the response bodies
RESPONSE_TYPES: tuple[Any, ...] = (Problem, Health, Engines, KeyCreated, Usage, OptimizeResult,
                                   ProgressEvent, ResultEvent, ErrorEvent, DecisionLogPage,
                                   DecisionLogRecord, Run, RunList, RunTrace, RunsDeleted)

