"""Server-Sent Events of a run (``GET /v1/runs/{id}/events``): what is sent, and when.

A run's events are derived from its store row, so any worker of any node can serve them,
whichever process executes the run. Each worker keeps one :class:`RunFeed` per watched run:
it reads the row every :data:`~decido_service.runs.PROGRESS_INTERVAL` seconds (the pace the
executing worker writes progress at) while at least one client watches, and every watcher
of that run in the worker shares the read and the encoded events (:class:`Snapshot`).

**Event ids** order a run's events; a consumer treats them as opaque and resumes by
sending the last one it saw as ``Last-Event-ID``:

- ``1``, ``2``, ``3``: the ``state`` events ``queued``, ``running`` and the final state;
- ``2.<evaluations>``: a ``progress`` event (sent when the evaluation count changed);
- ``4``: the terminal ``result`` or ``error`` event, after which the stream ends.

A run's states are ``queued``, then ``running`` when it started, then its final state. A
watcher (new or resumed) that has not seen a state the run went through is sent it, in
order, before the current one: a state the run has already left is sent as the run document
was when it entered that state (no progress, result or problem; ``finished_at`` null).
A new watcher (no ``Last-Event-ID``) starts at the run's current state, so joining a
finished run yields its final ``state`` and terminal event at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import orjson

from decido_service.errors import ServiceError
from decido_service.runs.api import run_view
from decido_service.runs.execution import PROGRESS_INTERVAL
from decido_service.store import FINISHED_STATES, Store
from decido_service.streams import Ticket
from decido_service.types import Run, RunProgress, encode

__all__ = ["DRAIN_TIMEOUT", "HEARTBEAT", "SEND_SLICE", "STREAM_RETRY_AFTER", "Cursor", "Feeds",
           "RunFeed", "Snapshot", "check_resumable", "cursor_of", "send_within", "stream"]

#: seconds between two ``: heartbeat`` comment lines of an open stream
HEARTBEAT = 15.0
#: seconds a watcher's transport may stay full (Sanic's write buffer of 64 KiB and the
#: socket's): then the stream is dropped (closed), and the client may resume with
#: ``Last-Event-ID``
DRAIN_TIMEOUT = 10.0
#: bytes of an event written at a time: a large run document (its request can be about
#: 1 MB) goes out in slices, each once the transport has drained
SEND_SLICE = 16 * 1024
#: the ``Retry-After`` of a stream refused over the key's cap (streams last while runs do)
STREAM_RETRY_AFTER = 5
#: the ordinal of each state in a run's event ids (every final state is 3)
_ORDINAL = {"queued": 1, "running": 2, **{s: 3 for s in FINISHED_STATES}}
_TERMINAL = 4
#: a watcher's position: the last state ordinal and the last progress evaluations it saw
Cursor = tuple[int, int]


def cursor_of(text: str | None) -> Cursor:
    """The cursor after the ``Last-Event-ID`` ``text`` (``(0, -1)``: nothing seen; its
    shape was checked when it was read: :class:`~decido_service.types.EventsHeaders`)."""
    if not text:  # absent, or empty: nothing seen (EventSource sends no empty id)
        return 0, -1
    ordinal, _, evaluations = text.partition(".")
    return int(ordinal), int(evaluations) if evaluations else -1


def check_resumable(snapshot: Snapshot, cursor: Cursor, text: str | None) -> None:
    """400 ``invalid_parameter`` when the event ``text`` (parsed: ``cursor``) is one the
    run's stream cannot have sent yet: a state it has not entered, the terminal event of a
    run still going, or progress beyond its evaluations so far."""
    seen, evaluations = cursor
    reached = snapshot.path[-1] if not snapshot.final else _TERMINAL
    if seen == 2:
        result = snapshot.view.result
        done = snapshot.evaluations if not snapshot.final else int(
            result.evaluations if result is not None else 0)
        future = 2 not in snapshot.path or evaluations > done
    else:
        future = seen > reached
    if future:
        raise ServiceError("invalid_parameter", f"Last-Event-ID: {text!r} is not an event "
                                                "id this stream has sent")


def _event(kind: str, event_id: str, data: Run | RunProgress, *, request: bool = True
           ) -> bytes:
    """One event; a Run without its ``request`` member when ``request`` is false."""
    if isinstance(data, Run) and not request:
        doc = msgspec.to_builtins(data)
        doc.pop("request", None)
        encoded = orjson.dumps(doc)
    else:
        encoded = encode(data)
    return b"id: %s\nevent: %s\ndata: %s\n\n" % (event_id.encode(), kind.encode(), encoded)


class Snapshot:
    """One read of a run's row and the events it implies, encoded once for every watcher:
    each event is one ``bytes`` object that every watcher's transport shares."""

    def __init__(self, row: dict[str, Any]) -> None:
        self.view = run_view(row)
        state = self.view.state
        self.ordinal = _ORDINAL.get(state, 3)
        self.final = state in FINISHED_STATES
        started = self.view.started_at is not None or state == "running"
        self.path = [1, *([2] if started else []), *([3] if self.final else [])]
        progress = self.view.progress if state == "running" else None
        self.evaluations = progress.evaluations if progress else -1
        self._progress = progress
        self._encoded: dict[tuple[str, bool], bytes] = {}
        self._cache: dict[tuple[Cursor, bool], tuple[list[bytes], Cursor]] = {}

    def events_after(self, cursor: Cursor, *, fresh: bool = False, request: bool = True
                     ) -> tuple[list[bytes], Cursor]:
        """The events a watcher at ``cursor`` is sent now, and its cursor afterwards.
        ``fresh``: a new watcher (it starts at the current state); ``request``: the first
        run document among them carries the run's ``request`` (the stream sends it once),
        else none does."""
        key = ((-1, -1) if fresh else cursor, request)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._cache[key] = self._compute(
                (self.ordinal - 1, -1) if fresh else cursor, request)
        return cached

    def _compute(self, cursor: Cursor, request: bool) -> tuple[list[bytes], Cursor]:
        seen, evaluations = cursor
        out: list[bytes] = []
        for ordinal in self.path:
            if ordinal > seen:
                out.append(self._document("state", ordinal, request and not out))
                seen, evaluations = ordinal, -1
        if seen == 2 and self._progress is not None and self.evaluations > evaluations:
            evaluations = self.evaluations
            out.append(_event("progress", f"2.{evaluations}", self._progress))
        if self.final and seen < _TERMINAL:
            out.append(self._document("error" if self.view.state == "failed" else "result",
                                      _TERMINAL, request and not out))
            seen = _TERMINAL
        return out, (seen, evaluations)

    def _document(self, kind: str, ordinal: int, request: bool) -> bytes:
        """The event ``kind`` with id ``ordinal`` and its run document (with or without
        ``request``), encoded once per snapshot."""
        key = (f"{kind}{ordinal}", request)
        found = self._encoded.get(key)
        if found is None:
            doc = self._state_document(ordinal) if kind == "state" else self.view
            found = self._encoded[key] = _event(kind, str(ordinal), doc, request=request)
        return found

    def _state_document(self, ordinal: int) -> Run:
        if ordinal == self.ordinal:
            return self.view
        return msgspec.structs.replace(
            self.view, state="queued" if ordinal == 1 else "running", finished_at=None,
            progress=None, result=None, problem=None,
            started_at=None if ordinal == 1 else self.view.started_at)


