"""How runs end, written once: why the engine loop stopped, the status of a result, the
states of a run of the service, and those of a study of the service and of its trials.

The stop reasons are C's (``dc_stop_name``, one table in csrc/engine/driver.c). Types need
them written out as a ``Literal`` (mypy, msgspec and the OpenAPI schemas read it), so
:data:`EngineStop` is that table as a type, and tests/engines/test_stop_reasons.py holds the
two equal: a reason added in C fails that test until it is added here. Everything else —
:class:`decido.OptimizeResult`'s ``status``, the service's result schema and run states, the
client and the command line — reads these names from this module.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "ENGINE_STOPS",
    "FINISHED_RUN_STATES",
    "FINISHED_TRIAL_STATES",
    "RUN_STATES",
    "STATUSES",
    "STUDY_STATES",
    "SUCCESSFUL",
    "EngineStop",
    "FinishedStatus",
    "RunState",
    "Status",
    "StudyState",
    "TRIAL_STATES",
    "TrialState",
    "engine_stop",
    "run_state",
    "status",
]

#: Why the engine loop ended, as C names it: the engine's convergence test (or its restarts
#: agreeing), the target, the budget, the clock, or the callback or monitor (``stopped``).
#: C's other names, ``running`` (no stop yet) and ``error`` (the objective or callback
#: raised: the exception propagates), never reach a result.
EngineStop = Literal["converged", "target_reached", "max_evaluations", "time_limit", "stopped"]
#: A finished run's status: an engine stop, or ``infeasible`` (with constraints, no feasible
#: point found; the message says why the loop ended).
FinishedStatus = Literal[EngineStop, "infeasible"]
#: :attr:`decido.OptimizeResult.status`: also ``interrupted``, only on the partial result a
#: ``KeyboardInterrupt`` carries.
Status = Literal[FinishedStatus, "interrupted"]

ENGINE_STOPS: tuple[EngineStop, ...] = get_args(EngineStop)
STATUSES: tuple[Status, ...] = get_args(Status)
#: The statuses that count as success (:attr:`decido.OptimizeResult.success`).
SUCCESSFUL: frozenset[Status] = frozenset(("converged", "target_reached"))

#: The states of a run of the service: queued, then running, then one of the finished ones.
RunState = Literal["queued", "running", "succeeded", "failed", "cancelled"]
RUN_STATES: tuple[RunState, ...] = get_args(RunState)
FINISHED_RUN_STATES: frozenset[RunState] = frozenset(("succeeded", "failed", "cancelled"))

#: The states of a study of the service (docs/studies.md): ``active`` (it suggests),
#: ``stopped`` (no more suggestions), ``completed`` (it suggested ``max_trials`` and holds
#: no trial). tests/service/test_client_studies.py holds the service's equal to these.
StudyState = Literal["active", "stopped", "completed"]
STUDY_STATES: tuple[StudyState, ...] = get_args(StudyState)
#: The states of a trial of a study of the service: ``queued`` (a point waiting to be
#: suggested), ``active`` (suggested, held under a lease), then one of the finished ones.
TrialState = Literal["queued", "active", "completed", "infeasible", "failed", "early_stopped",
                     "abandoned"]
TRIAL_STATES: tuple[TrialState, ...] = get_args(TrialState)
FINISHED_TRIAL_STATES: frozenset[TrialState] = frozenset(
    ("completed", "infeasible", "failed", "early_stopped", "abandoned"))


def engine_stop(name: str) -> EngineStop:
    """``name`` (from ``dc_stop_name``) as an :data:`EngineStop`; ``ValueError`` for any
    other name (the C table grew without this module)."""
    for stop in ENGINE_STOPS:
        if stop == name:
            return stop
    raise ValueError(f"decido: unknown stop reason {name!r} (known: {', '.join(ENGINE_STOPS)})")


def status(name: str) -> Status:
    """``name`` (a result's ``status``, e.g. from the service) as a :data:`Status`;
    ``ValueError`` for any other name."""
    for known in STATUSES:
        if known == name:
            return known
    raise ValueError(f"decido: unknown status {name!r} (known: {', '.join(STATUSES)})")


def run_state(status: FinishedStatus) -> RunState:
    """The state a run of the service finishes in, from its result's status: ``cancelled``
    when its monitor stopped it (a cancel), ``succeeded`` otherwise (a run whose objective
    failed has no result: it is ``failed``)."""
    return "cancelled" if status == "stopped" else "succeeded"
