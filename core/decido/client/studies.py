"""``client.studies``: ask/tell optimization on the service (``/v1/studies``,
docs/studies.md) from :class:`~decido.client.Client`: :class:`Studies` makes and finds
studies, a :class:`RemoteStudy` suggests :class:`RemoteTrial` s, which are told their
results, and :meth:`Studies.optimize` runs a function over a study with a pool of threads.
The asyncio twins are in :mod:`decido.client.studies_aio`."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
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

__all__ = ["RemoteStudy", "RemoteTrial", "Studies"]

T = TypeVar("T")
log = logging.getLogger("decido.client")


class _Driver(Protocol):
    """What the handles need of a :class:`~decido.client.Client`: its driver."""

    def _drive(self, op: Op[T]) -> T: ...

    def _iterate(self, op: Op[Any]) -> Iterator[Any]: ...


class RemoteTrial(ops.TrialView):
    """A trial of a study on the service: ``number``, ``state``, ``x``, ``variables``,
    ``value`` / ``values``, ``metrics``, ``reason``, ``document`` (the last read). Tell it
    once: :meth:`complete`, :meth:`fail` or :meth:`infeasible` (a second tell raises
    :class:`TrialFinished`)."""

    def __init__(self, client: _Driver, study_id: str, document: dict[str, Any]) -> None:
        super().__init__(study_id, document)
        self._client = client

    def _learn(self, document: dict[str, Any]) -> RemoteTrial:
        self.document = document
        return self

    def complete(self, value: float | None = None, *, values: ArrayLike | None = None,
                 metrics: Mapping[str, float] | None = None) -> RemoteTrial:
        """Tell its result: ``value`` (one objective) or ``values`` (several, in the
        objectives' order), and ``metrics`` the constraints may read; returns itself,
        ``completed``."""
        return self._tell(ops.tell_body(value, values, metrics))

    def fail(self, reason: str | None = None) -> RemoteTrial:
        """Tell that its evaluation failed (ranked worst); returns itself, ``failed``."""
        return self._tell(ops.tell_body(state="failed", reason=reason))

    def infeasible(self, reason: str | None = None) -> RemoteTrial:
        """Tell that its point cannot be evaluated (ranked after every trial with values);
        returns itself, ``infeasible``."""
        return self._tell(ops.tell_body(state="infeasible", reason=reason))

    def _tell(self, body: dict[str, Any]) -> RemoteTrial:
        return self._learn(self._client._drive(ops.tell(self.study_id, self.number, body)))

    def report(self, step: int, value: float) -> bool:
        """An intermediate value at ``step`` (renews the lease); True when the study's
        early stopping says to stop: the trial is then ``early_stopped`` (no tell needed)."""
        stop = self._client._drive(ops.report(self.study_id, self.number, step, value))
        if stop:
            self.document = {**self.document, "state": "early_stopped"}
        return stop

    def heartbeat(self) -> RemoteTrial:
        """Renew its lease (``trial_lease`` seconds from now)."""
        return self._learn(self._client._drive(ops.heartbeat(self.study_id, self.number)))

    def abandon(self) -> RemoteTrial:
        """Give it up: ``abandoned``, never suggested again."""
        return self._learn(self._client._drive(ops.abandon(self.study_id, self.number)))

    def refresh(self) -> RemoteTrial:
        """Read it again."""
        return self._learn(self._client._drive(ops.trial(self.study_id, self.number)))


class RemoteStudy(ops.StudyView):
    """A study on the service: ``id``, ``state``, ``spec``, ``counts`` (trials by state),
    ``best`` or ``pareto``, ``metadata``, ``document`` (the last read; :meth:`refresh`
    reads it again)."""

    def __init__(self, client: _Driver, document: dict[str, Any]) -> None:
        super().__init__(document)
        self._client = client

    def _trial(self, document: dict[str, Any]) -> RemoteTrial:
        return RemoteTrial(self._client, self.id, document)

    @property
    def best(self) -> RemoteTrial | None:
        """One objective: its best completed trial (as last read), or None."""
        found = self.document.get("best")
        return None if found is None else self._trial(found)

    @property
    def pareto(self) -> list[RemoteTrial] | None:
        """Several objectives: the front of its completed trials (as last read)."""
        found = self.document.get("pareto")
        return None if found is None else [self._trial(t) for t in found]

    def refresh(self) -> RemoteStudy:
        """Read the study again; returns itself."""
        self.document = self._client._drive(ops.get(self.id))
        return self

    def suggest(self, count: int = 1, client_id: str | None = None) -> list[RemoteTrial]:
        """``count`` trials to evaluate, each held for the study's ``trial_lease``. A
        ``client_id`` that still holds active trials gets them back instead of new ones.
        :class:`StudyFinished` once the study makes no more."""
        return [self._trial(t) for t in
                self._client._drive(ops.suggest(self.id, count, client_id))]

    def trial(self, number: int) -> RemoteTrial:
        """One trial by number."""
        return self._trial(self._client._drive(ops.trial(self.id, number)))

    def trials(self, state: str | None = None) -> Iterator[RemoteTrial]:
        """Every trial by number (page after page); ``state``: only those in it."""
        return (self._trial(t) for t in self._client._iterate(ops.trials(self.id, state)))

    def tell(self, trial: int | RemoteTrial, value: float | None = None, *,
             values: ArrayLike | None = None, metrics: Mapping[str, float] | None = None,
             state: str = "completed", reason: str | None = None) -> RemoteTrial:
        """Tell one trial (a handle or its number): ``value`` / ``values`` (+
        ``metrics``), or ``state`` ``failed`` / ``infeasible`` with a ``reason``."""
        body = ops.tell_body(value, values, metrics, state, reason)
        return self._trial(self._client._drive(ops.tell(self.id, ops.number_of(trial),
                                                        body)))

    def complete_many(self, items: Sequence[Mapping[str, Any]]) -> list[RemoteTrial]:
        """Tell several trials in one call, all or nothing: each item ``{"number"`` (an
        int or a trial handle)``, "value" | "values", "metrics"}`` or ``{"number",
        "state": "failed" | "infeasible", "reason"}``; every bad item is named by its
        pointer (:class:`InvalidRequest`) and nothing is told."""
        return [self._trial(t) for t in self._client._drive(ops.tell_many(self.id, items))]

    def add_trials(self, items: Sequence[Mapping[str, Any]]) -> list[RemoteTrial]:
        """Add points (``variables`` by name or ``x``): told with ``value`` / ``values``
        (a warm start) or ``state`` failed / infeasible, or ``"state": "queued"``
        (suggested before the engine's own points)."""
        return [self._trial(t) for t in self._client._drive(ops.add_trials(self.id, items))]

    def stop(self) -> RemoteStudy:
        """No more suggestions (active trials can still be told); returns itself."""
        self.document = self._client._drive(ops.stop(self.id))
        return self

    def delete(self) -> None:
        """Delete the study (stopped or completed; an active one is 409)."""
        self._client._drive(ops.delete(self.id))

    def decide(self, request: Mapping[str, Any] | None = None, **members: Any
               ) -> dict[str, Any]:
        """A decision on the study's front (several objectives) or its completed trials
        (``POST /v1/decide`` with ``from_study``): ``request``'s members and ``members``
        (``method``, ``criteria``, ``constraints``, ...)."""
        body = {**_ops.decision(request, **members), "from_study": self.id}
        answer: dict[str, Any] = self._client._drive(_ops.fetch("POST", "/v1/decide", body))
        return answer


#: the function :meth:`Studies.optimize` evaluates: a trial in, its result out
Objective = Callable[[RemoteTrial], Any]


class Studies:
    """The key's studies (``client.studies``)."""

    def __init__(self, client: _Driver) -> None:
        self._client = client

    def create(self, bounds: ArrayLike | None = None, *,
               variables: Sequence[Mapping[str, Any]] | None = None,
               objectives: Sequence[str | Mapping[str, str]] | None = None,
               goal: str | None = None, engine: str | None = None, seed: int | None = None,
               max_trials: int | None = None, trial_lease: float | None = None,
               early_stopping: Mapping[str, Any] | None = None,
               constraints: Sequence[str] | None = None,
               metadata: Mapping[str, str] | None = None,
               idempotency_key: str | None = None) -> RemoteStudy:
        """A new study (the arguments of :class:`decido.Study`, and the service's
        ``trial_lease`` in seconds, ``early_stopping`` ``{"rule": "median", "min_trials":
        k}``, ``metadata`` labels). The call carries an ``Idempotency-Key`` (a new one
        unless given): a resent creation never makes a second study. Faults raise
        :class:`InvalidRequest` listing each with its pointer."""
        body = ops.study_body({
            "bounds": bounds, "variables": variables, "objectives": objectives,
            "goal": goal, "engine": engine, "seed": seed, "max_trials": max_trials,
            "trial_lease": trial_lease, "early_stopping": early_stopping,
            "constraints": constraints, "metadata": metadata})
        return RemoteStudy(self._client, self._client._drive(ops.create(body,
                                                                         idempotency_key)))

    def get(self, study_id: str) -> RemoteStudy:
        """One of the key's studies (:class:`NotFound` for any other id)."""
        return RemoteStudy(self._client, self._client._drive(ops.get(study_id)))

    def list(self, state: str | None = None, metadata: Mapping[str, str] | None = None
             ) -> Iterator[RemoteStudy]:
        """The key's studies, newest first (page after page), optionally only those in
        ``state`` or with every label of ``metadata``."""
        return (RemoteStudy(self._client, d) for d in
                self._client._iterate(ops.studies(state, metadata)))

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
            result = self.fn(trial)
        except Exception as exc:  # noqa: BLE001 - the trial failed
            body = ops.tell_body(state="failed", reason=reason_of(exc))
        else:
            body = tell_of(result) if not trial.finished else {}
        if self.interrupted or not body:
            return
        try:
            trial._tell(body)
        except TrialFinished:  # its lease ran out, or fn told it
            pass

    def _beat(self) -> None:
        interval = heartbeat_interval(self.study.trial_lease)
        while not self.done.wait(interval):
            with self.lock:
                held = list(self.active.values())
            for trial in held:
                try:
                    trial.heartbeat()
                except (TrialFinished, NotFound):
                    pass
                except ClientError as exc:
                    log.warning("heartbeat of trial %d of %s: %s", trial.number,
                                self.study.id, exc)

    def _abandon(self) -> list[int]:
        """Give up every trial the workers hold; their numbers."""
        with self.lock:
            held = list(self.active.values())
        gone = []
        for trial in held:
            try:
                trial.abandon()
                gone.append(trial.number)
            except TrialFinished:
                pass
            except ClientError as exc:
                log.warning("abandoning trial %d of %s: %s", trial.number, self.study.id, exc)
        return sorted(gone)
