"""The application factory: ``create_app(settings=None)`` builds the Sanic app.

Run it with ``decido serve`` (or ``sanic decido_service.http.app:create_app --factory``). The
factory only glues the parts together with explicit ``register`` calls: timeouts and the
per-address connection cap (:mod:`decido_service.http.connections`), listeners (store,
caches and thread pools on ``app.ctx``, per worker), the finishing of every response
(request ids, rate-limit headers, access logs, and the one error handler that writes
problem+json: :mod:`decido_service.http.endpoint`) and the blueprints (one per surface,
grouped under ``/v1``, every handler wrapped by :func:`decido_service.http.endpoint.endpoint`).
"""

from __future__ import annotations

import orjson
from sanic import Sanic

from decido_service import blueprints, dashboard, metrics
from decido_service.config import Settings
from decido_service.http import connections, endpoint, resources
from decido_service.http.context import App, AppContext
from decido_service.http.responses import DecidoRequest

__all__ = ["create_app"]


def create_app(settings: Settings | None = None) -> App:
    """A new app for ``settings`` (default: the defaults under the ``DECIDO_*`` environment).

    Sanic's own CLI (``sanic decido_service.http.app:create_app --factory``) passes its parsed
    arguments here; anything that is not a :class:`Settings` means "from the environment"."""
    if not isinstance(settings, Settings):
        settings = Settings.from_env()
    app: App = Sanic("decido", dumps=orjson.dumps, loads=orjson.loads,
                     request_class=DecidoRequest, ctx=AppContext(settings))
    app.config.REQUEST_MAX_SIZE = settings.body_limit
    app.config.ACCESS_LOG = False  # replaced by the JSON access log of decido_service.http.endpoint
    app.config.FALLBACK_ERROR_FORMAT = "json"
    connections.register(app, settings)
    resources.register(app)
    endpoint.register(app)
    metrics.register(app)
    blueprints.register(app)
    dashboard.register(app)
    return app
