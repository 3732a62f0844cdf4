"""Admission, request-free: a key's counters in one store call, and the worker's caches.

The HTTP layer (:mod:`decido_service.http.admission`) reads the credentials and the
client address and calls these with the worker's services (``services``: what
:class:`Counting` names of :class:`~decido_service.services.Services`) and the request's
record (``tally``: where the counter states of the store's answer are kept,
``tally.rate``, for the ``X-RateLimit-*`` headers: no second look).

- :func:`find_key` finds the key of a secret through the worker's :class:`KeyCache`
  (401 for an unknown or revoked key).
- A :class:`Gate` is one request's admission on one surface (:func:`gate` gives the
  request's one): it builds the key's counters there once
  (:class:`decido_service.limits.Counters`) and makes each store call of the request.
  :meth:`Gate.admit` makes **one** store call for all of them, through the worker's group
  commit: either every window has room and all are counted, or nothing is and the answer
  is 429 naming the limit. The key's revocation is checked in the same call.
- :meth:`Gate.read` is the one read policy: a keyed request that is not an admission
  counts nothing and is never refused for a limit; its one store call (the same group
  commit) checks the key is not revoked and observes the surface's per-minute counter,
  whose ``X-RateLimit-*`` headers it carries (docs/service.md, "Reads").
- :meth:`Gate.charge` (``async with gate:``) charges a request refused before it is
  admitted (invalid, over a cap) to the surface's ``refused`` budget, apart from the
  plan's request limit: a client that makes a few mistakes keeps its allowance, one that
  keeps sending bad requests gets 429 ``too_many_refused`` until the minute ends.
  A worker remembers a key whose refused budget it saw spent (:class:`SpentBudgets`), and
  until that budget's minute ends refuses the key's requests whose body is above
  :data:`SMALL_BODY` bytes with the same 429 before the body is decoded
  (:meth:`Gate.refuse_spent`): after the budget is spent, each worker decodes at most one
  large body per key and surface and minute.
- :func:`issue_free_key` makes a free key after :func:`throttle_address` counts it on the
  client address in the store.

The secret itself is never stored, logged or echoed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Protocol

from decido_service import keys, limits
from decido_service.errors import ServiceError
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

if TYPE_CHECKING:
    from decido_service.config import Settings
    from decido_service.store.group import GroupCommit

__all__ = [
    "CHALLENGE",
    "CHARGED",
    "Counting",
    "Gate",
    "KeyCache",
    "Readiness",
    "SMALL_BODY",
    "SpentBudgets",
    "count",
    "find_key",
    "gate",
    "issue_free_key",
    "observe",
    "settle",
    "throttle_address",
    "throttle_sign_in",
    "unauthorized",
]

CHALLENGE = {"WWW-Authenticate": 'Bearer realm="decido"'}
#: statuses of a request refused before admission, charged to the refused budget
CHARGED = frozenset({400, 403, 413, 415, 422})
#: bodies up to this many bytes are decoded even when the key's refused budget is known to
#: be spent (the store's answer costs about as much as decoding them)
SMALL_BODY = 4096


class Counting(Protocol):
    """What admission takes of a worker's services
    (:class:`~decido_service.services.Services` has it all)."""

    settings: Settings
    store: Store
    admissions: GroupCommit
    key_cache: KeyCache
    spent_budgets: SpentBudgets


def unauthorized(code: str, detail: str) -> ServiceError:
    """A 401 with the ``WWW-Authenticate`` challenge."""
    return ServiceError(code, detail, headers=CHALLENGE)


async def find_key(services: Counting, tally: SimpleNamespace, secret: str, *,
                   fresh: bool = False) -> KeyRecord:
    """The key record of ``secret`` (also ``tally.key``, for the access log); 401 for an
    unknown or revoked key.

    The worker's :class:`KeyCache` answers unless ``fresh``: a request that is admitted has
    its key's revocation checked by the admission's store call anyway; one that makes no
    admission (``/v1/usage``) asks the store itself."""
    if fresh:
        key = await services.store.accounts.find_key(secret)
    else:
        key = await services.key_cache.find(secret)
    if key is None:
        raise unauthorized("invalid_credentials", "this key is not known")
    if key["revoked_at"] is not None:
        raise _revoked(key["revoked_at"])
    tally.key = key
    return key


def _revoked(revoked_at: str) -> ServiceError:
    return unauthorized("revoked_key", f"this key was revoked at {revoked_at}")


class Gate:
    """The admission of one request of ``key`` on ``surface`` (module docs): its counters
    built once, at their first use (:attr:`counters`), the store calls that count,
    observe or charge them, and the store's answer taken (``tally``: the request's
    record). :func:`gate` gives the request's one. Entered (``async with gate:``), it
    charges an error of a status in :data:`CHARGED` raised inside (a request refused
    before admission) to the ``refused`` budget (:meth:`charge`), then lets it through."""

    __slots__ = ("_counters", "key", "services", "surface", "tally")

    def __init__(self, services: Counting, tally: SimpleNamespace, key: KeyRecord,
                 surface: Surface) -> None:
        self.services, self.tally, self.key, self.surface = services, tally, key, surface
        self._counters: limits.Counters | None = None

    async def __aenter__(self) -> Gate:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: object) -> None:
        if isinstance(error, ServiceError) and error.status_code in CHARGED:
            await self.charge()

    @property
    def counters(self) -> limits.Counters:
        """The key's counters on the surface and its plan or tier row there."""
        if self._counters is None:
            self._counters = limits.counters(self.surface, self.key, self.services.settings)
        return self._counters

    async def admit(self, amount: int = 1, *, log: DecisionEntry | None = None) -> None:
        """Count the request (``amount`` decisions of a batch) in one store call, writing
        ``log`` to the decision log in the same transaction when it is admitted; 429 over
        a limit, 401 when the key was revoked meanwhile."""
        await count(self.services, self.tally, self.counters.admit(amount), self.key["id"],
                    log)

    async def read(self) -> None:
        """The read policy (module docs): the key checked live against the store in one
        call that counts nothing and observes the surface's minute counter."""
        await count(self.services, self.tally, self.counters.read(), self.key["id"])

    def refuse_spent(self, body: bytes | None) -> Gate:
        """429 ``too_many_refused`` at once for a ``body`` above :data:`SMALL_BODY` bytes
        of a key whose refused budget of the surface this worker saw spent (its minute not
        over): no decoding. The gate itself otherwise."""
        if body is not None and len(body) > SMALL_BODY:
            services = self.services
            now = services.settings.now()
            budget = f"{limits.SURFACES[self.surface][1]}.refused"
            refused = services.spent_budgets.get(budget, self.key["id"], now)
            if refused is not None:
                self.tally.rate = refused[1]
                raise _limit_refusal(refused[0], now)
        return self

    async def charge(self) -> None:
        """Charge a refusal (an error of a status in :data:`CHARGED`) to the key's
        ``refused`` budget of the surface (429 ``too_many_refused`` once it is spent)."""
        await count(self.services, self.tally, self.counters.refused(), self.key["id"])

    async def observe(self) -> None:
        """The headers of a request refused after its checks (a cap on the key's runs or
        studies, a full worker): the surface's minute counter read, nothing counted."""
        await observe(self.services, self.tally, self.counters.read())

    def counted(self) -> AdmissionRequest:
        """The admission of the request, for a store call that counts it together with
        something else (a run enqueued, :meth:`Runs.enqueue`); then :meth:`settle`."""
        return AdmissionRequest(self.counters.admitted, self.services.settings.now(),
                                self.key["id"])

    def settle(self, admission: Admission) -> None:
        """Take the store's answer to :meth:`counted` (:func:`settle`)."""
        settle(self.services, self.tally, admission, self.services.settings.now(),
               self.key["id"])


