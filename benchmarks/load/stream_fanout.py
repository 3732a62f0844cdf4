#!/usr/bin/env python3
"""What many event-stream watchers cost every other request: ``/v1/health`` latency
while ``--watchers`` SSE clients spread over ``--keys`` keys watch running runs (issue 38:
1,200 watchers over 5 keys took health p50 to 2 s).

One server (``--workers``, SQLite) executes one long run per key (random search, 200
dimensions, as long as the measurement); the watchers (one connection each, reading
every event) are opened over all the runs, then one client asks ``/v1/health`` in a
closed loop for ``--seconds``: its p50/p99/max, how many watchers the server took (200)
and how many it refused (503 ``overloaded``: the worker's cap, ``DECIDO_WORKER_STREAMS``;
``--worker-streams 0`` removes it, as before the cap).

Usage::

    python benchmarks/load/stream_fanout.py [--watchers 1200] [--keys 5] [--seconds 15]
        [--workers 1] [--worker-streams N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runs import call, new_key, server  # noqa: E402 - the load test's helpers


async def _watch(port: int, path: str, key: str, status: list[int],
                 stop: asyncio.Event, open_now: list[int]) -> None:
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        status.append(-1)  # refused at connect (a full backlog)
        return
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\r\n"
                 .encode())
    answered = streaming = False
    try:
        head = await reader.readline()
        status.append(int(head.split()[1]) if head else 0)
        answered = True
        streaming = status[-1] == 200
        open_now[0] += streaming
        while streaming and not stop.is_set():
            try:
                if not await asyncio.wait_for(reader.read(65536), 0.5):
                    break
            except asyncio.TimeoutError:
                continue
    except OSError:
        if not answered:
            status.append(-1)  # reset before its answer
    finally:
        open_now[0] -= streaming
        writer.close()


async def _health(port: int, seconds: float) -> list[float]:
    out: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.monotonic()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        await reader.read()
        writer.close()
        out.append((time.monotonic() - t0) * 1e3)
        await asyncio.sleep(0.02)
    return out


async def _measure(port: int, paths: list[tuple[str, str]], watchers: int,
                   seconds: float) -> dict[str, object]:
    stop = asyncio.Event()
    status: list[int] = []
    open_now = [0]  # streams (200) the server has not ended
    tasks = []
    for i in range(watchers):
        path, key = paths[i % len(paths)]
        tasks.append(asyncio.ensure_future(_watch(port, path, key, status, stop, open_now)))
        if i % 50 == 49:
            await asyncio.sleep(0.05)
    deadline = time.monotonic() + 120
    while len(status) < watchers and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    await asyncio.sleep(1.0)
    open_before = open_now[0]
    latencies = await _health(port, seconds)
    open_after = open_now[0]
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    latencies.sort()
    return {"watchers": watchers, "accepted": status.count(200),
            "refused_503": status.count(503), "refused_429": status.count(429),
            "failed": watchers - status.count(200) - status.count(503) - status.count(429),
            "open_at_start": open_before, "open_at_end": open_after,
            "health_requests": len(latencies),
            "health_p50_ms": round(statistics.median(latencies), 1),
            "health_p99_ms": round(latencies[int(len(latencies) * 0.99) - 1], 1),
            "health_max_ms": round(latencies[-1], 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--watchers", type=int, default=1200)
    ap.add_argument("--keys", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--worker-streams", type=int, default=None,
                    help="DECIDO_WORKER_STREAMS (default: the service's; 0: no cap)")
    args = ap.parse_args(argv)
    env = {"DECIDO_RUN_THREADS": str(args.keys), "DECIDO_CONNECTIONS_PER_ADDRESS": "0",
           "DECIDO_TIERS": json.dumps({"enterprise": {
               "minute": 10**9, "month": None, "max_runs": 100_000, "max_time_limit": 600,
               "max_streams": 100_000}})}
    if args.worker_streams is not None:
        env["DECIDO_WORKER_STREAMS"] = str(args.worker_streams)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "fanout.db"
        with server(db, Path(tmp) / "server.log", env, workers=args.workers) as port:
            paths = []
            for _ in range(args.keys):
                key = new_key(db)
                run = call(port, "POST", "/v1/runs", key, {
                    "bounds": [[-5, 5]] * 200, "objective_expression": "sum(x**2)",
                    "engine": "random", "max_evaluations": 50_000_000,
                    "time_limit": 600})  # the runs outlast the measurement
                paths.append((f"/v1/runs/{run['id']}/events", key))
            result = asyncio.run(_measure(port, paths, args.watchers, args.seconds))
    print(json.dumps({**vars(args), **result}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
