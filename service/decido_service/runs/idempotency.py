"""``Idempotency-Key`` on ``POST /v1/runs`` and ``POST /v1/optimize``.

A client that may retry a submission sends a key of its choice (1 to
:data:`MAX_KEY_LENGTH` characters; longer, or empty: 400 ``invalid_parameter``). The
record is the API key's, kept :data:`TTL` seconds (24 h) in the store, and holds a
fingerprint of the request (method, path and body bytes):

- the first request with the key is checked as usual (credentials, validation, caps:
  nothing about the key is stored for a request refused there); right before it is
  counted its record is written *pending*; when the run is admitted the record gets its
  outcome (the run id, and for ``/v1/runs`` the 202 answer); when the admission is
  refused (429, 503) the pending record is forgotten, so a retry is a new request;
- a retry with the same request gets the first answer again and counts nothing:
  ``/v1/runs`` the same 202 body, ``/v1/optimize`` the run's answer once it has ended
  (rebuilt from the run; while it runs, 409);
- the key with another request: 422 ``idempotency_key_reused``; while the first request
  is being admitted (or, ``/v1/optimize``, while its run lasts): 409
  ``idempotency_key_in_use`` with ``Retry-After: 1``.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator
from typing import Any

import orjson
from sanic import Request

from decido_service.http.problems import PROBLEM_TYPE, ApiError
from decido_service.http.responses import Response, json_response
from decido_service.runs.api import run_view
from decido_service.store import KeyRecord, Store

__all__ = ["MAX_KEY_LENGTH", "TTL", "Claim", "claim", "header", "replay", "replayed"]

#: the longest Idempotency-Key accepted
MAX_KEY_LENGTH = 255
#: seconds an idempotency record is kept
TTL = 86400.0


class Claim:
    """A pending record of this request; :meth:`done` stores the outcome."""

    def __init__(self, store: Store, key_id: str, idem_key: str) -> None:
        self.store = store
        self.key_id = key_id
        self.idem_key = idem_key
        self.outcome: dict[str, Any] | None = None

    def done(self, run_id: str, status: int, body: bytes | None = None) -> None:
        """The admitted run (and, to be replayed as is, the answer's status and body)."""
        self.outcome = {"run_id": run_id, "status": status,
                        "body": None if body is None else body.decode()}


def header(request: Request) -> str | None:
    """The request's Idempotency-Key (400 when empty or too long)."""
    value: str | None = request.headers.get("idempotency-key")
    if value is None:
        return None
    if not 1 <= len(value) <= MAX_KEY_LENGTH:
        raise ApiError("invalid_parameter", f"Idempotency-Key: expected 1 to "
                                            f"{MAX_KEY_LENGTH} characters, got {len(value)}")
    return value


@contextlib.asynccontextmanager
async def claim(request: Request, key: KeyRecord,
                idem_key: str | None) -> AsyncIterator[Claim | dict[str, Any] | None]:
    """Around an admission: ``None`` without a key; the stored outcome (a dict) of an
    earlier request with the same key and request; else a :class:`Claim` whose outcome
    is stored on the way out (forgotten when the block raised before :meth:`Claim.done`)."""
    if idem_key is None:
        yield None
        return
    ctx = request.app.ctx
    store: Store = ctx.store
    digest = hashlib.sha256(f"{request.method} {request.path}\n".encode())
    digest.update(request.body or b"")
    state, stored = await store.idempotency_begin(key["id"], idem_key, digest.hexdigest(),
                                                  ctx.settings.now(), TTL)
    if state == "mismatch":
        raise ApiError("idempotency_key_reused", "this Idempotency-Key was used with "
                       "another request in the last 24 h; use a new key")
    if state == "pending":
        raise _in_use()
    if state == "done":
        assert stored is not None
        yield orjson.loads(stored)
        return
    pending = Claim(store, key["id"], idem_key)
    try:
        yield pending
    finally:
        outcome = None if pending.outcome is None else orjson.dumps(pending.outcome).decode()
        with contextlib.suppress(Exception):  # a lost outcome: the record expires in 24 h
            await store.idempotency_end(key["id"], idem_key, outcome)


def replay(outcome: dict[str, Any], row: dict[str, Any] | None) -> tuple[int, bytes]:
    """The status and body of a repeated request: the stored answer, or (``/v1/optimize``)
    the answer rebuilt from its run ``row`` once it has ended."""
    if outcome["body"] is not None:
        return int(outcome["status"]), outcome["body"].encode()
    run_id = outcome["run_id"]
    if row is None:
        raise ApiError("not_found", f"the run of this Idempotency-Key, {run_id}, was deleted")
    view = run_view(row, trace=True)
    if view["state"] not in ("succeeded", "cancelled", "failed"):
        raise _in_use()
    if view["problem"] is not None:
        problem = view["problem"]
        return int(problem["status"]), orjson.dumps(problem)
    result = view["result"]
    if result is None:
        raise ApiError("run_cancelled", f"run {run_id} was cancelled before it started")
    body = {"id": run_id, "run_id": run_id, "engine": view["engine"], "status":
            result["status"], "message": result["message"], "x": result["x"],
            "value": result["value"], "goal": view["goal"],
            "evaluations": result["evaluations"], "iterations": result["iterations"],
            "elapsed_ms": result["elapsed_ms"], "seed": result["seed"], "dims": view["dims"],
            "history": [[e, b] for e, _, b in view["trace"]],
            "feasible": result.get("feasible", True),
            "max_violation": result.get("max_violation", 0.0),
            "constraints": result.get("constraints") or [],
            "variables": result.get("variables")}
    return 200, orjson.dumps(body)


async def replayed(request: Request, key: KeyRecord, outcome: dict[str, Any]) -> Response:
    """The answer to a repeated request (:func:`replay`), with the run's ``Location``."""
    store: Store = request.app.ctx.store
    row = None if outcome["body"] is not None else await store.get_run(
        key["id"], outcome["run_id"])
    status, body = replay(outcome, row)
    return json_response(body, status=status,
                         headers={"Location": f"/v1/runs/{outcome['run_id']}"},
                         content_type=PROBLEM_TYPE if status >= 400 else "application/json")


def _in_use() -> ApiError:
    return ApiError("idempotency_key_in_use", "a request with this Idempotency-Key is still "
                    "being answered; retry shortly", headers={"Retry-After": "1"})
