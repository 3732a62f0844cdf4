"""Admission over HTTP, top-down: credentials -> key -> the limits of its surface -> one
store call (:mod:`decido_service.admission`, which this module feeds from the request).

A handler of an authenticated endpoint reads::

    key = await authenticate(request)                 # 401 without a valid, live key
    async with refusals(request, key, "optimize"):    # a 4xx raised inside is charged
        ...                                            #   to the key's refused budget
    await gate(request, key, "optimize").admit()      # 429 over a limit

or, the first two in one (``POST /v1/optimize``, ``POST /v1/runs``)::

    async with await gate_of(request, "optimize") as gate:
        ...

or, for a keyed read (a run, the runs, a decision-log page; cancels and deletes too)::

    key = await read(request, "optimize")              # counted nothing; headers, 401

- :func:`authenticate` takes ``Authorization: Bearer <key>`` or ``X-API-Key: <key>`` (both
  present and different: 401 ``conflicting_credentials``).
- :func:`refusals` charges a request refused before it is admitted to the surface's
  ``refused`` budget (:meth:`decido_service.admission.Gate.charge`), and refuses a large body
  of a key whose budget this worker saw spent before it is decoded.
- :func:`gate_of`: :func:`authenticate`, then :func:`refusals`.
- :func:`issue_free_key` makes a free key (``POST /v1/keys``, the dashboard's sign-in page
  and keys page), counted on the client address (:func:`client_address` believes
  ``X-Forwarded-For`` only from the trusted proxies of ``forwarded_allow_ips``).
- :func:`throttle_sign_in` counts a try of the dashboard's sign-in form on the client
  address and the key prefix tried.
- :func:`gate`: the request's admission on a surface (:class:`decido_service.admission.Gate`).

The secret itself is never stored on the request, logged or echoed.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Sequence

from decido_service import admission
from decido_service.admission import unauthorized
from decido_service.http.context import ApiRequest
from decido_service.limits import Surface
from decido_service.store import KeyRecord

__all__ = ["authenticate", "client_address", "gate", "gate_of", "issue_free_key",
           "presented_secret", "read", "refusals", "throttle_sign_in"]


def presented_secret(request: ApiRequest) -> str:
    """The key the request presents; 401 when there is none, it is not a Bearer token,
    or the two headers disagree."""
    header = request.headers.get("authorization")
    api_key = request.headers.get("x-api-key")
    bearer = None
    if header is not None:
        scheme, _, token = header.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise unauthorized("invalid_credentials", "use 'Authorization: Bearer <key>'")
        bearer = token.strip()
    if api_key is not None:
        api_key = api_key.strip()
    if bearer is not None and api_key is not None and not hmac.compare_digest(
            bearer.encode(), api_key.encode()):
        raise unauthorized("conflicting_credentials",
                           "Authorization and X-API-Key carry different keys; send one")
    secret: str | None = bearer if bearer is not None else api_key
    if not secret:
        raise unauthorized("missing_credentials",
                           "send your key as 'Authorization: Bearer <key>' or 'X-API-Key'; "
                           "get one with POST /v1/keys")
    return secret


async def authenticate(request: ApiRequest, *, fresh: bool = False) -> KeyRecord:
    """The key record of the request (also ``request.ctx.key``, for the access log);
    ``fresh``: asked of the store, not the worker's cache
    (:func:`decido_service.admission.find_key`)."""
    return await admission.find_key(request.app.ctx, request.ctx, presented_secret(request),
                                    fresh=fresh)


async def gate_of(request: ApiRequest, surface: Surface) -> admission.Gate:
    """:func:`authenticate`, then :func:`refusals` on ``surface``: the request's gate, to
    enter (``async with``)."""
    secret = presented_secret(request)
    key = await admission.find_key(request.app.ctx, request.ctx, secret)
    return admission.gate(request.app.ctx, request.ctx, key, surface).refuse_spent(request.body)


async def read(request: ApiRequest, surface: Surface) -> KeyRecord:
    """The read policy (:meth:`decido_service.admission.Gate.read`): the request's key,
    checked live against the store in one call that counts nothing; 401 without a valid,
    live key."""
    key = await authenticate(request)
    await gate(request, key, surface).read()
    return key


def gate(request: ApiRequest, key: KeyRecord, surface: Surface) -> admission.Gate:
    """The request's admission on ``surface`` (:func:`decido_service.admission.gate`)."""
    return admission.gate(request.app.ctx, request.ctx, key, surface)


def refusals(request: ApiRequest, key: KeyRecord, surface: Surface) -> admission.Gate:
    """The request's :func:`gate` on ``surface``, to enter (``async with``): an error of a
    status in :data:`~decido_service.admission.CHARGED` raised inside (a request refused
    before admission) is charged to the key's ``refused`` budget of ``surface``, then let
    through (or 429 ``too_many_refused`` once the budget is spent); a large body of a spent
    budget is refused at once (:meth:`~decido_service.admission.Gate.refuse_spent`)."""
    return gate(request, key, surface).refuse_spent(request.body)


async def issue_free_key(request: ApiRequest, label: str | None,
                         owner: str | None = None) -> tuple[KeyRecord, str]:
    """A new key of the free plan and tier, ``(record, secret)``: the one way keys are
    issued over HTTP (``POST /v1/keys`` and the dashboard's forms), counted on the client
    address first (429 past ``keys_per_hour``); ``owner``: the key whose account it joins."""
    return await admission.issue_free_key(request.app.ctx, request.ctx,
                                          client_address(request), label, owner)


async def throttle_sign_in(request: ApiRequest, prefix: str | None) -> None:
    """Count a try of the dashboard's sign-in form on the client address and the key
    ``prefix`` tried (429 past ``sign_ins_per_minute`` on either)."""
    await admission.throttle_sign_in(request.app.ctx, request.ctx, client_address(request),
                                     prefix)


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
