"""Feeds: what one worker process reads of a watched resource (a run, a study) for its
Server-Sent Events watchers, with no knowledge of HTTP or of the resource.

A :class:`Feed` reads the store every ``interval`` seconds while at least one client of
this worker watches, and wakes its watchers when something changed; each watcher waits on
:meth:`Feed.changed` with no read of its own. What a read is, and when the resource will
change no more, is the subclass's (:class:`decido_service.runs.events.RunFeed`,
:class:`decido_service.studies.events.StudyFeed`). :class:`Feeds` keeps one feed per
watched resource and counts the open streams of each key (the tier's ``max_streams``),
and :func:`follow` paces one watcher: its events as they come, a heartbeat comment when
nothing was sent for a while (the chunks are written by :mod:`decido_service.http.sse`).
Resuming (``Last-Event-ID``) is each capability's: its event ids are its own.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Generic, TypeVar

from decido_service.errors import ServiceError
from decido_service.store import Store

__all__ = ["HEARTBEAT", "HEARTBEAT_LINE", "STREAM_RETRY_AFTER", "Feed", "Feeds", "follow"]

#: seconds between two ``: heartbeat`` comment lines of an open stream
HEARTBEAT = 15.0
HEARTBEAT_LINE = b": heartbeat\n\n"
#: the ``Retry-After`` of a stream refused over the key's cap or the worker's
#: (:mod:`decido_service.streams`): streams last while the resource changes
STREAM_RETRY_AFTER = 5


class Feed(abc.ABC):
    """One watched resource of ``key_id`` in this worker, read from the store every
    ``interval`` seconds while someone watches (module docs)."""

    def __init__(self, store: Store, key_id: str, interval: float) -> None:
        self.store, self.key_id, self.interval = store, key_id, interval
        self.watchers = 0
        self._changed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[None] | None = None

    @property
    @abc.abstractmethod
    def ended(self) -> bool:
        """Whether the resource will change no more (finished or deleted): reading stops."""

    @abc.abstractmethod
    async def read(self) -> bool:
        """Read the store once and :meth:`wake` the watchers if anything changed; True
        when there is more to read at once (a full page). A failure (a busy or
        unreachable store) is read again after ``interval``."""

    def start(self) -> None:
        """Start reading the store (once the first watcher joined)."""
        if self._task is None and not self.ended:
            self._task = asyncio.ensure_future(self._poll())

    def stop(self) -> None:
        """Stop reading (the last watcher left)."""
        if self._task is not None:
            self._task.cancel()

    def wake(self) -> None:
        """Wake every watcher (something changed, or a watcher's stream must end:
        :class:`decido_service.streams.Ticket`)."""
        changed, self._changed = self._changed, asyncio.get_running_loop().create_future()
        changed.set_result(None)

    async def changed(self, timeout: float) -> bool:
        """Wait until the feed is woken (True) or ``timeout`` seconds pass (False)."""
        try:
            await asyncio.wait_for(asyncio.shield(self._changed), timeout)
        except asyncio.TimeoutError:
            return False
        return True

    async def _poll(self) -> None:
        while not self.ended:
            await asyncio.sleep(self.interval)
            with contextlib.suppress(Exception):  # a busy or unreachable store: next time
                while await self.read() and not self.ended:
                    pass


F = TypeVar("F", bound=Feed)
R = TypeVar("R")  # the store's row of a watched resource


class Feeds(Generic[F, R]):
    """The feeds of one worker, by (key, resource id), made by ``make(store, key_id,
    row)``, and its open streams by key (``streams``: shared by several kinds of feeds,
    so the tier's ``max_streams`` caps them together)."""

    def __init__(self, make: Callable[[Store, str, R], F],
                 streams: dict[str, int] | None = None) -> None:
        self._make = make
        self._feeds: dict[tuple[str, str], F] = {}
        self.streams: dict[str, int] = {} if streams is None else streams

    @contextlib.asynccontextmanager
    async def watch(self, store: Store, key_id: str, resource_id: str, row: R,
                    cap: int | None = None) -> AsyncIterator[F]:
        """The feed of the resource ``resource_id``, ``row`` as just read (the feed decides
        what it keeps of it), while the caller watches; 429 ``too_many_streams`` when the
        key has ``cap`` streams open in this worker."""
        open_now = self.streams.get(key_id, 0)
        if cap is not None and open_now >= cap:
            raise ServiceError("too_many_streams", f"this key has {cap} event streams open, "
                               "the most its tier allows; close one, or retry shortly",
                               headers={"Retry-After": str(STREAM_RETRY_AFTER)},
                               extra={"limit_value": cap})
        ident = (key_id, resource_id)
        feed = self._feeds.get(ident)
        if feed is None:
            feed = self._feeds[ident] = self._make(store, key_id, row)
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


async def follow(feed: Feed, take: Callable[[], Awaitable[tuple[list[bytes], bool]]],
                 heartbeat: float) -> AsyncGenerator[bytes, None]:
    """One watcher's chunks: ``take()`` gives the events it is due now and whether its
    stream ends after them. Once events were sent it takes again at once (a backlog read
    page by page); with none, it waits for ``feed`` to change, and sends a heartbeat
    comment when nothing was sent for ``heartbeat`` seconds."""
    loop = asyncio.get_running_loop()
    last = loop.time()
    while True:
        events, done = await take()
        for event in events:
            yield event
            last = loop.time()
        if done:
            return
        if events:
            continue
        wait = last + heartbeat - loop.time()
        if wait <= 0:
            yield HEARTBEAT_LINE
            last = loop.time()
            continue
        await feed.changed(wait)
