"""One blueprint per surface, grouped under ``/v1``; their routes carry the operations of the
OpenAPI document (:class:`~decido_service.http.routes.Routes`)."""

from __future__ import annotations

from sanic import Blueprint

from decido_service.blueprints import account, decide, meta, optimize, runs, studies, webhooks
from decido_service.http.context import App
from decido_service.http.openapi import openapi_bytes
from decido_service.http.routes import API_VERSION, Operation

__all__ = ["OPERATIONS", "register"]

_SURFACES = (meta.api, account.api, decide.api, optimize.api, runs.api, studies.api,
             webhooks.api)
#: every documented operation, in the order of the surfaces
OPERATIONS: tuple[Operation, ...] = tuple(op for s in _SURFACES for op in s.operations)


def register(app: App) -> None:
    """Mount every surface on ``app`` as one group with ``version=1`` (paths ``/v1/...``)
    and keep the OpenAPI document of their operations on ``app.ctx.openapi``."""
    app.blueprint(Blueprint.group(*(s.bp for s in _SURFACES), version=API_VERSION))
    app.ctx.openapi = openapi_bytes(OPERATIONS)
