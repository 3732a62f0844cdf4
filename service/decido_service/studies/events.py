"""Server-Sent Events of a study (``GET /v1/studies/{id}/events``, and the dashboard's):
the event source, with no knowledge of HTTP.

Every change of a study writes its events in its own transaction
(:meth:`~decido_service.studies.operation.Operation.flush`): ``trial`` (a trial's new
state: suggested ``active``, ``queued``, ``completed``, ``failed`` incl.
``lease_expired``, ``infeasible``, ``early_stopped``, ``abandoned``; data: the Trial),
``best`` (the best so far changed; data ``{"best": Trial | null}``, or ``{"front_size",
"hypervolume"}`` for several objectives), ``state`` (the study was ``stopped`` or
``completed``; data ``{"id", "state", "trials"}``) and ``finished`` (the study takes no
more suggestions and every trial is finished; the same data; the ``study.completed``
webhook is written with it). Each is numbered 1, 2, ... per study under the study's row
lock, so the number is a durable order
on every node and backend; it is the event's ``id``.

A new watcher (no ``Last-Event-ID``) is first sent a ``study`` event (data: the Study, id:
the number of the last event so far), then every later event; ``Last-Event-ID: n`` resumes
with the events after ``n``, none missed and none twice. A study keeps its newest events
only (:attr:`Settings.study_events <decido_service.config.Settings.study_events>`): a
resume from before them is sent the ``study`` event again (the study now, id: its last
event), as a new watcher, then the events after it. The stream ends once the study is
finished and its events are sent (or when it is deleted).

Each worker keeps one :class:`StudyFeed` (a :class:`decido_service.feeds.Feed`) per watched
study: it reads the study's row and its new events every :data:`POLL_INTERVAL` seconds
while someone watches, keeps the last :data:`BUFFER` of them encoded once for every
watcher, and a watcher further behind (a resume) reads its backlog from the store in pages
of :data:`PAGE`. A key's open streams in a worker are capped by its tier's
``max_streams``, counted together with its runs' streams (the worker's study
:class:`~decido_service.feeds.Feeds` shares the runs' count).
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

import msgspec

from decido_service.errors import ServiceError
from decido_service.feeds import HEARTBEAT, Feed, Feeds, follow
from decido_service.store import Store
from decido_service.studies.operation import finished, valid_id
from decido_service.studies.views import study_view

__all__ = ["BUFFER", "PAGE", "POLL_INTERVAL", "StudyFeed", "Watcher", "frame", "watch"]

#: seconds between two reads of a watched study by a worker's feed
POLL_INTERVAL = 0.25
#: the recent events a feed keeps encoded for its watchers
BUFFER = 2048
#: events read from the store at a time
PAGE = 500
_encode = msgspec.json.Encoder().encode


def frame(seq: int, kind: str, data: str | bytes) -> bytes:
    """One event as sent: ``id``, ``event`` and one ``data`` line of JSON."""
    body = data.encode() if isinstance(data, str) else data
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (seq, kind.encode(), body)


class StudyFeed(Feed):
    """The latest row and recent events of one study in this worker, read from the store
    every :data:`POLL_INTERVAL` seconds while someone watches."""

    def __init__(self, store: Store, key_id: str, row: dict[str, Any]) -> None:
        super().__init__(store, key_id, POLL_INTERVAL)
        self.study_id = row["id"]
        self.row: dict[str, Any] | None = row
        self.seen = int(row["events"])  # the last event number read
        self.buffer: deque[tuple[int, bytes]] = deque(maxlen=BUFFER)

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

    @property
    def ended(self) -> bool:
        """The study was deleted, or it is finished and every event of it was read."""
        return self.done(self.seen)

    async def read(self) -> bool:
        """Read a page of the study's new events, and its row."""
        found = await self.store.studies.events_after(self.key_id, self.study_id,
                                                      self.seen, PAGE)
        if found is None:  # deleted meanwhile: the watchers' streams end
            self.row = None
            self.wake()
            return False
        row, events = found
        moved = bool(events) or self.row is None or row["state"] != self.row["state"]
        self.row = row
        for seq, kind, data in events:
            self.buffer.append((seq, frame(seq, kind, data)))
            self.seen = seq
        if moved or self.done(self.seen):
            self.wake()
        return len(events) == PAGE


def _counts(row: dict[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = msgspec.json.decode(row["counts"])
    return counts


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
        cursor = int(self.row["events"]) if self.cursor is None else self.cursor
        if self.cursor is None:
            yield frame(cursor, "study", _encode(study_view(self.row)))
        del self.row  # the feed has the newest; a watcher holds no copy

        async def take() -> tuple[list[bytes], bool]:
            nonlocal cursor
            if cursor < feed.floor:  # behind the buffer (a resume): page from the store
                found = await store.studies.events_after(feed.key_id, feed.study_id,
                                                         cursor, PAGE)
                if found is None:
                    return [], True
                row, events = found
                if events and events[0][0] > cursor + 1:  # older than the events kept
                    cursor = int(row["events"])
                    return [frame(cursor, "study", _encode(study_view(row)))], False
                if events:
                    cursor = events[-1][0]
                    return [frame(seq, kind, data) for seq, kind, data in events], False
            buffered = feed.after(cursor)
            if buffered:
                cursor = buffered[-1][0]
            return [e for _, e in buffered], feed.done(cursor) or stop()

        async with contextlib.aclosing(follow(feed, take, self.heartbeat)) as chunks:
            async for chunk in chunks:
                yield chunk


@contextlib.asynccontextmanager
async def watch(store: Store, feeds: Feeds[StudyFeed, dict[str, Any]], key_id: str,
                study_id: str, last_event_id: str | None, cap: int | None,
                heartbeat: float = HEARTBEAT) -> AsyncIterator[Watcher]:
    """Open a watcher of ``key_id``'s study, resumed after ``last_event_id`` (absent or
    empty: a new watcher): 404 ``not_found`` for no such study of the key, 400
    ``invalid_parameter`` for an id the stream has not sent, 429 ``too_many_streams``
    over ``cap`` (all raised before anything is sent). The caller sends
    :meth:`Watcher.chunks`."""
    row = await store.studies.get(key_id, study_id) if valid_id(study_id) else None
    if row is None:
        raise ServiceError("not_found", f"no study {study_id!r} of this key")
    cursor = None
    if last_event_id:
        if not last_event_id.isdigit() or int(last_event_id) > int(row["events"]):
            raise ServiceError("invalid_parameter", f"Last-Event-ID: {last_event_id!r} is "
                                                    "not an event id this stream has sent")
        cursor = int(last_event_id)
    async with feeds.watch(store, key_id, study_id, row, cap) as feed:
        yield Watcher(feed, row, cursor, heartbeat)
