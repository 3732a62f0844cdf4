"""Resources on ``app.ctx``, opened when a worker starts and closed when it stops.

Per worker process: ``store`` (the async :class:`~decido_service.store.Store`),
``admissions`` (the group commit of counted requests,
:class:`~decido_service.store.group.GroupCommit`), ``key_cache`` and ``readiness`` (see
:mod:`decido_service.admission`), ``decide_pool`` (threads for large decisions and for
compiling objectives),
``run_pool`` (threads for optimization runs, ``settings.run_threads`` of them) and
``run_slots`` (how many ``/v1/optimize`` runs may be running or queued: ``run_threads +
run_queue``), ``sample_pool`` and ``sample_slots`` (the threads for decisions under
uncertainty and their bound: :class:`SampleSlots`), ``executions`` (the runs executing in
this worker), ``run_worker`` (takes queued runs from the store:
:mod:`decido_service.runs.queue`) and ``run_feeds`` (the runs watched over Server-Sent
Events: :mod:`decido_service.runs.events`), ``streams`` (the open streams, ended when their
key is revoked: :mod:`decido_service.streams`) and ``delivery_worker`` (webhook deliveries:
:mod:`decido_service.webhooks.worker`).
:func:`in_thread` is how handlers reach the pools.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

from sanic import Sanic

from decido_service.admission import KeyCache, Readiness, SpentBudgets
from decido_service.http.context import ApiRequest
from decido_service.http.problems import ApiError
from decido_service.runs.events import Feeds
from decido_service.runs.execution import wind_down
from decido_service.runs.queue import RunWorker
from decido_service.store import open_store
from decido_service.store.group import GroupCommit
from decido_service.streams import StreamGuard
from decido_service.studies.api import Context as StudyContext
from decido_service.studies.events import StudyFeeds
from decido_service.studies.replay import StudyCache
from decido_service.studies.sweeper import LeaseSweeper
from decido_service.webhooks.worker import DeliveryWorker

__all__ = ["INLINE_BYTES", "RunSlots", "SampleSlots", "by_size", "in_thread", "register"]

T = TypeVar("T")
DECIDE_THREADS = 2
#: threads of a worker for decisions under uncertainty (SMAA), apart from the decision
#: threads, so a sampled decision never holds up another key's large decision or a
#: compile; and how many may wait for one (beyond: 503 ``overloaded``)
SAMPLE_THREADS, SAMPLE_QUEUE = 1, 3


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
                raise ApiError(
                    "overloaded", "every optimization slot of this worker is busy; retry shortly",
                    headers={"Retry-After": "1"},
                )
            self.in_flight += 1

    def release(self) -> None:
        """Give a slot back."""
        with self._lock:
            self.in_flight -= 1


class SampleSlots:
    """The sampled decisions (SMAA) of a worker in flight, computing or waiting for one
    of its :data:`SAMPLE_THREADS`: at most ``capacity`` in all and one per key, so one
    key's decisions never queue another key's behind them (used on the event loop)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.keys: set[str] = set()

    def acquire(self, key_id: str) -> None:
        """Take a slot for ``key_id``, or raise 503 ``overloaded`` (``Retry-After: 1``)
        when the key has one already or none is free."""
        if key_id in self.keys:
            raise ApiError("overloaded", "a decision under uncertainty of this key is being "
                           "computed by this worker; send the next when it is answered",
                           headers={"Retry-After": "1"})
        if len(self.keys) >= self.capacity:
            raise ApiError("overloaded", "every slot of this worker for decisions under "
                           "uncertainty is busy; retry shortly", headers={"Retry-After": "1"})
        self.keys.add(key_id)

    def release(self, key_id: str) -> None:
        """Give the key's slot back."""
        self.keys.discard(key_id)


async def in_thread(pool: ThreadPoolExecutor, fn: Callable[..., T], *args: Any,
                    shield: bool = True, **kwargs: Any) -> T:
    """Run ``fn(*args, **kwargs)`` in ``pool``. Shielded by default: a client that
    disconnects cancels the handler, never a store commit already handed to a thread."""
    future = asyncio.get_running_loop().run_in_executor(pool, partial(fn, *args, **kwargs))
    return await (asyncio.shield(future) if shield else future)


#: work on a request body of at most this many bytes runs on the event loop (it takes tens
#: of microseconds, less than handing it to a thread); larger bodies go to the worker's
#: decision threads, so one big body never stalls the other requests
INLINE_BYTES = 4096


