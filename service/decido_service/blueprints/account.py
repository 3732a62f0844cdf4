"""The account surface: create a key (``POST /v1/keys``) and read its usage (``GET /v1/usage``)."""

from __future__ import annotations

from sanic.response import HTTPResponse

from decido_service import limits
from decido_service.admission import observe
from decido_service.http.admission import authenticate, issue_free_key
from decido_service.http.context import ApiRequest
from decido_service.http.params import json_bytes
from decido_service.http.responses import answer
from decido_service.http.routes import READ, Doc, Routes
from decido_service.schemas import decode_key_request
from decido_service.types import KeyCreated

__all__ = ["api"]

api = Routes("account")


@api.route("/keys", post=Doc(
    "createKey", "Create a free key (the secret is shown once)", "account", (201, "KeyCreated"),
    (400, 415, 422, 413, 429, 503), "KeyRequest", body_required=False, keyed=False))
async def create_key(request: ApiRequest) -> HTTPResponse:
    """A new free/free key; the secret is in this response only (throttled per address)."""
    body = decode_key_request(json_bytes(request, optional=True))
    label = body.label if isinstance(body.label, str) else None  # absent: no label
    record, secret = await issue_free_key(request, label)
    return answer(KeyCreated(key=secret, id=record["id"], prefix=record["prefix"],
                             plan=record["plan"], tier=record["tier"], label=record["label"],
                             created_at=record["created_at"]),
                  201, {"Cache-Control": "no-store"})


@api.route("/usage", get=Doc("usage", "The key's plan, tier, limits and usage", "account",
                             (200, "Usage"), READ))
async def usage(request: ApiRequest) -> HTTPResponse:
    """The key's plan, tier, limits and current usage on both surfaces (counts nothing)."""
    key = await authenticate(request, fresh=True)  # no admission checks it is not revoked
    settings = request.app.ctx.settings
    states = await observe(request.app.ctx, request.ctx,
                           limits.usage_specs(key, settings=settings))
    return answer(limits.usage_document(states, key, settings=settings))
