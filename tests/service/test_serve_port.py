"""``decido serve`` on a port that is taken: a message saying so and how to pick another,
exit status 1, no traceback, and nothing started."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

from conftest import decido_command


def test_a_taken_port_is_named_with_how_to_pick_another(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("DECIDO_")}
        out = subprocess.run([*decido_command(), "serve", "--port", str(port), "--store",
                              str(tmp_path / "decido.db")], capture_output=True, text=True,
                             timeout=60, env=env, cwd=tmp_path)
    assert out.returncode == 1
    assert f"port {port} is already in use on 127.0.0.1" in out.stderr
    assert f"--port {port + 1}" in out.stderr and "DECIDO_PORT" in out.stderr
    assert "Traceback" not in out.stderr + out.stdout
    assert not (tmp_path / "decido.db").exists()  # checked before anything is made
