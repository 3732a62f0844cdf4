"""What the run machinery costs: three measurements of issue 16, on real servers.

1. ``overhead``: server CPU per trivial run (sphere, d = 2, 100 evaluations) submitted with
   ``POST /v1/runs`` and executed through the queue, against the CPU of calling
   ``decido.minimize`` directly for the same problem in this process. The server's CPU is
   measured from the first submission until every run has ended, less what its workers
   use idle over the same time (the queue's polls), and divided by the number of runs.
2. ``watchers``: one run watched by 200 Server-Sent Events clients. The run executes on
   one server and the watchers are served by another on the same SQLite file (as two
   nodes would be), so the watching server's CPU is the watchers' alone: its CPU over a
   window with 200 watchers, less its idle CPU over the same window, per watcher and
   second. Every watcher must get the terminal event.
3. ``latency``: a run executing on one node (server), watched over SSE on another, is
   cancelled through the first: the seconds until the watcher's stream carries the
   ``cancelled`` state, repeated (``--store postgresql://...`` for PostgreSQL nodes).
4. ``listing``: ``GET /v1/runs`` latency with 100,000 runs of the key stored (written
   straight into a fresh database file, each with the document of a real finished run),
   one closed-loop client (latency without queueing behind other requests), interleaved
   rounds of a few seconds: p50/p99 of the first page (20), a page of 100, a
   filter and a deep cursor.

::

    python benchmarks/load/runs.py [--runs 300] [--watchers 200] [--stored 100000]
        [--store postgresql://...] [--only overhead|watchers|latency|listing] [--json out.json]

Needs decido installed with the ``service`` extra; only 127.0.0.1 is contacted; every
server started is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import (  # noqa: E402 - the load test's helpers
    _decido,
    _drive,
    _free_port,
    _request_bytes,
    _stop,
    _tree_cpu_seconds,
    _wait_up,
)

SPHERE = {"bounds": [[-5, 5], [-5, 5]], "objective_expression": "sum(x**2)",
          "max_evaluations": 100, "engine": "random"}
#: a run that lasts while the watchers watch: random search, 200 dimensions, 8 s
LONG = {"bounds": [[-5, 5]] * 200, "objective_expression": "sum(x**2)", "engine": "random",
        "max_evaluations": 50_000_000, "time_limit": 8}
BIG = 1_000_000_000
TIERS = {"enterprise": {"minute": BIG, "month": None, "max_runs": 100_000,
                        "max_time_limit": 600}}


@contextmanager
def server(db: Path | str, log: Path, env: dict[str, str], workers: int = 1) -> Iterator[int]:
    """``decido serve`` on ``db``; its port."""
    port = _free_port()
    full = {**os.environ, "DECIDO_TIERS": json.dumps(TIERS), **env}
    with open(log, "ab") as out:
        proc = subprocess.Popen([*_decido(), "serve", "--port", str(port), "--db", str(db),
                                 "--workers", str(workers)], stdout=out, stderr=out,
                                env=full, start_new_session=True)
    try:
        _wait_up(f"http://127.0.0.1:{port}/v1/health", proc)
        time.sleep(1.0)  # every worker up
        yield port
    finally:
        _stop(proc)


def pid_of(port: int) -> int:
    """The ``decido serve`` process listening on ``port`` (the root of its workers)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"serve" in cmd and str(port).encode() in cmd:
                return int(entry)
    raise RuntimeError(f"no server on {port}")


def new_key(db: Path | str) -> str:
    made = subprocess.run([*_decido(), "keys", "create",
                           "--create", "--plan", "enterprise", "--tier",
                           "enterprise", "--db", str(db), "--json"], capture_output=True,
                          text=True, check=True)
    return str(json.loads(made.stdout)["key"])


def call(port: int, method: str, path: str, key: str, body: Any = None) -> Any:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


def idle_cpu(root: int, seconds: float) -> float:
    """CPU seconds per second of an idle server."""
    before = _tree_cpu_seconds(root)
    time.sleep(seconds)
    return (_tree_cpu_seconds(root) - before) / seconds


