"""Runs as resources (`/v1/runs`): a run, its progress and result, a page of runs, a
run's trace; and the document a run's store row keeps (:class:`RunDocument`)."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct

from decido_service.types.fields import (
    RUN_ID_PATTERN,
    EngineId,
    Goal,
    Metadata,
    RunState,
    Timestamp,
)
from decido_service.types.optimize import OptimizeRequest, ParetoPoint, RunProgress, RunResult
from decido_service.types.problems import Problem

__all__ = ["Budget", "Run", "RunDocument", "RunFront", "RunList", "RunProgress", "RunResult",
           "RunTrace", "RunsDeleted", "TracePoint"]

#: ``[evaluations, elapsed_ms, best]`` at one improvement of a run
TracePoint = Annotated[list[float | None], Meta(min_length=3, max_length=3)]


class Run(Struct, forbid_unknown_fields=True):
    """A run (`/v1/runs/{id}`): queued -> running -> succeeded | failed | cancelled."""

    id: Annotated[str, Meta(pattern=RUN_ID_PATTERN, description="run_ + 24 hex digits")]
    state: RunState
    created_at: Timestamp
    started_at: Timestamp | None
    finished_at: Timestamp | None
    engine: EngineId
    goal: Goal
    dims: Annotated[int, Meta(ge=1)]
    request: Annotated[OptimizeRequest, Meta(
        description="the body as admitted, defaults filled in")]
    progress: RunProgress | None
    result: RunResult | None
    problem: Annotated[Problem | None, Meta(description="why a failed run failed")]
    cancel_requested: bool
    metadata: Metadata


class RunList(Struct, forbid_unknown_fields=True):
    """A page of runs, newest first (`GET /v1/runs`)."""

    data: list[Run]
    has_more: Annotated[bool, Meta(
        description="more runs follow: ask again with starting_after=<last id>")]


class RunTrace(Struct, forbid_unknown_fields=True):
    """A run's convergence: ``[evaluations, elapsed_ms, best]`` at each improvement
    (``hypervolume`` instead of ``best`` for a run of several objectives: ``columns``; at
    most 1,000 points: a longer history is thinned evenly, its first and last points
    kept). ``elapsed_ms`` is interpolated between the run's progress samples (every
    0.25 s) by evaluations."""

    run_id: str
    columns: list[Literal["evaluations", "elapsed_ms", "best", "hypervolume"]]
    points: list[TracePoint]


class RunFront(Struct, forbid_unknown_fields=True):
    """A page of a finished run's front (`GET /v1/runs/{id}/front`): its points in the
    front's order, at most ``limit`` of them and about the tier's ``front_page_bytes``
    bytes (at least one point)."""

    run_id: str
    first: Annotated[int, Meta(ge=0, description=(
        "the index of the page's first point in the front (the option id a decision on "
        "the front gives it)"))]
    data: list[ParetoPoint]
    size: Annotated[int, Meta(ge=0, description="the number of points of the whole front")]
    has_more: Annotated[bool, Meta(
        description="more points follow: ask again with starting_after=first + "
                    "len(data) - 1")]


class RunsDeleted(Struct, forbid_unknown_fields=True):
    """The answer of ``DELETE /v1/runs``."""

    deleted: Annotated[int, Meta(ge=0, description="finished runs deleted")]


class Budget(Struct, forbid_unknown_fields=True, kw_only=True):
    """What the tier allowed a run, kept for whichever worker executes it; ``deadline``
    (epoch seconds): a ``/v1/optimize`` run's admission plus its time limit."""

    max_evaluations: int
    time_limit: float
    deadline: float | None = None


class RunDocument(Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """The JSON a run's store row keeps (its ``document``, decoded in the store's
    ``RunRow``): the request as admitted, the budget, and what the run wrote so far."""

    request: OptimizeRequest
    budget: Budget
    started_at: str | None = None
    progress: RunProgress | None = None
    result: RunResult | None = None
    problem: Problem | None = None
    #: ``[evaluations, elapsed_ms, best]`` points (``int`` first: evaluations stay integers)
    trace: list[list[int | float | None]] = []
