"""The account surface: create a key (``POST /v1/keys``) and read its usage (``GET /v1/usage``)."""

from __future__ import annotations

from functools import partial

import orjson
from sanic import Blueprint, Request
from sanic.response import HTTPResponse

from decido_service import limits
from decido_service.auth import admit, authenticate, client_address
from decido_service.middleware import endpoint
from decido_service.responses import json_response, read_route
from decido_service.schemas import json_body, parse_key_request

__all__ = ["bp"]

bp = Blueprint("account")


@bp.post("/keys")
@endpoint
async def create_key(request: Request) -> HTTPResponse:
    """A new free/free key; the secret is in this response only (throttled per address)."""
    body = parse_key_request(json_body(request, optional=True))
    settings, ctx = request.app.ctx.settings, request.app.ctx
    record, secret = await admit(
        request, limits.ip_specs("keys", client_address(request), settings=settings),
        ctx.store.create_key, "free", "free", body.label)
    out = {"key": secret, "id": record["id"], "prefix": record["prefix"], "plan": record["plan"],
           "tier": record["tier"], "label": record["label"], "created_at": record["created_at"]}
    return json_response(orjson.dumps(out), status=201, headers={"Cache-Control": "no-store"})


@read_route(bp, "/usage")
@endpoint
async def usage(request: Request) -> HTTPResponse:
    """The key's plan, tier, limits and current usage on both surfaces."""
    key = authenticate(request, "usage")
    settings, ctx = request.app.ctx.settings, request.app.ctx
    doc = await admit(request, limits.specs_for("usage", key, settings=settings),
                      partial(limits.usage_document, settings=settings), ctx.store, key,
                      settings.now())
    return json_response(orjson.dumps(doc))
