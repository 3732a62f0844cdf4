"""Group commit of admissions, and the caches in front of the store, per worker process.

- :class:`GroupCommit`: the requests that ask to be counted while the event loop is busy
  are counted in one store transaction (:meth:`Store.admit_many
  <decido_service.store.Store.admit_many>`), run on the loop: one commit, and no thread
  hop, for all of them. The batch *settles* first: it is committed at the first turn of
  the loop that added no request to it (at most :data:`GroupCommit.MAX_TURNS` turns and
  :data:`GroupCommit.MAX_BATCH` requests after its first), so a loaded worker commits
  once for all its connections' requests, not once per turn, and an idle one commits two
  turns after the request (microseconds). Each request is still all-or-nothing on its
  own and the store's write lock makes the counts exact across processes. The
  transaction is a plain loop callback, not part of any handler, so a handler cancelled
  by a client that went away cannot interrupt it: a counted request is always committed.
- :class:`KeyCache`: key records by the SHA-256 of their secret for ``ttl`` seconds, so
  authentication costs a hash and a dict lookup. A cached record is never trusted for
  counting: the admission transaction checks that the key is still not revoked.
- :class:`Readiness`: the store's answer to a trivial query, refreshed at most once per
  ``ttl`` seconds, which is what ``GET /v1/health`` reports.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from decido_service import keys
from decido_service.store import (
    Admission,
    AdmissionRequest,
    CounterSpec,
    KeyRecord,
    Store,
    StoreError,
)

__all__ = ["GroupCommit", "KeyCache", "Readiness"]


class GroupCommit:
    """Admissions of one worker, committed together once the batch stops growing."""

    #: a batch is committed at most this many loop turns after its first request...
    MAX_TURNS = 8
    #: ... or as soon as it holds this many requests
    MAX_BATCH = 256

    def __init__(self, store: Store) -> None:
        self.store = store
        self._pending: list[tuple[AdmissionRequest, asyncio.Future[Admission]]] = []
        self.batches = 0  # transactions so far (for tests and diagnostics)
        self.admissions = 0

    def admit(self, specs: Sequence[CounterSpec], now: float,
              key_id: str | None = None) -> asyncio.Future[Admission]:
        """A future of the :class:`~decido_service.store.Admission` of ``specs`` (and of
        ``key_id``'s revocation check); it fails with ``StoreError`` when the store does."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Admission] = loop.create_future()
        if not self._pending:
            loop.call_soon(self._settle, loop, 0, 1)
        self._pending.append((AdmissionRequest(specs, now, key_id), future))
        return future

    def _settle(self, loop: asyncio.AbstractEventLoop, seen: int, turns: int) -> None:
        """Commit the batch if it holds no more than the ``seen`` requests it held one
        turn ago (or it is old or big enough), else look again after the next turn. The
        first look (``seen`` 0) always waits a turn: the requests that arrive together
        reach the store over two turns (their data, then their handlers)."""
        size = len(self._pending)
        if size > seen and turns < self.MAX_TURNS and size < self.MAX_BATCH:
            loop.call_soon(self._settle, loop, size, turns + 1)
        else:
            self._flush()

    def _flush(self) -> None:
        batch, self._pending = self._pending, []
        try:
            results = self.store.admit_many([request for request, _ in batch])
        except Exception as exc:  # StoreError, or a bug: every waiter hears of it
            for _, future in batch:
                if not future.done():
                    future.set_exception(
                        exc if isinstance(exc, StoreError) else StoreError(str(exc)))
            return
        self.batches += 1
        self.admissions += len(batch)
        for (_, future), result in zip(batch, results, strict=True):
            if not future.done():  # a cancelled handler: counted all the same
                future.set_result(result)


class KeyCache:
    """Key records by secret hash, each kept ``ttl`` seconds (at most ``size`` of them)."""

    def __init__(self, store: Store, ttl: float = 2.0, size: int = 10_000) -> None:
        self.store = store
        self.ttl = ttl
        self.size = size
        self._records: dict[str, tuple[KeyRecord, float]] = {}

    def find(self, secret: str) -> KeyRecord | None:
        """The key of ``secret`` (revoked ones included), else ``None``; unknown and
        malformed secrets are not cached, so a key made a moment ago is found."""
        if not keys.is_well_formed(secret):
            return None
        digest = keys.hash_secret(secret)
        now = time.monotonic()
        hit = self._records.get(digest)
        if hit is not None and hit[1] > now:
            return hit[0]
        record = self.store.find_key(secret)
        if record is not None:
            if len(self._records) >= self.size:
                self._records.clear()
            self._records[digest] = (record, now + self.ttl)
        return record

    def forget(self, secret: str) -> None:
        """Drop the cached record of ``secret`` (e.g. once it was found revoked)."""
        self._records.pop(keys.hash_secret(secret), None)


class Readiness:
    """Whether the store answers, asked at most once per ``ttl`` seconds."""

    def __init__(self, store: Store, ttl: float = 1.0) -> None:
        self.store = store
        self.ttl = ttl
        self._ok = False
        self._until = 0.0

    def ok(self) -> bool:
        """The store's last answer to :meth:`Store.ping`, at most ``ttl`` seconds old."""
        now = time.monotonic()
        if now >= self._until:
            self._ok = self.store.ping()
            self._until = now + self.ttl
        return self._ok
