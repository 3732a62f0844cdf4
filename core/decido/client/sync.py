"""``decido.Client``: the blocking client of the decido service (``httpx.Client``).

It carries out the same operations as :class:`decido.AsyncClient` (:mod:`decido.client._ops`)
with a driver of its own (:meth:`Client._iterate`): each instruction is a blocking call in
the caller's thread -- no event loop, no thread of its own -- so it works the same inside a
program that already runs an event loop (a notebook), where a call blocks like any other,
and Ctrl-C interrupts it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
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
from decido.client._run_methods import RunMethods
from decido.client.studies import Studies
from decido.client.webhooks import Webhooks

__all__ = ["Client", "Run"]

T = TypeVar("T")


class Run(RunState[R]):
    """A run on the service: ``id``, ``state``, ``document`` (the last read), ``progress``
    and, once it has ended with one, ``result`` (a :class:`decido.OptimizeResult`, or for
    a run of several objectives a :class:`decido.ParetoResult`)."""

    def __init__(self, client: Client, document: dict[str, Any]) -> None:
        super().__init__(document)
        self._client = client

    def refresh(self) -> Run[R]:
        """Read the run again (and its trace once it has ended); returns itself."""
        self._client._drive(_ops.get_run(self))
        return self

    def cancel(self) -> Run[R]:
        """Ask the run to stop: it ends ``cancelled`` with its best so far."""
        self._client._drive(_ops.cancel(self))
        return self

    def wait(self, timeout: float | None = None,
             progress: bool | Progress = False) -> R | None:
        """Block until the run ends; its result (None for a run cancelled before it
        started). ``progress``: True prints the progress on stderr, a callable is called
        with it. Raises :class:`RunFailed` for a failed run, :class:`Timeout` after
        ``timeout`` seconds (the run goes on)."""
        show = print_progress if progress is True else progress or None
        return self._client._drive(_ops.wait(self, timeout, show))

    def decide(
            self, method: str | None = None, criteria: list[dict[str, Any]] | None = None, *,
            constraints: list[str] | None = None, weighting: str | None = None,
            normalization: str | None = None, top_k: int | None = None,
            explain: bool | None = None, sensitivity: bool | None = None,
            request: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Decide on the front of this run of several objectives (``POST /v1/decide``
        with ``from_run``): its points are the options (attributes: the objectives' names
        and the variables' names, or ``x0``, ``x1``, ...), ``criteria`` default to the
        objectives with their goals and equal weights. The arguments are members of a
        decision request (:func:`decido.decide`; ``request`` holds any other, e.g.
        ``decision_makers``); the answer is :meth:`Client.decide`'s, each ranking item
        with its point's ``x`` and ``f``. A run of one objective is refused
        (:class:`InvalidRequest`), an unfinished one too (:class:`ApiError`, 409)."""
        return self._client._drive(_ops.decide(self, _ops.decision(
            request, method=method, criteria=criteria, constraints=constraints,
            weighting=weighting, normalization=normalization, top_k=top_k,
            explain=explain, sensitivity=sensitivity)))

    def events(self, last_event_id: str | None = None) -> Iterator[Event]:
        """The run's Server-Sent Events (``state``, ``progress``, then ``result`` or
        ``error``), resuming after ``last_event_id`` and reconnecting with the last id seen
        when the stream breaks."""
        return self._client._iterate(_ops.events(self, last_event_id))


class Client(RunMethods):
    """The decido service from Python: the same calls and result types as the library.

    ``Client(base_url, key)`` (``key`` defaults to ``DECIDO_KEY``); ``timeout`` seconds
    bound every call; refused calls (429 but the monthly quota, 503) are retried as
    ``retry`` says (:class:`RetryPolicy`); ``transport``: an ``httpx.BaseTransport``. Use it
    as a context manager or :meth:`close` it.
    """

    def __init__(self, base_url: str = DEFAULT_URL, key: str | None = None, *,
                 timeout: float = 30.0, retry: RetryPolicy | None = None,
                 transport: Any = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._http = httpx().Client(base_url=self.base_url, headers=headers(key),
                                    transport=transport)

    @property
    def webhooks(self) -> Webhooks:
        """The key's webhook endpoints and their deliveries (:class:`Webhooks`)."""
        return Webhooks(self)

    @property
    def studies(self) -> Studies:
        """The key's studies: ask/tell optimization (:class:`Studies`)."""
        return Studies(self)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

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

    def _submit(self, objective: Objective | Objectives, bounds: ArrayLike | None,
                args: RunArgs, idempotency_key: str | None) -> Run[Any]:
        body = _ops.run_body(objective, bounds, args)
        return Run(self, self._drive(_ops.submit(body, idempotency_key)))

    def run(self, run_id: str) -> Run[Result]:
        """The handle of one of the key's runs (:class:`NotFound` for any other id)."""
        return Run(self, self._drive(_ops.fetch("GET", f"/v1/runs/{run_id}")))

    def runs(self, state: str | None = None, engine: str | None = None,
             metadata: Mapping[str, str] | None = None) -> Iterator[Run[Result]]:
        """Every run of the key, newest first (page after page), optionally only those in
        ``state``, of ``engine`` or with every label of ``metadata``."""
        pages = self._iterate(_ops.pages("/v1/runs", _ops.filters(
            metadata, state=state, engine=engine)))
        return (Run(self, document) for document in pages)

    # ----------------------------------------------------------- the driver

    def _drive(self, op: Op[T]) -> T:
        """Carry out an operation that emits nothing; its value."""
        box: list[T] = []
        for _ in self._iterate(op, box):
            raise AssertionError("this operation emits items")  # pragma: no cover
        return box[0]

    def _iterate(self, op: Op[T], box: list[T] | None = None) -> Iterator[Any]:
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
                    outcome = self._carry_out(step, stream)
                except Exception as exc:  # noqa: BLE001 - the operation's to retry or raise
                    error = failed(exc)
        finally:
            steps.close()
            stream.close()

    def _carry_out(self, step: Call | Sleep | OpenStream | NextEvent,
                   stream: _Stream) -> Reply | Event | None:
        """One instruction, once."""
        if isinstance(step, Sleep):
            time.sleep(step.seconds)
        elif isinstance(step, NextEvent):
            return stream.next_event()
        elif isinstance(step, OpenStream):
            stream.open(self._http, call_args(step.call, self.timeout, True))
        else:
            r = self._http.request(**call_args(step, self.timeout))
            raise_for(r.status_code, r.headers, r.content)
            return Reply(r.status_code, r.headers, r.content)
        return None


class _Stream:
    """The open event stream of one operation."""

    def __init__(self) -> None:
        self._context: Any = None
        self._lines: Iterator[str] = iter(())
        self._parser = EventParser()

    def open(self, http: Any, args: dict[str, Any]) -> None:
        context = http.stream(**args)
        response = context.__enter__()
        if response.status_code >= 400:
            content = response.read()
            context.__exit__(None, None, None)
            raise_for(response.status_code, response.headers, content)
        self._context, self._lines, self._parser = context, response.iter_lines(), EventParser()

    def next_event(self) -> Event | None:
        """The next event, or None once the stream ended or broke (it is closed)."""
        try:
            for line in self._lines:
                event = self._parser.feed(line)
                if event is not None:
                    return event
        except Exception as exc:  # noqa: BLE001 - a broken stream is resumed by the op
            if translate(exc) is exc:
                raise
        self.close()
        return None

    def close(self) -> None:
        context, self._context, self._lines = self._context, None, iter(())
        if context is not None:
            context.__exit__(None, None, None)