def gate(services: Counting, tally: SimpleNamespace, key: KeyRecord,
         surface: Surface) -> Gate:
    """The request's :class:`Gate` on ``surface`` (made at its first use, then kept on
    ``tally``: one per request)."""
    found: Gate | None = getattr(tally, "gate", None)
    if found is None or found.surface != surface or found.key is not key:
        found = tally.gate = Gate(services, tally, key, surface)
    return found


async def observe(services: Counting, tally: SimpleNamespace,
                  specs: Sequence[CounterSpec]) -> list[CounterState]:
    """The states of ``specs``, nothing counted (``tally.rate``: the first)."""
    states = await services.store.admissions.peek(specs, services.settings.now())
    tally.rate = states[0]
    return states


async def throttle_address(services: Counting, tally: SimpleNamespace, address: str) -> None:
    """Count a new key on the client ``address`` (429 past ``keys_per_hour``)."""
    await count(services, tally, [limits.address_spec(address, settings=services.settings)])


async def throttle_sign_in(services: Counting, tally: SimpleNamespace, address: str,
                           prefix: str | None) -> None:
    """Count a try of the dashboard's sign-in form on the client ``address`` and the key
    ``prefix`` tried (429 past ``sign_ins_per_minute`` on either)."""
    await count(services, tally, limits.sign_in_specs(address, prefix,
                                                      settings=services.settings))


async def issue_free_key(services: Counting, tally: SimpleNamespace, address: str,
                         label: str | None, owner: str | None = None
                         ) -> tuple[KeyRecord, str]:
    """A new key of the free plan and tier, ``(record, secret)``, counted on the client
    ``address`` first (429 past ``keys_per_hour``); ``owner``: the key whose account it
    joins."""
    await throttle_address(services, tally, address)
    return await services.store.accounts.create_key("free", "free", label, owner=owner)


async def count(services: Counting, tally: SimpleNamespace, specs: list[CounterSpec],
                key_id: str | None = None, log: DecisionEntry | None = None) -> None:
    """Count ``specs`` in one store call (:func:`settle`)."""
    now = services.settings.now()
    settle(services, tally, await services.admissions.submit(
        AdmissionRequest(specs, now, key_id, log)), now, key_id)


def settle(services: Counting, tally: SimpleNamespace, admission: Admission, now: float,
           key_id: str | None = None) -> None:
    """Take the store's answer to a request's admission: its counters for the headers;
    401 when the key was revoked, 429 over a limit (a spent refused budget of ``key_id``
    is remembered by the worker: :class:`SpentBudgets`)."""
    tally.rate = admission.counters[0]
    if admission.revoked_at is not None:
        raise _revoked(admission.revoked_at)
    refused = admission.refused
    if refused is not None:
        if key_id is not None and refused.name.endswith(".refused"):
            services.spent_budgets.note(key_id, refused, admission.counters[0])
        raise _limit_refusal(refused, now)


def _limit_refusal(refused: CounterState, now: float) -> ServiceError:
    return ServiceError(
        limits.refusal_code(refused),
        f"the {refused.name} limit of {refused.limit} is reached; "
        f"it resets {limits.resets_in(refused, now)}",
        headers={"Retry-After": str(limits.retry_after(refused, now))},
        extra=limits.problem_fields(refused),
    )


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
