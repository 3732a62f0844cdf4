"""Group commit: the admissions a worker asks for while it is busy go to the store together.

:meth:`GroupCommit.submit` queues one request's :class:`~decido_service.store.AdmissionRequest`
and returns a future of its :class:`~decido_service.store.Admission`. The batch *settles*
first: it is sent at the first turn of the event loop that added no request to it (at most
:data:`GroupCommit.MAX_TURNS` turns and :data:`GroupCommit.MAX_BATCH` requests after its
first), as one :meth:`Admissions.admit_many <decido_service.store.Admissions.admit_many>`
call: one transaction and one commit for all of them. While that call is in flight the
next batch gathers, and is sent as soon as the call returns. Each request is still judged on its own
(all or nothing, in order). :meth:`GroupCommit.log` queues an entry of the decision log
the same way: it is written in the transaction of the next batch.

The call belongs to no handler, so a handler cancelled by a client that went away cannot
interrupt it: a counted request is always committed.
"""

from __future__ import annotations

import asyncio

from decido_service.store import (
    Admission,
    AdmissionRequest,
    Admissions,
    DecisionEntry,
    StoreError,
)

__all__ = ["GroupCommit"]

Pending = list[tuple[AdmissionRequest, "asyncio.Future[Admission]"]]
Logged = list[tuple[DecisionEntry, "asyncio.Future[None]"]]


class GroupCommit:
    """Admissions of one worker, sent to the store together once the batch stops growing."""

    #: a batch is sent at most this many loop turns after its first request...
    MAX_TURNS = 8
    #: ... or as soon as it holds this many requests
    MAX_BATCH = 256

    def __init__(self, admissions: Admissions) -> None:
        self.counters = admissions
        self._pending: Pending = []
        self._logged: Logged = []
        self._in_flight: asyncio.Task[None] | None = None
        self._settling = False
        self.batches = 0  # store calls so far (for tests and diagnostics)
        self.admissions = 0

    def submit(self, request: AdmissionRequest) -> asyncio.Future[Admission]:
        """A future of the admission of ``request``; it fails with ``StoreError`` when the
        store does."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Admission] = loop.create_future()
        self._pending.append((request, future))
        self._wake(loop)
        return future

    def log(self, decision: DecisionEntry) -> asyncio.Future[None]:
        """A future that is done once ``decision`` is in the decision log (committed with
        the next batch); it fails with ``StoreError`` when the store does."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._logged.append((decision, future))
        self._wake(loop)
        return future

    def _wake(self, loop: asyncio.AbstractEventLoop) -> None:
        if not self._settling and self._in_flight is None:
            self._settling = True
            loop.call_soon(self._settle, loop, 0, 1)

    def _settle(self, loop: asyncio.AbstractEventLoop, seen: int, turns: int) -> None:
        """Send the batch if it holds no more than the ``seen`` requests it held one turn
        ago (or it is old or big enough), else look again after the next turn. The first
        look (``seen`` 0) always waits a turn: requests that arrive together reach here
        over two turns (their data, then their handlers)."""
        size = len(self._pending) + len(self._logged)
        if size > seen and turns < self.MAX_TURNS and size < self.MAX_BATCH:
            loop.call_soon(self._settle, loop, size, turns + 1)
            return
        self._settling = False
        self._send(loop)

    def _send(self, loop: asyncio.AbstractEventLoop) -> None:
        batch, self._pending = self._pending, []
        logged, self._logged = self._logged, []
        self._in_flight = loop.create_task(self._commit(batch, logged))

    async def _commit(self, batch: Pending, logged: Logged) -> None:
        waiters: list[asyncio.Future[Admission] | asyncio.Future[None]] = [
            *(f for _, f in batch), *(f for _, f in logged)]
        try:
            results = await self.counters.admit_many([request for request, _ in batch],
                                                  [decision for decision, _ in logged])
        except Exception as exc:  # StoreError, or a bug: every waiter hears of it
            error = exc if isinstance(exc, StoreError) else StoreError(str(exc))
            for future in waiters:
                if not future.done():
                    future.set_exception(error)
        else:
            self.batches += 1
            self.admissions += len(batch)
            for (_, future), result in zip(batch, results, strict=True):
                if not future.done():  # a cancelled handler: counted all the same
                    future.set_result(result)
            for _, done in logged:
                if not done.done():
                    done.set_result(None)
        finally:
            self._in_flight = None
            if self._pending or self._logged:  # gathered meanwhile: they waited enough
                self._send(asyncio.get_running_loop())

    async def drain(self) -> None:
        """Wait until every queued admission has been sent and answered."""
        while self._in_flight is not None or self._pending or self._logged:
            if self._in_flight is not None:
                await asyncio.shield(self._in_flight)
            else:
                await asyncio.sleep(0)
