"""Wake-ups across worker processes and nodes: PostgreSQL's ``LISTEN``/``NOTIFY``.

A worker that makes work available to every process (a run given back to the queue)
calls :meth:`Wakeups.notify` on a channel; every process listening on it
(:meth:`Wakeups.listen`) is woken at once, instead of at its next poll. A wake-up is a
hint only: the listeners still poll (a notification is lost while a listener reconnects,
so it is woken on reconnecting too). A SQLite store has none (:class:`NoWakeups`): its
workers poll.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

__all__ = ["RUNS_CHANNEL", "NoWakeups", "Wakeups"]

#: the channel of runs given back to the queue (:mod:`decido_service.runs.queue`)
RUNS_CHANNEL = "decido_runs"


@runtime_checkable
class Wakeups(Protocol):
    """Notifications on named channels (module docs)."""

    async def notify(self, channel: str) -> None:
        """Wake every listener of ``channel`` (``StoreError`` when the store fails)."""

    async def listen(self, channel: str, wake: Callable[[], None]) -> None:
        """Call ``wake`` on each notification of ``channel`` (and whenever the listening
        connection is opened again) until cancelled; never returns otherwise."""


class NoWakeups:
    """:class:`Wakeups` of a store without notifications: nothing is sent, a listener
    waits forever (its caller polls)."""

    async def notify(self, channel: str) -> None:
        """Nothing."""

    async def listen(self, channel: str, wake: Callable[[], None]) -> None:
        """Wait until cancelled."""
        import asyncio

        await asyncio.Event().wait()
