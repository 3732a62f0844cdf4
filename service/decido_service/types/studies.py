"""Studies (`/v1/studies`): ask/tell optimization of an objective the caller computes.
The requests a study takes and the study and trials it answers with
(docs/studies.md, "Over HTTP")."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, get_args

from msgspec import Meta, Struct

from decido_service.types.fields import Metadata, Timestamp
from decido_service.types.params import CURSOR, HeaderParams, MetadataFilter, Page, PathParams

__all__ = ["MAX_NUMBER", "MAX_SUGGEST", "MAX_TRIALS_PER_CALL", "STUDY_ID_PATTERN", "TRIAL_STATES",
           "EarlyStopping", "ReportAnswer", "Study", "StudyCreate", "StudyList", "StudyPage",
           "StudyEventsHeaders", "StudyPath", "TrialPage", "TrialPath", "SuggestAnswer",
           "SuggestRequest", "Trial", "TrialAdd", "TrialList", "TrialReport", "TrialTell",
           "TrialsAdd", "TrialsTell", "TrialTellItem"]

#: what a study id looks like: ``st_`` and 24 lowercase hex digits
STUDY_ID_PATTERN = "^st_[0-9a-f]{24}$"
TrialState = Literal["queued", "active", "completed", "infeasible", "failed", "early_stopped",
                     "abandoned"]
#: a trial's states
TRIAL_STATES: tuple[str, ...] = get_args(TrialState)
StudyState = Literal["active", "stopped", "completed"]
#: the most trials one suggest hands out
MAX_SUGGEST = 1000
#: the largest trial number a request may name (a store integer holds it)
MAX_NUMBER = 2**53
#: the most trials one call adds or completes
MAX_TRIALS_PER_CALL = 10_000


class EarlyStopping(Struct, forbid_unknown_fields=True):
    """Stop trials whose intermediate value is worse than the median of the others' at the
    same step, once ``min_trials`` others reported there."""

    rule: Literal["median"]
    min_trials: Annotated[int, Meta(ge=1, le=10_000)] = 5


class StudyCreate(Struct, forbid_unknown_fields=True, kw_only=True):
    """A new study (`POST /v1/studies`); ``bounds`` or ``variables`` as in runs."""

    bounds: list[list[float]] | None = None
    variables: list[dict[str, Any]] | None = None
    objectives: list[str | dict[str, str]] | None = None
    goal: Literal["minimize", "maximize", "min", "max"] = "minimize"
    constraints: list[str] | None = None
    engine: str = "auto"
    seed: Annotated[int, Meta(ge=0, description="below 2**64")] | None = None
    max_trials: Annotated[int, Meta(ge=1)] | None = None
    trial_lease: Annotated[float, Meta(ge=1, le=86_400, description=(
        "seconds an active trial is held without a report or heartbeat"))] = 600.0
    early_stopping: EarlyStopping | None = None
    metadata: Metadata = {}


class Trial(Struct, forbid_unknown_fields=True):
    """A trial of a study."""

    number: Annotated[int, Meta(ge=0)]
    state: TrialState
    x: list[float]
    variables: dict[str, Any]
    value: float | None
    values: list[float] | None
    metrics: dict[str, float]
    client_id: str | None
    lease_expires_at: Timestamp | None
    created_at: Timestamp
    completed_at: Timestamp | None
    reason: str | None


class Study(Struct, forbid_unknown_fields=True):
    """A study (`/v1/studies/{id}`)."""

    id: Annotated[str, Meta(pattern=STUDY_ID_PATTERN, description="st_ + 24 hex digits")]
    state: StudyState
    created_at: Timestamp
    spec: Annotated[dict[str, Any], Meta(description=(
        "the study's arguments: variables or bounds, objectives, goal, constraints, engine "
        "(resolved), seed (drawn when not given), max_trials, trial_lease, early_stopping"))]
    trials: Annotated[dict[str, int], Meta(description="trials by state")]
    best: Annotated[Trial | None, Meta(description="one objective: the best completed trial")]
    pareto: Annotated[list[Trial] | None, Meta(
        description="several objectives: the front of the completed trials")]
    metadata: Metadata


class StudyList(Struct, forbid_unknown_fields=True):
    """A page of studies, newest first."""

    data: list[Study]
    has_more: bool


class SuggestRequest(Struct, forbid_unknown_fields=True, kw_only=True):
    """`POST /v1/studies/{id}/suggest`."""

    count: Annotated[int, Meta(ge=1, le=MAX_SUGGEST)] = 1
    client_id: Annotated[str, Meta(min_length=1, max_length=200)] | None = None


class SuggestAnswer(Struct, forbid_unknown_fields=True):
    """The trials handed out."""

    trials: list[Trial]


class TrialTell(Struct, forbid_unknown_fields=True, kw_only=True):
    """`POST .../trials/{number}/complete`: ``value`` or ``values`` (+ ``metrics``), or
    ``state`` failed | infeasible with a ``reason``."""

    value: float | None = None
    values: list[float] | None = None
    metrics: dict[str, float] | None = None
    state: Literal["completed", "failed", "infeasible"] = "completed"
    reason: Annotated[str, Meta(max_length=1000)] | None = None


class TrialTellItem(TrialTell, kw_only=True):
    """One item of a batch tell."""

    number: Annotated[int, Meta(ge=0, le=MAX_NUMBER)]


class TrialsTell(Struct, forbid_unknown_fields=True):
    """`POST /v1/studies/{id}/complete`: one transaction, all or nothing."""

    trials: Annotated[list[TrialTellItem], Meta(min_length=1, max_length=MAX_TRIALS_PER_CALL)]


class TrialAdd(Struct, forbid_unknown_fields=True, kw_only=True):
    """A point to add: completed (a warm start, with ``value``/``values``), failed or
    infeasible, or ``queued`` (suggested before the engine's own points)."""

    variables: dict[str, Any] | None = None
    x: list[float] | None = None
    value: float | None = None
    values: list[float] | None = None
    metrics: dict[str, float] | None = None
    state: Literal["completed", "failed", "infeasible", "queued"] = "completed"


class TrialsAdd(Struct, forbid_unknown_fields=True):
    """`POST /v1/studies/{id}/trials`."""

    trials: Annotated[list[TrialAdd], Meta(min_length=1, max_length=MAX_TRIALS_PER_CALL)]


class TrialList(Struct, forbid_unknown_fields=True):
    """A page of a study's trials, by number."""

    data: list[Trial]
    has_more: bool


class TrialReport(Struct, forbid_unknown_fields=True):
    """`POST .../trials/{number}/report`: an intermediate value."""

    step: Annotated[int, Meta(ge=0)]
    value: float


class ReportAnswer(Struct, forbid_unknown_fields=True):
    """Whether the trial should stop (the study's early-stopping rule)."""

    should_stop: bool


class StudyPath(PathParams):
    """The study of a ``/v1/studies/{study_id}`` path."""

    study_id: Annotated[str, Meta(
        pattern=STUDY_ID_PATTERN,
        description="a study id (another key's, unknown or malformed: 404)")]


class StudyEventsHeaders(HeaderParams, kw_only=True,
                         rename={"last_event_id": "Last-Event-ID"}):
    """Where a study's event stream resumes."""

    last_event_id: Annotated[str, Meta(
        pattern=r"^([0-9]{1,18})?$",
        description="resume after this event id (the last one seen; absent or empty: a new "
                    "watcher, sent the study first); an id this stream never sent: 400")
    ] | None = None


class TrialPath(PathParams):
    """The trial of a ``.../trials/{number}`` path."""

    number: Annotated[int, Meta(ge=0, le=MAX_NUMBER,
                                description="the trial's number in its study")]


class StudyPage(Page, kw_only=True):
    """A page of a key's studies and its filters."""

    deep: ClassVar[frozenset[str]] = frozenset({"metadata"})
    starting_after: Annotated[str, Meta(pattern=STUDY_ID_PATTERN, description=CURSOR)
                              ] | None = None
    state: Annotated[StudyState, Meta(description="only studies in this state")] | None = None
    metadata: MetadataFilter | None = None


class TrialPage(Page, kw_only=True):
    """A page of a study's trials, by number."""

    starting_after: Annotated[int, Meta(
        ge=0, le=MAX_NUMBER, description="the number of the last trial of the previous page")
    ] | None = None
    state: Annotated[TrialState, Meta(description="only trials in this state")] | None = None
