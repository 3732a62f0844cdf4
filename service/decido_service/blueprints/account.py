"""The account surface: create a key (``POST /v1/keys``) and read its usage (``GET /v1/usage``)."""

from __future__ import annotations

import orjson
from sanic import Blueprint, Request
from sanic.response import HTTPResponse

from decido_service import limits
from decido_service.admission import authenticate, observe, throttle_address
from decido_service.http.endpoint import endpoint
from decido_service.http.responses import json_response, read_route
from decido_service.schemas import decode_key_request, json_bytes

__all__ = ["bp"]

bp = Blueprint("account")


@bp.post("/keys")
@endpoint
async def create_key(request: Request) -> HTTPResponse:
    """A new free/free key; the secret is in this response only (throttled per address)."""
    body = decode_key_request(json_bytes(request, optional=True))
    label = body.label if isinstance(body.label, str) else None  # absent: no label
    await throttle_address(request)
    record, secret = await request.app.ctx.store.create_key("free", "free", label)
    out = {"key": secret, "id": record["id"], "prefix": record["prefix"], "plan": record["plan"],
           "tier": record["tier"], "label": record["label"], "created_at": record["created_at"]}
    return json_response(orjson.dumps(out), status=201, headers={"Cache-Control": "no-store"})


@read_route(bp, "/usage")
@endpoint
async def usage(request: Request) -> HTTPResponse:
    """The key's plan, tier, limits and current usage on both surfaces (counts nothing)."""
    key = await authenticate(request, fresh=True)  # no admission checks it is not revoked
    settings = request.app.ctx.settings
    states = await observe(request, limits.usage_specs(key, settings=settings))
    return json_response(orjson.dumps(limits.usage_document(states, key, settings=settings)))
