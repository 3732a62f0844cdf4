"""The durable run queue: admitting a run into the store, and the worker that takes
queued runs from it in every worker process of every node.

**Admission** (:func:`admit_run`): the run is written ``queued`` with the per-key cap
(``max_runs`` of the tier: runs ``queued`` + ``running``, 429 ``too_many_runs``) and, for
``/v1/runs``, the store-wide queue cap (``DECIDO_RUN_BACKLOG``, 503 ``overloaded``)
checked, the request counted and the row written in one store transaction
(:meth:`Runs.enqueue`), so a refused submission leaves no row and no count; it is owned by
this process. Then ``/v1/optimize`` executes it here; ``/v1/runs`` executes it here
when a run thread of this worker is free, else gives it to the queue (no owner).

**The run worker** (:class:`RunWorker`, one per worker process): whenever a run thread is
free it claims a queued run nobody owns (:meth:`Runs.claim`: the oldest of the key with the
fewest runs taken now, so keys share the threads; an atomic update on SQLite, ``FOR UPDATE
SKIP LOCKED`` on PostgreSQL), at once after a local submission or a run's end, else every
:data:`CLAIM_INTERVAL` seconds. On PostgreSQL a run given back to the queue (by a busy
worker, a sweep or a stopping worker) is also announced with ``NOTIFY``
(:data:`~decido_service.store.wakeup.RUNS_CHANNEL`), which the run worker of every process
of every node listens to: an idle node takes it at once, not at its next look. A run is
owned under a lease of ``DECIDO_RUN_LEASE`` seconds, renewed by each progress write (every
0.25 s). Every :data:`SWEEP_INTERVAL` seconds each worker looks for runs whose lease ran out
— their process died (``kill -9``, a crash, a node lost) — and gives each back to the queue,
to start again from the beginning (a seeded run gives the same result), up to
:data:`~decido_service.runs.execution.RUN_ATTEMPTS` starts; then, or for a ``/v1/optimize``
run (its client was the process's) or one cancelled, it is ``failed`` with a problem of code
``interrupted`` (the request is kept, a client can submit it again); a run is noticed within
lease + sweep interval (20 + 5 s by default). It also deletes runs finished more than
``DECIDO_RUN_RETENTION_DAYS`` days ago, once an hour.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Protocol

import msgspec
from msgspec import UnsetType

import decido
from decido.run_spec import keyword_names
from decido_service import admission
from decido_service.errors import ServiceError, as_service_error
from decido_service.poller import Every, Poller
from decido_service.runs import execution as runs
from decido_service.runs.idempotency import Claim
from decido_service.runs.objective import Compiled, compile_objective
from decido_service.store import RunRow, Store, StoreError, iso_utc
from decido_service.store.wakeup import RUNS_CHANNEL
from decido_service.types import Budget, OptimizeRequest, RunDocument

__all__ = ["CLAIM_INTERVAL", "MIN_TIME_LIMIT", "SWEEP_INTERVAL", "RunServices", "RunWorker",
           "RunSlots", "admit_run", "announce", "enqueue", "execute", "start_run", "sweep"]

#: seconds between two looks at the queue of an idle run worker
CLAIM_INTERVAL = 0.5
#: seconds between two sweeps for runs whose lease ran out
SWEEP_INTERVAL = 5.0
#: seconds between two deletions of runs past their retention
PRUNE_INTERVAL = 3600.0
#: the time limit a synchronous run gets when its wait already used its own up
MIN_TIME_LIMIT = 1e-3


class RunSlots:
    """A counter of runs in flight (running or queued) with a hard capacity."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.in_flight = 0
        self._lock = threading.Lock()

    def acquire(self) -> None:
        """Take a slot, or raise 503 ``overloaded`` (``Retry-After: 1``) when none is free."""
        with self._lock:
            if self.in_flight >= self.capacity:
                raise ServiceError(
                    "overloaded", "every optimization slot of this worker is busy; retry shortly",
                    headers={"Retry-After": "1"},
                )
            self.in_flight += 1

    def release(self) -> None:
        """Give a slot back."""
        with self._lock:
            self.in_flight -= 1


class RunServices(admission.Counting, Protocol):
    """What runs take of a worker's services
    (:class:`~decido_service.services.Services` has it all)."""

    run_worker: RunWorker
    run_slots: RunSlots
    executions: set[runs.Execution]
    run_pool: ThreadPoolExecutor
    decide_pool: ThreadPoolExecutor


