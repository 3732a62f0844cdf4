"""Admission, top-down: credentials -> key -> the limits of its surface -> one store call.

A handler of an authenticated endpoint reads::

    key = await authenticate(request)                 # 401 without a valid, live key
    async with refusals(request, key, "optimize"):    # a 4xx raised inside is charged
        ...                                            #   to the key's refused budget
    await admit(request, key, "optimize")              # 429 over a limit

or, for a keyed read (a run, the runs, a decision-log page; cancels and deletes too)::

    key = await read(request, "optimize")              # counted nothing; headers, 401

- :func:`authenticate` takes ``Authorization: Bearer <key>`` or ``X-API-Key: <key>`` (both
  present and different: 401 ``conflicting_credentials``) and finds the key through the
  worker's :class:`KeyCache`.
- :func:`admit` builds the request's counters from the key's plan or tier
  (:func:`decido_service.limits.specs_for`) and makes **one** store call for all of them,
  through the worker's group commit: either every window has room and all are counted, or
  nothing is and the answer is 429 naming the limit. The key's revocation is checked in
  the same call. The counter states of that answer are kept on ``request.ctx.rate``, and
  the ``X-RateLimit-*`` headers (:func:`rate_headers`) come from them: no second look.
- :func:`read` is the one read policy: a keyed request that is not an admission counts
  nothing and is never refused for a limit; its one store call (the same group commit)
  checks the key is not revoked and observes the surface's per-minute counter, whose
  ``X-RateLimit-*`` headers it carries (docs/service.md, "Reads").
- :func:`refusals` charges a request refused before it is admitted (invalid, over a cap)
  to the surface's ``refused`` budget, apart from the plan's request limit: a client that
  makes a few mistakes keeps its allowance, one that keeps sending bad requests gets 429
  ``too_many_refused`` until the minute ends.
  A worker remembers a key whose refused budget it saw spent (:class:`SpentBudgets`), and
  until that budget's minute ends refuses the key's requests whose body is above
  :data:`SMALL_BODY` bytes with the same 429 before the body is decoded: after the budget
  is spent, each worker decodes at most one large body per key and surface and minute.
- :func:`issue_free_key` makes a free key (``POST /v1/keys``, the dashboard's sign-in page
  and keys page) after :func:`throttle_address` counts it on the client address in the
  store (:func:`client_address` believes ``X-Forwarded-For`` only from the trusted proxies
  of ``forwarded_allow_ips``).

The secret itself is never stored on the request, logged or echoed.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import time
from collections.abc import Sequence

from decido_service import keys, limits
from decido_service.http.context import ApiRequest
from decido_service.http.problems import ApiError
from decido_service.limits import Surface
from decido_service.store import (
    Admission,
    AdmissionRequest,
    CounterSpec,
    CounterState,
    DecisionEntry,
    KeyRecord,
    Store,
)

__all__ = [
    "CHALLENGE",
    "KeyCache",
    "Readiness",
    "SMALL_BODY",
    "SpentBudgets",
    "admit",
    "authenticate",
    "client_address",
    "counted",
    "issue_free_key",
    "observe",
    "presented_secret",
    "rate_headers",
    "read",
    "refusals",
    "settle",
    "throttle_address",
    "throttle_sign_in",
]

CHALLENGE = {"WWW-Authenticate": 'Bearer realm="decido"'}
#: statuses of a request refused before admission, charged to the refused budget
_CHARGED = frozenset({400, 403, 413, 415, 422})
#: bodies up to this many bytes are decoded even when the key's refused budget is known to
#: be spent (the store's answer costs about as much as decoding them)
SMALL_BODY = 4096


def _unauthorized(code: str, detail: str) -> ApiError:
    return ApiError(code, detail, headers=CHALLENGE)


def presented_secret(request: ApiRequest) -> str:
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
    secret: str | None = bearer if bearer is not None else api_key
    if not secret:
        raise _unauthorized("missing_credentials",
                            "send your key as 'Authorization: Bearer <key>' or 'X-API-Key'; "
                            "get one with POST /v1/keys")
    return secret


async def authenticate(request: ApiRequest, *, fresh: bool = False) -> KeyRecord:
    """The key record of the request (also ``request.ctx.key``, for the access log).

    The worker's :class:`KeyCache` answers unless ``fresh``: a request that is admitted has
    its key's revocation checked by the admission's store call anyway; one that makes no
    admission (``/v1/usage``) asks the store itself."""
    secret = presented_secret(request)
    if fresh:
        store: Store = request.app.ctx.store
        key = await store.accounts.find_key(secret)
    else:
        cache: KeyCache = request.app.ctx.key_cache
        key = await cache.find(secret)
    if key is None:
        raise _unauthorized("invalid_credentials", "this key is not known")
    if key["revoked_at"] is not None:
        raise _revoked(key["revoked_at"])
    request.ctx.key = key
    return key


def _revoked(revoked_at: str) -> ApiError:
    return _unauthorized("revoked_key", f"this key was revoked at {revoked_at}")


async def admit(request: ApiRequest, key: KeyRecord, surface: Surface, amount: int = 1, *,
                log: DecisionEntry | None = None) -> None:
    """Count one request of ``key`` on ``surface`` (``amount`` decisions of a batch) in one
    store call, writing ``log`` to the decision log in the same transaction when it is
    admitted; 429 over a limit, 401 when the key was revoked meanwhile."""
    settings = request.app.ctx.settings
    await _count(request, limits.specs_for(surface, key, amount, settings=settings), key["id"],
                 log)


async def read(request: ApiRequest, surface: Surface) -> KeyRecord:
    """The read policy (module docs): the request's key, checked live against the store
    in one call that counts nothing and observes ``surface``'s minute counter for the
    headers; 401 without a valid, live key."""
    key = await authenticate(request)
    settings = request.app.ctx.settings
    await _count(request, limits.read_specs(surface, key, settings=settings), key["id"])
    return key


class refusals:  # noqa: N801 - used as a function: ``async with refusals(...)``
    """Charge an :class:`ApiError` raised inside (a request refused before admission) to
    the key's ``refused`` budget of ``surface``, then let it through (or 429
    ``too_many_refused`` once the budget is spent). (A class rather than
    ``contextlib.asynccontextmanager``, whose generator it entered and left on every
    request.)"""

    __slots__ = ("key", "request", "surface")

    def __init__(self, request: ApiRequest, key: KeyRecord, surface: Surface) -> None:
        self.request, self.key, self.surface = request, key, surface

    async def __aenter__(self) -> None:
        """429 ``too_many_refused`` at once for a large body of a key whose refused budget
        of this surface this worker saw spent (its minute not over): no decoding."""
        request = self.request
        body = request.body
        if body is not None and len(body) > SMALL_BODY:
            spent: SpentBudgets = request.app.ctx.spent_budgets
            refused = spent.get(_budget_name(self.surface), self.key["id"],
                                request.app.ctx.settings.now())
            if refused is not None:
                request.ctx.rate = refused[1]
                raise _limit_refusal(refused[0], request.app.ctx.settings.now())

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: object) -> None:
        if isinstance(error, ApiError) and error.status_code in _CHARGED:
            request = self.request
            settings = request.app.ctx.settings
            await _count(request, limits.refusal_specs(self.surface, self.key,
                                                       settings=settings), self.key["id"])


async def observe(request: ApiRequest, specs: Sequence[CounterSpec]) -> list[CounterState]:
    """The states of ``specs``, nothing counted (``request.ctx.rate``: the first)."""
    app = request.app
    store: Store = app.ctx.store
    states = await store.admissions.peek(specs, app.ctx.settings.now())
    request.ctx.rate = states[0]
    return states


async def throttle_address(request: ApiRequest) -> None:
    """Count a ``POST /v1/keys`` on the client address (429 past ``keys_per_hour``)."""
    settings = request.app.ctx.settings
    await _count(request, [limits.address_spec(client_address(request), settings=settings)])


async def throttle_sign_in(request: ApiRequest, prefix: str | None) -> None:
    """Count a try of the dashboard's sign-in form on the client address and the key
    ``prefix`` tried (429 past ``sign_ins_per_minute`` on either)."""
    settings = request.app.ctx.settings
    await _count(request, limits.sign_in_specs(client_address(request), prefix,
                                               settings=settings))


async def issue_free_key(request: ApiRequest, label: str | None,
                         owner: str | None = None) -> tuple[KeyRecord, str]:
    """A new key of the free plan and tier, ``(record, secret)``: the one way keys are
    issued over HTTP (``POST /v1/keys`` and the dashboard's forms), counted on the client
    address first (429 past ``keys_per_hour``); ``owner``: the key whose account it joins."""
    await throttle_address(request)
    store: Store = request.app.ctx.store
    return await store.accounts.create_key("free", "free", label, owner=owner)


async def _count(request: ApiRequest, specs: list[CounterSpec], key_id: str | None = None,
                 log: DecisionEntry | None = None) -> None:
    now = request.app.ctx.settings.now()
    settle(request, await request.app.ctx.admissions.submit(
        AdmissionRequest(specs, now, key_id, log)), now, key_id)


def counted(request: ApiRequest, key: KeyRecord, surface: Surface) -> AdmissionRequest:
    """The admission of one request of ``key`` on ``surface``, for a store call that counts
    it together with something else (a run enqueued, :meth:`Runs.enqueue`); then
    :func:`settle`."""
    settings = request.app.ctx.settings
    return AdmissionRequest(limits.specs_for(surface, key, settings=settings),
                            settings.now(), key["id"])


def settle(request: ApiRequest, admission: Admission, now: float,
           key_id: str | None = None) -> None:
    """Take the store's answer to a request's admission: its counters for the headers;
    401 when the key was revoked, 429 over a limit (a spent refused budget of ``key_id``
    is remembered by the worker: :class:`SpentBudgets`)."""
    request.ctx.rate = admission.counters[0]
    if admission.revoked_at is not None:
        raise _revoked(admission.revoked_at)
    refused = admission.refused
    if refused is not None:
        if key_id is not None and refused.name.endswith(".refused"):
            request.app.ctx.spent_budgets.note(key_id, refused, admission.counters[0])
        raise _limit_refusal(refused, now)


def _limit_refusal(refused: CounterState, now: float) -> ApiError:
    return ApiError(
        limits.refusal_code(refused),
        f"the {refused.name} limit of {refused.limit} is reached; "
        f"it resets {limits.resets_in(refused, now)}",
        headers={"Retry-After": str(limits.retry_after(refused, now))},
        extra=limits.problem_fields(refused),
    )


def _budget_name(surface: limits.Surface) -> str:
    return f"{limits.SURFACES[surface][1]}.refused"


class SpentBudgets:
    """Refused budgets this worker saw spent: (counter name, key id) -> the refused
    counter's state and the minute counter's (for the headers), until the window ends."""

    def __init__(self) -> None:
        self._spent: dict[tuple[str, str], tuple[CounterState, CounterState]] = {}

    def note(self, key_id: str, refused: CounterState, minute: CounterState) -> None:
        """``refused`` (a ``*.refused`` counter of ``key_id``) is spent."""
        if len(self._spent) > 10_000:  # bounded: forget the windows that ended
            self._spent = {k: v for k, v in self._spent.items()
                           if v[0].reset > refused.window_start}
        self._spent[(refused.name, key_id)] = (refused, minute)

    def get(self, name: str, key_id: str, now: float
            ) -> tuple[CounterState, CounterState] | None:
        """The spent budget ``name`` of ``key_id`` while its window lasts, else None."""
        found = self._spent.get((name, key_id))
        if found is not None and now >= found[0].reset:
            del self._spent[(name, key_id)]
            return None
        return found


def rate_headers(request: ApiRequest) -> dict[str, str]:
    """The ``X-RateLimit-*`` headers: from the counter states of the request's store call
    (none for a request that made no store call, e.g. one without a valid key)."""
    state = getattr(request.ctx, "rate", None)
    return {} if state is None else limits.headers_for(state)


def client_address(request: ApiRequest) -> str:
    """The client's address: the peer's, or, when the peer is a trusted proxy
    (``forwarded_allow_ips``), the nearest address in ``X-Forwarded-For`` that is not."""
    peer = str(request.ip or "unknown")
    trusted = request.app.ctx.settings.trusted_proxies
    if not trusted or not _within(peer, trusted):
        return peer
    forwarded: str = request.headers.get("x-forwarded-for") or ""
    chain = [part.strip() for part in forwarded.split(",") if part.strip()]
    for address in reversed(chain):
        if not _within(address, trusted):
            return address
    return chain[0] if chain else peer  # every hop is a trusted proxy


def _within(address: str, networks: Sequence[ipaddress.IPv4Network | ipaddress.IPv6Network],
            ) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False  # not an address: never a trusted proxy
    return any(ip in network for network in networks)


class KeyCache:
    """Key records by secret hash, each kept ``ttl`` seconds (at most ``size`` of them).
    Requests that miss the same key together share one store lookup (when a record
    expires, every request of that key in flight misses it at once).

    A cached record is never trusted for counting: the admission's store call checks that
    the key is still not revoked."""

    def __init__(self, store: Store, ttl: float = 2.0, size: int = 10_000) -> None:
        self.store = store
        self.ttl = ttl
        self.size = size
        self._records: dict[str, tuple[KeyRecord, float]] = {}
        self._lookups: dict[str, asyncio.Future[KeyRecord | None]] = {}
        self.lookups = 0  # store lookups so far (for tests and diagnostics)

    async def find(self, secret: str) -> KeyRecord | None:
        """The key of ``secret`` (revoked ones included), else ``None``; unknown and
        malformed secrets are not cached, so a key made a moment ago is found."""
        if not keys.is_well_formed(secret):
            return None
        digest = keys.hash_secret(secret)
        now = time.monotonic()
        hit = self._records.get(digest)
        if hit is not None and hit[1] > now:
            return hit[0]
        lookup = self._lookups.get(digest)
        if lookup is None:
            lookup = asyncio.ensure_future(self._lookup(secret, digest))
            self._lookups[digest] = lookup
        return await asyncio.shield(lookup)

    async def _lookup(self, secret: str, digest: str) -> KeyRecord | None:
        self.lookups += 1
        try:
            record = await self.store.accounts.find_key(secret)
        finally:
            del self._lookups[digest]
        if record is not None:
            if len(self._records) >= self.size:
                self._records.clear()
            self._records[digest] = (record, time.monotonic() + self.ttl)
        return record


class Readiness:
    """Whether the store answers, asked at most once per ``ttl`` seconds.

    Callers that arrive while a ping is out share it: before the first answer they wait
    for it (a node that just started is not reported unavailable because its first ping
    had not returned yet), afterwards they get the last answer at once."""

    def __init__(self, store: Store, ttl: float = 1.0) -> None:
        self.store = store
        self.ttl = ttl
        self._ok: bool | None = None  # no answer yet
        self._until = 0.0
        self._pending: asyncio.Future[bool] | None = None

    async def ok(self) -> bool:
        """The store's last answer to :meth:`Store.ping`, at most ``ttl`` seconds old."""
        now = time.monotonic()
        if now >= self._until and self._pending is None:
            self._until = now + self.ttl  # one ping per ttl, however many ask meanwhile
            self._pending = asyncio.ensure_future(self.store.ping())
            self._pending.add_done_callback(self._answered)
            return await asyncio.shield(self._pending)  # the caller that asked: its answer
        if self._ok is None and self._pending is not None:
            return await asyncio.shield(self._pending)
        return bool(self._ok)

    def _answered(self, pending: asyncio.Future[bool]) -> None:
        self._pending = None
        self._ok = not pending.cancelled() and pending.exception() is None and pending.result()
