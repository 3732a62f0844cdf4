"""Who is asking and what they may do: credentials -> ``request.ctx.key``, then admission.

:func:`authenticate` reads ``Authorization: Bearer <key>`` or ``X-API-Key: <key>`` (both
present and different: 401 ``conflicting_credentials``), looks the key up by its hash and
puts the record on ``request.ctx.key``. :func:`admit` runs the request's counters through
the store's all-or-nothing check-and-increment and keeps the first counter's state on
``request.ctx.rate`` for the ``X-RateLimit-*`` headers; a refused request is a 429 that
names the limit. The secret itself is never stored on the request, logged or echoed.
"""

from __future__ import annotations

import hmac
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sanic import Request

from decido_service import limits
from decido_service.errors import ApiError
from decido_service.listeners import in_thread
from decido_service.store import CounterSpec, KeyRecord, Store

__all__ = ["admit", "authenticate", "client_address", "presented_secret", "rate_state"]

#: one admission at a time per process: threads of a worker queue here (woken at once)
#: rather than in SQLite's busy handler, which sleeps 1, 2, 5, 10... ms between tries
_ADMIT_LOCK = threading.Lock()
_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="decido"'}


def _unauthorized(code: str, detail: str) -> ApiError:
    return ApiError(code, detail, headers=_CHALLENGE)


def presented_secret(request: Request) -> str:
    """The key the request presents; 401 when there is none, it is not a Bearer token,
    or the two headers disagree."""
    header = request.headers.get("authorization")
    api_key = request.headers.get("x-api-key")
    bearer = None
    if header is not None:
        scheme, _, token = header.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise _unauthorized("invalid_credentials", "use 'Authorization: Bearer <key>'")
        bearer = token.strip()
    if api_key is not None:
        api_key = api_key.strip()
    if bearer is not None and api_key is not None and not hmac.compare_digest(
            bearer.encode(), api_key.encode()):
        raise _unauthorized("conflicting_credentials",
                            "Authorization and X-API-Key carry different keys; send one")
    secret = bearer if bearer is not None else api_key
    if not secret:
        raise _unauthorized("missing_credentials",
                            "send your key as 'Authorization: Bearer <key>' or 'X-API-Key'; "
                            "get one with POST /v1/keys")
    return secret


async def authenticate(request: Request, surface: str) -> KeyRecord:
    """The key record of the request (``request.ctx.key``); ``surface`` (decide, batch,
    usage, optimize) names the counters whose headers its responses carry."""
    secret = presented_secret(request)
    app = request.app
    key = await in_thread(app.ctx.store_pool, app.ctx.store.find_key, secret)
    if key is None:
        raise _unauthorized("invalid_credentials", "this key is not known")
    if key["revoked_at"] is not None:
        raise _unauthorized("revoked_key", f"this key was revoked at {key['revoked_at']}")
    request.ctx.key = key
    request.ctx.surface = surface
    return key


def client_address(request: Request) -> str:
    """The peer's address (no proxy headers are trusted)."""
    return request.ip or "unknown"


def _admit_then(store: Store, specs: list[CounterSpec], now: float,
                then: Callable[..., Any] | None, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """In a thread: count, and when admitted run ``then(*args)``; never raises for it."""
    with _ADMIT_LOCK:
        admission = store.admit(specs, now)
    if not admission.admitted or then is None:
        return admission, None, None
    try:
        return admission, then(*args), None
    except Exception as exc:  # re-raised on the event loop, after the headers are known
        return admission, None, exc


async def admit(request: Request, specs: Sequence[CounterSpec],
                then: Callable[..., Any] | None = None, *args: Any,
                pool: ThreadPoolExecutor | None = None) -> Any:
    """Count the request on ``specs`` (all or nothing; 429 when a limit is reached), then
    run ``then(*args)`` in the same thread hop and return its result.

    The call runs in ``pool`` (default: the store's) and is shielded: once started, the
    commit completes even if the client goes away, so a counted request is never lost."""
    app = request.app
    now = app.ctx.settings.now()
    admission, result, error = await in_thread(
        pool or app.ctx.store_pool, _admit_then, app.ctx.store, list(specs), now, then, args)
    request.ctx.rate = admission.counters[0]
    refused = admission.refused
    if refused is not None:
        raise ApiError(
            limits.refusal_code(refused),
            f"the {refused.name} limit of {refused.limit} is reached; "
            f"it resets at {refused.reset} (epoch seconds)",
            headers={"Retry-After": str(limits.retry_after(refused, now))},
            extra=limits.problem_fields(refused),
        )
    if error is not None:
        raise error
    return result


async def rate_state(request: Request) -> dict[str, str]:
    """The ``X-RateLimit-*`` headers of a response: the counted state when the request
    was admitted (or refused), else the current state of the key's per-minute counter,
    or of the address's ``ip.minute`` counter when no key is known (nothing is counted)."""
    state = getattr(request.ctx, "rate", None)
    if state is None:
        app = request.app
        key = getattr(request.ctx, "key", None)
        if key is not None:
            spec = limits.specs_for(request.ctx.surface, key, settings=app.ctx.settings)[0]
        else:
            spec = limits.ip_specs("ip", client_address(request), settings=app.ctx.settings)[0]
        now = app.ctx.settings.now()
        state = (await in_thread(app.ctx.store_pool, app.ctx.store.peek, [spec], now))[0]
    return limits.headers_for(state)
