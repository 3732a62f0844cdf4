"""Load on ``POST /v1/decide``: the PostgreSQL store beside the SQLite store, one node and
three nodes, measured in one run.

    python benchmarks/load/stores.py [--connections 32] [--seconds 3] [--rounds 3]
                                     [--workers 1] [--admin URL] [--json FILE]

Four set-ups run side by side: ``sqlite x1`` and ``sqlite x3`` (one SQLite file; three
nodes are three ``decido serve`` processes on it, as on one machine), ``postgresql x1``
and ``postgresql x3`` (a throwaway database on the server of ``--admin``, default the
local socket as ``postgres``, dropped afterwards). Each node has ``--workers`` worker
processes. One ``sdk`` key per set-up, its limits raised so nothing is refused. The
client is :mod:`run`'s closed-loop keep-alive client; with three nodes its connections
are spread over the nodes' ports. Rounds interleave the set-ups (so a burst of load from
elsewhere on a shared machine hits them alike); a set-up's admissions per second is the
median of its rounds. CPU per answered request, medians of the rounds: ``decido`` (the
nodes' worker processes, from ``/proc``), ``db`` (PostgreSQL's backend processes serving
the set-up's database, from ``/proc``: the database's own work, which SQLite does inside
the workers; its WAL writer and checkpointer are not counted) and ``total``; ``vs sqlite``
is ``total`` over SQLite's with as many nodes. The issue's goal: PostgreSQL's CPU per
decide request at most 1.5x SQLite's. Exit status 1 when an
answer was not a 200.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import (  # noqa: E402
    BIG,
    DECIDE,
    _connection,
    _decido,
    _free_port,
    _request_bytes,
    _stop,
    _tree_cpu_seconds,
    _wait_up,
)

ADMIN = "postgresql://postgres@/postgres?host=/var/run/postgresql"


def _admin(url: str, sql: str, *args: Any) -> list[Any]:
    import asyncpg

    async def go() -> list[Any]:
        conn = await asyncpg.connect(url)
        try:
            return list(await conn.fetch(sql, *args))
        finally:
            await conn.close()

    return asyncio.run(go())


def _proc_cpu(pids: list[int]) -> float:
    """User + system CPU seconds of ``pids`` (those still alive)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


class Setup:
    """``nodes`` servers on one store URL, and the key the load uses."""

    def __init__(self, name: str, url: str, nodes: int, workers: int, env: dict[str, str],
                 log: Any, database: str | None, admin: str) -> None:
        self.name, self.url, self.database, self.admin = name, url, database, admin
        self.ports = [_free_port() for _ in range(nodes)]
        self.procs = [subprocess.Popen([*_decido(), "serve", "--port", str(port), "--store",
                                        url, "--workers", str(workers)],
                                       stdout=log, stderr=log, env=env, start_new_session=True)
                      for port in self.ports]
        self.env = env
        self.key = ""

    def start(self) -> None:
        for port, proc in zip(self.ports, self.procs, strict=True):
            _wait_up(f"http://127.0.0.1:{port}/v1/health", proc)
        made = subprocess.run([*_decido(), "keys", "create",
                               "--create", "--plan", "sdk", "--tier", "team",
                               "--store", self.url, "--json"], capture_output=True, text=True,
                              check=True, env=self.env)
        self.key = json.loads(made.stdout)["key"]

    def db_pids(self) -> list[int]:
        if self.database is None:
            return []
        rows = _admin(self.admin, "SELECT pid FROM pg_stat_activity WHERE datname = $1",
                      self.database)
        return [int(r[0]) for r in rows]

    def stop(self) -> None:
        for proc in self.procs:
            _stop(proc)


async def _drive(ports: list[int], request: bytes, connections: int,
                 seconds: float) -> dict[str, Any]:
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    answered = [0]
    now = time.perf_counter()
    record_from, stop_at = now + 1.0, now + 1.0 + seconds
    await asyncio.gather(*(_connection(ports[i % len(ports)], request, stop_at, record_from,
                                       latencies, statuses, answered)
                           for i in range(connections)))
    return {"requests": len(latencies), "statuses": statuses, "answered": answered[0]}


