"""Server-Sent Events of a run (``GET /v1/runs/{id}/events``): what is sent, and when.

A run's events are derived from its store row, so any worker of any node can serve them,
whichever process executes the run. Each worker keeps one :class:`RunFeed` per watched run
(a :class:`decido_service.feeds.Feed`): it reads the row every
:data:`~decido_service.runs.PROGRESS_INTERVAL` seconds (the pace the executing worker
writes progress at) while at least one client watches, and every watcher of that run in
the worker shares the read and the encoded events (:class:`Snapshot`).

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

from collections.abc import AsyncGenerator, Callable

import msgspec
import orjson

from decido_service.errors import ServiceError
from decido_service.feeds import HEARTBEAT, Feed, follow
from decido_service.runs.api import run_view
from decido_service.runs.execution import PROGRESS_INTERVAL
from decido_service.store import FINISHED_STATES, RunRow, Store
from decido_service.types import Run, RunProgress, encode

__all__ = ["Cursor", "RunFeed", "Snapshot", "check_resumable", "chunks", "cursor_of"]

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

    def __init__(self, row: RunRow) -> None:
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


class RunFeed(Feed):
    """The latest :class:`Snapshot` of one run in this worker, read from the store every
    :data:`~decido_service.runs.PROGRESS_INTERVAL` seconds while someone watches (the
    row is not kept: a watcher holds the shared feed, never its own copy of a run that can
    be about 1 MB)."""

    def __init__(self, store: Store, key_id: str, row: RunRow) -> None:
        super().__init__(store, key_id, PROGRESS_INTERVAL)
        self.run_id = row.id
        self.snapshot: Snapshot | None = Snapshot(row)
        self._seen = (row.state, row.document, row.finished_at)

    @property
    def ended(self) -> bool:
        """The run is finished, or deleted."""
        return self.snapshot is None or self.snapshot.final

    async def read(self) -> bool:
        """Read the run's row; a new snapshot when it changed (None: deleted)."""
        row = await self.store.runs.get(self.key_id, self.run_id)
        if row is None:  # deleted meanwhile: the watchers' streams end
            self.snapshot = None
        else:
            seen = (row.state, row.document, row.finished_at)
            if seen == self._seen:
                return False
            self._seen = seen
            self.snapshot = Snapshot(row)
        self.wake()
        return False


def chunks(feed: RunFeed, cursor: Cursor, *, heartbeat: float = HEARTBEAT,
           stop: Callable[[], bool] = lambda: False) -> AsyncGenerator[bytes, None]:
    """``feed``'s events after ``cursor`` until the terminal event, a heartbeat comment
    every ``heartbeat`` seconds without one (:func:`~decido_service.feeds.follow`); the
    run's ``request`` goes in the first run document only. Ends early when the run is
    deleted, or when ``stop()`` is true as the feed wakes (the key was revoked)."""
    fresh, request = cursor == (0, -1), True

    async def take() -> tuple[list[bytes], bool]:
        nonlocal cursor, fresh, request
        snapshot = feed.snapshot
        if snapshot is None or stop():
            return [], True
        events, cursor = snapshot.events_after(cursor, fresh=fresh, request=request)
        fresh = False
        if any(not e.startswith(b"id: 2.") for e in events):  # a run document: with it
            request = False
        return events, cursor[0] == _TERMINAL

    return follow(feed, take, heartbeat)
