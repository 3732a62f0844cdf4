"""The dashboard's webhooks page: the key's endpoints (add, test, disable or enable,
rotate, delete) and each endpoint's deliveries with their attempts. Every action calls
:mod:`decido_service.webhooks.api`, as the API does; a refused URL or a cap is shown next
to the form, which keeps what was typed."""

from __future__ import annotations

from typing import Any

import msgspec
from sanic.response import HTTPResponse

from decido_service.dashboard.render import page, redirect
from decido_service.dashboard.routes import api, form, html
from decido_service.dashboard.session import Session
from decido_service.http.context import ApiRequest
from decido_service.http.params import parse
from decido_service.http.problems import ApiError
from decido_service.types.webhooks import (
    EVENT_TYPES,
    DeliveryPage,
    WebhookCreate,
    WebhookCreated,
    WebhookUpdate,
)
from decido_service.webhooks import api as hooks

__all__: list[str] = []


async def _page(request: ApiRequest, session: Session, *, shown: WebhookCreated | None = None,
                problems: tuple[str, ...] = (),
                fields: dict[str, Any] | None = None) -> HTTPResponse:
    rows = await request.app.ctx.store.webhooks.of_key(session.key["id"])
    return page("webhooks.html", session=session,
                hooks=[hooks.webhook_view(r) for r in rows], shown=shown, problems=problems,
                events=EVENT_TYPES, fields=fields or {"url": "", "events": [], "description": ""})


@api.route("/webhooks", "GET")
@html
async def webhook_list(request: ApiRequest, session: Session) -> HTTPResponse:
    """The key's endpoints and the form to add one."""
    return await _page(request, session)


@api.route("/webhooks", "POST")
@html
async def add(request: ApiRequest, session: Session) -> HTTPResponse:
    """Add an endpoint (its secret shown once); the faults next to the form otherwise."""
    sent = form(request)
    fields = {"url": (sent.get("url") or "").strip(),
              "events": sent.getlist("events") or ["*"],
              "description": (sent.get("description") or "").strip()}
    body = {k: v for k, v in fields.items() if v}
    try:
        req = msgspec.convert(body, WebhookCreate)
    except msgspec.ValidationError as exc:
        return await _page(request, session, problems=(str(exc),), fields=fields)
    try:
        created = await hooks.create(request.app.ctx.store, request.app.ctx.settings,
                                   session.key, req)
    except ApiError as error:
        found = [f"{e.get('pointer') or 'body'}: {e.get('message')}"
                 for e in (error.extra or {}).get("errors", [])] or [error.detail]
        return await _page(request, session, problems=tuple(found), fields=fields)
    return await _page(request, session, shown=created)


@api.route("/webhooks/<webhook_id:str>", "GET")
@html
async def deliveries(request: ApiRequest, session: Session, webhook_id: str) -> HTTPResponse:
    """One endpoint's deliveries, newest first, with every attempt."""
    store = request.app.ctx.store
    hook = hooks.webhook_view(await hooks.find(store, session.key, webhook_id))
    args = {k: v[0] for k, v in request.get_args(keep_blank_values=True).items()}
    found = await hooks.page_deliveries(store, session.key, webhook_id,
                                      parse(DeliveryPage, args))
    last = found.data[-1].id if found.has_more else None
    return page("webhook.html", session=session, hook=hook, deliveries=found.data,
                next_after=last)


@api.route("/webhooks/<webhook_id:str>/test", "POST")
@html
async def send_test(request: ApiRequest, session: Session, webhook_id: str) -> HTTPResponse:
    """Send a ``webhook.test`` event at once; the endpoint's deliveries."""
    await hooks.send_test(request.app.ctx.store, session.key, webhook_id)
    request.app.ctx.delivery_worker.wake.set()
    return redirect(f"/dashboard/webhooks/{webhook_id}")


@api.route("/webhooks/<webhook_id:str>/enabled", "POST")
@html
async def set_enabled(request: ApiRequest, session: Session, webhook_id: str) -> HTTPResponse:
    """Disable (``enabled=0``) or enable (``enabled=1``) the endpoint."""
    enabled = form(request).get("enabled") == "1"
    await hooks.update(request.app.ctx.store, request.app.ctx.settings, session.key,
                     webhook_id, WebhookUpdate(enabled=enabled))
    return redirect("/dashboard/webhooks")


@api.route("/webhooks/<webhook_id:str>/rotate", "POST")
@html
async def rotate(request: ApiRequest, session: Session, webhook_id: str) -> HTTPResponse:
    """A new secret, shown once (the previous one signs beside it for 24 h)."""
    rotated = await hooks.rotate(request.app.ctx.store, session.key, webhook_id)
    return await _page(request, session, shown=rotated)


@api.route("/webhooks/<webhook_id:str>/delete", "POST")
@html
async def delete(request: ApiRequest, session: Session, webhook_id: str) -> HTTPResponse:
    """Delete the endpoint and its deliveries."""
    await hooks.delete(request.app.ctx.store, session.key, webhook_id)
    return redirect("/dashboard/webhooks")
