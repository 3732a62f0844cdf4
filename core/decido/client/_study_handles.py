"""The study and trial handles' calls, written once for both clients.

Each call builds its operation (:mod:`decido.client._study_ops`), with what the handle
does with the answer folded into it (:func:`then`, :func:`each`), and hands it to the
client's driver: :class:`decido.Client`'s carries it out and returns the value,
:class:`decido.AsyncClient`'s returns a coroutine of it (``_iterate``: an iterator, or an
async one). So a call is the same line for both, and only what it gives differs: the
handles' type parameters say it (a ``RemoteTrial`` or an ``Awaitable[AsyncRemoteTrial]``,
...). :mod:`decido.client.studies` and :mod:`decido.client.studies_aio` bind them, and
keep the ``optimize`` loops, whose way of waiting (threads, tasks) is their own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar, cast

from numpy.typing import ArrayLike

from decido.client import _ops
from decido.client import _study_ops as ops
from decido.client._protocol import Emit, Op

__all__ = ["StudiesCalls", "StudyCalls", "TrialCalls", "each", "then"]

T = TypeVar("T")
U = TypeVar("U")
#: what a call gives, by the client: its handle (sync) or an awaitable of it (asyncio)
TrialGives = TypeVar("TrialGives")
StudyGives = TypeVar("StudyGives")
BoolGives = TypeVar("BoolGives")
ListGives = TypeVar("ListGives")
IterGives = TypeVar("IterGives")
DictGives = TypeVar("DictGives")
NoneGives = TypeVar("NoneGives")
#: the trial handle of a study's ``best`` and ``pareto``
TrialHandle = TypeVar("TrialHandle")


def then(op: Op[T], after: Callable[[T], U]) -> Op[U]:
    """``op``, its value passed through ``after``."""
    value = yield from op
    return after(value)


def each(op: Op[T], after: Callable[[Any], Any]) -> Op[T]:
    """``op``, each item it emits passed through ``after``."""
    outcome: Any = None
    error: BaseException | None = None
    while True:
        try:
            step = op.send(outcome) if error is None else op.throw(error)
        except StopIteration as stop:
            value: T = stop.value
            return value
        if isinstance(step, Emit):
            step = Emit(after(step.value))
        outcome = error = None
        try:
            outcome = yield step
        except Exception as exc:  # noqa: BLE001 - handed on to the operation
            error = exc


class TrialCalls(ops.TrialView, Generic[TrialGives, BoolGives]):
    """The calls of a trial handle (module docs): ``TrialGives`` is what a call answering
    the trial gives, ``BoolGives`` what :meth:`report` gives."""

    def __init__(self, client: Any, study_id: str, document: dict[str, Any]) -> None:
        super().__init__(study_id, document)
        self._client = client

    def _learn(self, op: Op[dict[str, Any]]) -> TrialGives:
        """``op``'s answer becomes the trial's document; the trial."""
        def learned(document: dict[str, Any]) -> TrialCalls[TrialGives, BoolGives]:
            self.document = document
            return self

        return cast(TrialGives, self._client._drive(then(op, learned)))

    def complete(self, value: float | None = None, *, values: ArrayLike | None = None,
                 metrics: Mapping[str, float] | None = None) -> TrialGives:
        """Tell its result: ``value`` (one objective) or ``values`` (several, in the
        objectives' order), and ``metrics`` the constraints may read; returns itself,
        ``completed``."""
        return self._tell(ops.tell_body(value, values, metrics))

    def fail(self, reason: str | None = None) -> TrialGives:
        """Tell that its evaluation failed (ranked worst); returns itself, ``failed``."""
        return self._tell(ops.tell_body(state="failed", reason=reason))

    def infeasible(self, reason: str | None = None) -> TrialGives:
        """Tell that its point cannot be evaluated (ranked after every trial with values);
        returns itself, ``infeasible``."""
        return self._tell(ops.tell_body(state="infeasible", reason=reason))

    def _tell(self, body: dict[str, Any]) -> TrialGives:
        return self._learn(ops.tell(self.study_id, self.number, body))

    def report(self, step: int, value: float) -> BoolGives:
        """An intermediate value at ``step`` (renews the lease); True when the study's
        early stopping says to stop: the trial is then ``early_stopped`` (no tell needed)."""
        def stopped(stop: bool) -> bool:
            if stop:
                self.document = {**self.document, "state": "early_stopped"}
            return stop

        return cast(BoolGives, self._client._drive(
            then(ops.report(self.study_id, self.number, step, value), stopped)))

    def heartbeat(self) -> TrialGives:
        """Renew its lease (``trial_lease`` seconds from now)."""
        return self._learn(ops.heartbeat(self.study_id, self.number))

    def abandon(self) -> TrialGives:
        """Give it up: ``abandoned``, never suggested again."""
        return self._learn(ops.abandon(self.study_id, self.number))

    def refresh(self) -> TrialGives:
        """Read it again."""
        return self._learn(ops.trial(self.study_id, self.number))


class StudyCalls(ops.StudyView, Generic[TrialHandle, StudyGives, TrialGives, ListGives,
                                        IterGives, DictGives, NoneGives]):
    """The calls of a study handle (module docs): what a call answering the study, a
    trial, a list of trials, an iteration of them, a decision and nothing gives."""

    #: the client's trial handle
    _trial_type: Callable[[Any, str, dict[str, Any]], TrialHandle]

    def __init__(self, client: Any, document: dict[str, Any]) -> None:
        super().__init__(document)
        self._client = client

    def _trial(self, document: dict[str, Any]) -> TrialHandle:
        return self._trial_type(self._client, self.id, document)

    def _trials(self, documents: list[dict[str, Any]]) -> list[TrialHandle]:
        return [self._trial(d) for d in documents]

    def _learn(self, op: Op[dict[str, Any]]) -> StudyGives:
        """``op``'s answer becomes the study's document; the study."""
        def learned(document: dict[str, Any]) -> StudyCalls[Any, Any, Any, Any, Any, Any, Any]:
            self.document = document
            return self

        return cast(StudyGives, self._client._drive(then(op, learned)))

    @property
    def best(self) -> TrialHandle | None:
        """One objective: its best completed trial (as last read), or None."""
        found = self.document.get("best")
        return None if found is None else self._trial(found)

    @property
    def pareto(self) -> list[TrialHandle] | None:
        """Several objectives: the front of its completed trials (as last read)."""
        found = self.document.get("pareto")
        return None if found is None else self._trials(found)

    def refresh(self) -> StudyGives:
        """Read the study again; returns itself."""
        return self._learn(ops.get(self.id))

    def suggest(self, count: int = 1, client_id: str | None = None) -> ListGives:
        """``count`` trials to evaluate, each held for the study's ``trial_lease``. A
        ``client_id`` that still holds active trials gets them back instead of new ones.
        :class:`StudyFinished` once the study makes no more."""
        return cast(ListGives, self._client._drive(
            then(ops.suggest(self.id, count, client_id), self._trials)))

    def trial(self, number: int) -> TrialGives:
        """One trial by number."""
        return cast(TrialGives, self._client._drive(
            then(ops.trial(self.id, number), self._trial)))

    def trials(self, state: str | None = None) -> IterGives:
        """Every trial by number, page after page (``for``; ``async for`` with an
        :class:`~decido.client.AsyncClient`); ``state``: only those in it."""
        return cast(IterGives, self._client._iterate(
            each(ops.trials(self.id, state), self._trial)))

    def tell(self, trial: int | ops.TrialView, value: float | None = None, *,
             values: ArrayLike | None = None, metrics: Mapping[str, float] | None = None,
             state: str = "completed", reason: str | None = None) -> TrialGives:
        """Tell one trial (a handle or its number): ``value`` / ``values`` (+
        ``metrics``), or ``state`` ``failed`` / ``infeasible`` with a ``reason``."""
        body = ops.tell_body(value, values, metrics, state, reason)
        return cast(TrialGives, self._client._drive(
            then(ops.tell(self.id, ops.number_of(trial), body), self._trial)))

    def complete_many(self, items: Sequence[Mapping[str, Any]]) -> ListGives:
        """Tell several trials in one call, all or nothing: each item ``{"number"`` (an
        int or a trial handle)``, "value" | "values", "metrics"}`` or ``{"number",
        "state": "failed" | "infeasible", "reason"}``; every bad item is named by its
        pointer (:class:`InvalidRequest`) and nothing is told."""
        return cast(ListGives, self._client._drive(
            then(ops.tell_many(self.id, items), self._trials)))

    def add_trials(self, items: Sequence[Mapping[str, Any]]) -> ListGives:
        """Add points (``variables`` by name or ``x``): told with ``value`` / ``values``
        (a warm start) or ``state`` failed / infeasible, or ``"state": "queued"``
        (suggested before the engine's own points)."""
        return cast(ListGives, self._client._drive(
            then(ops.add_trials(self.id, items), self._trials)))

    def stop(self) -> StudyGives:
        """No more suggestions (active trials can still be told); returns itself."""
        return self._learn(ops.stop(self.id))

    def delete(self) -> NoneGives:
        """Delete the study (stopped or completed; an active one is 409)."""
        return cast(NoneGives, self._client._drive(ops.delete(self.id)))

    def decide(self, request: Mapping[str, Any] | None = None, **members: Any) -> DictGives:
        """A decision on the study's front (several objectives) or its completed trials
        (``POST /v1/decide`` with ``from_study``): ``request``'s members and ``members``
        (``method``, ``criteria``, ``constraints``, ...)."""
        body = {**_ops.decision(request, **members), "from_study": self.id}
        return cast(DictGives, self._client._drive(_ops.fetch("POST", "/v1/decide", body)))


class StudiesCalls(Generic[StudyGives, IterGives]):
    """The key's studies (``client.studies``): :meth:`create`, :meth:`get`, :meth:`list`
    (the client's own class adds ``optimize``)."""

    #: the client's study handle
    _study_type: Callable[[Any, dict[str, Any]], Any]

    def __init__(self, client: Any) -> None:
        self._client = client

    def _handle(self, document: dict[str, Any]) -> Any:
        return self._study_type(self._client, document)

    def create(self, bounds: ArrayLike | None = None, *,
               variables: Sequence[Mapping[str, Any]] | None = None,
               objectives: Sequence[str | Mapping[str, str]] | None = None,
               goal: str | None = None, engine: str | None = None, seed: int | None = None,
               max_trials: int | None = None, trial_lease: float | None = None,
               early_stopping: Mapping[str, Any] | None = None,
               constraints: Sequence[str] | None = None,
               metadata: Mapping[str, str] | None = None,
               idempotency_key: str | None = None) -> StudyGives:
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
        return cast(StudyGives, self._client._drive(
            then(ops.create(body, idempotency_key), self._handle)))

    def get(self, study_id: str) -> StudyGives:
        """One of the key's studies (:class:`NotFound` for any other id)."""
        return cast(StudyGives, self._client._drive(then(ops.get(study_id), self._handle)))

    def list(self, state: str | None = None, metadata: Mapping[str, str] | None = None
             ) -> IterGives:
        """The key's studies, newest first, page after page (``for``; ``async for`` with
        an :class:`~decido.client.AsyncClient`), optionally only those in ``state`` or
        with every label of ``metadata``."""
        return cast(IterGives, self._client._iterate(
            each(ops.studies(state, metadata), self._handle)))
