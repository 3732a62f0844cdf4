"""Who is asking and what they may do: credentials -> ``request.ctx.key``, then admission.

:func:`authenticate` reads ``Authorization: Bearer <key>`` or ``X-API-Key: <key>`` (both
present and different: 401 ``conflicting_credentials``), finds the key by its hash (through
the worker's :class:`~decido_service.admission.KeyCache`) and puts the record on
``request.ctx.key``. :func:`admit` counts the request through the worker's group commit
(all-or-nothing, exact across processes; the key's revocation is checked in the same
transaction) and keeps the first counter's state on ``request.ctx.rate`` for the
``X-RateLimit-*`` headers; a refused request is a 429 that names the limit.
:func:`count_address` does the same for the unauthenticated endpoints on the shared
per-address table. The secret itself is never stored on the request, logged or echoed.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sanic import Request

from decido_service import limits
from decido_service.errors import ApiError
from decido_service.listeners import in_thread
from decido_service.store import Admission, CounterSpec, CounterState, KeyRecord

__all__ = [
    "admit",
    "authenticate",
    "client_address",
    "count_address",
    "presented_secret",
    "rate_headers",
    "rate_state",
]

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


def authenticate(request: Request, surface: str) -> KeyRecord:
    """The key record of the request (``request.ctx.key``); ``surface`` (decide, batch,
    usage, optimize) names the counters whose headers its responses carry."""
    secret = presented_secret(request)
    key = request.app.ctx.key_cache.find(secret)
    if key is None:
        raise _unauthorized("invalid_credentials", "this key is not known")
    if key["revoked_at"] is not None:
        raise _revoked(key["revoked_at"])
    request.ctx.key = key
    request.ctx.surface = surface
    return key


def _revoked(revoked_at: str) -> ApiError:
    return _unauthorized("revoked_key", f"this key was revoked at {revoked_at}")


def client_address(request: Request) -> str:
    """The peer's address (no proxy headers are trusted)."""
    return request.ip or "unknown"


async def admit(request: Request, specs: Sequence[CounterSpec],
                then: Callable[..., Any] | None = None, *args: Any,
                pool: ThreadPoolExecutor | None = None) -> Any:
    """Count the request on ``specs`` (all or nothing; 429 when a limit is reached, 401
    when its key was revoked meanwhile), then return ``then(*args)``: called on the event
    loop, or in ``pool`` when one is given (for work that takes longer than a few tens of
    microseconds).

    The count is committed by the worker's group commit whatever happens to this handler
    afterwards (a client that goes away cancels the handler, never a commit)."""
    app = request.app
    now = app.ctx.settings.now()
    key = getattr(request.ctx, "key", None)
    admission = await app.ctx.admissions.admit(specs, now, None if key is None else key["id"])
    _check(request, admission, now)
    if then is None:
        return None
    if pool is None:
        return then(*args)
    return await in_thread(pool, then, *args)


def count_address(request: Request) -> None:
    """Count an unauthenticated request on its address's ``ip.minute`` counter (429 when
    the allowance is used up)."""
    app = request.app
    now = app.ctx.settings.now()
    spec = limits.ip_minute_spec(client_address(request), app.ctx.settings.ip_per_minute)
    _check(request, app.ctx.addresses.admit(spec, now), now)


def _check(request: Request, admission: Admission, now: float) -> None:
    """Keep the headers' counter state; raise for a revoked key or a refusal."""
    request.ctx.rate = admission.counters[0]
    if admission.revoked_at is not None:
        raise _revoked(admission.revoked_at)
    refused = admission.refused
    if refused is not None:
        raise ApiError(
            limits.refusal_code(refused),
            f"the {refused.name} limit of {refused.limit} is reached; "
            f"it resets at {refused.reset} (epoch seconds)",
            headers={"Retry-After": str(limits.retry_after(refused, now))},
            extra=limits.problem_fields(refused),
        )


def rate_state(request: Request, ctx: Any = None) -> CounterState:
    """The counter state the ``X-RateLimit-*`` headers show: the counted state when the
    request was admitted (or refused), else the current state of the key's per-minute
    counter, or of the address's ``ip.minute`` counter when no key is known (nothing is
    counted). ``ctx`` is ``request.ctx`` when the caller already has it."""
    state = getattr(request.ctx if ctx is None else ctx, "rate", None)
    if state is None:
        app = request.app
        now = app.ctx.settings.now()
        key = getattr(request.ctx, "key", None)
        if key is not None:
            spec = limits.specs_for(request.ctx.surface, key, settings=app.ctx.settings)[0]
            state = app.ctx.store.peek([spec], now)[0]
        else:
            spec = limits.ip_specs("ip", client_address(request), settings=app.ctx.settings)[0]
            state = app.ctx.addresses.peek(spec, now)
    return state


def rate_headers(request: Request) -> dict[str, str]:
    """The ``X-RateLimit-*`` headers of a response (see :func:`rate_state`)."""
    return limits.headers_for(rate_state(request))