def _measure(setup: Setup, connections: int, seconds: float) -> dict[str, Any]:
    request = _request_bytes("POST", "/v1/decide", DECIDE,
                             {"Authorization": f"Bearer {setup.key}"})
    db_pids = setup.db_pids()
    decido_before = sum(_tree_cpu_seconds(p.pid) for p in setup.procs)
    db_before = _proc_cpu(db_pids)
    out = asyncio.run(_drive(setup.ports, request, connections, seconds))
    decido_cpu = sum(_tree_cpu_seconds(p.pid) for p in setup.procs) - decido_before
    db_cpu = _proc_cpu(db_pids) - db_before
    n = max(out["answered"], 1)
    return {"admissions_per_s": out["requests"] / seconds, "statuses": out["statuses"],
            "decido_us": decido_cpu / n * 1e6, "db_us": db_cpu / n * 1e6}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=1, help="worker processes per node")
    ap.add_argument("--admin", default=ADMIN, help="PostgreSQL URL of a role that may "
                                                   "create databases")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="decido-stores-"))
    env = {**os.environ, "DECIDO_PLANS": json.dumps({"sdk": {"minute": BIG, "month": BIG}})}
    env.pop("DECIDO_DB", None)
    env.pop("DECIDO_STORE", None)
    databases = [f"decido_bench_{os.getpid()}_{uuid.uuid4().hex[:6]}_{n}" for n in (1, 3)]
    log = open(tmp / "servers.log", "wb")  # noqa: SIM115 - closed at the end
    setups: list[Setup] = []
    try:
        for name in databases:
            _admin(args.admin, f'CREATE DATABASE "{name}"')
        base = args.admin.split("?", 1)
        for label, url, nodes, database in (
                ("sqlite x1", f"sqlite:///{tmp / 'one.db'}", 1, None),
                ("sqlite x3", f"sqlite:///{tmp / 'three.db'}", 3, None),
                ("postgresql x1", base[0].rsplit("/", 1)[0] + f"/{databases[0]}?" + base[1],
                 1, databases[0]),
                ("postgresql x3", base[0].rsplit("/", 1)[0] + f"/{databases[1]}?" + base[1],
                 3, databases[1])):
            setups.append(Setup(label, url, nodes, args.workers, env, log, database,
                                args.admin))
        for setup in setups:
            setup.start()
        rounds: dict[str, list[dict[str, Any]]] = {s.name: [] for s in setups}
        for setup in setups:
            _measure(setup, args.connections, 0.5)  # warm-up
        for _ in range(args.rounds):
            for setup in setups:
                rounds[setup.name].append(_measure(setup, args.connections, args.seconds))
    finally:
        for setup in setups:
            setup.stop()
        log.close()
        for name in databases:
            _admin(args.admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return _report(rounds, args)


def _report(rounds: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> int:
    results: dict[str, dict[str, Any]] = {}
    for name, runs in rounds.items():
        statuses: dict[str, int] = {}
        for r in runs:
            for k, v in r["statuses"].items():
                statuses[str(k)] = statuses.get(str(k), 0) + v
        decido = statistics.median(r["decido_us"] for r in runs)
        db = statistics.median(r["db_us"] for r in runs)
        results[name] = {"admissions_per_s": statistics.median(r["admissions_per_s"]
                                                               for r in runs),
                         "decido_us": decido, "db_us": db, "total_us": decido + db,
                         "statuses": statuses}
    print(f"POST /v1/decide, {args.connections} connections, {args.rounds} rounds of "
          f"{args.seconds:g} s, {args.workers} worker(s) per node, {os.cpu_count()} CPUs")
    print(f"{'set-up':14} {'admit/s':>9} {'decido us':>10} {'db us':>7} {'total us':>9} "
          f"{'vs sqlite':>10}  statuses")
    for name, r in results.items():
        same = results[f"sqlite x{name.rsplit('x', 1)[1]}"]["total_us"]
        r["vs_sqlite"] = r["total_us"] / same if same else None
        print(f"{name:14} {r['admissions_per_s']:>9.0f} {r['decido_us']:>10.0f} "
              f"{r['db_us']:>7.0f} {r['total_us']:>9.0f} {r['vs_sqlite'] or 0:>10.2f}  "
              f"{r['statuses']}")
    ok = all(set(r["statuses"]) == {"200"} for r in results.values())
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
