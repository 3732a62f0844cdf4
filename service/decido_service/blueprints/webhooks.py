"""The ``/v1/webhooks`` routes: thin handlers over :mod:`decido_service.webhooks.api`,
each documented where it is routed.

Every call is a keyed read under the one read policy
(:func:`decido_service.http.admission.read`: the key checked live, nothing counted, the
``optimize.minute`` headers); a refused parameter is charged to the refused budget like
the runs' reads."""

from __future__ import annotations

from sanic.response import HTTPResponse

from decido_service.http.admission import read
from decido_service.http.context import ApiRequest
from decido_service.http.params import json_bytes, read_query
from decido_service.http.responses import Response, answer
from decido_service.http.routes import READ, Doc, Routes
from decido_service.types import (
    DeliveryPage,
    DeliveryPath,
    WebhookCreate,
    WebhookList,
    WebhookPath,
    WebhookUpdate,
)
from decido_service.webhooks import api as hooks

__all__ = ["api"]

api = Routes("webhooks")
_TAG = "webhooks"
_POSTED = (400, 415, 422, 401, 413, 503)
_SECRET_HEADERS = {"Cache-Control": "no-store"}


@api.route(
    "/webhooks",
    post=Doc("createWebhook", "Add a webhook endpoint (its signing secret is shown once)",
             _TAG, (201, "WebhookCreated"), (*_POSTED, 403), "WebhookCreate",
             description="The URL must be https and reach public addresses only (private, "
                         "loopback, link-local, CGNAT, multicast and reserved addresses are "
                         "refused, 422 at `/url`; operators can exempt networks); "
                         "port 0 and special-use names (`.example`, `.test`, `.invalid`) "
                         "are refused without a lookup. Every fault of the body is listed "
                         "at once. A key's "
                         "endpoints are capped by its tier (403 `too_many_webhooks`). "
                         "Deliveries are signed as Standard Webhooks v1 specifies "
                         "(webhook-id, webhook-timestamp, webhook-signature)."),
    get=Doc("listWebhooks", "The key's webhook endpoints", _TAG, (200, "WebhookList"),
            READ))
async def webhooks(request: ApiRequest) -> HTTPResponse:
    """GET: the key's endpoints, oldest first; POST: a new one (201, its secret once)."""
    key = await read(request, "optimize")
    ctx = request.app.ctx
    if request.method == "POST":
        req = await hooks.decode(WebhookCreate, json_bytes(request), ctx.settings)
        return answer(await hooks.create(ctx.store, ctx.settings, key, req), 201,
                      _SECRET_HEADERS)
    rows = await ctx.store.webhooks.of_key(key["id"])
    return answer(WebhookList(data=[hooks.webhook_view(r) for r in rows]))


@api.route(
    "/webhooks/<webhook_id:str>",
    get=Doc("getWebhook", "One webhook endpoint (never its secret)", _TAG, (200, "Webhook"),
            (404, *READ), params=(WebhookPath,)),
    patch=Doc("updateWebhook", "Change a webhook endpoint (url, events, description, "
              "enabled)", _TAG, (200, "Webhook"), (*_POSTED, 404), "WebhookUpdate",
              params=(WebhookPath,)),
    delete=Doc("deleteWebhook", "Delete a webhook endpoint and its deliveries", _TAG,
               (204, "empty"), (404, *READ), params=(WebhookPath,)))
async def one_webhook(request: ApiRequest, webhook_id: str) -> HTTPResponse:
    """GET: one endpoint; PATCH: change it; DELETE: delete it (204)."""
    key = await read(request, "optimize")
    ctx = request.app.ctx
    if request.method == "PATCH":
        await hooks.find(ctx.store, key, webhook_id)  # another key's URL: never resolved
        req = await hooks.decode(WebhookUpdate, json_bytes(request), ctx.settings)
        return answer(await hooks.update(ctx.store, ctx.settings, key, webhook_id, req))
    if request.method == "DELETE":
        await hooks.delete(ctx.store, key, webhook_id)
        return Response(status=204)
    return answer(hooks.webhook_view(await hooks.find(ctx.store, key, webhook_id)))


@api.route("/webhooks/<webhook_id:str>/rotate", post=Doc(
    "rotateWebhookSecret", "A new signing secret (the previous one signs beside it for 24 h)",
    _TAG, (200, "WebhookCreated"), (404, *READ), params=(WebhookPath,)))
async def rotate(request: ApiRequest, webhook_id: str) -> HTTPResponse:
    """A new secret (shown once); the previous one signs beside it for 24 h."""
    key = await read(request, "optimize")
    return answer(await hooks.rotate(request.app.ctx.store, key, webhook_id), 200,
                  _SECRET_HEADERS)


@api.route("/webhooks/<webhook_id:str>/test", post=Doc(
    "testWebhook", "Send a webhook.test event at once", _TAG, (202, "Delivery"),
    (404, 409, *READ), params=(WebhookPath,)))
async def test(request: ApiRequest, webhook_id: str) -> HTTPResponse:
    """Send a ``webhook.test`` event at once (202 with its delivery)."""
    key = await read(request, "optimize")
    delivery = await hooks.send_test(request.app.ctx.store, key, webhook_id)
    request.app.ctx.delivery_worker.wake.set()
    return answer(delivery, 202)


@api.route("/webhooks/<webhook_id:str>/deliveries", get=Doc(
    "listDeliveries", "The endpoint's deliveries with their attempts, newest first", _TAG,
    (200, "DeliveryList"), (400, 404, 429, *READ), params=(WebhookPath, DeliveryPage)))
async def deliveries(request: ApiRequest, webhook_id: str) -> HTTPResponse:
    """A page of the endpoint's deliveries, newest first (``limit``, ``starting_after``)."""
    key, page = await read_query(request, "optimize", DeliveryPage)
    return answer(await hooks.page_deliveries(request.app.ctx.store, key, webhook_id, page))


@api.route("/webhooks/<webhook_id:str>/deliveries/<delivery_id:str>/resend", post=Doc(
    "resendDelivery", "Attempt a delivery once more, at once (the same webhook-id)", _TAG,
    (202, "Delivery"), (404, 409, *READ), params=(WebhookPath, DeliveryPath)))
async def resend(request: ApiRequest, webhook_id: str, delivery_id: str) -> HTTPResponse:
    """Attempt a delivery once more, at once (202 with it)."""
    key = await read(request, "optimize")
    ctx = request.app.ctx
    delivery = await hooks.resend(ctx.store, ctx.settings, key, webhook_id, delivery_id)
    ctx.delivery_worker.wake.set()
    return answer(delivery, 202)
