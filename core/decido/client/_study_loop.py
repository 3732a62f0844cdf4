"""What the blocking and the asyncio ``optimize`` loops of studies share, free of I/O: a
result of the user's function as a tell, an exception as a failed trial's reason, the
budget of trials, what Ctrl-C leaves on the exception, and the loops' calls as operations
(:mod:`decido.client._protocol`) each client's driver carries out: telling an evaluated
trial, the round of heartbeats, abandoning the trials held."""

from __future__ import annotations

import logging
import math
import threading
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from decido.client import _study_ops as ops
from decido.client._protocol import Op
from decido.client._study_ops import TrialView, tell_body
from decido.client.errors import ClientError, NotFound, TrialFinished

__all__ = ["Budget", "abandon_all", "beat", "client_prefix", "heartbeat_interval",
           "interrupted", "outcome", "reason_of", "tell_of", "told"]

log = logging.getLogger("decido.client")

#: the shortest wait between two rounds of heartbeats (seconds)
_SHORTEST_BEAT = 0.2


def reason_of(exc: BaseException) -> str:
    """A failed trial's reason for the exception its evaluation raised."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def tell_of(result: Any) -> dict[str, Any]:
    """The tell (:func:`~decido.client._study_ops.tell_body`) of what the function
    returned: a number is the value, a sequence (or array) the values of several
    objectives, a mapping the tell's members (``value`` or ``values``, ``metrics``, or
    ``state`` failed / infeasible with a ``reason``). None, another type or a non-finite
    number makes the trial failed, the reason saying why."""
    try:
        if isinstance(result, Mapping):
            return tell_body(**dict(result))
        if isinstance(result, (int, float, np.number)) and not isinstance(result, bool):
            return tell_body(value=float(result))
        if isinstance(result, (list, tuple, np.ndarray)):
            return tell_body(values=np.asarray(result, dtype=float))
    except (TypeError, ValueError) as exc:
        return tell_body(state="failed", reason=reason_of(exc))
    what = "None" if result is None else type(result).__name__
    return tell_body(state="failed", reason=f"the function returned {what}, not a number, "
                                            "a sequence of numbers or a mapping")


def outcome(trial: TrialView, result: Any = None, error: BaseException | None = None
            ) -> dict[str, Any]:
    """The tell of an evaluated trial: ``error`` (what the function raised) makes it
    failed, else :func:`tell_of` its ``result``; nothing (``{}``) for a trial the function
    told itself, or that early stopping ended."""
    if error is not None:
        return tell_body(state="failed", reason=reason_of(error))
    return tell_of(result) if not trial.finished else {}


def told(trial: TrialView, body: dict[str, Any]) -> Op[None]:
    """Tell ``trial`` ``body`` (its lease ran out, or the function told it: left as it
    is)."""
    try:
        trial.document = yield from ops.tell(trial.study_id, trial.number, body)
    except TrialFinished:
        pass


def beat(trials: Sequence[TrialView]) -> Op[None]:
    """A round of heartbeats of the trials held (one finished or gone meanwhile is
    passed over, another failure logged)."""
    for trial in trials:
        try:
            trial.document = yield from ops.heartbeat(trial.study_id, trial.number)
        except (TrialFinished, NotFound):
            pass
        except ClientError as exc:
            log.warning("heartbeat of trial %d of %s: %s", trial.number, trial.study_id,
                        exc)


def abandon_all(trials: Sequence[TrialView]) -> Op[list[int]]:
    """Give up the trials held; the numbers of those abandoned."""
    gone = []
    for trial in trials:
        try:
            trial.document = yield from ops.abandon(trial.study_id, trial.number)
            gone.append(trial.number)
        except TrialFinished:
            pass
        except ClientError as exc:
            log.warning("abandoning trial %d of %s: %s", trial.number, trial.study_id, exc)
    return sorted(gone)


def client_prefix(given: str | None) -> str:
    """The prefix of the loop's workers' ``client_id`` s (``{prefix}-{k}``)."""
    return given if given is not None else f"optimize-{uuid.uuid4().hex[:12]}"


def heartbeat_interval(lease: float) -> float:
    """Seconds between two heartbeats of a held trial: a third of its lease."""
    return max(_SHORTEST_BEAT, lease / 3.0)


def interrupted(exc: BaseException, study_id: str | None, abandoned: list[int]) -> None:
    """Carry what Ctrl-C left on ``exc``: ``exc.study_id`` and ``exc.abandoned`` (the
    numbers of the trials given up), and say so in a note of the traceback."""
    vars(exc).update(study_id=study_id, abandoned=abandoned)
    told = (f"decido: study {study_id} goes on; {len(abandoned)} active trial(s) of this "
            f"loop abandoned; optimize(fn, study={study_id!r}) resumes it"
            if study_id is not None else "decido: the study may have been made: "
                                          "client.studies.list() shows it")
    add_note = getattr(exc, "add_note", None)  # Python 3.11+
    if add_note is not None:
        add_note(told)


class Budget:
    """The trials a loop may still start (None: until the study finishes); thread-safe."""

    def __init__(self, n_trials: int | None) -> None:
        if n_trials is not None and n_trials < 0:
            raise ValueError(f"n_trials must be at least 0, not {n_trials}")
        self._left = math.inf if n_trials is None else n_trials
        self._lock = threading.Lock()
        self.closed = False

    def take(self) -> bool:
        """One trial more, if the budget has one and the loop goes on."""
        with self._lock:
            if self.closed or self._left <= 0:
                return False
            self._left -= 1
            return True

    def give_back(self) -> None:
        """A trial taken but not started (the study made no more)."""
        with self._lock:
            self._left += 1

    def close(self) -> None:
        """Start no more trials."""
        with self._lock:
            self.closed = True
