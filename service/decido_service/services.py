"""A worker's services: what the capabilities take, built when a worker starts and
stopped when it stops.

Per worker process: ``store`` (the async :class:`~decido_service.store.Store`),
``admissions`` (the group commit of counted requests,
:class:`~decido_service.store.group.GroupCommit`), ``key_cache``, ``readiness`` and
``spent_budgets`` (see :mod:`decido_service.admission`), ``decide_pool`` (threads for
large decisions and for compiling objectives), ``run_pool`` (threads for optimization
runs, ``settings.run_threads`` of them) and ``run_slots`` (how many ``/v1/optimize`` runs
may be running or queued: ``run_threads + run_queue``), ``sample_pool`` and
``sample_slots`` (the threads for decisions under uncertainty and their bound:
:class:`SampleSlots`), ``executions`` (the runs executing in this worker), ``run_worker``
(takes queued runs from the store: :mod:`decido_service.runs.queue`), ``run_feeds`` (the
runs watched over Server-Sent Events: :mod:`decido_service.runs.events`), ``streams``
(the open streams: the worker's cap, and the end of a revoked key's,
:mod:`decido_service.streams`), ``delivery_worker`` (webhook deliveries:
:mod:`decido_service.webhooks.worker`),
``studies``, ``study_feeds`` (the studies watched over Server-Sent Events:
:mod:`decido_service.studies.events`) and ``lease_sweeper`` (:mod:`decido_service.studies`).
:func:`in_thread` is how the capabilities reach the pools. The HTTP layer's context
(:class:`decido_service.http.context.AppContext`) is a :class:`Services` with what only
HTTP needs added.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

from decido_service.admission import KeyCache, Readiness, SpentBudgets
from decido_service.config import Settings
from decido_service.errors import ServiceError
from decido_service.feeds import Feeds
from decido_service.runs.events import RunFeed
from decido_service.runs.execution import Execution, wind_down
from decido_service.runs.queue import RunSlots, RunWorker
from decido_service.store import RunRow, Store, open_store
from decido_service.store.group import GroupCommit
from decido_service.streams import StreamGuard
from decido_service.studies.api import Context as StudyContext
from decido_service.studies.events import StudyFeed
from decido_service.studies.replay import StudyCache
from decido_service.studies.sweeper import LeaseSweeper
from decido_service.webhooks.worker import DeliveryWorker

__all__ = ["INLINE_BYTES", "SampleSlots", "Services", "by_size", "close",
           "in_thread", "open_services", "stop_runs"]

T = TypeVar("T")
DECIDE_THREADS = 2
#: threads of a worker for decisions under uncertainty (SMAA), apart from the decision
#: threads, so a sampled decision never holds up another key's large decision or a
#: compile; and how many may wait for one (beyond: 503 ``overloaded``)
SAMPLE_THREADS, SAMPLE_QUEUE = 1, 3
#: work on a request body of at most this many bytes runs on the event loop (it takes tens
#: of microseconds, less than handing it to a thread); larger bodies go to the worker's
#: decision threads, so one big body never stalls the other requests
INLINE_BYTES = 4096


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
            raise ServiceError("overloaded", "a decision under uncertainty of this key is "
                               "being computed by this worker; send the next when it is "
                               "answered", headers={"Retry-After": "1"})
        if len(self.keys) >= self.capacity:
            raise ServiceError("overloaded", "every slot of this worker for decisions under "
                               "uncertainty is busy; retry shortly",
                               headers={"Retry-After": "1"})
        self.keys.add(key_id)

    def release(self, key_id: str) -> None:
        """Give the key's slot back."""
        self.keys.discard(key_id)


class Services:
    """A worker's services (module docs); an attribute is set before it is read."""

    settings: Settings
    store: Store
    admissions: GroupCommit
    key_cache: KeyCache
    readiness: Readiness
    spent_budgets: SpentBudgets
    decide_pool: ThreadPoolExecutor
    run_pool: ThreadPoolExecutor
    run_slots: RunSlots
    sample_pool: ThreadPoolExecutor
    sample_slots: SampleSlots
    executions: set[Execution]
    run_feeds: Feeds[RunFeed, RunRow]
    streams: StreamGuard
    run_worker: RunWorker
    delivery_worker: DeliveryWorker
    studies: StudyContext
    study_feeds: Feeds[StudyFeed, dict[str, Any]]
    lease_sweeper: LeaseSweeper

    def __init__(self, settings: Settings) -> None:
        self.settings = settings


