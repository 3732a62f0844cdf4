"""``client.studies`` of :class:`~decido.client.AsyncClient`: the twins of
:mod:`decido.client.studies`, each call a coroutine, each iteration an ``async for``;
:meth:`AsyncStudies.optimize` runs ``n_workers`` tasks."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from decido.client._study_handles import StudiesCalls, StudyCalls, TrialCalls
from decido.client._study_loop import (
    Budget,
    abandon_all,
    beat,
    client_prefix,
    heartbeat_interval,
    interrupted,
    outcome,
    told,
)
from decido.client.errors import StudyFinished

__all__ = ["AsyncRemoteStudy", "AsyncRemoteTrial", "AsyncStudies"]


class AsyncRemoteTrial(TrialCalls[Awaitable["AsyncRemoteTrial"], Awaitable[bool]]):
    """:class:`decido.client.RemoteTrial` for :class:`~decido.client.AsyncClient`: each
    call is awaited."""


class AsyncRemoteStudy(StudyCalls[AsyncRemoteTrial, Awaitable["AsyncRemoteStudy"],
                                  Awaitable[AsyncRemoteTrial],
                                  Awaitable[list[AsyncRemoteTrial]],
                                  AsyncIterator[AsyncRemoteTrial],
                                  Awaitable[dict[str, Any]], Awaitable[None]]):
    """:class:`decido.client.RemoteStudy` for :class:`~decido.client.AsyncClient`: each
    call is awaited, :meth:`trials` is an ``async for``."""

    _trial_type = AsyncRemoteTrial


#: what :meth:`AsyncStudies.optimize` evaluates: a coroutine function or a plain one
AsyncObjective = Callable[[AsyncRemoteTrial], Any]


class AsyncStudies(StudiesCalls[Awaitable[AsyncRemoteStudy], AsyncIterator[AsyncRemoteStudy]]):
    """The key's studies (``client.studies`` of an :class:`~decido.client.AsyncClient`):
    :meth:`create` and :meth:`get` are awaited, :meth:`list` is an ``async for``."""

    _study_type = AsyncRemoteStudy

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
            body = outcome(trial, result)
        except Exception as exc:  # noqa: BLE001 - the trial failed
            body = outcome(trial, error=exc)
        if body and not self.interrupted:
            await self.study._client._drive(told(trial, body))

    async def _beat(self) -> None:
        interval = heartbeat_interval(self.study.trial_lease)
        while True:
            await asyncio.sleep(interval)
            await self.study._client._drive(beat(list(self.active.values())))

    async def _abandon(self) -> list[int]:
        """Give up every trial the workers held; their numbers."""
        gone: list[int] = await self.study._client._drive(
            abandon_all(list(self.active.values())))
        return gone
