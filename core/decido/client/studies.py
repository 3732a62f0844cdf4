"""``client.studies``: ask/tell optimization on the service (``/v1/studies``,
docs/studies.md) from :class:`~decido.client.Client`: :class:`Studies` makes and finds
studies, a :class:`RemoteStudy` suggests :class:`RemoteTrial` s, which are told their
results, and :meth:`Studies.optimize` runs a function over a study with a pool of threads.
The asyncio twins are in :mod:`decido.client.studies_aio`."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
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

__all__ = ["RemoteStudy", "RemoteTrial", "Studies"]


class RemoteTrial(TrialCalls["RemoteTrial", bool]):
    """A trial of a study on the service: ``number``, ``state``, ``x``, ``variables``,
    ``value`` / ``values``, ``metrics``, ``reason``, ``document`` (the last read). Tell it
    once: :meth:`complete`, :meth:`fail` or :meth:`infeasible` (a second tell raises
    :class:`TrialFinished`)."""


class RemoteStudy(StudyCalls[RemoteTrial, "RemoteStudy", RemoteTrial, list[RemoteTrial],
                             Iterator[RemoteTrial], dict[str, Any], None]):
    """A study on the service: ``id``, ``state``, ``spec``, ``counts`` (trials by state),
    ``best`` or ``pareto``, ``metadata``, ``document`` (the last read; :meth:`refresh`
    reads it again)."""

    _trial_type = RemoteTrial


#: the function :meth:`Studies.optimize` evaluates: a trial in, its result out
Objective = Callable[[RemoteTrial], Any]


class Studies(StudiesCalls[RemoteStudy, Iterator[RemoteStudy]]):
    """The key's studies (``client.studies``)."""

    _study_type = RemoteStudy

    def optimize(self, fn: Objective, *, study: RemoteStudy | str | None = None,
                 n_trials: int | None = None, n_workers: int = 1,
                 client_id: str | None = None, **create: Any) -> RemoteStudy:
        """Evaluate ``fn`` on the study's trials with ``n_workers`` threads, each asking
        one trial at a time (suggest -> ``fn(trial)`` -> tell), until ``n_trials`` trials
        were evaluated (None: until the study makes no more, 409 ``study_finished``).

        ``fn`` gets a :class:`RemoteTrial` (``trial.variables``, ``trial.x``;
        ``trial.report(step, value)`` for early stopping) and returns a number (the
        value), a sequence (the values of several objectives), or a mapping (``value`` /
        ``values``, ``metrics``, or ``state`` and ``reason``); a trial ``fn`` told itself,
        or that early stopping ended, is left as it is. An exception in ``fn`` makes the
        trial ``failed``, its text the reason; None or a non-finite number too.

        ``study``: a study (or its id) to work on; without it one is made from
        ``create`` (the arguments of :meth:`create`). Each worker's ``client_id`` is
        ``{client_id}-{k}``. The trials held are renewed by heartbeats every third of the
        study's ``trial_lease``. Ctrl-C stops the loop at once: its active trials are
        abandoned on the server, and :class:`KeyboardInterrupt` is raised again with
        ``study_id`` and ``abandoned`` (their numbers); a ``fn`` still running finishes
        in its (daemon) thread, its result dropped. Another error of the service stops
        the loop and is raised. Returns the study, read again."""
        key = uuid.uuid4().hex
        handle: list[RemoteStudy] = []
        try:
            handle.append(self._study(study, create, key))
        except KeyboardInterrupt as exc:
            interrupted(exc, self._study(study, create, key).id, [])
            raise
        loop = _Loop(handle[0], fn, Budget(n_trials), n_workers, client_prefix(client_id))
        loop.run()
        return handle[0].refresh()

    def _study(self, study: RemoteStudy | str | None, create: Mapping[str, Any],
               key: str) -> RemoteStudy:
        if isinstance(study, RemoteStudy):
            return study
        if study is not None:
            if create:
                raise TypeError("optimize() takes a study or the arguments of a new one, "
                                f"not both ({', '.join(sorted(create))})")
            return self.get(study)
        return self.create(**create, idempotency_key=key)


class _Loop:
    """The workers and the heartbeats of one :meth:`Studies.optimize`."""

    def __init__(self, study: RemoteStudy, fn: Objective, budget: Budget, n_workers: int,
                 prefix: str) -> None:
        if n_workers < 1:
            raise ValueError(f"n_workers must be at least 1, not {n_workers}")
        self.study, self.fn, self.budget = study, fn, budget
        self.n_workers, self.prefix = n_workers, prefix
        self.lock = threading.Lock()
        self.active: dict[int, RemoteTrial] = {}
        self.done = threading.Event()
        self.interrupted = False
        self.errors: list[BaseException] = []

    def run(self) -> None:
        workers = [threading.Thread(target=self._work, args=(k,), daemon=True,
                                    name=f"decido-study-{self.study.id}-{k}")
                   for k in range(self.n_workers)]
        beats = threading.Thread(target=self._beat, daemon=True,
                                 name=f"decido-study-{self.study.id}-heartbeat")
        try:
            for worker in workers:
                worker.start()
            beats.start()
            for worker in workers:
                while worker.is_alive():
                    worker.join(0.1)
        except KeyboardInterrupt as exc:
            self.interrupted = True
            self.budget.close()
            interrupted(exc, self.study.id, self._abandon())
            raise
        finally:
            self.done.set()
        if self.errors:
            raise self.errors[0]

    def _work(self, k: int) -> None:
        client_id = f"{self.prefix}-{k}"
        while self.budget.take():
            try:
                got = self.study.suggest(1, client_id)
            except StudyFinished:
                self.budget.give_back()
                self.budget.close()
                return
            except BaseException as exc:  # noqa: BLE001 - raised by run()
                self._stop(exc)
                return
            for trial in got:
                with self.lock:
                    self.active[trial.number] = trial
                try:
                    self._evaluate(trial)
                except BaseException as exc:  # noqa: BLE001 - raised by run()
                    self._stop(exc)
                    return
                finally:
                    with self.lock:
                        self.active.pop(trial.number, None)

    def _stop(self, exc: BaseException) -> None:
        if not self.interrupted:
            with self.lock:
                self.errors.append(exc)
        self.budget.close()

    def _evaluate(self, trial: RemoteTrial) -> None:
        try:
            body = outcome(trial, self.fn(trial))
        except Exception as exc:  # noqa: BLE001 - the trial failed
            body = outcome(trial, error=exc)
        if body and not self.interrupted:
            self.study._client._drive(told(trial, body))

    def _held(self) -> list[RemoteTrial]:
        with self.lock:
            return list(self.active.values())

    def _beat(self) -> None:
        interval = heartbeat_interval(self.study.trial_lease)
        while not self.done.wait(interval):
            self.study._client._drive(beat(self._held()))

    def _abandon(self) -> list[int]:
        """Give up every trial the workers hold; their numbers."""
        gone: list[int] = self.study._client._drive(abandon_all(self._held()))
        return gone
