"""`POST /v1/optimize`: the request, its result and the lines of a streamed run."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

import decido
from decido.goals import GoalName, goal_name
from decido.objectives import MAX_OBJECTIVES, NAME_PATTERN
from decido.pareto import default_multi_engine
from decido.run_spec import DEFAULT_ARCHIVE_SIZE, MAX_ARCHIVE, SEED_END
from decido.status import FinishedStatus
from decido_service.tiers import DEFAULT_TIERS, default_caps
from decido_service.types.fields import NOT_BLANK, Count, EngineId, Goal, GoalIn, Metadata
from decido_service.types.problems import Problem

__all__ = ["SEMANTIC_FAULTS", "ConstraintValue", "ErrorEvent", "Objective", "ObjectiveInfo",
           "OptimizeEvent", "OptimizeRequest", "OptimizeResult", "ParetoPoint", "ProgressEvent",
           "ResultEvent", "RunProgress", "RunResult", "RunStatus", "Variable"]

#: how a run ended, as the engine says (decido.status: C's stop reasons, and infeasible)
RunStatus = Annotated[FinishedStatus, Meta(
    description="infeasible: no point met every constraint (x is the least violating)")]


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


class Objective(Struct, forbid_unknown_fields=True, kw_only=True):
    """One objective of a run of several: its name (an attribute of the front's decision
    options), expression and goal."""

    name: Annotated[str, Meta(
        pattern="^" + NAME_PATTERN.pattern.removesuffix("\\Z") + "$",
        description="an identifier, distinct from the other objectives and the variables")]
    expression: Annotated[str, Meta(
        min_length=1, max_length=decido.DEFAULT_LIMITS["max_length"], pattern=NOT_BLANK,
        description="the objective in decido's expression language", examples=["sum(x**2)"])]
    goal: Annotated[GoalName, Meta(
        description="default: the request's goal ('min' and 'max' are aliases)")] | None = None

    def __post_init__(self) -> None:
        self.goal = goal_name(self.goal)  # the long form


#: what a body valid under the document can still be refused for (422, every fault with its
#: pointer): what a schema cannot say, since it depends on values elsewhere in the body
SEMANTIC_FAULTS = (
    "A body the schema accepts is still 422 for what depends on other members: a lower "
    "bound above its upper one, an option outside the engine's range, more dimensions than "
    "the engine takes, and an expression (objective or constraint) that does not compile "
    "— among them one naming `x[i]` with `i` at or past the number of bounds (`x[1]` "
    "with one pair of bounds), or a variable that is not declared. With several "
    "objectives also: duplicate names or one of a variable's, `target`, an engine that "
    "takes one objective, a `reference_point` whose length is not the number of "
    "objectives or that no point of the bounds can be better than in some objective "
    "(proven by interval arithmetic); and `reference_point` or `archive_size` on a run of "
    "one objective.")


class OptimizeRequest(Struct, forbid_unknown_fields=True, kw_only=True):
    """One optimization run (`POST /v1/optimize`). Absent or null optional numbers take
    their defaults."""

    # The members beside the objective(s), the box, goal and metadata are the keywords of
    # decido.run_spec.RunSpec a request carries (keyword_names(wire=True)), with their wire
    # types and the service's descriptions; runs/queue.py and schemas.py map them onto
    # decido.optimize and its checks by those names (tests/service/test_run_spec_wire.py
    # holds the two sets equal).

    bounds: Annotated[list[tuple[float, float]], Meta(
        min_length=1,
        description="one [lower, upper] pair per dimension (finite, lower <= upper); their "
                    "number is the run's dims (at most the tier's max_dims, /v1/usage); "
                    "or give variables")
    ] | UnsetType = UNSET
    objective_expression: Annotated[str, Meta(
        min_length=1, max_length=decido.DEFAULT_LIMITS["max_length"], pattern=NOT_BLANK,
        description="the objective in decido's expression language over the vector x (or "
                    "the names of variables); or give objectives",
        examples=["sum(x**2)"])] | UnsetType = UNSET
    objectives: Annotated[list[Objective], Meta(
        min_length=1, max_length=MAX_OBJECTIVES,
        description="several objectives instead of objective_expression: the result is "
                    "their Pareto front (pareto, hypervolume, reference_point)")
    ] | UnsetType = UNSET
    engine: Annotated[EngineId, Meta(
        description="an engine id from /v1/engines; default: decido's default engine, or "
                    "the first that takes several objectives when objectives are given")
    ] | UnsetType = UNSET
    goal: GoalIn = "minimize"
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
        description="a start point (dims numbers) or a list of them, within the bounds; "
                    "at most the tier's max_start_points of them (by default "
                    f"{default_caps(DEFAULT_TIERS, 'max_start_points')}; 422 beyond)")
    ] | None = None
    constraints: Annotated[list[Annotated[str, Meta(
        min_length=1, max_length=decido.DEFAULT_LIMITS["max_length"])]], Meta(
        description="'[name:] lhs <= rhs' (or >=, ==) in the expression language over the "
                    "objective's variables", examples=[["budget: x[0] + x[1] <= 1"]])
    ] | None = None
    constraint_tolerance: Annotated[float, Meta(
        gt=0, description="largest violation that counts as feasible (default 1e-6)")
    ] | None = None
    reference_point: Annotated[list[float], Meta(
        min_length=1, max_length=MAX_OBJECTIVES,
        description="several objectives: the point the hypervolume is measured from, one "
                    "value per objective in its own sense, worse than the front's points "
                    "(default: the front's nadir moved outward by a tenth of its range)")
    ] | None = None
    archive_size: Annotated[int, Meta(
        ge=1, le=MAX_ARCHIVE,
        description=f"several objectives: the most points the front keeps (default "
                    f"{DEFAULT_ARCHIVE_SIZE}; at most the tier's max_archive_size: by "
                    f"default {default_caps(DEFAULT_TIERS, 'max_archive_size')}; 422 "
                    "beyond)")] | None = None
    metadata: Metadata = {}

    def __post_init__(self) -> None:
        self.goal = goal_name(self.goal) or "minimize"  # the long form
        if isinstance(self.engine, UnsetType):
            self.engine = decido.default_engine() if self.objectives is UNSET \
                else default_multi_engine()
        # msgspec's range constraints stop at 64-bit signed integers: the seed's upper end
        # (in the schema as its maximum) is checked here, so decoding refuses it too
        if self.seed is not None and self.seed >= SEED_END:
            raise ValueError(f"seed must be below {SEED_END}")

    @property
    def dims(self) -> int:
        """Number of dimensions (= number of bounds or variables)."""
        return len(self.bounds or self.variables or ())

    @property
    def start_points(self) -> int:
        """Number of start points (``x0``: one point, or a list of them)."""
        if not self.x0:
            return 0
        return len(self.x0) if isinstance(self.x0[0], list) else 1

    @property
    def several(self) -> bool:
        """True for a run of several objectives (``objectives`` given)."""
        return not isinstance(self.objectives, UnsetType)

    @property
    def run_goal(self) -> Goal:
        """The goal in its long form (the alias was replaced when decoded)."""
        return goal_name(self.goal) or "minimize"

    @property
    def engine_id(self) -> str:
        """The engine (the default filled in when decoded)."""
        assert isinstance(self.engine, str)
        return self.engine


class ConstraintValue(Struct, forbid_unknown_fields=True):
    """A constraint at the result's x: its name, value (lhs - rhs) and violation."""

    name: str
    value: float | None
    violation: float | None


