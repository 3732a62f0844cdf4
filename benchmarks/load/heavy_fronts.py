"""Issue 38's reproducer of runs of many objectives, on a real server (one worker).

8 objectives whose values hardly ever dominate one another (the simplex
``x[k] / sum(x)``), 1,600 start points and ``archive_size`` 100,000: a front whose exact
hypervolume (WFG) takes hours. Measured, on an enterprise key (whose tier takes that
front and those start points; the free tier refuses them: 422):

1. ``POST /v1/optimize`` with ``time_limit`` 10: the wall time of the answer (before the
   fix: 295 s for a free key's run; the exact hypervolume was measured whatever the clock);
2. ``POST /v1/runs`` with ``time_limit`` 60, cancelled 2 s after it started running: the
   seconds from the cancel to the run's final state (before: 484-488 s), repeated;
3. the latency of ``GET /v1/health`` of the same worker meanwhile (p50, p99, max).

::

    python benchmarks/load/heavy_fronts.py [--rounds 3] [--json out.json]

Needs decido installed with the ``service`` extra; only 127.0.0.1 is contacted; the
server started is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runs import call, new_key, server  # noqa: E402 - the run benchmarks' helpers

RUN = {"bounds": [[0, 1]] * 8, "seed": 1, "time_limit": 10, "archive_size": 100_000,
       "objectives": [{"name": f"f{k}", "expression": f"x[{k}] / (sum(x) + 1e-9)"}
                      for k in range(8)],
       "x0": [[((r + 1) * (0.6180339887 + 0.1 * j)) % 1.0 for j in range(8)]
              for r in range(1600)]}


def health_latencies(port: int, stop: threading.Event, out: list[float]) -> None:
    """``GET /v1/health`` every 20 ms until ``stop``: each one's seconds."""
    while not stop.is_set():
        started = time.monotonic()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/health", timeout=600):
            pass
        out.append(time.monotonic() - started)
        time.sleep(0.02)


def cancel_latency(port: int, key: str) -> float:
    """Seconds from the cancel of a run 2 s into its running to its final state."""
    run = call(port, "POST", "/v1/runs", key, {**RUN, "time_limit": 60})["id"]
    while call(port, "GET", f"/v1/runs/{run}", key)["state"] != "running":
        time.sleep(0.05)
    time.sleep(2.0)
    asked = time.monotonic()
    call(port, "POST", f"/v1/runs/{run}/cancel", key)
    while call(port, "GET", f"/v1/runs/{run}", key)["state"] in ("queued", "running"):
        time.sleep(0.02)
    return time.monotonic() - asked


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "decido.db"
        with server(db, Path(tmp) / "server.log", {}) as port:
            key = new_key(db)
            latencies: list[float] = []
            stop = threading.Event()
            poller = threading.Thread(target=health_latencies, args=(port, stop, latencies))
            poller.start()
            try:
                started = time.monotonic()
                answer = call(port, "POST", "/v1/optimize", key, RUN)
                out["optimize_wall_s"] = round(time.monotonic() - started, 2)
                out["optimize_status"] = answer["status"]
                out["front"] = len(answer["pareto"])
                cancels = [cancel_latency(port, key) for _ in range(args.rounds)]
                out["cancel_to_final_s"] = [round(c, 2) for c in cancels]
                out["cancel_to_final_median_s"] = round(statistics.median(cancels), 2)
            finally:
                stop.set()
                poller.join()
            ms = sorted(v * 1e3 for v in latencies)
            out["health_ms"] = {"n": len(ms), "p50": round(ms[len(ms) // 2], 1),
                                "p99": round(ms[int(len(ms) * 0.99)], 1),
                                "max": round(ms[-1], 1)}
    print(json.dumps(out, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
