"""``decido.Client``: the blocking client of the decido service.

It carries out the same operations as :class:`decido.AsyncClient` (:mod:`decido.client._ops`)
with that client's driver, on a private event loop in a daemon thread of its own: a blocking
call waits for its result (Ctrl-C interrupts the wait), and it works the same inside a
program that already runs an event loop (a notebook).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from numpy.typing import ArrayLike

from decido.client import _ops
from decido.client._http import DEFAULT_URL, print_progress
from decido.client._ops import Objective, Progress, RunArgs, RunState
from decido.client._protocol import Event, Op, RetryPolicy
from decido.client.aio import AsyncClient
from decido.client.webhooks import Webhooks
from decido.optimize import OptimizeResult

if TYPE_CHECKING:  # typing.Unpack is 3.11+
    from typing_extensions import Unpack

__all__ = ["Client", "Run"]

T = TypeVar("T")


class Run(RunState):
    """A run on the service: ``id``, ``state``, ``document`` (the last read), ``progress``
    and, once it has ended with one, ``result`` (a :class:`decido.OptimizeResult`)."""

    def __init__(self, client: Client, document: dict[str, Any]) -> None:
        super().__init__(document)
        self._client = client

    def refresh(self) -> Run:
        """Read the run again (and its trace once it has ended); returns itself."""
        self._client._drive(_ops.get_run(self))
        return self

    def cancel(self) -> Run:
        """Ask the run to stop: it ends ``cancelled`` with its best so far."""
        self._client._drive(_ops.cancel(self))
        return self

    def wait(self, timeout: float | None = None,
             progress: bool | Progress = False) -> OptimizeResult | None:
        """Block until the run ends; its result (None for a run cancelled before it
        started). ``progress``: True prints the progress on stderr, a callable is called
        with it. Raises :class:`RunFailed` for a failed run, :class:`Timeout` after
        ``timeout`` seconds (the run goes on)."""
        show = print_progress if progress is True else progress or None
        return self._client._drive(_ops.wait(self, timeout, show))

    def events(self, last_event_id: str | None = None) -> Iterator[Event]:
        """The run's Server-Sent Events (``state``, ``progress``, then ``result`` or
        ``error``), resuming after ``last_event_id`` and reconnecting with the last id seen
        when the stream breaks."""
        return self._client._iterate(_ops.events(self, last_event_id))


class Client:
    """The decido service from Python: the same calls and result types as the library.

    ``Client(base_url, key)`` (``key`` defaults to ``DECIDO_KEY``); ``timeout`` seconds
    bound every call; refused calls (429 but the monthly quota, 503) are retried as
    ``retry`` says (:class:`RetryPolicy`). Use it as a context manager or :meth:`close` it.
    """

    def __init__(self, base_url: str = DEFAULT_URL, key: str | None = None, *,
                 timeout: float = 30.0, retry: RetryPolicy | None = None,
                 transport: Any = None) -> None:
        self._aio = AsyncClient(base_url, key, timeout=timeout, retry=retry,
                                transport=transport)
        self._loop = _Loop()

    @property
    def base_url(self) -> str:
        """The service's address."""
        return self._aio.base_url

    @property
    def webhooks(self) -> Webhooks:
        """The key's webhook endpoints and their deliveries (:class:`Webhooks`)."""
        return Webhooks(self)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections (and the client's thread)."""
        self._loop.close(self._aio.aclose())

    # ----------------------------------------------------------- the API

    def health(self) -> dict[str, Any]:
        """``GET /v1/health``."""
        return cast(dict[str, Any], self._drive(_ops.fetch("GET", "/v1/health")))

    def engines(self) -> list[dict[str, Any]]:
        """Metadata of every engine, as :func:`decido.engines`."""
        return self._drive(_ops.engines())

    def usage(self) -> dict[str, Any]:
        """The key, its plan and tier, their limits and current usage."""
        return cast(dict[str, Any], self._drive(_ops.fetch("GET", "/v1/usage")))

    def create_key(self, label: str | None = None) -> dict[str, Any]:
        """A new free key (``key``: its secret, shown once)."""
        return self._drive(_ops.create_key(label))

    def decide(self, request: dict[str, Any], *,
               metadata: Mapping[str, str] | None = None) -> dict[str, Any]:
        """One decision: the body and the answer of :func:`decido.decide`; ``metadata``:
        the labels of its decision-log entry (as the body's ``metadata``)."""
        return cast(dict[str, Any], self._drive(_ops.fetch(
            "POST", "/v1/decide", _ops.labelled(request, metadata))))

    def batch(self, request: dict[str, Any], *,
              metadata: Mapping[str, str] | None = None) -> dict[str, Any]:
        """Many decisions: the body and the answer of :func:`decido.decide_batch`;
        ``metadata``: the labels of its decision-log entry (as ``defaults.metadata``)."""
        return cast(dict[str, Any], self._drive(_ops.fetch(
            "POST", "/v1/batch", _ops.labelled(request, metadata, batch=True))))

    def decisions(self, metadata: Mapping[str, str] | None = None
                  ) -> Iterator[dict[str, Any]]:
        """Every entry of the key's decision log, newest first (page after page);
        ``metadata``: only those with every one of these labels."""
        return self._iterate(_ops.pages("/v1/decisions", _ops.filters(metadata)))

    def decision(self, decision_id: str) -> dict[str, Any]:
        """One logged decision with its request and answer."""
        path = f"/v1/decisions/{decision_id}"
        return cast(dict[str, Any], self._drive(_ops.fetch("GET", path)))

    def submit(self, objective: Objective, bounds: ArrayLike, *,
               idempotency_key: str | None = None, **args: Unpack[RunArgs]) -> Run:
        """Start a run (the arguments of :func:`decido.optimize`) and return its handle at
        once. The call carries an ``Idempotency-Key`` (a new one unless given): a resent
        submission never makes a second run."""
        body = _ops.run_body(objective, bounds, args)
        return Run(self, self._drive(_ops.submit(body, idempotency_key)))

    def optimize(self, objective: Objective, bounds: ArrayLike, *,
                 timeout: float | None = None, **args: Unpack[RunArgs]) -> OptimizeResult:
        """Run on the service and wait for the result: :func:`decido.optimize` remotely."""
        result = self.submit(objective, bounds, **args).wait(timeout)
        assert result is not None  # only a run cancelled before it starts has none
        return result

    def minimize(self, objective: Objective, bounds: ArrayLike,
                 **args: Any) -> OptimizeResult:
        """:meth:`optimize` with ``goal="minimize"``."""
        return self.optimize(objective, bounds, goal="minimize", **args)

    def maximize(self, objective: Objective, bounds: ArrayLike,
                 **args: Any) -> OptimizeResult:
        """:meth:`optimize` with ``goal="maximize"``."""
        return self.optimize(objective, bounds, goal="maximize", **args)

    def run(self, run_id: str) -> Run:
        """The handle of one of the key's runs (:class:`NotFound` for any other id)."""
        return Run(self, self._drive(_ops.fetch("GET", f"/v1/runs/{run_id}")))

    def runs(self, state: str | None = None, engine: str | None = None,
             metadata: Mapping[str, str] | None = None) -> Iterator[Run]:
        """Every run of the key, newest first (page after page), optionally only those in
        ``state``, of ``engine`` or with every label of ``metadata``."""
        pages = self._iterate(_ops.pages("/v1/runs", _ops.filters(
            metadata, state=state, engine=engine)))
        return (Run(self, document) for document in pages)

    # ----------------------------------------------------------- the driver

    def _drive(self, op: Op[T]) -> T:
        """Carry out an operation that emits nothing; its value."""
        return self._loop.run(self._aio._drive(op))

    def _iterate(self, op: Op[Any]) -> Iterator[Any]:
        """Carry out ``op``, yielding what it emits."""
        return self._loop.iterate(self._aio._iterate(op))


class _Loop:
    """An event loop running in a daemon thread, for the blocking client."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever,
                                        name="decido-client", daemon=True)
        self._thread.start()

    def run(self, awaitable: Awaitable[T]) -> T:
        """Run ``awaitable`` on the loop and wait for its result (Ctrl-C cancels it)."""

        async def run() -> T:
            return await awaitable

        future = asyncio.run_coroutine_threadsafe(run(), self._loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def iterate(self, items: AsyncIterator[Any]) -> Iterator[Any]:
        """The items of an async iterator, one blocking wait each."""
        try:
            while True:
                try:
                    yield self.run(items.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            closing = getattr(items, "aclose", None)
            if closing is not None:
                with contextlib.suppress(RuntimeError):  # already closed by a cancel
                    self.run(closing())

    def close(self, clean_up: Awaitable[None]) -> None:
        """Await ``clean_up`` (the client's), then stop the loop and its thread."""
        try:
            self.run(clean_up)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()