class ParetoPoint(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A point of a run's Pareto front: x, the objectives' values f (in the objectives'
    order) and whether it meets every constraint."""

    x: list[float]
    f: Annotated[list[float | None], Meta(description="null where not finite")]
    feasible: bool
    max_violation: float | None
    variables: Annotated[dict[str, float] | None, Meta(
        description="x by name (requests with variables)")] = None


class ObjectiveInfo(Struct, forbid_unknown_fields=True):
    """An objective of a run of several as it ran: name, goal and expression."""

    name: str
    goal: Goal
    expression: str


class RunResult(Struct, forbid_unknown_fields=True, kw_only=True, omit_defaults=True):
    """A finished run's outcome. A run of several objectives has its front in `pareto`
    (x empty, value null, constraints empty: each point carries its own)."""

    status: RunStatus
    x: list[float]
    value: Annotated[float | None, Meta(description="objective at x (null if not finite)")]
    evaluations: Count
    iterations: Count
    message: str
    elapsed_ms: float
    seed: Annotated[int, Meta(ge=0)]
    feasible: Annotated[bool, Meta(description="every constraint holds at x")]
    max_violation: Annotated[float | None, Meta(description="largest violation at x")]
    constraints: Annotated[list[ConstraintValue], Meta(
        description="each constraint at x, in request order")]
    variables: Annotated[dict[str, float] | None, Meta(
        description="x by name (requests with variables)")]
    pareto: Annotated[list[ParetoPoint] | None, Meta(
        description="several objectives: the non-dominated front of everything evaluated "
                    "(the least violating points when nothing was feasible), in the answer "
                    "of /v1/optimize; a run read from /v1/runs has front_size here and its "
                    "front in pages at GET /v1/runs/{id}/front")] = None
    front_size: Annotated[Count, Meta(
        description="several objectives: the number of points of the front")] | None = None
    hypervolume: Annotated[float | None, Meta(
        description="several objectives: the front's hypervolume at reference_point")
    ] = None
    reference_point: Annotated[list[float | None] | None, Meta(
        description="several objectives: the request's reference_point, else the "
                    "front's nadir moved outward by a tenth of its range")] = None
    objectives: Annotated[list[ObjectiveInfo] | None, Meta(
        description="several objectives: each as it ran")] = None
    engine_chosen: Annotated[EngineId | None, Meta(
        description="the engine that ran: the one asked for, or the one 'auto' chose")] = None


class OptimizeResult(RunResult, forbid_unknown_fields=True, kw_only=True):
    """The outcome of a run."""

    id: Annotated[str, Meta(description="the run's id (as run_id)")]
    run_id: Annotated[str, Meta(description="the run's id: GET /v1/runs/{run_id} reads it")]
    engine: EngineId
    goal: Goal
    dims: Annotated[int, Meta(ge=1)]
    # pairs as 2-item lists, not tuples: schemathesis 4 misreads a response schema's
    # prefixItems (it validates them as an OpenAPI 3.0 "items" list)
    history: Annotated[list[Annotated[list[float | None], Meta(min_length=2, max_length=2)]],
                       Meta(description="[evaluations, best] at each improvement; several "
                                        "objectives: [evaluations, hypervolume]")]


class RunProgress(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A running run's progress (written at most every 0.25 s by the worker running it);
    a run of several objectives adds `hypervolume` and `front_size`."""

    evaluations: Count
    iterations: Count
    best: Annotated[float | None, Meta(
        description="best value so far (goal's sense); null before the first evaluation")]
    elapsed_ms: float
    hypervolume: Annotated[float | None, Meta(
        description="several objectives: the front's hypervolume so far")] = None
    front_size: Annotated[Count, Meta(
        description="several objectives: the front's size so far")] | None = None


class ProgressEvent(RunProgress, tag_field="event", tag="progress"):
    """A streamed run's progress (every 0.25 s while it lasts)."""


class ResultEvent(OptimizeResult, tag_field="event", tag="result"):
    """A streamed run's last line: its result."""


class ErrorEvent(Problem, tag_field="event", tag="error"):
    """A streamed run's last line when it failed after the stream began."""



#: one line of a streamed run (`Accept: application/x-ndjson`)
OptimizeEvent = ProgressEvent | ResultEvent | ErrorEvent
