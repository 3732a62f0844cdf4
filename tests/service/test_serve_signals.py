"""SIGTERM at any moment of ``decido serve``'s start-up ends its process group.

Sanic's main process waits for every worker to report it started; a SIGTERM in that wait
stopped the workers but never ended the wait: the process kept the port and spun a core
until SIGKILL (``decido_service.serve.end_start_up_on_signal``). Two moments of it were
still Sanic's graceful stop, which hung the same way (3 of 96 tries under load): after
the banner, before any worker was spawned, and after every worker reported it started,
before the wait (which looks every 0.1 s) saw it; both are aimed at here, and a loop
signals at moments spread over the whole start-up. A signal handled while the main process
runs a finalizer (a ``__del__``, a weak reference's callback) must end the start-up as
well: an exception raised there is dropped."""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import decido_command

from decido_service.runs.execution import SHUTDOWN_GRACE
from decido_service.serve import end_start_up_on_signal


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:  # a thread may end between the listing and the read
            out += [int(c) for c in (task / "children").read_text().split()]
        except FileNotFoundError:
            continue
    return out


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("moment", ["at once", "workers starting"])
def test_sigterm_during_start_up_ends_the_process_group(tmp_path: Path, moment: str) -> None:
    port = _free_port()
    proc = subprocess.Popen([*decido_command(), "serve", "--workers", "2", "--port", str(port),
                             "--store", str(tmp_path / "decido.db")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        if moment == "workers starting":  # Sanic's two helper processes and both workers
            deadline = time.monotonic() + 60  # are up, the workers still importing
            while len(_children(proc.pid)) < 4:
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.01)
            time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + SHUTDOWN_GRACE + 5
        while _group_alive(proc.pid) and time.monotonic() < deadline:
            proc.poll()
            time.sleep(0.05)
        assert not _group_alive(proc.pid), "decido serve still runs after SIGTERM"
        with socket.socket() as s:  # the port is free again
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", port))
    finally:
        if _group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _start(tmp_path: Path, port: int) -> tuple[subprocess.Popen[bytes], Path]:
    log = tmp_path / f"serve-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([*decido_command(), "serve", "--workers", "2", "--port",
                                 str(port), "--store", str(tmp_path / "decido.db")],
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return proc, log


def _ends_after_sigterm(proc: subprocess.Popen[bytes], port: int) -> bool:
    """SIGTERM ``proc``; whether its group ended (and the port is free) in time."""
    try:
        proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + SHUTDOWN_GRACE + 5
        while _group_alive(proc.pid) and time.monotonic() < deadline:
            proc.poll()
            time.sleep(0.02)
        if _group_alive(proc.pid):
            return False
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", port))
        return True
    finally:
        if _group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _wait_for(log: Path, proc: subprocess.Popen[bytes], text: str, count: int = 1) -> None:
    deadline = time.monotonic() + 60
    while log.read_bytes().count(text.encode()) < count:
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.002)


@pytest.mark.parametrize("moment", ["banner", "workers ready"])
def test_sigterm_at_the_moments_sanic_took_for_a_graceful_stop(tmp_path: Path,
                                                                moment: str) -> None:
    """Right after the banner (the workers not spawned yet), and as soon as both workers
    say they are ready (the wait has not seen it yet): each ends, three times over."""
    for _ in range(3):
        port = _free_port()
        proc, log = _start(tmp_path, port)
        if moment == "banner":
            _wait_for(log, proc, "decido is listening")
        else:
            _wait_for(log, proc, "Worker ready", 2)  # Sanic's "Starting worker" lines
        assert _ends_after_sigterm(proc, port), f"still running:\n{log.read_text()}"


def test_a_loop_of_start_and_sigterm_always_ends(tmp_path: Path) -> None:
    """Start, then SIGTERM after a delay spread over the start-up (from the banner to a
    moment after the workers are ready), again and again: every try ends."""
    rng = random.Random(96)
    hung = []
    for attempt in range(12):
        port = _free_port()
        proc, log = _start(tmp_path, port)
        _wait_for(log, proc, "decido is listening")
        time.sleep(rng.uniform(0.0, 1.5))
        if not _ends_after_sigterm(proc, port):
            hung.append(attempt)
    assert not hung, f"decido serve still ran after SIGTERM in tries {hung}"


def test_a_sigterm_in_a_finalizer_during_the_wait_ends_the_start_up() -> None:
    """Sanic's manager, in this process, waits for its one worker (never spawned) to report
    it started; its first look at the workers' states runs a ``__del__`` that receives
    SIGTERM. Python drops an exception raised in a finalizer ("Exception ignored in", as
    from a ``WeakSet``'s callback once in seven test runs), so a handler that raised
    ``ServerKilled`` left the wait spinning on its own shutdown message: the wait must
    still end with ``ServerKilled``, at its next round, Sanic's handler having run."""
    from sanic.exceptions import ServerKilled
    from sanic.worker.manager import WorkerManager

    rounds: list[int] = []

    class Finalized:
        def __del__(self) -> None:
            signal.raise_signal(signal.SIGTERM)  # its handler runs here, in the finalizer

    class States(dict[str, Any]):
        """Sanic's record of its workers' states, whose every read is a round of the wait."""

        def values(self) -> Any:
            rounds.append(len(rounds))
            assert len(rounds) < 5, "the start-up went on after the SIGTERM"
            if len(rounds) == 1:
                Finalized()  # dropped at once: its __del__ runs now
            return super().values()

    previous = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGINT)}
    publisher, subscriber = multiprocessing.Pipe()
    try:
        manager = WorkerManager(1, print, {}, multiprocessing.get_context("spawn"),
                                (publisher, subscriber), States())
        end_start_up_on_signal(manager)
        with pytest.raises(ServerKilled):
            manager.wait_for_ack()
        assert manager._shutting_down  # Sanic's handler stopped the workers
        assert rounds == [0]
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        publisher.close()
        subscriber.close()
