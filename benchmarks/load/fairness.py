#!/usr/bin/env python3
"""What one key's heavy use costs another key: webhook deliveries and SMAA decisions.

``webhooks``: a one-worker server delivering to loopback; one key has 5 endpoints on a
receiver that accepts every connection and never answers, and sends 16 test events to each
(80 deliveries, each attempt holding its slot for the 15 s timeout); meanwhile another key
sends a test event to a receiver that answers at once, ``--rounds`` times, one after the
other, and asks ``/v1/health`` every 50 ms for 20 s. Reported: the seconds from each of its
sends to its arrival (median, max) and the health latencies (p50, p99, max).

``smaa``: a one-worker server; ``--clients`` free keys each send decisions under
uncertainty of 100,000 samples x ``--options`` options x 1 criterion (500: 50,000,000
sampled values, the library's maximum; 10: the free plan's cap), back to back, for
``--seconds``; another key asks ``/v1/health`` and sends a ``/v1/decide`` of 120 options
(a body above 4 KiB, decided in the worker's decision threads) every 50 ms. Reported:
their latencies (p50, p99, max) and the SMAA answers by status.

Usage::

    python benchmarks/load/fairness.py webhooks [--rounds 5]
    python benchmarks/load/fairness.py smaa [--clients 2] [--options 500] [--seconds 20]

Put another checkout first on ``PYTHONPATH`` to measure its service instead.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from runs import _decido, server

#: a decision of 120 options (a body above 4 KiB: decided in the worker's decision threads)
LARGE = {"options": [{"id": f"o{i}", "attributes": {"p": i + 1.0, "q": 200.0 - i}}
                     for i in range(120)],
         "method": "topsis", "criteria": [{"attribute": "p", "goal": "minimize"},
                                          {"attribute": "q"}]}


def smaa_body(options: int) -> dict[str, Any]:
    """100,000 samples x ``options`` options x 1 criterion."""
    return {"options": [{"id": f"o{i}", "attributes": {"c": {"low": i + 1.0,
                                                             "high": i + 3.0}}}
                        for i in range(options)],
            "method": "wsm", "criteria": [{"attribute": "c"}],
            "uncertainty": {"samples": 100_000, "seed": 1}}


def key(db: Path, plan: str = "free", tier: str = "pro") -> str:
    made = subprocess.run([*_decido(), "keys", "create", "--create", "--plan", plan, "--tier", tier,
                           "--db", str(db), "--json"], capture_output=True, text=True,
                          check=True)
    return str(json.loads(made.stdout)["key"])


def call(port: int, method: str, path: str, secret: str, body: Any = None
         ) -> tuple[int, Any]:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {secret}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=300) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


# ------------------------------------------------------------------------- webhooks
class _Silent:
    """Accepts every connection and never answers."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=512)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.held.append(self.sock.accept()[0])
            except OSError:
                return


def webhooks(rounds: int) -> dict[str, Any]:
    arrived: dict[str, float] = {}

    class Answer(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("content-length", 0)))
            arrived[self.headers.get("webhook-id", "")] = time.monotonic()
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    answer = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=answer.serve_forever, daemon=True).start()
    silent = _Silent()
    env = {"DECIDO_WEBHOOK_ALLOW_NETWORKS": "127.0.0.0/8", "DECIDO_WEBHOOK_SCHEDULE": "0"}
    waits = []
    health: list[float] = []
    stop = threading.Event()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "hooks.db"
        with server(db, Path(tmp) / "server.log", env) as port:
            noisy, calm = key(db, tier="enterprise"), key(db, tier="enterprise")

            def watch_health() -> None:
                while not stop.is_set():
                    start = time.monotonic()
                    assert call(port, "GET", "/v1/health", calm)[0] == 200
                    health.append((time.monotonic() - start) * 1e3)
                    time.sleep(0.05)

            watcher = threading.Thread(target=watch_health)
            watcher.start()
            hooks = [call(port, "POST", "/v1/webhooks", noisy, {
                "url": f"http://127.0.0.1:{silent.port}/h{i}", "events": ["*"]})[1]["id"]
                for i in range(5)]
            noisy_sent = time.monotonic()
            for _ in range(16):
                for hook in hooks:
                    call(port, "POST", f"/v1/webhooks/{hook}/test", noisy)
            time.sleep(1.0)
            mine = call(port, "POST", "/v1/webhooks", calm, {
                "url": f"http://127.0.0.1:{answer.server_address[1]}/", "events": ["*"]}
                )[1]["id"]
            for _ in range(rounds):
                sent = time.monotonic()
                delivery = call(port, "POST", f"/v1/webhooks/{mine}/test", calm)[1]["id"]
                while delivery not in arrived and time.monotonic() - sent < 300:
                    time.sleep(0.01)
                waits.append(arrived.get(delivery, float("inf")) - sent)
            # health is watched until the first noisy attempts have held their slots for
            # the whole 15 s timeout and the next ones have started
            time.sleep(max(0.0, 20.0 - (time.monotonic() - noisy_sent)))
            stop.set()
            watcher.join()
    answer.shutdown()
    return {"scenario": "webhooks", "noisy_deliveries": 80, "rounds": rounds,
            "calm_wait_s_median": round(statistics.median(waits), 3),
            "calm_wait_s_max": round(max(waits), 3), "health_ms": _percentiles(health)}


# ------------------------------------------------------------------------- smaa
def _percentiles(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    return {"p50": round(statistics.median(values), 1),
            "p99": round(values[int(0.99 * (len(values) - 1))], 1),
            "max": round(values[-1], 1), "n": len(values)}


def smaa(clients: int, options: int, seconds: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "smaa.db"
        env = {"DECIDO_PLANS": json.dumps({"free": {"minute": 10**6, "month": None}})}
        with server(db, Path(tmp) / "server.log", env) as port:
            heavy = [key(db) for _ in range(clients)]
            light = key(db, plan="enterprise")
            body = smaa_body(options)
            stop = threading.Event()
            statuses: Counter[int] = Counter()

            def hammer(secret: str) -> None:
                while not stop.is_set():
                    statuses[call(port, "POST", "/v1/decide", secret, body)[0]] += 1

            health: list[float] = []
            decide: list[float] = []
            threads = [threading.Thread(target=hammer, args=(k,)) for k in heavy]
            for t in threads:
                t.start()
            t0 = time.monotonic()
            while time.monotonic() - t0 < seconds:
                for path, sent, out in (("/v1/health", None, health),
                                        ("/v1/decide", LARGE, decide)):
                    start = time.monotonic()
                    status, _ = call(port, "GET" if sent is None else "POST", path, light,
                                     sent)
                    assert status == 200, status
                    out.append((time.monotonic() - start) * 1e3)
                time.sleep(0.05)
            stop.set()
            for t in threads:
                t.join()
    return {"scenario": "smaa", "clients": clients, "sampled_values": 100_000 * options,
            "seconds": seconds,
            "smaa_statuses": dict(statuses), "health_ms": _percentiles(health),
            "small_decide_ms": _percentiles(decide)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario", choices=("webhooks", "smaa"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--options", type=int, default=500)
    ap.add_argument("--seconds", type=float, default=20.0)
    args = ap.parse_args()
    out = webhooks(args.rounds) if args.scenario == "webhooks" else smaa(
        args.clients, args.options, args.seconds)
    print(json.dumps(out))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