def execute(req: OptimizeRequest, objective: Compiled, budget: Budget,
            monitor: decido.RunMonitor) -> decido.OptimizeResult | decido.ParetoResult:
    """Run one optimization (in a pool thread): of one objective, or of several (its
    front). The request's run keywords are those of :class:`decido.run_spec.RunSpec` a
    request carries; a ``deadline`` in ``budget`` (a synchronous run's admission plus its
    time limit) shortens the time limit by the time the run waited."""
    time_limit = budget.time_limit
    if budget.deadline is not None:
        time_limit = max(min(time_limit, budget.deadline - time.time()), MIN_TIME_LIMIT)
    keywords = {name: getattr(req, name)
                for name in keyword_names(several=req.several, wire=True)}
    keywords.update(engine=req.engine_id, max_evaluations=budget.max_evaluations,
                    time_limit=time_limit, monitor=monitor,
                    variables=msgspec.to_builtins(req.variables))
    if isinstance(objective, list):
        assert not isinstance(req.objectives, UnsetType)
        items = [{"name": o.name, "expression": e, "goal": o.goal or req.goal}
                 for o, e in zip(req.objectives, objective, strict=True)]
        return decido.optimize(items, req.bounds or None, goal=req.goal, **keywords)
    return decido.optimize(objective, req.bounds or None, goal=req.goal, **keywords)


async def admit_run(ctx: RunServices, gate: admission.Gate, req: OptimizeRequest,
                    budget: Budget, *, slots: RunSlots | None = None,
                    claim: Claim | None = None) -> RunRow:
    """Record and count one run of ``gate``'s key, the request's admission (module docs);
    its row as recorded. ``slots``: a ``/v1/optimize`` run takes one of them first (503
    ``overloaded`` when none is free; given back when the admission fails), else it is a
    ``/v1/runs`` submission (the store-wide queue cap applies); ``claim``: the request's
    pending ``Idempotency-Key`` record, answered in the same transaction."""
    worker: RunWorker = ctx.run_worker
    key = gate.key
    if worker.stopping:  # SIGTERM: this worker admits no more runs
        raise ServiceError("overloaded", "this worker is stopping; retry (another worker or "
                       "node will take it)", headers={"Retry-After": "1"})
    run_id = runs.new_run_id()
    document = RunDocument(request=req, budget=budget)
    store: Store = ctx.store
    row = RunRow(
        id=run_id, key_id=key["id"], created_at=iso_utc(ctx.settings.now()),
        engine=req.engine_id, dims=req.dims, goal=req.run_goal, seed=req.seed,
        state="queued", document=document, owner=worker.owner,
        lease_until=time.time() + worker.lease, metadata=req.metadata)
    answer = None if claim is None else claim.record(run_id, row)
    cap = gate.counters.row["max_runs"]
    if slots is not None:
        try:
            slots.acquire()
        except ServiceError:  # 503 overloaded: nothing counted; the headers show the minute
            await gate.observe()
            raise
    try:
        enqueued = await store.runs.enqueue(
            msgspec.structs.asdict(row), gate.counted(), cap,
            None if slots is not None else ctx.settings.run_backlog, answer)
        if isinstance(enqueued, str):  # refused: the X-RateLimit-* headers every answer to
            # a key carries, read without counting
            await gate.observe()
        if enqueued == "cap":
            raise ServiceError("too_many_runs", f"this key has {cap} runs queued or running, "
                               f"the most its tier allows; retry when one ends",
                               headers={"Retry-After": "1"}, extra={"limit_value": cap})
        if enqueued == "queue":
            raise ServiceError("overloaded", "the run queue is full; retry shortly",
                               headers={"Retry-After": "1"})
        gate.settle(enqueued)
    except BaseException:
        if slots is not None:
            slots.release()
        raise
    return row


async def start_run(ctx: RunServices, gate: admission.Gate, request_id: str,
                    req: OptimizeRequest, objective: Compiled, budget: Budget,
                    claim: Claim | None = None) -> runs.Execution:
    """Admit the run of ``gate``'s key, the request's admission, on one of the worker's
    ``run_slots`` (:func:`admit_run`, answering ``claim``), and start it in this worker's
    run pool (``/v1/optimize``); the slot is given back when the run ends. The time limit
    counts from now: the run's wait for a thread is taken from it."""
    slots = ctx.run_slots
    budget = msgspec.structs.replace(budget, deadline=time.time() + budget.time_limit)
    row = await admit_run(ctx, gate, req, budget, slots=slots, claim=claim)
    worker: RunWorker = ctx.run_worker
    try:
        execution = worker.launch(gate.key["id"], row.id, request_id, row.document, objective,
                                  queued=False)
    except BaseException:
        slots.release()
        raise
    assert execution.task is not None
    execution.task.add_done_callback(lambda _: slots.release())
    return execution


