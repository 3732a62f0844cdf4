"""The store for code without an event loop (tools, scripts, tests): every concern's
methods, blocking.

    with open_blocking("./decido.db") as store:
        record, secret = store.accounts.create_key("sdk", "pro")
        store.admit([CounterSpec("decide.month", record["id"], "month", 10)], now=time.time())

Each :class:`BlockingStore` runs its :class:`~decido_service.store.Store` on an event loop
of its own, in the calling thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from decido_service.store import Admission, AdmissionRequest, CounterSpec, Store, open_store

__all__ = ["BlockingStore", "open_blocking"]

T = TypeVar("T")


class _Concern:
    """A concern whose coroutine methods run to their end on the store's loop."""

    def __init__(self, concern: object, loop: asyncio.AbstractEventLoop) -> None:
        self._concern, self._loop = concern, loop

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self._concern, name)
        return lambda *args, **kw: self._loop.run_until_complete(method(*args, **kw))


class BlockingStore:
    """A :class:`~decido_service.store.Store` called without an event loop (module docs):
    ``accounts``, ``admissions``, ``runs`` and ``decisions`` as there, blocking."""

    def __init__(self, store: Store, loop: asyncio.AbstractEventLoop) -> None:
        self.store, self._loop = store, loop
        self.accounts = _Concern(store.accounts, loop)
        self.admissions = _Concern(store.admissions, loop)
        self.runs = _Concern(store.runs, loop)
        self.decisions = _Concern(store.decisions, loop)

    def admit(self, specs: Sequence[CounterSpec], now: float,
              key_id: str | None = None) -> Admission:
        """One request's admission (``admissions.admit_many`` of one)."""
        return self._loop.run_until_complete(
            self.store.admissions.admit_many([AdmissionRequest(specs, now, key_id)]))[0]

    def prune(self, now: float) -> int:
        """:meth:`Store.prune <decido_service.store.Store.prune>`."""
        return self.run(self.store.prune(now))

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Any other coroutine of the store (its database's, say) run to its end."""
        return self._loop.run_until_complete(coroutine)

    def close(self) -> None:
        """Close the store and its loop."""
        try:
            self._loop.run_until_complete(self.store.close())
        finally:
            self._loop.close()

    def __enter__(self) -> BlockingStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_blocking(url: str, **options: Any) -> BlockingStore:
    """:func:`~decido_service.store.open_store` (same URL and options), blocking."""
    loop = asyncio.new_event_loop()
    try:
        store = loop.run_until_complete(open_store(url, **options))
    except BaseException:
        loop.close()
        raise
    return BlockingStore(store, loop)
