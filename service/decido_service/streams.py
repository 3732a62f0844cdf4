"""The long responses of one worker process: its open event streams (a run's Server-Sent
Events, ``GET /v1/runs/{id}/events`` and the dashboard's) and streamed runs
(``POST /v1/optimize`` with ``Accept: application/x-ndjson``).

A stream lasts while its run does (up to the tier's ``max_time_limit``, or longer for a
queued run), long after the request that opened it was admitted. :class:`StreamGuard`
(``app.ctx.streams``, one per worker) holds a :class:`Ticket` for each:

- **revocation**: every :data:`REVOKED_CHECK` seconds it asks the store which of the
  keys with an open stream in this worker were revoked (one query, whichever process,
  node or ``decido keys revoke`` revoked them; at once for a key revoked by this
  worker, :meth:`StreamGuard.revoked`). Each stream of a revoked key ends with a final
  ``error`` event carrying the problem ``revoked_key`` (401), within a few seconds;
- **the worker's cap** (``DECIDO_WORKER_STREAMS``, :attr:`Settings.worker_streams
  <decido_service.config.Settings.worker_streams>`): event streams open in this worker,
  every key together, beside the per-key cap of the tier (``max_streams``). A stream
  beyond it is refused with 503 ``overloaded`` and ``Retry-After``, so many watchers
  never make the worker slow for every other request. A streamed run is not counted
  there: the run slots (``run_threads + run_queue``) already bound those.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from decido_service.errors import ServiceError
from decido_service.feeds import STREAM_RETRY_AFTER
from decido_service.poller import Poller
from decido_service.store import Store

__all__ = ["REVOKED_CHECK", "StreamGuard", "Ticket"]


#: seconds between two looks at the store for revoked keys with open streams
REVOKED_CHECK = 1.0


class Ticket:
    """One open stream of ``key_id``: :attr:`ended` is the problem that ends it (the key
    was revoked), else None; the callables given to :meth:`on_end` are called when it is
    set (to wake a stream that waits for its run)."""

    __slots__ = ("_wake", "ended", "key_id")

    def __init__(self, key_id: str) -> None:
        self.key_id = key_id
        self.ended: ServiceError | None = None
        self._wake: list[Callable[[], None]] = []

    def on_end(self, wake: Callable[[], None]) -> None:
        """Call ``wake`` when the stream must end."""
        self._wake.append(wake)

    def end(self, problem: ServiceError) -> None:
        """End the stream with ``problem`` (the first problem is kept)."""
        if self.ended is not None:
            return
        self.ended = problem
        for wake in self._wake:
            wake()


class StreamGuard(Poller):
    """This worker's open streams (module docs); ``cap``: event streams at once (0: no
    cap)."""

    def __init__(self, store: Store, cap: int, interval: float = REVOKED_CHECK) -> None:
        super().__init__("stream guard", interval)
        self.store = store
        self.cap = cap
        self.events = 0  # event streams open now (the ones the cap counts)
        self._tickets: dict[str, set[Ticket]] = {}

    @contextlib.contextmanager
    def hold(self, key_id: str, *, counted: bool = True) -> Iterator[Ticket]:
        """A ticket for a stream of ``key_id`` while it is open; ``counted``: an event
        stream, within the worker's cap (503 ``overloaded`` when it is full)."""
        if counted and self.cap and self.events >= self.cap:
            raise ServiceError(
                "overloaded", f"this worker has {self.cap} event streams open, the most it "
                "serves; retry shortly (another worker may take it)",
                headers={"Retry-After": str(STREAM_RETRY_AFTER)},
                extra={"limit_value": self.cap})
        ticket = Ticket(key_id)
        self._tickets.setdefault(key_id, set()).add(ticket)
        self.events += counted
        try:
            yield ticket
        finally:
            self.events -= counted
            held = self._tickets[key_id]
            held.discard(ticket)
            if not held:
                del self._tickets[key_id]

    def revoked(self, key_id: str, revoked_at: str) -> None:
        """End every open stream of ``key_id``, revoked at ``revoked_at``, with the problem
        of its next request (401 ``revoked_key``)."""
        problem = ServiceError("revoked_key", f"this key was revoked at {revoked_at}")
        for ticket in list(self._tickets.get(key_id, ())):
            ticket.end(problem)

    async def round(self) -> None:
        """End the streams of the keys revoked since the last round."""
        if not self._tickets:
            return
        found = await self.store.accounts.revoked_among(list(self._tickets))
        for key_id, revoked_at in found.items():
            self.revoked(key_id, revoked_at)