# ------------------------------------------------------------------------- overhead
def overhead(tmp: Path, runs: int) -> dict[str, Any]:
    import decido

    start = time.process_time()
    for seed in range(runs):
        decido.minimize(SPHERE["objective_expression"], SPHERE["bounds"], engine="random",
                        max_evaluations=100, seed=seed)
    direct_ms = (time.process_time() - start) / runs * 1e3
    db = tmp / "overhead.db"
    with server(db, tmp / "overhead.log", {"DECIDO_RUN_THREADS": "2"}) as port:
        key = new_key(db)
        root = pid_of(port)
        idle = idle_cpu(root, 3.0)
        before, t0 = _tree_cpu_seconds(root), time.monotonic()
        ids = [call(port, "POST", "/v1/runs", key, {**SPHERE, "seed": s})["id"]
               for s in range(runs)]
        while call(port, "GET", "/v1/runs?state=queued&limit=1", key)["data"] or \
                call(port, "GET", "/v1/runs?state=running&limit=1", key)["data"]:
            time.sleep(0.05)
        elapsed = time.monotonic() - t0
        cpu = _tree_cpu_seconds(root) - before - idle * elapsed
        done = sum(1 for i in ids[-5:] if call(port, "GET", f"/v1/runs/{i}", key)["state"]
                   == "succeeded")
    per_run = cpu / runs * 1e3
    return {"runs": runs, "direct_ms": round(direct_ms, 3), "server_ms": round(per_run, 3),
            "added_ms": round(per_run - direct_ms, 3), "idle_cpu_per_s": round(idle, 4),
            "last_five_succeeded": done}


# ------------------------------------------------------------------------- watchers
async def _watch(port: int, path: str, key: str, out: list[bool]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\r\n"
                 .encode())
    got_final = False
    try:
        while line := await reader.readline():
            if line.startswith((b"event: result", b"event: error")):
                got_final = True
            if got_final and line.startswith(b"data:"):
                break
    finally:
        writer.close()
    out.append(got_final)


async def _watch_all(port: int, path: str, key: str, n: int) -> list[bool]:
    out: list[bool] = []
    await asyncio.gather(*(_watch(port, path, key, out) for _ in range(n)))
    return out


def watchers(tmp: Path, n: int) -> dict[str, Any]:
    db = tmp / "watch.db"
    env = {"DECIDO_RUN_THREADS": "1", "DECIDO_CONNECTIONS_PER_ADDRESS": "0"}
    with server(db, tmp / "watchers.log", env) as watch_port:
        with server(db, tmp / "runner.log", env) as run_port:
            key = new_key(db)
            root = pid_of(watch_port)
            idle = idle_cpu(root, 3.0)
            run = call(run_port, "POST", "/v1/runs", key, LONG)
            path = f"/v1/runs/{run['id']}/events"
            before, t0 = _tree_cpu_seconds(root), time.monotonic()
            finals = asyncio.run(_watch_all(watch_port, path, key, n))
            elapsed = time.monotonic() - t0
            cpu = _tree_cpu_seconds(root) - before - idle * elapsed
    return {"watchers": n, "seconds": round(elapsed, 2),
            "cpu_ms_per_watcher_second": round(cpu / n / elapsed * 1e3, 4),
            "idle_cpu_per_s": round(idle, 4), "got_final": sum(finals)}


# ------------------------------------------------------------------------- latency
async def _cancel_seen(watch_port: int, run_port: int, key: str, run_id: str) -> float:
    """Seconds from a cancel sent to the executing node until the watching node's
    stream carries the ``cancelled`` state."""
    reader, writer = await asyncio.open_connection("127.0.0.1", watch_port)
    writer.write(f"GET /v1/runs/{run_id}/events HTTP/1.1\r\nHost: x\r\n"
                 f"Authorization: Bearer {key}\r\n\r\n".encode())
    try:
        while not (await reader.readline()).startswith(b"event: progress"):
            pass
        loop = asyncio.get_running_loop()
        sent = time.monotonic()
        await loop.run_in_executor(None, call, run_port, "POST",
                                   f"/v1/runs/{run_id}/cancel", key)
        while line := await reader.readline():
            if line.startswith(b"data:") and b'"state":"cancelled"' in line:
                return time.monotonic() - sent
        raise RuntimeError("the stream ended without the cancelled state")
    finally:
        writer.close()


