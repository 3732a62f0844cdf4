"""How long ``make serve`` takes to listen when nothing changed since its last install.

Runs ``make -s serve`` on a free port and a temporary store RUNS times, reads its output
until the banner ("decido is listening"), prints the seconds, and stops it. Run from the
repository root after one ``make serve`` (so the stamp is fresh):
``python benchmarks/serve_start.py [RUNS]``.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def once() -> float:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = Path(tempfile.mkdtemp()) / "decido.db"
    started = time.monotonic()
    proc = subprocess.Popen(["make", "-s", "serve", f"SERVE_ARGS=--port {port} --store {store}"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=ROOT, start_new_session=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "decido is listening" in line:
                return time.monotonic() - started
        raise RuntimeError("make serve ended without listening")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    times = [once() for _ in range(runs)]
    print("make serve to banner: " + ", ".join(f"{t:.2f} s" for t in times))


if __name__ == "__main__":
    main()
