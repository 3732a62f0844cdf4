"""The loop of a worker process's background jobs over the store (the run worker,
:mod:`decido_service.runs.queue`; the delivery worker, :mod:`decido_service.webhooks.worker`).

A :class:`Poller` does a round of work at once when woken (:attr:`Poller.wake`), else every
``interval`` seconds, until stopped; a round that fails (a store outage) is logged and
the next one tries again. :class:`Every` says when a slower chore of a round is due.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import logging
import time

__all__ = ["Every", "Poller"]

log = logging.getLogger("decido.service")


class Poller(abc.ABC):
    """A background job of this worker process (module docs): subclasses write
    :meth:`round`."""

    def __init__(self, name: str, interval: float) -> None:
        self.name = name
        self.interval = interval
        self.wake = asyncio.Event()
        self.stopping = False
        self._task: asyncio.Task[None] | None = None

    @abc.abstractmethod
    async def round(self) -> None:
        """One round of the job."""

    def start(self) -> None:
        """Start the rounds."""
        self._task = asyncio.ensure_future(self._loop())

    async def stop(self) -> None:
        """Stop after the round in progress."""
        self.stopping = True
        self.wake.set()
        if self._task is not None:
            await self._task

    async def _loop(self) -> None:
        while not self.stopping:
            self.wake.clear()
            try:
                await self.round()
            except Exception:  # noqa: BLE001 - a store outage: try again next round
                log.debug("%s: store call failed", self.name, exc_info=True)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.wake.wait(), self.interval)


class Every:
    """A chore due at once, then every ``seconds``: :meth:`due` says so, once each time."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._next = time.monotonic()

    def due(self) -> bool:
        """Whether the chore is due now (then it is next due in ``seconds``)."""
        now = time.monotonic()
        if now < self._next:
            return False
        self._next = now + self.seconds
        return True
