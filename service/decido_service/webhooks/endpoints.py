"""The ``/v1/webhooks`` blueprint: thin handlers over :mod:`decido_service.webhooks.api`.

Reads and changes are not counted; each checks the key against the store (a revoked key
is refused at once)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

import orjson
from sanic import Blueprint, Request
from sanic.response import HTTPResponse

from decido_service.admission import authenticate
from decido_service.http.endpoint import endpoint
from decido_service.http.responses import READ, Response, json_response, read_route
from decido_service.schemas import decode_body, json_bytes
from decido_service.types.webhooks import WebhookCreate, WebhookUpdate
from decido_service.webhooks import api

__all__ = ["bp"]

bp = Blueprint("webhooks")
Handler = TypeVar("Handler", bound=Callable[..., Awaitable[Any]])
_SECRET_HEADERS = {"Cache-Control": "no-store"}


def _route(uri: str, methods: tuple[str, ...]) -> Callable[[Handler], Handler]:
    """Sanic's ``Blueprint.route``, typed."""
    return cast(Callable[[Handler], Handler], bp.route(uri, methods=methods))


@_route("/webhooks", (*READ, "POST"))
@endpoint
async def webhooks(request: Request) -> HTTPResponse:
    """GET: the key's endpoints; POST: a new one (201, its secret shown once)."""
    key = await authenticate(request, fresh=True)
    store = request.app.ctx.store
    if request.method == "POST":
        req = decode_body(WebhookCreate, json_bytes(request))
        created = await api.create(store, request.app.ctx.settings, key, req)
        return json_response(orjson.dumps(created), status=201, headers=_SECRET_HEADERS)
    rows = await store.list_webhooks(key["id"])
    return json_response(orjson.dumps({"data": [api.webhook_view(r) for r in rows]}))


@_route("/webhooks/<webhook_id:str>", (*READ, "PATCH", "DELETE"))
@endpoint
async def one_webhook(request: Request, webhook_id: str) -> HTTPResponse:
    """GET: one endpoint (never its secret); PATCH: change it; DELETE: delete it (204)."""
    key = await authenticate(request, fresh=True)
    store = request.app.ctx.store
    if request.method == "PATCH":
        req = decode_body(WebhookUpdate, json_bytes(request))
        changed = await api.update(store, request.app.ctx.settings, key, webhook_id, req)
        return json_response(orjson.dumps(changed))
    if request.method == "DELETE":
        await api.delete(store, key, webhook_id)
        return Response(status=204)
    return json_response(orjson.dumps(api.webhook_view(await api.find(store, key, webhook_id))))


@bp.post("/webhooks/<webhook_id:str>/rotate")
@endpoint
async def rotate(request: Request, webhook_id: str) -> HTTPResponse:
    """A new secret (shown once); the previous one signs beside it for 24 h."""
    key = await authenticate(request, fresh=True)
    rotated = await api.rotate(request.app.ctx.store, key, webhook_id)
    return json_response(orjson.dumps(rotated), headers=_SECRET_HEADERS)


@bp.post("/webhooks/<webhook_id:str>/test")
@endpoint
async def test(request: Request, webhook_id: str) -> HTTPResponse:
    """Send a ``webhook.test`` event at once (202 with its delivery)."""
    key = await authenticate(request, fresh=True)
    delivery = await api.send_test(request.app.ctx.store, key, webhook_id)
    request.app.ctx.delivery_worker.wake.set()
    return json_response(orjson.dumps(delivery), status=202)


@read_route(bp, "/webhooks/<webhook_id:str>/deliveries")
@endpoint
async def deliveries(request: Request, webhook_id: str) -> HTTPResponse:
    """A page of the endpoint's deliveries, newest first (``limit``, ``starting_after``)."""
    key = await authenticate(request, fresh=True)
    page = await api.page_deliveries(request.app.ctx.store, key, webhook_id,
                                     request.get_args(keep_blank_values=True))
    return json_response(orjson.dumps(page))


@bp.post("/webhooks/<webhook_id:str>/deliveries/<delivery_id:str>/resend")
@endpoint
async def resend(request: Request, webhook_id: str, delivery_id: str) -> HTTPResponse:
    """Attempt a delivery once more, at once (202 with it)."""
    key = await authenticate(request, fresh=True)
    ctx = request.app.ctx
    delivery = await api.resend(ctx.store, ctx.settings, key, webhook_id, delivery_id)
    ctx.delivery_worker.wake.set()
    return json_response(orjson.dumps(delivery), status=202)
