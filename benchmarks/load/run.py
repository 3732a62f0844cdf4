"""Load test: decido's service beside a bare Sanic hello-world, measured in one run.

    python benchmarks/load/run.py [--connections 32] [--seconds 3] [--rounds 5] [--workers 2]
                                  [--json FILE] [--targets hello,decide,...]

Starts ``decido serve`` (temporary SQLite database) and ``benchmarks/load/hello.py`` with the
same number of workers on 127.0.0.1, creates an ``sdk`` key with the admin CLI (``decido
keys create --plan sdk --tier team``), then drives each target with a closed-loop HTTP/1.1
keep-alive client written on raw asyncio streams (uvloop when installed): ``connections``
connections, each sending its next request as soon as the previous answer is read, for
``seconds`` after a one-second warm-up. ``hello+hdr`` is the hello-world with the four
response headers every decido answer carries (a reference, not a floor), ``hello+enc`` the
same answer in decido's ``Response`` class (its cheaper header encoding: the one fast path
the service keeps, measured here against Sanic's). The targets are measured in ``rounds``
interleaved rounds (hello, hello+hdr, hello+enc, health, decide, optimize, hello, ...), so
that a burst of load from
elsewhere on a shared machine hits every target alike; a target's req/s is the median of
its rounds, its p50/p99 are over all its rounds' requests, and each ratio is of medians
(the per-round ratios' range is printed too). Targets: hello-world ``GET /``, ``GET /v1/health``,
``POST /v1/decide`` (5 options, 2 criteria, TOPSIS; ``decide-nolog``: the same with
``"log": false``) and ``POST /v1/optimize`` (sphere in 2 dimensions, dss); ``--targets``
picks some. Every request goes the whole way (key lookup, counters checked and
incremented in SQLite, access log); the run raises the plan's and tier's limits through
``DECIDO_PLANS``/``DECIDO_TIERS`` (``max_runs`` too) so that no request is refused,
and the run queue (``DECIDO_RUN_QUEUE``) to the number of connections so that no run is.
Reports req/s, p50 and p99 latency and the ratio to hello-world; beside them the CPU time
per answered request of the server's worker processes (``srv us``, from ``/proc``) and of
this client (``cli us``), and ``cpu vs``: hello-world's (server + client) CPU per request
over the target's, which is what the throughput ratio tends to when client and server
saturate the same cores, and which moves far less than req/s on a shared machine. It checks
the floors
(decide >= 35 % and health >= 80 % of hello-world throughput, p99 of decide < 20 ms).
Exit status 1 when a floor is missed, or when any answer was not a 200.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OPTIONS = [{"id": f"o{i}", "attributes": {"price": 10 + 3 * i, "quality": 5 + (i * 7) % 5}}
           for i in range(5)]
DECIDE = {"options": OPTIONS, "method": "topsis",
          "criteria": [{"attribute": "price", "goal": "minimize", "weight": 2},
                       {"attribute": "quality", "weight": 1}]}
OPTIMIZE = {"bounds": [[-5, 5], [-5, 5]], "objective_expression": "sum(x**2)", "seed": 1}
BIG = 1_000_000_000
#: the answer's framing, found by one search of its head: a loop over the header lines in
#: Python cost the client about 0.4 us per line, so targets with more response headers
#: paid for them in the client's CPU, which shares the cores with the server
_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*(\d+)", re.IGNORECASE)
#: name -> (server, method, path, body, needs the key), measured in this order
TARGETS: dict[str, tuple[str, str, str, Any, bool]] = {
    "hello": ("hello", "GET", "/", None, False),
    "hello+hdr": ("hello", "GET", "/headers", None, False),
    "hello+enc": ("hello", "GET", "/headers-encoded", None, False),
    "health": ("decido", "GET", "/v1/health", None, False),
    "decide": ("decido", "POST", "/v1/decide", DECIDE, True),
    "decide-nolog": ("decido", "POST", "/v1/decide", {**DECIDE, "log": False}, True),
    "optimize": ("decido", "POST", "/v1/optimize", OPTIMIZE, True),
}
FLOORS = {"health_ratio": 0.80, "decide_ratio": 0.35, "decide_p99_ms": 20.0}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _decido() -> list[str]:
    script = Path(sys.executable).with_name("decido")
    return [str(script)] if script.exists() else [sys.executable, "-m", "decido.cli"]


def _wait_up(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early ({proc.returncode})")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


def _stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _request_bytes(method: str, path: str, body: Any, headers: dict[str, str]) -> bytes:
    data = b"" if body is None else json.dumps(body).encode()
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    if body is not None:  # a GET without a body sends no Content-Length
        lines += [f"Content-Length: {len(data)}", "Content-Type: application/json"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


async def _connection(port: int, request: bytes, stop_at: float, record_from: float,
                      latencies: list[float], statuses: dict[int, int],
                      answered: list[int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while True:
            start = time.perf_counter()
            if start >= stop_at:
                return
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            framing = _CONTENT_LENGTH.search(head)
            await reader.readexactly(int(framing[1]) if framing else 0)
            end = time.perf_counter()
            answered[0] += 1
            if start >= record_from:
                latencies.append(end - start)
                statuses[status] = statuses.get(status, 0) + 1
    finally:
        writer.close()


def _tree_cpu_seconds(root: int) -> float:
    """User + system CPU seconds of ``root``'s descendants (the server's workers), read
    from ``/proc`` (0.0 where there is no ``/proc``)."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    children: dict[int, list[int]] = {}
    stats: dict[int, float] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        # fields[0] is the state; ppid, utime and stime are fields 4, 14, 15 of stat(5)
        children.setdefault(int(fields[1]), []).append(int(entry))
        stats[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    total, todo = 0.0, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        total += stats.get(pid, 0.0)
        todo.extend(children.get(pid, []))
    return total


def _combine(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One target's rounds: median req/s, p50/p99 over every request, statuses summed."""
    latencies = sorted(x for r in runs for x in r.pop("latencies"))
    n = len(latencies)
    statuses: dict[str, int] = {}
    for r in runs:
        for k, v in r["statuses"].items():
            statuses[k] = statuses.get(k, 0) + v
    return {
        "requests": n,
        "req_per_s": statistics.median(r["req_per_s"] for r in runs),
        "rounds_req_per_s": [r["req_per_s"] for r in runs],
        "p50_ms": round(latencies[n // 2] * 1e3, 3),
        "p99_ms": round(latencies[min(n - 1, int(n * 0.99))] * 1e3, 3),
        "statuses": dict(sorted(statuses.items())),
        "server_cpu_us": round(statistics.median(r["server_cpu_us"] for r in runs), 1),
        "client_cpu_us": round(statistics.median(r["client_cpu_us"] for r in runs), 1),
    }


async def _drive(port: int, request: bytes, connections: int, seconds: float) -> dict[str, Any]:
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    answered = [0]
    now = time.perf_counter()
    record_from, stop_at = now + 1.0, now + 1.0 + seconds
    await asyncio.gather(*(_connection(port, request, stop_at, record_from, latencies, statuses,
                                       answered)
                           for _ in range(connections)))
    return {
        "req_per_s": round(len(latencies) / seconds, 1),
        "latencies": latencies,
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "answered": answered[0],
    }


def _measure(server: subprocess.Popen, port: int, method: str, path: str, body: Any,
             headers: dict[str, str], connections: int, seconds: float) -> dict[str, Any]:
    """One round against one target; also the CPU time per answered request (warm-up
    included) of the server's worker processes and of this client."""
    try:
        import uvloop  # noqa: PLC0415 - optional, faster client

        uvloop.install()
    except ImportError:
        pass
    server_before = _tree_cpu_seconds(server.pid)
    client_before = resource.getrusage(resource.RUSAGE_SELF)
    out = asyncio.run(_drive(port, _request_bytes(method, path, body, headers), connections,
                             seconds))
    client_after = resource.getrusage(resource.RUSAGE_SELF)
    server_cpu = _tree_cpu_seconds(server.pid) - server_before
    client_cpu = (client_after.ru_utime - client_before.ru_utime
                  + client_after.ru_stime - client_before.ru_stime)
    n = max(out.pop("answered"), 1)
    out["server_cpu_us"] = server_cpu / n * 1e6
    out["client_cpu_us"] = client_cpu / n * 1e6
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=3.0, help="per target and round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--targets", help="a comma-separated subset of " + ",".join(TARGETS)
                    + " (default: all; hello always runs, the ratios are to it)")
    args = ap.parse_args(argv)
    unknown = set(args.targets.split(",")) - set(TARGETS) if args.targets else set()
    if unknown:
        ap.error(f"unknown targets {sorted(unknown)}; known: {', '.join(TARGETS)}")

    tmp = Path(tempfile.mkdtemp(prefix="decido-load-"))
    env = {**os.environ,
           "DECIDO_RUN_QUEUE": str(args.connections),  # every connection may wait for a run
           "DECIDO_PLANS": json.dumps({"sdk": {"minute": BIG, "month": BIG}}),
           "DECIDO_TIERS": json.dumps({"team": {"minute": BIG, "month": BIG,
                                                 "max_runs": args.connections}})}
    db = str(tmp / "decido.db")
    hello_port, decido_port = _free_port(), _free_port()
    log = open(tmp / "servers.log", "wb")  # noqa: SIM115 - closed at the end
    hello = subprocess.Popen([sys.executable, str(HERE / "hello.py"), str(hello_port),
                              str(args.workers)], stdout=log, stderr=log,
                             start_new_session=True)
    decido = subprocess.Popen([*_decido(), "serve", "--port", str(decido_port), "--db", db,
                               "--workers", str(args.workers)], stdout=log, stderr=log,
                              env=env, start_new_session=True)
    try:
        _wait_up(f"http://127.0.0.1:{hello_port}/", hello)
        _wait_up(f"http://127.0.0.1:{decido_port}/v1/health", decido)
        made = subprocess.run([*_decido(), "keys", "create",
                               "--create", "--plan", "sdk", "--tier", "team",
                               "--db", db, "--json", "--label", "load test"],
                              capture_output=True, text=True, check=True, env=env)
        key = json.loads(made.stdout)["key"]
        auth = {"Authorization": f"Bearer {key}"}
        c, s = args.connections, args.seconds
        servers = {"hello": (hello, hello_port), "decido": (decido, decido_port)}
        chosen = set(args.targets.split(",")) | {"hello"} if args.targets else set(TARGETS)
        targets = {name: (*servers[server], method, path, body, auth if needs_key else {})
                   for name, (server, method, path, body, needs_key) in TARGETS.items()
                   if name in chosen}
        rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in targets}
        for _ in range(args.rounds):
            for name, target in targets.items():
                rounds[name].append(_measure(*target, c, s))
        results = {name: _combine(runs) for name, runs in rounds.items()}
    finally:
        _stop(decido)
        _stop(hello)
        log.close()
    return _report(results, args)


def _report(results: dict[str, dict[str, Any]], args: argparse.Namespace) -> int:
    base = results["hello"]["req_per_s"]
    print(f"{args.connections} connections, {args.rounds} rounds of {args.seconds:g} s per "
          f"target, {args.workers} workers each, {os.cpu_count()} CPUs")
    print(f"{'target':10} {'req/s':>10} {'p50 ms':>9} {'p99 ms':>9} {'vs hello':>9} "
          f"{'per round':>11} {'srv us':>7} {'cli us':>7} {'cpu vs':>7}  statuses")
    hello_rounds = results["hello"]["rounds_req_per_s"]
    hello_cpu = results["hello"]["server_cpu_us"] + results["hello"]["client_cpu_us"]
    for name, r in results.items():
        r["ratio"] = round(r["req_per_s"] / base, 3) if base else None
        cpu = r["server_cpu_us"] + r["client_cpu_us"]
        r["cpu_ratio"] = round(hello_cpu / cpu, 3) if cpu else None
        per_round = [t / h for t, h in zip(r["rounds_req_per_s"], hello_rounds, strict=True)]
        spread = f"{min(per_round):.2f}-{max(per_round):.2f}"
        print(f"{name:10} {r['req_per_s']:>10.1f} {r['p50_ms']:>9.2f} {r['p99_ms']:>9.2f} "
              f"{r['ratio']:>9.2f} {spread:>11} {r['server_cpu_us']:>7.0f} "
              f"{r['client_cpu_us']:>7.0f} {r['cpu_ratio'] or 0:>7.2f}  {r['statuses']}")
    checks = {"only 200s": all(set(r["statuses"]) == {"200"} for r in results.values())}
    if "health" in results:
        checks["health >= 80% of hello"] = results["health"]["ratio"] >= FLOORS["health_ratio"]
    if "decide" in results:
        checks["decide >= 35% of hello"] = results["decide"]["ratio"] >= FLOORS["decide_ratio"]
        checks["decide p99 < 20 ms"] = results["decide"]["p99_ms"] < FLOORS["decide_p99_ms"]
    for name, ok in checks.items():
        print(f"  {'ok  ' if ok else 'MISS'} {name}")
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "checks": checks},
                                              indent=2) + "\n")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
