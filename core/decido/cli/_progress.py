"""A run's progress on stderr: a live rich bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, TextIO, TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

import decido

__all__ = ["ProgressDisplay", "best_text", "run_monitored"]

T = TypeVar("T")


def best_text(best: float | None) -> str:
    """A best value as shown (``-`` before the first evaluation)."""
    return "-" if best is None else format(best, ".6g")


class ProgressDisplay:
    """Shows ``update(evaluations, best, elapsed)`` (``elapsed`` in seconds): on a terminal
    a bar of evaluations out of ``total`` with the best value and the time; elsewhere a
    plain line at most every ``every`` seconds (and the last one on exit). ``label``: the
    value's name (``best``, or ``hypervolume`` for a run of several objectives; also the
    member of the service's progress it reads)."""

    def __init__(self, total: int | None, out: TextIO | None = None,
                 every: float = 1.0, label: str = "best") -> None:
        self.label = label
        self.out = out or sys.stderr
        self.console = Console(file=self.out)
        self.total = total
        self.every = every
        self._last: tuple[int, float | None, float] | None = None
        self._shown: tuple[int, float | None, float] | None = None
        self._printed = -float("inf")
        self._bar: Progress | None = None
        if self.console.is_terminal:
            self._bar = Progress(TextColumn("[bold]optimizing"), BarColumn(),
                                 MofNCompleteColumn(), TextColumn(label + " {task.fields[best]}"),
                                 TimeElapsedColumn(), console=self.console, transient=False)
            self._task = self._bar.add_task("run", total=total, best="-")

    def __enter__(self) -> ProgressDisplay:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()
        elif self._last is not None and self._last != self._shown:
            self._line(*self._last)

    def update(self, evaluations: int, best: float | None, elapsed: float) -> None:
        """The run's latest progress."""
        if self._last is not None and self._last[:2] == (evaluations, best):
            return
        self._last = (evaluations, best, elapsed)
        if self._bar is not None:
            self._bar.update(self._task, completed=evaluations, best=best_text(best))
        elif time.monotonic() - self._printed >= self.every:
            self._line(evaluations, best, elapsed)

    def progress(self, progress: dict[str, Any]) -> None:
        """:meth:`update` from the service's progress member (``elapsed_ms``)."""
        self.update(int(progress["evaluations"]), progress.get(self.label),
                    float(progress["elapsed_ms"]) / 1e3)

    def _line(self, evaluations: int, best: float | None, elapsed: float) -> None:
        self._printed, self._shown = time.monotonic(), (evaluations, best, elapsed)
        of = f"/{self.total}" if self.total else ""
        self.out.write(f"evaluations {evaluations}{of}  {self.label} {best_text(best)}  "
                       f"elapsed {elapsed:.1f} s\n")
        self.out.flush()


def run_monitored(start: Callable[[decido.RunMonitor], T],
                  display: ProgressDisplay) -> tuple[T, bool]:
    """``start(monitor)`` in a thread with a :class:`decido.RunMonitor`; this thread draws its
    progress (the member ``display.label``) and, on Ctrl-C, stops the run, which ends
    ``stopped`` with its best so far. Gives the run's result and whether it was interrupted;
    an exception of the run is raised here."""
    monitor = decido.RunMonitor()
    outcome: list[Any] = []
    done = threading.Event()  # not Thread.join: a join that Ctrl-C interrupts is spent

    def work() -> None:
        try:
            outcome.append(start(monitor))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            outcome.append(exc)
        finally:
            done.set()

    threading.Thread(target=work, name="decido-run", daemon=True).start()
    interrupted = False
    try:
        while not done.wait(0.1):
            p = monitor.progress()
            display.update(p["evaluations"], p[display.label], p["elapsed"])
    except KeyboardInterrupt:
        interrupted = True
        monitor.stop()
        done.wait()
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    result: T = outcome[0]
    return result, interrupted