class RunFeed:
    """The latest :class:`Snapshot` of one run in this worker, read from the store every
    :data:`~decido_service.runs.PROGRESS_INTERVAL` seconds while someone watches."""

    def __init__(self, store: Store, key_id: str, run_id: str, row: dict[str, Any]) -> None:
        self.store = store
        self.key_id = key_id
        self.run_id = run_id
        self.snapshot: Snapshot | None = Snapshot(row)
        self.watchers = 0
        self._raw = (row["state"], row.get("document"), row.get("finished_at"))
        self._changed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start reading the store (once the first watcher joined)."""
        if self._task is None and self.snapshot is not None and not self.snapshot.final:
            self._task = asyncio.ensure_future(self._poll())

    def stop(self) -> None:
        """Stop reading (the last watcher left)."""
        if self._task is not None:
            self._task.cancel()

    def wake(self) -> None:
        """Wake its watchers now, the snapshot unchanged (a watcher's stream must end:
        :class:`decido_service.streams.Ticket`)."""
        changed, self._changed = self._changed, asyncio.get_running_loop().create_future()
        changed.set_result(None)

    async def changed(self, timeout: float) -> None:
        """Return when the snapshot changes, or after ``timeout`` seconds."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._changed), timeout)

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(PROGRESS_INTERVAL)
            try:
                row = await self.store.runs.get(self.key_id, self.run_id)
            except Exception:  # noqa: BLE001 - a busy or unreachable store: read again later
                continue
            if row is None:  # deleted meanwhile: the watchers' streams end
                self.snapshot = None
            else:
                raw = (row["state"], row.get("document"), row.get("finished_at"))
                if raw == self._raw:
                    continue
                self._raw = raw
                self.snapshot = Snapshot(row)
            changed, self._changed = self._changed, asyncio.get_running_loop().create_future()
            changed.set_result(None)
            if self.snapshot is None or self.snapshot.final:
                return