def latency(tmp: Path, store: str | None, repeats: int) -> dict[str, Any]:
    """A run executing on one node, watched on another, cancelled through the first:
    the delay until the watcher sees it (the run's node reads the flag, stops, writes;
    the watcher's node reads the row)."""
    db: Path | str = store or tmp / "latency.db"
    env = {"DECIDO_RUN_THREADS": "1"}
    with server(db, tmp / "watch-node.log", env) as watch_port:
        with server(db, tmp / "run-node.log", env) as run_port:
            key = new_key(db)
            delays = []
            for _ in range(repeats):
                run = call(run_port, "POST", "/v1/runs", key, LONG)
                delays.append(asyncio.run(_cancel_seen(watch_port, run_port, key, run["id"])))
    delays.sort()
    return {"store": "postgresql" if store else "sqlite", "repeats": repeats,
            "median_s": round(statistics.median(delays), 3), "max_s": round(delays[-1], 3),
            "min_s": round(delays[0], 3)}


# ------------------------------------------------------------------------- listing
def fill(db: Path, key_id: str, document: str, n: int) -> None:
    conn = sqlite3.connect(db)
    rows = ((f"run_{i:024x}", key_id, "2026-01-01T00:00:00Z", "random", 2, "max_evaluations",
             0.1, 100, 1.0, "minimize", i, "succeeded", document, "2026-01-01T00:00:01Z")
            for i in range(n))
    with conn:
        conn.executemany(
            "INSERT INTO runs (id, key_id, created_at, engine, dims, status, value, "
            "evaluations, elapsed_ms, goal, seed, state, document, finished_at) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    conn.close()


def listing(tmp: Path, stored: int, seconds: float, rounds: int) -> dict[str, Any]:
    db = tmp / "list.db"
    with server(db, tmp / "list.log", {}) as port:
        key = new_key(db)
        one = call(port, "POST", "/v1/runs", key, {**SPHERE, "seed": 1})
        while call(port, "GET", f"/v1/runs/{one['id']}", key)["state"] != "succeeded":
            time.sleep(0.05)
        conn = sqlite3.connect(db)
        key_id, document = conn.execute("SELECT key_id, document FROM runs").fetchone()
        conn.close()
        fill(db, key_id, document, stored)
        auth = {"Authorization": f"Bearer {key}"}
        deep = f"run_{stored // 2:024x}"
        targets = {"first page": "/v1/runs", "limit=100": "/v1/runs?limit=100",
                   "state=succeeded": "/v1/runs?state=succeeded",
                   "deep cursor": f"/v1/runs?starting_after={deep}"}
        latencies: dict[str, list[float]] = {name: [] for name in targets}
        for _ in range(rounds):  # interleaved: a busy moment of the machine hits them all
            for name, path in targets.items():
                res = asyncio.run(_drive(port, _request_bytes("GET", path, None, auth), 1,
                                         seconds))
                assert set(res["statuses"]) == {"200"}, res["statuses"]
                latencies[name] += res["latencies"]
        out = {}
        for name, lat in latencies.items():
            lat.sort()
            out[name] = {"requests": len(lat), "p50_ms": round(lat[len(lat) // 2] * 1e3, 3),
                         "p99_ms": round(lat[int(len(lat) * 0.99)] * 1e3, 3)}
    return {"stored": stored + 1, **out}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--watchers", type=int, default=200)
    ap.add_argument("--stored", type=int, default=100_000)
    ap.add_argument("--seconds", type=float, default=2.0, help="per listing target and round")
    ap.add_argument("--rounds", type=int, default=3, help="listing rounds")
    ap.add_argument("--only", choices=("overhead", "watchers", "latency", "listing"))
    ap.add_argument("--store", help="a postgresql:// URL for the latency measurement "
                                    "(default: two servers on one SQLite file)")
    ap.add_argument("--repeats", type=int, default=10, help="latency measurements")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="decido-runs-"))
    results: dict[str, Any] = {}
    if args.only in (None, "overhead"):
        results["overhead"] = overhead(tmp, args.runs)
    if args.only in (None, "watchers"):
        results["watchers"] = watchers(tmp, args.watchers)
    if args.only in (None, "latency"):
        results["latency"] = latency(tmp, args.store, args.repeats)
    if args.only in (None, "listing"):
        results["listing"] = listing(tmp, args.stored, args.seconds, args.rounds)
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    if "watchers" in results:
        w = results["watchers"]
        print(f"watchers: every one got the final event: {w['got_final'] == w['watchers']}")
    p99s = [v["p99_ms"] for k, v in results.get("listing", {}).items() if k != "stored"]
    if p99s:
        print(f"listing: worst p99 {max(p99s)} ms (median of the p99s "
              f"{statistics.median(p99s)} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
