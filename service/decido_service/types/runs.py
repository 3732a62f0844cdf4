"""Runs as resources (`/v1/runs`): a run, its progress and result, a page of runs, a
run's trace."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct

from decido_service.types.fields import RUN_ID_PATTERN, Count, RunState, Timestamp
from decido_service.types.optimize import ConstraintValue, OptimizeRequest
from decido_service.types.problems import Problem

__all__ = ["Run", "RunList", "RunProgress", "RunResult", "RunTrace", "RunsDeleted"]


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
