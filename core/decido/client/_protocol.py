"""The client without I/O: what an operation asks its driver to do, retries, SSE parsing.

Every client operation (:mod:`decido.client._ops`) is a generator that yields instructions
and receives their outcome: :class:`Call` (one HTTP request; the driver answers with a
:class:`Reply`, or throws the problem in as an exception), :class:`Sleep`, :class:`Emit`
(an item of an iterating operation), :class:`OpenStream` / :class:`NextEvent` (a
Server-Sent Events stream). :func:`retried` wraps an operation with the client's
:class:`RetryPolicy`: a refused call, or a failed one that is safe to resend, comes back as
a :class:`Sleep` and the same call again.

Two drivers carry the instructions out with httpx, each once and in its own way of waiting:
:meth:`decido.Client._iterate` (blocking, ``httpx.Client``; no event loop, no thread) and
:meth:`decido.AsyncClient._iterate` (asyncio, ``httpx.AsyncClient``). Everything else -- the
calls of each operation, retries, pages, resuming a stream, waiting for a run -- is written
once, here and in :mod:`decido.client._ops`, free of I/O.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from decido.client.errors import (
    ApiError,
    ClientError,
    QuotaExceeded,
    Retryable,
    error_from_problem,
)

__all__ = [
    "Call",
    "Emit",
    "Event",
    "EventParser",
    "Instruction",
    "NextEvent",
    "Op",
    "OpenStream",
    "Reply",
    "RetryPolicy",
    "Sleep",
    "log",
    "raise_for",
    "retried",
    "retry_after",
]

T = TypeVar("T")
#: the client's logger: each wait before a call is sent again (INFO)
log = logging.getLogger("decido.client")


@dataclass(frozen=True)
class Call:
    """One HTTP request. ``resend``: safe to send again after a transport failure (reads,
    and submissions carrying an ``Idempotency-Key``). ``timeout``: seconds for this call
    (None: the client's)."""

    method: str
    path: str
    params: Mapping[str, str] | None = None
    json: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    resend: bool = False
    timeout: float | None = None


@dataclass(frozen=True)
class Reply:
    """A successful answer (status below 400)."""

    status: int
    headers: Mapping[str, str]
    content: bytes

    def json(self) -> Any:
        """The body as JSON."""
        return json.loads(self.content) if self.content else None


@dataclass(frozen=True)
class Sleep:
    """Wait this many seconds."""

    seconds: float


@dataclass(frozen=True)
class Emit:
    """Hand ``value`` to the caller of an iterating operation."""

    value: Any


@dataclass(frozen=True)
class OpenStream:
    """Open a Server-Sent Events stream (``Accept: text/event-stream``); the reply is
    None once it is open, or the driver raises the problem (as for :class:`Call`)."""

    call: Call


@dataclass(frozen=True)
class NextEvent:
    """The next event of the open stream: an :class:`Event`, or None when the stream ended
    or broke (the driver closes it)."""


Instruction = Call | Sleep | Emit | OpenStream | NextEvent
Op = Generator[Instruction, Any, T]


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of refused calls: a 429 (but ``monthly_quota_exceeded``), 503 or 409
    ``idempotency_key_in_use`` (:class:`~decido.client.errors.Retryable`) is sent again
    after its ``Retry-After`` (or ``backoff * 2**attempt`` seconds without one) plus a random
    jitter of up to ``jitter`` of that wait, at most ``max_retries`` times, and never when
    the wait would be above ``max_wait`` seconds (the error is raised instead). A transport
    failure of a call that is safe to resend is retried the same way (with the backoff)."""

    max_retries: int = 3
    max_wait: float = 60.0
    backoff: float = 0.5
    jitter: float = 0.25

    def delay(self, attempt: int, error: BaseException) -> float | None:
        """Seconds to wait before attempt ``attempt + 1`` after ``error``, or None (raise)."""
        if attempt >= self.max_retries or isinstance(error, QuotaExceeded):
            return None
        base = self.backoff * 2.0 ** attempt
        if isinstance(error, Retryable) and error.retry_after is not None:
            base = error.retry_after
        elif isinstance(error, ApiError) and not isinstance(error, Retryable):
            return None
        if base > self.max_wait:
            return None
        return base + random.uniform(0.0, self.jitter * base)


def retried(op: Op[T], policy: RetryPolicy) -> Op[T]:
    """``op`` with its calls sent again as ``policy`` says. The driver carries out each
    :class:`Call` and :class:`OpenStream` once and throws a failure in as the client's
    exception (:mod:`decido.client.errors`): a refused call (429, 503) is worth another try,
    a transport failure only when the call is safe to resend (``resend``); any other
    failure, or one past the policy's limits, goes on into ``op``."""
    outcome: Any = None
    error: Exception | None = None
    try:
        while True:
            try:
                step = op.send(outcome) if error is None else op.throw(error)
            except StopIteration as stop:
                value: T = stop.value
                return value
            outcome = error = None
            try:
                if isinstance(step, (Call, OpenStream)):
                    outcome = yield from _attempts(step, policy)
                else:
                    outcome = yield step
            except Exception as exc:  # noqa: BLE001 - handed on to the operation
                error = exc
    finally:
        op.close()


def _attempts(step: Call | OpenStream, policy: RetryPolicy) -> Op[Any]:
    """Carry out ``step`` until it succeeds or its failure is not retried (raised)."""
    call = step.call if isinstance(step, OpenStream) else step
    attempt = 0
    while True:
        try:
            return (yield step)
        except ClientError as error:
            worth = isinstance(error, Retryable) or (
                call.resend and not isinstance(error, ApiError))
            delay = policy.delay(attempt, error) if worth else None
            if delay is None:
                raise
            log.info("%s %s: %s; waiting %.1f s before attempt %d of %d", call.method,
                     call.path, error, delay, attempt + 2, policy.max_retries + 1)
        yield Sleep(delay)
        attempt += 1


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The ``Retry-After`` header in seconds (None when absent or not a number of seconds)."""
    value = headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def raise_for(status: int, headers: Mapping[str, str], content: bytes) -> None:
    """Raise the typed exception of an error answer (status 400 and above)."""
    if status < 400:
        return
    try:
        problem = json.loads(content) if content else {}
    except ValueError:
        problem = content.decode("utf-8", "replace")
    raise error_from_problem(status, problem, retry_after(headers))


class Event(NamedTuple):
    """One Server-Sent Event: its ``id`` (opaque; resume after it), ``event`` name and
    ``data`` (the decoded JSON)."""

    id: str | None
    event: str
    data: Any


class EventParser:
    """Server-Sent Events, one line at a time (the text/event-stream format): comments
    (heartbeats) are skipped, ``data`` lines joined, an event ends at a blank line."""

    def __init__(self) -> None:
        self._id: str | None = None
        self._event = "message"
        self._data: list[str] = []

    def feed(self, line: str) -> Event | None:
        """Take one line (without its end of line); the event it completes, if any."""
        if not line:
            if not self._data:
                self._event = "message"
                return None
            text, self._data = "\n".join(self._data), []
            event, self._event = self._event, "message"
            return Event(self._id, event, json.loads(text))
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        return None
