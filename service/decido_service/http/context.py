"""``app.ctx`` typed (Sanic's typed context): what a worker holds, and the request type
handlers take (``request.app.ctx.store`` is a :class:`~decido_service.store.Store`).

``app.ctx`` is the worker's :class:`~decido_service.services.Services` (set per worker
when it starts: :mod:`decido_service.http.resources`) with what only HTTP needs, set when
the app is made: ``openapi`` (the document's bytes), ``body_deadlines``,
``connection_cap`` (``None``: no cap), ``access_log``'s place, ``metrics`` (``None``
unless ``DECIDO_METRICS``) and ``dashboard_secret``.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING

from sanic import Request, Sanic
from sanic.config import Config

from decido_service.services import Services

if TYPE_CHECKING:
    from decido_service.config import Settings
    from decido_service.http.access_log import AccessLog
    from decido_service.http.connections import ConnectionCap
    from decido_service.http.responses import BodyDeadlines
    from decido_service.metrics import Metrics

__all__ = ["App", "AppContext", "ApiRequest"]


class AppContext(Services):
    """What ``app.ctx`` holds (module docs); an attribute is set before it is read."""

    openapi: bytes
    body_deadlines: BodyDeadlines
    connection_cap: ConnectionCap | None
    access_log: AccessLog
    metrics: Metrics | None
    dashboard_secret: bytes | None

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.connection_cap = None
        self.metrics = None
        self.dashboard_secret = None


App = Sanic[Config, AppContext]
ApiRequest = Request[App, SimpleNamespace]