async def enqueue(ctx: RunServices, gate: admission.Gate, request_id: str,
                  req: OptimizeRequest, objective: Compiled, budget: Budget,
                  claim: Claim | None = None) -> RunRow:
    """Admit the run of ``gate``'s key queued (:func:`admit_run`, ``claim`` answered with
    it) and start it in this worker when one of its run threads is free, else leave it to
    whichever worker takes it first (``/v1/runs``, the dashboard's replay); its row as
    admitted (``queued``)."""
    row = await admit_run(ctx, gate, req, budget, claim=claim)
    worker: RunWorker = ctx.run_worker
    if worker.free() > 0:
        worker.launch(gate.key["id"], row.id, request_id, row.document, objective)
    else:
        await worker.release(row.id)
    return row


class RunWorker(Poller):
    """Claims queued runs for this worker process and sweeps expired leases (module
    docs); :meth:`stop` stops claiming (the runs in progress go on; see
    :func:`runs.wind_down`). ``owner`` names this process in the rows it owns."""

    def __init__(self, ctx: RunServices) -> None:
        super().__init__("run worker", CLAIM_INTERVAL)
        self.ctx = ctx
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self.lease = float(ctx.settings.run_lease)
        self._sweep, self._prune = Every(SWEEP_INTERVAL), Every(PRUNE_INTERVAL)
        self._listening: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the rounds, woken by every run given back to the queue anywhere."""
        super().start()
        self._listening = asyncio.ensure_future(
            self.ctx.store.wakeups.listen(RUNS_CHANNEL, self.wake.set))

    async def stop(self) -> None:
        """Stop listening and claiming (after the round in progress)."""
        if self._listening is not None:
            self._listening.cancel()
        await super().stop()

    def free(self) -> int:
        """Run threads of this worker not taken by a run."""
        return int(self.ctx.settings.run_threads) - len(self.ctx.executions)

    def track(self, execution: runs.Execution) -> None:
        """Hold ``execution`` in ``ctx.executions`` until it ends (then look for more)."""
        assert execution.task is not None
        self.ctx.executions.add(execution)

        def done(_: object) -> None:
            self.ctx.executions.discard(execution)
            self.wake.set()

        execution.task.add_done_callback(done)

    def launch(self, key_id: str, run_id: str, request_id: str, document: RunDocument,
               objective: Compiled, *, queued: bool = True,
               attempts: int = 0) -> runs.Execution:
        """Execute an owned run in this worker's run pool (``queued``: a ``/v1/runs``
        run, given back to the queue if the worker stops before it starts; ``attempts``:
        the times it was given back after its process stopped)."""
        execution = runs.Execution(self.ctx.store, key_id, run_id, request_id, document,
                                   self.owner, self.lease, queued=queued, attempts=attempts)
        execution.task = asyncio.ensure_future(execution.drive(
            self.ctx.run_pool, partial(execute, document.request, objective, document.budget)))
        self.track(execution)
        return execution

    async def release(self, run_id: str) -> None:
        """Give an owned run that has not started to the queue."""
        store: Store = self.ctx.store
        await store.runs.update(run_id, {"owner": None, "lease_until": None},
                               {"owner": self.owner})
        self.wake.set()
        await announce(store)

    async def _claimed(self, row: RunRow) -> None:
        """Start a run claimed from the queue (a run whose request no longer compiles
        fails with the problem)."""
        try:
            objective = await asyncio.get_running_loop().run_in_executor(
                self.ctx.decide_pool, compile_objective, row.document.request)
        except Exception as exc:  # noqa: BLE001 - the run fails, the worker goes on
            await runs.fail_run(self.ctx.store, row, error=as_service_error(exc))
            return
        execution = self.launch(row.key_id, row.id, "", row.document, objective,
                                attempts=row.attempts)
        if row.cancel_requested:  # cancelled while this worker claimed it
            execution.stop("request")

    async def round(self) -> None:
        """Claim runs while a run thread is free; sweep and prune when due."""
        store: Store = self.ctx.store
        while self.free() > 0 and not self.stopping:
            row = await store.runs.claim(self.owner, time.time() + self.lease)
            if row is None:
                break
            await self._claimed(row)
        if self._sweep.due() and await sweep(store, time.time()):
            await announce(store)
        if self._prune.due():
            days = self.ctx.settings.run_retention_days
            await store.runs.prune(iso_utc(time.time() - days * 86400.0))


async def sweep(store: Store, now: float) -> int:
    """Give the runs whose lease ran out before ``now`` back to the queue, or fail them
    (:func:`~decido_service.runs.execution.interrupted`); how many this call changed
    (another sweeper may have changed the others)."""
    marked = 0
    for row in await store.runs.expired(now):
        expect = {"owner": row.owner, "lease_until": row.lease_until,
                  "attempts": row.attempts}
        marked += await runs.interrupted(store, row, expect)
    return marked


async def announce(store: Store) -> None:
    """Wake the idle run workers of every node: a run was given back to the queue (a
    hint: a failure to send it is ignored, they look anyway every
    :data:`CLAIM_INTERVAL` seconds)."""
    with contextlib.suppress(StoreError):
        await store.wakeups.notify(RUNS_CHANNEL)
