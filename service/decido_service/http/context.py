"""``app.ctx`` typed (Sanic's typed context): what a worker holds, and the request type
handlers take (``request.app.ctx.store`` is a :class:`~decido_service.store.Store`).

Set when the app is made: ``settings``, ``openapi`` (the document's bytes),
``body_deadlines``, ``connection_cap`` (``None``: no cap), ``access_log``'s place and
``metrics`` (``None`` unless ``DECIDO_METRICS``). Per worker, when it starts
(:mod:`decido_service.http.resources`): the store and everything built on it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import TYPE_CHECKING

from sanic import Request, Sanic
from sanic.config import Config

if TYPE_CHECKING:
    from decido_service.admission import KeyCache, Readiness, SpentBudgets
    from decido_service.config import Settings
    from decido_service.http.connections import ConnectionCap
    from decido_service.http.endpoint import AccessLog
    from decido_service.http.resources import RunSlots, SampleSlots
    from decido_service.http.responses import BodyDeadlines
    from decido_service.metrics import Metrics
    from decido_service.runs.events import Feeds
    from decido_service.runs.execution import Execution
    from decido_service.runs.queue import RunWorker
    from decido_service.store import Store
    from decido_service.store.group import GroupCommit
    from decido_service.streams import StreamGuard
    from decido_service.studies.api import Context as StudyContext
    from decido_service.studies.events import StudyFeeds
    from decido_service.studies.sweeper import LeaseSweeper
    from decido_service.webhooks.worker import DeliveryWorker

__all__ = ["App", "AppContext", "ApiRequest"]


class AppContext:
    """What ``app.ctx`` holds (module docs); an attribute is set before it is read."""

    settings: Settings
    openapi: bytes
    body_deadlines: BodyDeadlines
    connection_cap: ConnectionCap | None
    access_log: AccessLog
    metrics: Metrics | None
    dashboard_secret: bytes | None
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
    run_feeds: Feeds
    streams: StreamGuard
    run_worker: RunWorker
    delivery_worker: DeliveryWorker
    studies: StudyContext
    study_feeds: StudyFeeds
    lease_sweeper: LeaseSweeper

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.connection_cap = None
        self.metrics = None
        self.dashboard_secret = None


App = Sanic[Config, AppContext]
ApiRequest = Request[App, SimpleNamespace]
