"""``decido.AsyncClient``: the asyncio client of the decido service (``httpx.AsyncClient``).

The same operations as :class:`decido.Client` (:mod:`decido.client._ops`), each a
coroutine; iterations (:meth:`AsyncClient.runs`, :meth:`AsyncRun.events`) are
``async for`` loops. Its driver (:meth:`AsyncClient._iterate`) is the asyncio twin of the
blocking client's: the same instructions, awaited.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any, TypeVar, cast

from numpy.typing import ArrayLike

from decido.client import _ops
from decido.client._http import (
    DEFAULT_URL,
    call_args,
    failed,
    headers,
    httpx,
    print_progress,
    translate,
)
from decido.client._ops import Objective, Objectives, Progress, R, Result, RunArgs, RunState
from decido.client._protocol import (
    Call,
    Emit,
    Event,
    EventParser,
    NextEvent,
    Op,
    OpenStream,
    Reply,
    RetryPolicy,
    Sleep,
    raise_for,
    retried,
)
from decido.client._run_methods import AsyncRunMethods
from decido.client.studies_aio import AsyncStudies
from decido.client.webhooks import AsyncWebhooks

__all__ = ["AsyncClient", "AsyncRun"]

T = TypeVar("T")


class AsyncRun(RunState[R]):
    """:class:`decido.client.Run` for :class:`AsyncClient`: the same members, coroutines."""

    def __init__(self, client: AsyncClient, document: dict[str, Any]) -> None:
        super().__init__(document)
        self._client = client

    async def refresh(self) -> AsyncRun[R]:
        """Read the run again (and its trace once it has ended); returns itself."""
        await self._client._drive(_ops.get_run(self))
        return self

    async def cancel(self) -> AsyncRun[R]:
        """Ask the run to stop: it ends ``cancelled`` with its best so far."""
        await self._client._drive(_ops.cancel(self))
        return self

    async def wait(self, timeout: float | None = None,
                   progress: bool | Progress = False) -> R | None:
        """As :meth:`decido.client.Run.wait`."""
        show = print_progress if progress is True else progress or None
        return await self._client._drive(_ops.wait(self, timeout, show))

    async def decide(
            self, method: str | None = None, criteria: list[dict[str, Any]] | None = None, *,
            constraints: list[str] | None = None, weighting: str | None = None,
            normalization: str | None = None, top_k: int | None = None,
            explain: bool | None = None, sensitivity: bool | None = None,
            request: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """As :meth:`decido.client.Run.decide`: a decision on this run's front."""
        return await self._client._drive(_ops.decide(self, _ops.decision(
            request, method=method, criteria=criteria, constraints=constraints,
            weighting=weighting, normalization=normalization, top_k=top_k,
            explain=explain, sensitivity=sensitivity)))

    def events(self, last_event_id: str | None = None) -> AsyncIterator[Event]:
        """As :meth:`decido.client.Run.events`, an ``async for`` iteration."""
        return self._client._iterate(_ops.events(self, last_event_id))


