"""SIGTERM at any moment of ``decido serve``'s start-up ends its process group.

Sanic's main process waits for every worker to report it started; a SIGTERM in that wait
stopped the workers but never ended the wait: the process kept the port and spun a core
until SIGKILL (``decido_service.serve.end_start_up_on_signal``)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from conftest import decido_command

from decido_service.runs.execution import SHUTDOWN_GRACE


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
