"""Server-Sent Events of a study (``GET /v1/studies/{id}/events``, and the dashboard's):
the event source, with no knowledge of HTTP.

Every change of a study writes its events in its own transaction
(:meth:`~decido_service.studies.api._Op.flush`): ``trial`` (a trial's new state: suggested
``active``, ``queued``, ``completed``, ``failed`` incl. ``lease_expired``, ``infeasible``,
``early_stopped``, ``abandoned``; data: the Trial), ``best`` (the best so far changed;
data ``{"best": Trial | null}``, or ``{"front_size", "hypervolume"}`` for several
objectives), ``state`` (the study was ``stopped`` or ``completed``; data ``{"id",
"state", "trials"}``) and ``finished`` (the study takes no more suggestions and every trial
is finished; the same data; the ``study.completed`` webhook is written with it). Each is
numbered 1, 2, ... per study under the study's row lock, so the number is a durable order
on every node and backend; it is the event's ``id``.

A new watcher (no ``Last-Event-ID``) is first sent a ``study`` event (data: the Study, id:
the number of the last event so far), then every later event; ``Last-Event-ID: n`` resumes
with the events after ``n``, none missed and none twice. The stream ends once the study is
finished and its events are sent (or when it is deleted).

Each worker keeps one :class:`StudyFeed` per watched study: it reads the study's row and
its new events every :data:`POLL_INTERVAL` seconds while someone watches, keeps the last
:data:`BUFFER` of them encoded once for every watcher, and a watcher further behind (a
resume) reads its backlog from the store in pages of :data:`PAGE`. A key's open streams
in a worker are capped by its tier's ``max_streams``, counted together with its runs'
streams (:class:`StudyFeeds` shares the runs' count).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

import msgspec

from decido_service.errors import ServiceError
from decido_service.store import Store
from decido_service.studies.api import finished
from decido_service.studies.views import study_view
from decido_service.types.studies import STUDY_ID_PATTERN

__all__ = ["BUFFER", "HEARTBEAT", "PAGE", "POLL_INTERVAL", "STREAM_RETRY_AFTER", "StudyFeed",
           "StudyFeeds", "Watcher", "frame", "watch"]

#: seconds between two reads of a watched study by a worker's feed
POLL_INTERVAL = 0.25
#: seconds between two ``: heartbeat`` comment lines of an open stream
HEARTBEAT = 15.0
#: the recent events a feed keeps encoded for its watchers
BUFFER = 2048
#: events read from the store at a time
PAGE = 500
#: the ``Retry-After`` of a stream refused over the key's cap
STREAM_RETRY_AFTER = 5
_HEARTBEAT_LINE = b": heartbeat\n\n"
_encode = msgspec.json.Encoder().encode
_STUDY_ID = re.compile(STUDY_ID_PATTERN)


def frame(seq: int, kind: str, data: str | bytes) -> bytes:
    """One event as sent: ``id``, ``event`` and one ``data`` line of JSON."""
    body = data.encode() if isinstance(data, str) else data
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (seq, kind.encode(), body)


def _study_id_ok(study_id: str) -> bool:
    return _STUDY_ID.fullmatch(study_id) is not None


class StudyFeed:
    """The latest row and recent events of one study in this worker, read from the store
    every :data:`POLL_INTERVAL` seconds while someone watches."""

    def __init__(self, store: Store, key_id: str, study_id: str,
                 row: dict[str, Any]) -> None:
        self.store, self.key_id, self.study_id = store, key_id, study_id
        self.row: dict[str, Any] | None = row
        self.seen = int(row["events"])  # the last event number read
        self.buffer: deque[tuple[int, bytes]] = deque(maxlen=BUFFER)
        self.watchers = 0
        self._changed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[None] | None = None

    @property
    def floor(self) -> int:
        """The last event number before the buffer: a watcher past it is served from
        the buffer, one before it reads the store."""
        return self.buffer[0][0] - 1 if self.buffer else self.seen

    def after(self, cursor: int) -> list[tuple[int, bytes]]:
        """The buffered events numbered above ``cursor``."""
        return [e for e in self.buffer if e[0] > cursor]

    def done(self, cursor: int) -> bool:
        """Whether a watcher at ``cursor`` has everything: the study was deleted, or it
        is finished and its events up to ``cursor`` are all it has."""
        row = self.row
        return row is None or (finished(row["state"], _counts(row)) and
                               cursor >= int(row["events"]))

    def start(self) -> None:
        """Start reading the store (once the first watcher joined)."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._poll())

    def stop(self) -> None:
        """Stop reading (the last watcher left)."""
        if self._task is not None:
            self._task.cancel()

    async def changed(self, timeout: float) -> bool:
        """Wait until the feed changes (True) or ``timeout`` seconds pass (False)."""
        try:
            await asyncio.wait_for(asyncio.shield(self._changed), timeout)
        except asyncio.TimeoutError:
            return False
        return True

    def wake(self) -> None:
        """Wake every watcher of the feed (one of them must look at its stop condition)."""
        self._notify()

    def _notify(self) -> None:
        changed, self._changed = self._changed, asyncio.get_running_loop().create_future()
        changed.set_result(None)

    async def _poll(self) -> None:
        while self.row is not None and not self.done(self.seen):
            await asyncio.sleep(POLL_INTERVAL)
            while True:
                try:
                    found = await self.store.studies.events_after(
                        self.key_id, self.study_id, self.seen, PAGE)
                except Exception:  # noqa: BLE001 - a busy or unreachable store: read again
                    break
                if found is None:  # deleted meanwhile: the watchers' streams end
                    self.row = None
                    self._notify()
                    return
                row, events = found
                moved = bool(events) or row["state"] != (self.row or {}).get("state")
                self.row = row
                for seq, kind, data in events:
                    self.buffer.append((seq, frame(seq, kind, data)))
                    self.seen = seq
                if moved or self.done(self.seen):
                    self._notify()
                if len(events) < PAGE:
                    break


