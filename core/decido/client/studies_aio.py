"""``client.studies`` of :class:`~decido.client.AsyncClient`: the twins of
:mod:`decido.client.studies`, each call a coroutine, each iteration an ``async for``;
:meth:`AsyncStudies.optimize` runs ``n_workers`` tasks."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import threading
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from numpy.typing import ArrayLike

from decido.client import _ops
from decido.client import _study_ops as ops
from decido.client._protocol import Op
from decido.client._study_loop import (
    Budget,
    client_prefix,
    heartbeat_interval,
    interrupted,
    reason_of,
    tell_of,
)
from decido.client.errors import ClientError, NotFound, StudyFinished, TrialFinished

__all__ = ["AsyncRemoteStudy", "AsyncRemoteTrial", "AsyncStudies"]

T = TypeVar("T")
log = logging.getLogger("decido.client")


class _AsyncDriver(Protocol):
    """What the handles need of an :class:`~decido.client.AsyncClient`: its driver."""

    def _drive(self, op: Op[T]) -> Awaitable[T]: ...

    def _iterate(self, op: Op[Any]) -> AsyncIterator[Any]: ...


class AsyncRemoteTrial(ops.TrialView):
    """:class:`decido.client.RemoteTrial` for :class:`~decido.client.AsyncClient`."""

    def __init__(self, client: _AsyncDriver, study_id: str, document: dict[str, Any]) -> None:
        super().__init__(study_id, document)
        self._client = client

    async def _run(self, op: Op[dict[str, Any]]) -> AsyncRemoteTrial:
        self.document = await self._client._drive(op)
        return self

    async def complete(self, value: float | None = None, *, values: ArrayLike | None = None,
                       metrics: Mapping[str, float] | None = None) -> AsyncRemoteTrial:
        """As :meth:`decido.client.RemoteTrial.complete`."""
        return await self._tell(ops.tell_body(value, values, metrics))

    async def fail(self, reason: str | None = None) -> AsyncRemoteTrial:
        """As :meth:`decido.client.RemoteTrial.fail`."""
        return await self._tell(ops.tell_body(state="failed", reason=reason))

    async def infeasible(self, reason: str | None = None) -> AsyncRemoteTrial:
        """As :meth:`decido.client.RemoteTrial.infeasible`."""
        return await self._tell(ops.tell_body(state="infeasible", reason=reason))

    async def _tell(self, body: dict[str, Any]) -> AsyncRemoteTrial:
        return await self._run(ops.tell(self.study_id, self.number, body))

    async def report(self, step: int, value: float) -> bool:
        """As :meth:`decido.client.RemoteTrial.report`."""
        stop = await self._client._drive(ops.report(self.study_id, self.number, step, value))
        if stop:
            self.document = {**self.document, "state": "early_stopped"}
        return stop

    async def heartbeat(self) -> AsyncRemoteTrial:
        """Renew its lease."""
        return await self._run(ops.heartbeat(self.study_id, self.number))

    async def abandon(self) -> AsyncRemoteTrial:
        """Give it up: ``abandoned``, never suggested again."""
        return await self._run(ops.abandon(self.study_id, self.number))

    async def refresh(self) -> AsyncRemoteTrial:
        """Read it again."""
        return await self._run(ops.trial(self.study_id, self.number))


class AsyncRemoteStudy(ops.StudyView):
    """:class:`decido.client.RemoteStudy` for :class:`~decido.client.AsyncClient`."""

    def __init__(self, client: _AsyncDriver, document: dict[str, Any]) -> None:
        super().__init__(document)
        self._client = client

    def _trial(self, document: dict[str, Any]) -> AsyncRemoteTrial:
        return AsyncRemoteTrial(self._client, self.id, document)

    @property
    def best(self) -> AsyncRemoteTrial | None:
        """One objective: its best completed trial (as last read), or None."""
        found = self.document.get("best")
        return None if found is None else self._trial(found)

    @property
    def pareto(self) -> list[AsyncRemoteTrial] | None:
        """Several objectives: the front of its completed trials (as last read)."""
        found = self.document.get("pareto")
        return None if found is None else [self._trial(t) for t in found]

    async def refresh(self) -> AsyncRemoteStudy:
        """Read the study again; returns itself."""
        self.document = await self._client._drive(ops.get(self.id))
        return self

    async def suggest(self, count: int = 1, client_id: str | None = None
                      ) -> list[AsyncRemoteTrial]:
        """As :meth:`decido.client.RemoteStudy.suggest`."""
        found = await self._client._drive(ops.suggest(self.id, count, client_id))
        return [self._trial(t) for t in found]

    async def trial(self, number: int) -> AsyncRemoteTrial:
        """One trial by number."""
        return self._trial(await self._client._drive(ops.trial(self.id, number)))

    async def trials(self, state: str | None = None) -> AsyncIterator[AsyncRemoteTrial]:
        """Every trial by number (``async for``); ``state``: only those in it."""
        async for document in self._client._iterate(ops.trials(self.id, state)):
            yield self._trial(document)

    async def tell(self, trial: int | AsyncRemoteTrial, value: float | None = None, *,
                   values: ArrayLike | None = None,
                   metrics: Mapping[str, float] | None = None, state: str = "completed",
                   reason: str | None = None) -> AsyncRemoteTrial:
        """As :meth:`decido.client.RemoteStudy.tell`."""
        body = ops.tell_body(value, values, metrics, state, reason)
        return self._trial(await self._client._drive(ops.tell(self.id, ops.number_of(trial),
                                                              body)))

    async def complete_many(self, items: Sequence[Mapping[str, Any]]
                            ) -> list[AsyncRemoteTrial]:
        """As :meth:`decido.client.RemoteStudy.complete_many`."""
        return [self._trial(t) for t in
                await self._client._drive(ops.tell_many(self.id, items))]

    async def add_trials(self, items: Sequence[Mapping[str, Any]]) -> list[AsyncRemoteTrial]:
        """As :meth:`decido.client.RemoteStudy.add_trials`."""
        return [self._trial(t) for t in
                await self._client._drive(ops.add_trials(self.id, items))]

    async def stop(self) -> AsyncRemoteStudy:
        """No more suggestions; returns itself."""
        self.document = await self._client._drive(ops.stop(self.id))
        return self

    async def delete(self) -> None:
        """Delete the study (stopped or completed)."""
        await self._client._drive(ops.delete(self.id))

    async def decide(self, request: Mapping[str, Any] | None = None, **members: Any
                     ) -> dict[str, Any]:
        """As :meth:`decido.client.RemoteStudy.decide`."""
        body = {**_ops.decision(request, **members), "from_study": self.id}
        answer: dict[str, Any] = await self._client._drive(
            _ops.fetch("POST", "/v1/decide", body))
        return answer


#: what :meth:`AsyncStudies.optimize` evaluates: a coroutine function or a plain one
AsyncObjective = Callable[[AsyncRemoteTrial], Any]


class AsyncStudies:
    """The key's studies (``client.studies`` of an :class:`~decido.client.AsyncClient`)."""

    def __init__(self, client: _AsyncDriver) -> None:
        self._client = client

    async def create(self, bounds: ArrayLike | None = None, *,
                     variables: Sequence[Mapping[str, Any]] | None = None,
                     objectives: Sequence[str | Mapping[str, str]] | None = None,
                     goal: str | None = None, engine: str | None = None,
                     seed: int | None = None, max_trials: int | None = None,
                     trial_lease: float | None = None,
                     early_stopping: Mapping[str, Any] | None = None,
                     constraints: Sequence[str] | None = None,
                     metadata: Mapping[str, str] | None = None,
                     idempotency_key: str | None = None) -> AsyncRemoteStudy:
        """As :meth:`decido.client.Studies.create`."""
        body = ops.study_body({
            "bounds": bounds, "variables": variables, "objectives": objectives,
            "goal": goal, "engine": engine, "seed": seed, "max_trials": max_trials,
            "trial_lease": trial_lease, "early_stopping": early_stopping,
            "constraints": constraints, "metadata": metadata})
        document = await self._client._drive(ops.create(body, idempotency_key))
        return AsyncRemoteStudy(self._client, document)

    async def get(self, study_id: str) -> AsyncRemoteStudy:
        """One of the key's studies."""
        return AsyncRemoteStudy(self._client, await self._client._drive(ops.get(study_id)))

    async def list(self, state: str | None = None, metadata: Mapping[str, str] | None = None
                   ) -> AsyncIterator[AsyncRemoteStudy]:
        """The key's studies, newest first (``async for``)."""
        async for document in self._client._iterate(ops.studies(state, metadata)):
            yield AsyncRemoteStudy(self._client, document)

    async def optimize(self, fn: AsyncObjective, *,
                       study: AsyncRemoteStudy | str | None = None,
                       n_trials: int | None = None, n_workers: int = 1,
                       client_id: str | None = None, **create: Any) -> AsyncRemoteStudy:
        """As :meth:`decido.client.Studies.optimize`, with ``n_workers`` concurrent
        tasks: ``fn`` is a coroutine function (awaited; cancelled on Ctrl-C) or a plain
        function (run in a daemon thread of its own per call). The task's cancellation
        (what ``asyncio.run`` does on Ctrl-C) abandons the loop's active trials and is
        raised again carrying ``study_id`` and ``abandoned``."""
        key = uuid.uuid4().hex
        handle: list[AsyncRemoteStudy] = []
        try:
            handle.append(await self._study(study, create, key))
        except (KeyboardInterrupt, asyncio.CancelledError) as exc:
            interrupted(exc, (await self._study(study, create, key)).id, [])
            raise
        loop = _AsyncLoop(handle[0], fn, Budget(n_trials), n_workers,
                          client_prefix(client_id))
        await loop.run()
        return await handle[0].refresh()

    async def _study(self, study: AsyncRemoteStudy | str | None, create: Mapping[str, Any],
                     key: str) -> AsyncRemoteStudy:
        if isinstance(study, AsyncRemoteStudy):
            return study
        if study is not None:
            if create:
                raise TypeError("optimize() takes a study or the arguments of a new one, "
                                f"not both ({', '.join(sorted(create))})")
            return await self.get(study)
        return await self.create(**create, idempotency_key=key)