async def in_thread(pool: ThreadPoolExecutor, fn: Callable[..., T], *args: Any,
                    shield: bool = True, **kwargs: Any) -> T:
    """Run ``fn(*args, **kwargs)`` in ``pool``. Shielded by default: a client that
    disconnects cancels the handler, never a store commit already handed to a thread."""
    future = asyncio.get_running_loop().run_in_executor(pool, partial(fn, *args, **kwargs))
    return await (asyncio.shield(future) if shield else future)


async def by_size(services: Services, body: bytes, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` for a request of ``body``: on the event loop when it is small
    (:data:`INLINE_BYTES`), else in the worker's decision threads."""
    if len(body) <= INLINE_BYTES:
        return fn(*args)
    return await in_thread(services.decide_pool, fn, *args)


async def open_services(services: Services) -> None:
    """The store, caches, thread pools and workers of this worker process."""
    settings = services.settings
    store = services.store = await open_store(
        settings.db, clock=settings.clock,
        decision_retention=settings.decision_retention_days * 86400.0,
        decision_log_bytes=settings.decision_log_bytes)
    store.start_pruning()
    services.admissions = GroupCommit(store.admissions)
    services.key_cache = KeyCache(store)
    services.readiness = Readiness(store)
    services.spent_budgets = SpentBudgets()
    services.decide_pool = ThreadPoolExecutor(DECIDE_THREADS,
                                              thread_name_prefix="decido-decide")
    services.sample_pool = ThreadPoolExecutor(SAMPLE_THREADS,
                                              thread_name_prefix="decido-sample")
    services.sample_slots = SampleSlots(SAMPLE_THREADS + SAMPLE_QUEUE)
    services.run_pool = ThreadPoolExecutor(settings.run_threads,
                                           thread_name_prefix="decido-run")
    services.run_slots = RunSlots(settings.run_threads + settings.run_queue)
    services.executions = set()  # the runs going on in this worker (runs.Execution)
    services.run_feeds = Feeds(RunFeed)  # the runs watched over SSE in this worker
    # open streams: the worker's cap, and the end of a revoked key's
    services.streams = StreamGuard(store, settings.worker_streams)
    services.streams.start()
    services.run_worker = RunWorker(services)  # takes queued runs from the store
    services.run_worker.start()
    services.delivery_worker = DeliveryWorker(store, settings, services.run_worker.owner)
    services.delivery_worker.start()  # webhook deliveries (decido_service.webhooks)
    # this worker's replayed studies, each keeping its newest events
    services.studies = StudyContext(store, StudyCache(), settings.study_events)
    # the studies watched over SSE in this worker (their streams counted with the runs')
    services.study_feeds = Feeds(StudyFeed, services.run_feeds.streams)
    services.lease_sweeper = LeaseSweeper(services.studies)
    services.lease_sweeper.start()  # expired trial leases (decido_service.studies)


async def stop_runs(services: Services) -> None:
    """Stop admitting and taking queued runs, deliveries, lease sweeps and the stream
    guard's looks, give the runs in progress
    :data:`~decido_service.runs.SHUTDOWN_GRACE` seconds, then stop the rest (their final
    state is recorded). A no-op the second time."""
    for name in ("run_worker", "delivery_worker", "lease_sweeper", "streams"):
        worker = getattr(services, name, None)
        if worker is not None:
            await worker.stop()
    executions = getattr(services, "executions", None)
    if executions:
        await wind_down(executions)


async def close(services: Services) -> None:
    """Finish the runs (:func:`stop_runs`), stop the pools, send the admissions still
    queued, close the store."""
    await stop_runs(services)
    loop = asyncio.get_running_loop()
    for name in ("run_pool", "decide_pool", "sample_pool"):
        pool = getattr(services, name, None)
        if pool is not None:
            await loop.run_in_executor(None, partial(pool.shutdown, wait=True,
                                                     cancel_futures=True))
    admissions = getattr(services, "admissions", None)
    if admissions is not None:
        await admissions.drain()
    store = getattr(services, "store", None)
    if store is not None:
        await store.close()
