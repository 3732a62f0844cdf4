"""What the blocking and the asyncio ``optimize`` loops of studies share, free of I/O: a
result of the user's function as a tell, an exception as a failed trial's reason, the
budget of trials, and what Ctrl-C leaves on the exception."""

from __future__ import annotations

import math
import threading
import uuid
from collections.abc import Mapping
from typing import Any

import numpy as np

from decido.client._study_ops import tell_body

__all__ = ["Budget", "client_prefix", "heartbeat_interval", "interrupted", "reason_of",
           "tell_of"]

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