def _counts(row: dict[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = msgspec.json.decode(row["counts"])
    return counts


class StudyFeeds:
    """The feeds of one worker, by study, and the count of its open streams by key
    (``streams``: the runs' count, shared, so ``max_streams`` caps both together)."""

    def __init__(self, streams: dict[str, int] | None = None) -> None:
        self._feeds: dict[tuple[str, str], StudyFeed] = {}
        self.streams: dict[str, int] = {} if streams is None else streams

    @contextlib.asynccontextmanager
    async def watch(self, store: Store, key_id: str, row: dict[str, Any],
                    cap: int | None) -> AsyncIterator[StudyFeed]:
        """The study's feed while the caller watches (``row``: the study as just read);
        429 ``too_many_streams`` when the key has ``cap`` streams open in this worker."""
        open_now = self.streams.get(key_id, 0)
        if cap is not None and open_now >= cap:
            raise ServiceError("too_many_streams", f"this key has {cap} event streams open, "
                               "the most its tier allows; close one, or retry shortly",
                               headers={"Retry-After": str(STREAM_RETRY_AFTER)},
                               extra={"limit_value": cap})
        ident = (key_id, row["id"])
        feed = self._feeds.get(ident)
        if feed is None:
            feed = self._feeds[ident] = StudyFeed(store, key_id, row["id"], row)
        self.streams[key_id] = open_now + 1
        feed.watchers += 1
        feed.start()
        try:
            yield feed
        finally:
            feed.watchers -= 1
            if feed.watchers == 0:
                feed.stop()
                if self._feeds.get(ident) is feed:
                    del self._feeds[ident]
            left = self.streams[key_id] - 1
            if left:
                self.streams[key_id] = left
            else:
                del self.streams[key_id]


class Watcher:
    """One watcher's stream of a study: :meth:`chunks` are the bytes to send."""

    def __init__(self, feed: StudyFeed, row: dict[str, Any], cursor: int | None,
                 heartbeat: float) -> None:
        self.feed, self.row, self.cursor, self.heartbeat = feed, row, cursor, heartbeat

    async def chunks(self, stop: Callable[[], bool] = lambda: False
                     ) -> AsyncGenerator[bytes, None]:
        """The events after the watcher's cursor (a new watcher: the ``study`` event
        first), a heartbeat comment every ``heartbeat`` seconds without one, until the
        study is finished and everything was sent, or deleted, or ``stop()`` is true when
        the feed wakes (:meth:`StudyFeed.wake`: e.g. the key was revoked)."""
        feed, store = self.feed, self.feed.store
        cursor = self.cursor
        if cursor is None:
            cursor = int(self.row["events"])
            yield frame(cursor, "study", _encode(study_view(self.row)))
        del self.row  # the feed has the newest; a watcher holds no copy
        loop = asyncio.get_running_loop()
        last = loop.time()
        while True:
            if cursor < feed.floor:  # behind the buffer (a resume): page from the store
                found = await store.studies.events_after(feed.key_id, feed.study_id,
                                                         cursor, PAGE)
                if found is None:
                    return
                for seq, kind, data in found[1]:
                    yield frame(seq, kind, data)
                    cursor = seq
                if found[1]:
                    last = loop.time()
                    continue
            for seq, encoded in feed.after(cursor):
                yield encoded
                cursor = seq
                last = loop.time()
            if feed.done(cursor) or stop():
                return
            wait = last + self.heartbeat - loop.time()
            if wait <= 0 or not await feed.changed(wait):
                if loop.time() - last >= self.heartbeat:
                    yield _HEARTBEAT_LINE
                    last = loop.time()


@contextlib.asynccontextmanager
async def watch(store: Store, feeds: StudyFeeds, key_id: str, study_id: str,
                last_event_id: str | None, cap: int | None,
                heartbeat: float = HEARTBEAT) -> AsyncIterator[Watcher]:
    """Open a watcher of ``key_id``'s study, resumed after ``last_event_id`` (absent or
    empty: a new watcher): 404 ``not_found`` for no such study of the key, 400
    ``invalid_parameter`` for an id the stream has not sent, 429 ``too_many_streams``
    over ``cap`` (all raised before anything is sent). The caller sends
    :meth:`Watcher.chunks`."""
    row = await store.studies.get(key_id, study_id) if _study_id_ok(study_id) else None
    if row is None:
        raise ServiceError("not_found", f"no study {study_id!r} of this key")
    cursor = None
    if last_event_id:
        if not last_event_id.isdigit() or int(last_event_id) > int(row["events"]):
            raise ServiceError("invalid_parameter", f"Last-Event-ID: {last_event_id!r} is "
                                                    "not an event id this stream has sent")
        cursor = int(last_event_id)
    async with feeds.watch(store, key_id, row, cap) as feed:
        yield Watcher(feed, row, cursor, heartbeat)