class Feeds:
    """The feeds of one worker, by run (``app.ctx.run_feeds``), and its open streams by
    key."""

    def __init__(self) -> None:
        self._feeds: dict[tuple[str, str], RunFeed] = {}
        self.streams: dict[str, int] = {}

    @contextlib.asynccontextmanager
    async def watch(self, store: Store, key_id: str, row: dict[str, Any],
                    cap: int | None = None) -> AsyncIterator[RunFeed]:
        """The run's feed while the caller watches (``row``: the run as just read, not kept:
        a watcher holds the shared feed, never its own copy of a run that can be about
        1 MB); 429 ``too_many_streams`` when the key has ``cap`` streams open in this
        worker."""
        open_now = self.streams.get(key_id, 0)
        if cap is not None and open_now >= cap:
            raise ServiceError("too_many_streams", f"this key has {cap} event streams open, "
                               "the most its tier allows; close one, or retry shortly",
                               headers={"Retry-After": str(STREAM_RETRY_AFTER)},
                               extra={"limit_value": cap})
        ident = (key_id, row["id"])
        feed = self._feeds.get(ident)
        if feed is None:
            feed = self._feeds[ident] = RunFeed(store, key_id, row["id"], row)
        del row
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


async def stream(feed: RunFeed, cursor: Cursor, send: Any, *,
                 heartbeat: float = HEARTBEAT, drain: float = DRAIN_TIMEOUT,
                 ended: Ticket | None = None,
                 transport: asyncio.WriteTransport | None = None) -> bool:
    """Send ``feed``'s events after ``cursor`` through ``send`` (an async callable of
    bytes that waits while the transport holds more than its small write buffer) until
    the terminal event, a heartbeat comment every ``heartbeat`` seconds. The run's
    ``request`` goes in the first run document only. False when the watcher did not take
    an event within ``drain`` seconds (its transport is full): the caller drops it.
    Returns (True) as soon as ``ended``'s stream must end (its feed woken). With the
    watcher's ``transport``, a slice sent while it holds nothing is sent without a
    timer (:func:`send_within`)."""
    fresh = cursor == (0, -1)
    request = True
    loop = asyncio.get_running_loop()
    last_sent = loop.time()
    while True:
        snapshot = feed.snapshot
        if snapshot is None or (ended is not None and ended.ended is not None):
            return True
        events, cursor = snapshot.events_after(cursor, fresh=fresh, request=request)
        fresh = False
        for event in events:
            if not event.startswith(b"id: 2."):  # a run document: the request was in it
                request = False
            if not await send_within(send, event, drain, transport):
                return False
            last_sent = loop.time()
        if cursor[0] == _TERMINAL:
            return True
        wait = last_sent + heartbeat - loop.time()
        if wait <= 0:
            if not await send_within(send, b": heartbeat\n\n", drain, transport):
                return False
            last_sent = loop.time()
            continue
        await feed.changed(wait)


async def send_within(send: Any, data: bytes, seconds: float,
                       transport: asyncio.WriteTransport | None = None) -> bool:
    """Send ``data`` in slices of :data:`SEND_SLICE` bytes, each once the transport has
    drained (a watcher's transport holds a slice and Sanic's buffer, never a whole large
    event); False when a slice waited more than ``seconds``. A slice sent while
    ``transport`` holds nothing cannot wait (the transport is not paused), so it goes
    without the timeout's task and timer: the common case of a watcher that reads, and
    most of the cost of fanning an event out to many watchers."""
    for start in range(0, len(data), SEND_SLICE):
        chunk = data[start:start + SEND_SLICE]
        if transport is not None and not transport.get_write_buffer_size():
            await send(chunk)
            continue
        try:
            await asyncio.wait_for(send(chunk), seconds)
        except asyncio.TimeoutError:
            return False
    return True
