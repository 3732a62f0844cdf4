#!/usr/bin/env python3
"""Watchers of a run that never read their event stream: what they cost the worker.

A one-worker server runs a run whose request is about 1 MB (random search on 28,000
dimensions, up to 60 s); ``--watchers`` clients (each from its own loopback address, with a
4 KiB receive buffer) open ``GET /v1/runs/{id}/events`` and never read. Reported: the
worker's resident memory before and its peak while they hang on, how many streams the
server closed, and the health check's latency meanwhile (one client, a request every
50 ms).

Usage::

    python benchmarks/load/slow_watchers.py [--watchers 150] [--seconds 20]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import statistics
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from runs import call, new_key, pid_of, server

BIG_RUN = {"bounds": [[-5.123456789012, 5.123456789012]] * 28_000, "engine": "random",
           "objective_expression": "sum(x**2)", "max_evaluations": 50_000_000, "time_limit": 60}


def worker_pids(root: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{root}/task").iterdir():
        children = (task / "children").read_text().split()
        out += [int(c) for c in children]
    return out


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def health_latencies(port: int, stop: threading.Event, out: list[float]) -> None:
    while not stop.is_set():
        t0 = time.monotonic()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/health", timeout=60) as r:
            r.read()
        out.append((time.monotonic() - t0) * 1e3)
        time.sleep(0.05)


def measure(watchers: int, seconds: float) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "watch.db"
        env = {"DECIDO_CONNECTIONS_PER_ADDRESS": "0", "DECIDO_TIERS": json.dumps(
            {"enterprise": {"minute": 10**9, "month": None, "max_runs": 1000,
                            "max_dims": 100_000, "max_time_limit": 600}})}
        with server(db, Path(tmp) / "server.log", env) as port:
            key = new_key(db)
            # the worker: the largest child (the other is Sanic's state manager)
            worker = max(worker_pids(pid_of(port)), key=rss_mb)
            run = call(port, "POST", "/v1/runs", key, BIG_RUN)
            time.sleep(1.0)
            before = rss_mb(worker)
            head = (f"GET /v1/runs/{run['id']}/events HTTP/1.1\r\nHost: x\r\n"
                    f"Authorization: Bearer {key}\r\n\r\n").encode()
            socks = []
            for i in range(watchers):
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.bind((f"127.0.{1 + i // 250}.{1 + i % 250}", 0))
                s.connect(("127.0.0.1", port))
                s.sendall(head)
                socks.append(s)
            stop, latencies = threading.Event(), []
            probe = threading.Thread(target=health_latencies, args=(port, stop, latencies))
            probe.start()
            peak, t0 = before, time.monotonic()
            while time.monotonic() - t0 < seconds:
                peak = max(peak, rss_mb(worker))
                time.sleep(0.2)
            stop.set()
            probe.join()
            closed = 0
            for s in socks:
                s.setblocking(False)
                try:
                    while s.recv(1 << 20):
                        pass
                except BlockingIOError:
                    pass
                except OSError:
                    closed += 1
                else:
                    closed += 1
                s.close()
            with contextlib.suppress(urllib.error.HTTPError):  # 409 once it ended
                call(port, "POST", f"/v1/runs/{run['id']}/cancel", key)
    latencies.sort()
    return {"watchers": watchers, "seconds": seconds, "rss_before_mb": round(before, 1),
            "rss_peak_mb": round(peak, 1), "growth_mb": round(peak - before, 1),
            "streams_closed_by_server": closed,
            "health_p50_ms": round(statistics.median(latencies), 1),
            "health_p99_ms": round(latencies[int(0.99 * (len(latencies) - 1))], 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--watchers", type=int, default=150)
    ap.add_argument("--seconds", type=float, default=20.0)
    args = ap.parse_args()
    print(json.dumps(measure(args.watchers, args.seconds)))


if __name__ == "__main__":
    main()