class AsyncClient(AsyncRunMethods):
    """:class:`decido.Client` for asyncio: the same arguments, methods and results, each
    a coroutine (``transport``: an ``httpx.AsyncBaseTransport``). Use it as an
    ``async with`` context manager or ``await`` :meth:`aclose`."""

    def __init__(self, base_url: str = DEFAULT_URL, key: str | None = None, *,
                 timeout: float = 30.0, retry: RetryPolicy | None = None,
                 transport: Any = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._http = httpx().AsyncClient(base_url=self.base_url, headers=headers(key),
                                         transport=transport)

    @property
    def webhooks(self) -> AsyncWebhooks:
        """The key's webhook endpoints and their deliveries (:class:`AsyncWebhooks`)."""
        return AsyncWebhooks(self)

    @property
    def studies(self) -> AsyncStudies:
        """The key's studies: ask/tell optimization (:class:`AsyncStudies`)."""
        return AsyncStudies(self)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def health(self) -> dict[str, Any]:
        """``GET /v1/health``."""
        return cast(dict[str, Any], await self._drive(_ops.fetch("GET", "/v1/health")))

    async def engines(self) -> list[dict[str, Any]]:
        """Metadata of every engine, as :func:`decido.engines`."""
        return await self._drive(_ops.engines())

    async def usage(self) -> dict[str, Any]:
        """The key, its plan and tier, their limits and current usage."""
        return cast(dict[str, Any], await self._drive(_ops.fetch("GET", "/v1/usage")))

    async def create_key(self, label: str | None = None) -> dict[str, Any]:
        """A new free key (``key``: its secret, shown once)."""
        return await self._drive(_ops.create_key(label))

    async def decide(self, request: dict[str, Any], *,
                     metadata: Mapping[str, str] | None = None) -> dict[str, Any]:
        """As :meth:`decido.Client.decide`."""
        answer = await self._drive(_ops.fetch("POST", "/v1/decide",
                                              _ops.labelled(request, metadata)))
        return cast(dict[str, Any], answer)

    async def batch(self, request: dict[str, Any], *,
                    metadata: Mapping[str, str] | None = None) -> dict[str, Any]:
        """As :meth:`decido.Client.batch`."""
        answer = await self._drive(_ops.fetch("POST", "/v1/batch",
                                              _ops.labelled(request, metadata, batch=True)))
        return cast(dict[str, Any], answer)

    def decisions(self, metadata: Mapping[str, str] | None = None
                  ) -> AsyncIterator[dict[str, Any]]:
        """As :meth:`decido.Client.decisions`."""
        return self._iterate(_ops.pages("/v1/decisions", _ops.filters(metadata)))

    async def decision(self, decision_id: str) -> dict[str, Any]:
        """One logged decision with its request and answer."""
        answer = await self._drive(_ops.fetch("GET", f"/v1/decisions/{decision_id}"))
        return cast(dict[str, Any], answer)

    async def _submit(self, objective: Objective | Objectives, bounds: ArrayLike | None,
                      args: RunArgs, idempotency_key: str | None) -> AsyncRun[Any]:
        body = _ops.run_body(objective, bounds, args)
        return AsyncRun(self, await self._drive(_ops.submit(body, idempotency_key)))

    async def run(self, run_id: str) -> AsyncRun[Result]:
        """The handle of one of the key's runs (:class:`NotFound` for any other id)."""
        return AsyncRun(self, await self._drive(_ops.fetch("GET", f"/v1/runs/{run_id}")))

    async def runs(self, state: str | None = None, engine: str | None = None,
                   metadata: Mapping[str, str] | None = None
                   ) -> AsyncIterator[AsyncRun[Result]]:
        """Every run of the key, newest first (page after page), optionally only those in
        ``state``, of ``engine`` or with every label of ``metadata``."""
        async for document in self._iterate(
                _ops.pages("/v1/runs", _ops.filters(metadata, state=state, engine=engine))):
            yield AsyncRun(self, document)

    # ----------------------------------------------------------- the driver

    async def _drive(self, op: Op[T]) -> T:
        """Carry out an operation that emits nothing; its value."""
        box: list[T] = []
        async for _ in self._iterate(op, box):
            raise AssertionError("this operation emits items")  # pragma: no cover
        return box[0]

    async def _iterate(self, op: Op[T], box: list[T] | None = None) -> AsyncIterator[Any]:
        """Carry out ``op`` (with retries), yielding what it emits; its value is appended
        to ``box``."""
        steps = retried(op, self.retry)
        stream = _Stream()
        outcome: Any = None
        error: Exception | None = None
        try:
            while True:
                try:
                    step = steps.send(outcome) if error is None else steps.throw(error)
                except StopIteration as stop:
                    if box is not None:
                        box.append(stop.value)
                    return
                outcome = error = None
                if isinstance(step, Emit):
                    yield step.value
                    continue
                try:
                    outcome = await self._carry_out(step, stream)
                except Exception as exc:  # noqa: BLE001 - the operation's to retry or raise
                    error = failed(exc)
        finally:
            steps.close()
            await stream.close()

    async def _carry_out(self, step: Call | Sleep | OpenStream | NextEvent,
                         stream: _Stream) -> Reply | Event | None:
        """One instruction, once."""
        if isinstance(step, Sleep):
            await asyncio.sleep(step.seconds)
        elif isinstance(step, NextEvent):
            return await stream.next_event()
        elif isinstance(step, OpenStream):
            await stream.open(self._http, call_args(step.call, self.timeout, True))
        else:
            r = await self._http.request(**call_args(step, self.timeout))
            raise_for(r.status_code, r.headers, r.content)
            return Reply(r.status_code, r.headers, r.content)
        return None


class _Stream:
    """The open event stream of one operation."""

    def __init__(self) -> None:
        self._context: Any = None
        self._lines: AsyncIterator[str] | None = None
        self._parser = EventParser()

    async def open(self, http: Any, args: dict[str, Any]) -> None:
        context = http.stream(**args)
        response = await context.__aenter__()
        if response.status_code >= 400:
            content = await response.aread()
            await context.__aexit__(None, None, None)
            raise_for(response.status_code, response.headers, content)
        self._context, self._lines, self._parser = context, response.aiter_lines(), EventParser()

    async def next_event(self) -> Event | None:
        """The next event, or None once the stream ended or broke (it is closed)."""
        try:
            async for line in self._lines or _nothing():
                event = self._parser.feed(line)
                if event is not None:
                    return event
        except Exception as exc:  # noqa: BLE001 - a broken stream is resumed by the op
            if translate(exc) is exc:
                raise
        await self.close()
        return None

    async def close(self) -> None:
        context, self._context, self._lines = self._context, None, None
        if context is not None:
            await context.__aexit__(None, None, None)


async def _nothing() -> AsyncIterator[str]:
    return
    yield  # pragma: no cover