async def by_size(request: ApiRequest, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` for ``request``: on the event loop when its body is small
    (:data:`INLINE_BYTES`), else in the worker's decision threads."""
    if len(request.body) <= INLINE_BYTES:
        return fn(*args)
    return await in_thread(request.app.ctx.decide_pool, fn, *args)


#: young-generation threshold of the cyclic garbage collector in a worker (Python: 700)
GC_GEN0_THRESHOLD = 10_000


def tune_gc() -> None:
    """Move everything loaded at start-up (modules, the app, NumPy) out of the collector's
    sight (``gc.freeze``) and collect the young generation less often: a request allocates
    few cycles, and scanning start-up objects again and again cost a worker about a tenth
    of its time under load (measured, benchmarks/load)."""
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GC_GEN0_THRESHOLD, gen1, gen2)


async def open_resources(app: Sanic[Any, Any]) -> None:
    """``before_server_start``: the store, caches and thread pools of this worker."""
    settings = app.ctx.settings
    store = app.ctx.store = await open_store(
        settings.db, clock=settings.clock,
        decision_retention=settings.decision_retention_days * 86400.0,
        decision_log_bytes=settings.decision_log_bytes)
    store.start_pruning()
    app.ctx.admissions = GroupCommit(store.admissions)
    app.ctx.key_cache = KeyCache(store)
    app.ctx.readiness = Readiness(store)
    app.ctx.spent_budgets = SpentBudgets()
    app.ctx.decide_pool = ThreadPoolExecutor(DECIDE_THREADS, thread_name_prefix="decido-decide")
    app.ctx.sample_pool = ThreadPoolExecutor(SAMPLE_THREADS, thread_name_prefix="decido-sample")
    app.ctx.sample_slots = SampleSlots(SAMPLE_THREADS + SAMPLE_QUEUE)
    app.ctx.run_pool = ThreadPoolExecutor(settings.run_threads, thread_name_prefix="decido-run")
    app.ctx.run_slots = RunSlots(settings.run_threads + settings.run_queue)
    app.ctx.executions = set()  # the runs going on in this worker (runs.Execution)
    app.ctx.run_feeds = Feeds()  # the runs watched over SSE in this worker
    # open streams: the worker's cap, and the end of a revoked key's
    app.ctx.streams = StreamGuard(store, settings.worker_streams)
    app.ctx.streams.start()
    app.ctx.run_worker = RunWorker(app.ctx)  # takes queued runs from the store
    app.ctx.run_worker.start()
    app.ctx.delivery_worker = DeliveryWorker(store, settings, app.ctx.run_worker.owner)
    app.ctx.delivery_worker.start()  # webhook deliveries (decido_service.webhooks)
    app.ctx.studies = StudyContext(store, StudyCache())  # this worker's replayed studies
    # the studies watched over SSE in this worker (their streams counted with the runs')
    app.ctx.study_feeds = StudyFeeds(app.ctx.run_feeds.streams)
    app.ctx.lease_sweeper = LeaseSweeper(app.ctx.studies)
    app.ctx.lease_sweeper.start()  # expired trial leases (decido_service.studies)
    tune_gc()


async def close_resources(app: Sanic[Any, Any]) -> None:
    """``after_server_stop``: finish the runs (:func:`stop_runs`, a no-op when it ran
    already), stop the pools, send the admissions still queued, close the store."""
    await stop_runs(app)
    loop = asyncio.get_running_loop()
    for name in ("run_pool", "decide_pool", "sample_pool"):
        pool = getattr(app.ctx, name, None)
        if pool is not None:
            await loop.run_in_executor(None, partial(pool.shutdown, wait=True,
                                                     cancel_futures=True))
    admissions = getattr(app.ctx, "admissions", None)
    if admissions is not None:
        await admissions.drain()
    store = getattr(app.ctx, "store", None)
    if store is not None:
        await store.close()


async def stop_runs(app: Sanic[Any, Any]) -> None:
    """``before_server_stop`` (SIGTERM), while the open connections are still served:
    ignore a further SIGTERM or SIGINT (a process manager signals the whole group: the
    worker gets one of its own and one relayed by Sanic's main process, which would stop
    the event loop in the middle of this), stop admitting and taking queued runs, give
    the runs in progress :data:`~decido_service.runs.SHUTDOWN_GRACE` seconds, then stop
    the rest (their final state is recorded; their clients get their answers before
    Sanic closes the connections)."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, lambda: None)
    # no more runs, deliveries or lease sweeps taken
    for name in ("run_worker", "delivery_worker", "lease_sweeper", "streams"):
        worker = getattr(app.ctx, name, None)
        if worker is not None:
            await worker.stop()
    executions = getattr(app.ctx, "executions", None)
    if executions:
        await wind_down(executions)


def register(app: Sanic[Any, Any]) -> None:
    """Attach the listeners to ``app``."""
    app.register_listener(stop_runs, "before_server_stop")
    app.register_listener(open_resources, "before_server_start")
    app.register_listener(close_resources, "after_server_stop")
