"""asv: the service's request path in instructions per request (callgrind).

``benchmarks/load/instructions.py`` runs one server process under
``valgrind --tool=callgrind`` per target and counts the instructions of a fixed number of
requests after a warm-up: deterministic up to about 0.2 %, whatever else the machine does,
so asv can compare commits on a shared machine where timed throughput cannot.  Tracked:
the hello-world Sanic app (the floor), ``GET /v1/health``, a logged ``POST /v1/decide``
and the same decision unlogged, and the logged decision's ratio to the hello-world's.
Skipped without valgrind or without the service's packages.  About 20 s per target on
an idle machine.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

LOAD = Path(__file__).resolve().parents[1] / "load"
TARGETS = ["hello", "health", "decide", "decide-nolog"]
REQUESTS = 500
CONNECTIONS = 16


def _count() -> dict[str, float] | None:
    if shutil.which("valgrind") is None:
        return None
    try:
        import decido_service  # noqa: F401, PLC0415 - only to test that it is installed
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "ir.json"
        subprocess.run([sys.executable, str(LOAD / "instructions.py"), "--targets",
                        ",".join(TARGETS), "--requests", str(REQUESTS), "--connections",
                        str(CONNECTIONS), "--json", str(out)], check=True,
                       stdout=subprocess.DEVNULL)
        rows = json.loads(out.read_text())
    return {target: rows[target]["Ir"] for target in TARGETS}


class InstructionsPerRequest:
    """Instructions (callgrind's Ir) per request of each target, counted once per run."""

    timeout = 1800
    number = 1
    repeat = 1

    def setup_cache(self):
        return _count()

    def setup(self, counts):
        if counts is None:
            raise NotImplementedError("valgrind or decido_service is missing")

    def track_hello(self, counts):
        return counts["hello"]

    def track_health(self, counts):
        return counts["health"]

    def track_decide_logged(self, counts):
        return counts["decide"]

    def track_decide_unlogged(self, counts):
        return counts["decide-nolog"]

    def track_decide_logged_over_hello(self, counts):
        """The ratio issue 31 keeps from growing (4.3-4.6 when it was filed)."""
        return counts["decide"] / counts["hello"]

    for _track in (track_hello, track_health, track_decide_logged, track_decide_unlogged):
        _track.unit = "instructions/request"
    track_decide_logged_over_hello.unit = "ratio"
    del _track