def _in_thread(fn: Callable[[Any], Any], arg: Any) -> asyncio.Future[Any]:
    """``fn(arg)`` in a daemon thread of its own: a future of its result (the thread is
    not waited for when the program ends, unlike ``asyncio.to_thread``'s)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def call() -> None:
        try:
            value, error = fn(arg), None
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            value, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop has closed
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=call, daemon=True, name="decido-study-fn").start()
    return future


class _AsyncLoop:
    """The worker tasks and the heartbeats of one :meth:`AsyncStudies.optimize`."""

    def __init__(self, study: AsyncRemoteStudy, fn: AsyncObjective, budget: Budget,
                 n_workers: int, prefix: str) -> None:
        if n_workers < 1:
            raise ValueError(f"n_workers must be at least 1, not {n_workers}")
        self.study, self.fn, self.budget = study, fn, budget
        self.n_workers, self.prefix = n_workers, prefix
        self.active: dict[int, AsyncRemoteTrial] = {}
        self.interrupted = False

    async def run(self) -> None:
        workers = [asyncio.ensure_future(self._work(k)) for k in range(self.n_workers)]
        beats = asyncio.ensure_future(self._beat())
        try:
            await asyncio.gather(*workers)
        except BaseException as exc:
            # Ctrl-C, the task's cancellation or an error of the service: stop every
            # worker and give up the trials they hold
            self.interrupted = True
            self.budget.close()
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            abandoned = await self._abandon()
            if isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError)):
                interrupted(exc, self.study.id, abandoned)
            raise
        finally:
            beats.cancel()
            await asyncio.gather(beats, return_exceptions=True)

    async def _work(self, k: int) -> None:
        client_id = f"{self.prefix}-{k}"
        while self.budget.take():
            try:
                got = await self.study.suggest(1, client_id)
            except StudyFinished:
                self.budget.give_back()
                self.budget.close()
                return
            for trial in got:
                # held until told: a worker cancelled (Ctrl-C) or failed in between
                # leaves it for run() to abandon
                self.active[trial.number] = trial
                await self._evaluate(trial)
                self.active.pop(trial.number, None)

    async def _evaluate(self, trial: AsyncRemoteTrial) -> None:
        try:
            if inspect.iscoroutinefunction(self.fn):
                result = await self.fn(trial)
            else:
                result = await _in_thread(self.fn, trial)
                if inspect.isawaitable(result):
                    result = await result
        except Exception as exc:  # noqa: BLE001 - the trial failed
            body = ops.tell_body(state="failed", reason=reason_of(exc))
        else:
            body = tell_of(result) if not trial.finished else {}
        if self.interrupted or not body:
            return
        try:
            await trial._tell(body)
        except TrialFinished:  # its lease ran out, or fn told it
            pass

    async def _beat(self) -> None:
        interval = heartbeat_interval(self.study.trial_lease)
        while True:
            await asyncio.sleep(interval)
            for trial in list(self.active.values()):
                try:
                    await trial.heartbeat()
                except (TrialFinished, NotFound):
                    pass
                except ClientError as exc:
                    log.warning("heartbeat of trial %d of %s: %s", trial.number,
                                self.study.id, exc)

    async def _abandon(self) -> list[int]:
        """Give up every trial the workers held; their numbers."""
        gone = []
        for trial in list(self.active.values()):
            try:
                await trial.abandon()
                gone.append(trial.number)
            except TrialFinished:
                pass
            except ClientError as exc:
                log.warning("abandoning trial %d of %s: %s", trial.number, self.study.id, exc)
        return sorted(gone)
