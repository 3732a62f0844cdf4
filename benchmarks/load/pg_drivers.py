"""Admission throughput of the PostgreSQL drivers: asyncpg against psycopg 3 (async).

    python benchmarks/load/pg_drivers.py [--admin URL] [--tasks 4] [--batch 1,16]
                                         [--seconds 3] [--rounds 3]

What the PostgreSQL store does for one group-commit batch, done by both drivers the same
way on a throwaway database (created on the server of ``--admin``, default the local
socket as ``postgres``, dropped afterwards): ``BEGIN``; the ``SELECT`` of the keys'
revocations; the ``INSERT ... ON CONFLICT DO UPDATE ... RETURNING`` of the batch's
counters (two per admission: a minute and a month counter of one key); ``COMMIT``.
``tasks`` concurrent tasks (a worker process's group commit each has one transaction in
flight), each on its own connection and its own key, loop for ``seconds``; rounds
alternate the drivers. ``pipeline`` is psycopg sending ``BEGIN``, the ``SELECT`` and the
UPSERT in one round trip. ``store`` is the real
:meth:`Admissions.admit_many <decido_service.store.admissions.Admissions.admit_many>`
(asyncpg, its pool, the judging in Python). Reports admissions per second (median of the
rounds) and this process's CPU time per admission (the driver's cost; the server's is
the same SQL for all). psycopg is not a dependency: ``pip install 'psycopg[binary]'`` to
compare.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "service"))

from decido_service.store import (  # noqa: E402
    AdmissionRequest,
    CounterSpec,
    Store,
    window_bounds,
)
from decido_service.store.admissions import _keys_sql, _upsert_sql  # noqa: E402
from decido_service.store.dialect import numbered  # noqa: E402
from decido_service.store.postgres import PostgresDatabase  # noqa: E402

#: the statements of the store's admission of one key's batch (its minute and month rows)
_REVOCATIONS, _UPSERT = numbered(_keys_sql(1)), numbered(_upsert_sql(2))

ADMIN = "postgresql://postgres@/postgres?host=/var/run/postgresql"
NOW = 1_750_000_000.0


def _percent(sql: str) -> str:
    """asyncpg's ``$1, $2, ...`` placeholders (in order) as psycopg's ``%s``."""
    return re.sub(r"\$\d+", "%s", sql)


def _batch_args(key: str, batch: int) -> list[Any]:
    """The UPSERT's arguments for ``batch`` admissions of ``key`` (minute + month rows)."""
    minute, month = window_bounds("minute", NOW), window_bounds("month", NOW)
    return ["d.minute", key, "minute", *minute, batch, "d.month", key, "month", *month, batch]


async def psycopg_loop(url: str, key: str, batch: int, until: float) -> int:
    import psycopg

    conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
    args = _batch_args(key, batch)
    revocations, upsert = _percent(_REVOCATIONS), _percent(_UPSERT)
    n = 0
    try:
        while time.monotonic() < until:
            await conn.execute("BEGIN")
            cur = await conn.execute(revocations, [key])
            await cur.fetchall()
            cur = await conn.execute(upsert, args)
            await cur.fetchall()
            await conn.execute("COMMIT")
            n += batch
    finally:
        await conn.close()
    return n


async def pipeline_loop(url: str, key: str, batch: int, until: float) -> int:
    """psycopg in pipeline mode: ``BEGIN``, the ``SELECT`` and the UPSERT in one round trip,
    then the ``COMMIT``."""
    import psycopg

    conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
    args = _batch_args(key, batch)
    revocations, upsert = _percent(_REVOCATIONS), _percent(_UPSERT)
    n = 0
    try:
        while time.monotonic() < until:
            async with conn.pipeline() as pipeline:
                await conn.execute("BEGIN")
                revoked = await conn.execute(revocations, [key])
                cur = await conn.execute(upsert, args)
                await pipeline.sync()
                await revoked.fetchall()
                await cur.fetchall()
            await conn.execute("COMMIT")
            n += batch
    finally:
        await conn.close()
    return n


async def asyncpg_loop(url: str, key: str, batch: int, until: float) -> int:
    import asyncpg

    conn = await asyncpg.connect(url)
    args = _batch_args(key, batch)
    n = 0
    try:
        while time.monotonic() < until:
            async with conn.transaction():
                await conn.fetch(_REVOCATIONS, key)
                await conn.fetch(_UPSERT, *args)
            n += batch
    finally:
        await conn.close()
    return n


def store_runner(store: Store) -> Callable[[str, str, int, float], Awaitable[int]]:
    async def loop(url: str, key: str, batch: int, until: float) -> int:
        specs = [CounterSpec("d.minute", key, "minute", None), CounterSpec("d.month", key,
                                                                           "month", None)]
        requests = [AdmissionRequest(specs, NOW, key)] * batch
        n = 0
        while time.monotonic() < until:
            await store.admissions.admit_many(requests)
            n += batch
        return n
    return loop


async def measure(loop: Callable[[str, str, int, float], Awaitable[int]], url: str,
                  keys: list[str], batch: int, seconds: float) -> tuple[float, float]:
    """(admissions per second, client CPU microseconds per admission)."""
    cpu0, t0 = time.process_time(), time.monotonic()
    counts = await asyncio.gather(*(loop(url, k, batch, t0 + seconds) for k in keys))
    cpu, wall = time.process_time() - cpu0, time.monotonic() - t0
    total = sum(counts)
    return total / wall, cpu / total * 1e6


async def _admin(url: str, sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def main(args: argparse.Namespace) -> int:
    name = f"decido_bench_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    await _admin(args.admin, f'CREATE DATABASE "{name}"')
    url = args.admin.replace("/postgres?", f"/{name}?", 1)
    try:
        database = PostgresDatabase(url + f"&pool_max={args.tasks}&pool_min={args.tasks}")
        await database.migrate()
        store = Store(database)
        keys = []
        for _ in range(args.tasks):
            record, _ = await store.accounts.create_key("sdk", "team")
            keys.append(record["id"])
        drivers: dict[str, Callable[[str, str, int, float], Awaitable[int]]] = {
            "asyncpg": asyncpg_loop, "store": store_runner(store)}
        try:
            import psycopg  # noqa: F401

            drivers.update({"psycopg": psycopg_loop, "pipeline": pipeline_loop})
        except ImportError:
            print("psycopg is not installed: asyncpg only (pip install 'psycopg[binary]')")
        for batch in args.batch:
            results: dict[str, list[tuple[float, float]]] = {d: [] for d in drivers}
            await measure(asyncpg_loop, url, keys, batch, 0.5)  # warm-up
            for _ in range(args.rounds):
                for driver, loop in drivers.items():
                    results[driver].append(await measure(loop, url, keys, batch, args.seconds))
            print(f"batch {batch}, {args.tasks} tasks, {args.rounds} rounds of "
                  f"{args.seconds:g} s")
            for driver, rows in results.items():
                rate = statistics.median(r[0] for r in rows)
                cpu = statistics.median(r[1] for r in rows)
                print(f"  {driver:8s} {rate:10.0f} admissions/s  {cpu:7.1f} us client CPU "
                      "per admission")
        await store.close()
    finally:
        await _admin(args.admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--admin", default=ADMIN)
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--batch", type=lambda s: [int(x) for x in s.split(",")],
                        default=[1, 16])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    sys.exit(asyncio.run(main(parser.parse_args())))
