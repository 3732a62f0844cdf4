"""Suggest latency of a study through HTTP (docs/studies.md, "Over HTTP").

Starts ``decido serve`` (1 worker, a temporary SQLite store, an enterprise key), then for
each case creates a study, brings it to its size and times ROUNDS suggest calls (each
followed by the trial's complete, not timed) on one keep-alive connection:

- ``de`` (a population engine) with 10,000 completed trials (warm starts, in calls of 2,000);
- ``auto`` in 10 dimensions with 200 completed trials (suggested and completed one by one;
  without ``max_trials`` the study plans for 1,000 trials and ``auto`` runs ``cmaes``);
- ``bo`` (what ``auto`` runs for a study of at most 200 trials) the same way.

Prints the median and p99 of the suggest round trips. Run from the repository root after
``make install``: ``.venv/bin/python benchmarks/study_suggest.py [ROUNDS]``.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent


def _serve() -> tuple[subprocess.Popen[bytes], int, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = Path(tempfile.mkdtemp()) / "decido.db"
    key = json.loads(subprocess.run(
        [str(BIN / "decido"), "keys", "create", "--plan", "enterprise", "--tier", "enterprise",
         "--db", str(db), "--create", "--json"], capture_output=True, text=True,
        check=True).stdout)["key"]
    proc = subprocess.Popen([str(BIN / "decido"), "serve", "--workers", "1", "--port",
                             str(port), "--db", str(db)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    for _ in range(300):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/v1/health")
            if conn.getresponse().status == 200:
                return proc, port, key
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError("decido serve did not start")


class Api:
    def __init__(self, port: int, key: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def post(self, path: str, body: Any) -> Any:
        self.conn.request("POST", path, json.dumps(body), self.headers)
        r = self.conn.getresponse()
        data = r.read()
        if r.status >= 300:
            raise RuntimeError(f"{path}: {r.status} {data[:300]!r}")
        return json.loads(data)


def _timed(api: Api, sid: str, rounds: int, f: Any) -> list[float]:
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        (trial,) = api.post(f"/v1/studies/{sid}/suggest", {"count": 1})["trials"]
        out.append((time.perf_counter() - start) * 1e3)
        api.post(f"/v1/studies/{sid}/trials/{trial['number']}/complete", {"value": f(trial["x"])})
    return out


def _report(name: str, ms: list[float]) -> None:
    ms = sorted(ms)
    p99 = ms[min(len(ms) - 1, int(round(0.99 * (len(ms) - 1))))]
    print(f"{name}: suggest median {statistics.median(ms):.2f} ms, p99 {p99:.2f} ms "
          f"({len(ms)} calls)")


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    proc, port, key = _serve()
    try:
        api = Api(port, key)

        def sphere(x: list[float]) -> float:
            return sum(v * v for v in x)

        rng = random.Random(1)
        sid = api.post("/v1/studies", {"bounds": [[-5, 5]] * 10, "engine": "de",
                                        "seed": 1})["id"]
        points = [[rng.uniform(-5, 5) for _ in range(10)] for _ in range(10_000)]
        for k in range(0, len(points), 2_000):  # within the 1 MiB body limit
            api.post(f"/v1/studies/{sid}/trials",
                     {"trials": [{"x": x, "value": sphere(x)} for x in points[k:k + 2_000]]})
        _timed(api, sid, 20, sphere)  # warm the worker's copy
        _report("de, 10,000 completed trials", _timed(api, sid, rounds, sphere))

        sid = api.post("/v1/studies", {"bounds": [[-5, 5]] * 10, "engine": "auto",
                                        "seed": 1})["id"]
        _timed(api, sid, 200, sphere)
        _report("auto, 10 dims, 200 completed trials", _timed(api, sid, min(rounds, 50), sphere))

        # auto runs bo for a study of at most 200 planned trials (max_trials; without it a
        # study plans for max(1000, 100 d) and auto runs cmaes): bo itself past 200 points
        sid = api.post("/v1/studies", {"bounds": [[-5, 5]] * 10, "engine": "bo",
                                        "seed": 1})["id"]
        _timed(api, sid, 200, sphere)
        _report("bo, 10 dims, 200 completed trials", _timed(api, sid, min(rounds, 50), sphere))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)


if __name__ == "__main__":
    main()
