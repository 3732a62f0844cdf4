"""One delivery attempt over HTTP, and when the next one is due.

**The request** goes to the address the guard checked (:mod:`.guard`), never to a second
lookup of the name: httpx is given a URL with that address, the ``Host`` header of the
name, and (https) the name as the TLS server name (httpcore's ``sni_hostname`` request
extension), so the certificate is verified against the name. httpx is already the
client extra's library; this is the one feature needed of it, with no transport of our
own. Connections are not kept alive (two names on one address must never share a
connection verified for one of them), redirects are not followed, proxies from the
environment are ignored, the whole attempt (resolution included) is bounded by
:data:`TIMEOUT` seconds, and at most :data:`RESPONSE_CAP` bytes of the answer are read,
of which :data:`EXCERPT` characters are kept.

**The schedule** is the Standard Webhooks one (:data:`SCHEDULE`): after the first attempt
fails, retries 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h later, each delay varied by
up to ±:data:`JITTER` so receivers recovering from an outage are not hit all at once. A
``Retry-After`` (seconds or an HTTP date) postpones the next attempt up to the longest
delay of the schedule; it never brings one forward.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

import httpx

from decido_service.webhooks.guard import Destination, GuardError, Network, Resolver, destination

__all__ = ["EXCERPT", "JITTER", "RESPONSE_CAP", "SCHEDULE", "TIMEOUT", "Attempt",
           "client", "next_delay", "post", "retry_after"]

#: seconds after the previous attempt of each attempt (the first is at once)
SCHEDULE: tuple[float, ...] = (0, 5, 300, 1800, 7200, 18000, 36000, 36000)
#: the relative spread of each delay (uniform in ``[1 - JITTER, 1 + JITTER]``)
JITTER = 0.1
#: seconds one attempt may take, from resolving the name to the answer's last byte read
TIMEOUT = 15.0
#: bytes of an answer read at most; characters of it kept in the delivery record
RESPONSE_CAP, EXCERPT = 16 * 1024, 200


@dataclass(frozen=True)
class Attempt:
    """What one attempt found: an HTTP ``status`` or an ``error``, how long it took, the
    start of the answer, and the ``Retry-After`` it asked for (seconds)."""

    status: int | None
    error: str | None
    duration_ms: float
    response: str | None = None
    retry_after: float | None = None

    @property
    def ok(self) -> bool:
        """A 2xx answer."""
        return self.status is not None and 200 <= self.status < 300


def next_delay(retry_index: int, schedule: Sequence[float], asked: float | None = None,
               rng: random.Random | None = None) -> float | None:
    """Seconds until attempt ``retry_index`` of ``schedule`` (``None``: there is none),
    jittered, and postponed to ``asked`` (a ``Retry-After``) within the schedule's range."""
    if retry_index >= len(schedule):
        return None
    delay = schedule[retry_index] * (rng or random).uniform(1 - JITTER, 1 + JITTER)
    if asked is not None:
        delay = max(delay, min(asked, max(schedule)))
    return delay


def retry_after(value: str | None, now: float) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delta seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now) if when.tzinfo is not None else None


async def _exchange(client: httpx.AsyncClient, dest: Destination, headers: dict[str, str],
                    body: bytes) -> Attempt:
    request = client.build_request(
        "POST", dest.url, content=body, headers={**headers, "host": dest.host_header},
        extensions={"sni_hostname": dest.host} if dest.scheme == "https" else {})
    response = await client.send(request, stream=True)
    try:
        read = bytearray()
        async for chunk in response.aiter_raw():
            read += chunk
            if len(read) >= RESPONSE_CAP:
                break
    finally:
        await response.aclose()
    text = bytes(read[:RESPONSE_CAP]).decode("utf-8", "replace")[:EXCERPT] or None
    return Attempt(response.status_code, None, 0.0, text,
                   retry_after(response.headers.get("retry-after"), time.time()))


async def post(client: httpx.AsyncClient, url: str, headers: dict[str, str], body: bytes,
               allowed: Sequence[Network], resolver: Resolver | None = None) -> Attempt:
    """One attempt: resolve and check ``url`` (:func:`.guard.destination`), then POST
    ``body`` to the checked address; never raises."""
    start = time.perf_counter()

    async def attempt() -> Attempt:
        dest = await (destination(url, allowed) if resolver is None
                      else destination(url, allowed, resolver))
        return await _exchange(client, dest, headers, body)

    try:
        found = await asyncio.wait_for(attempt(), TIMEOUT)
        error = None
    except GuardError as exc:
        found, error = None, f"address refused: {exc}"
    except asyncio.TimeoutError:
        found, error = None, f"timeout after {TIMEOUT:g} s"
    except httpx.HTTPError as exc:
        found, error = None, f"{type(exc).__name__}: {exc}"[:EXCERPT]
    except OSError as exc:
        found, error = None, f"network error: {exc}"[:EXCERPT]
    elapsed = round((time.perf_counter() - start) * 1e3, 3)
    if found is None:
        return Attempt(None, error, elapsed)
    return Attempt(found.status, None, elapsed, found.response, found.retry_after)


def client() -> httpx.AsyncClient:
    """The delivery client of a worker process (module docs: no keep-alive, no redirects,
    no proxies from the environment)."""
    return httpx.AsyncClient(follow_redirects=False, trust_env=False,
                             limits=httpx.Limits(max_keepalive_connections=0),
                             timeout=httpx.Timeout(TIMEOUT))
