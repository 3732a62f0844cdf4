"""SQLite store across processes: exact limits under a race, durability across SIGKILL.

Children are fresh interpreters (``subprocess`` + ``sys.executable``) that import the same
``decido_service`` as this test; every child is waited for with a timeout and killed if late.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import decido_service
from decido_service.store import CounterSpec
from decido_service.store.blocking import open_blocking

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

NOW = 1_750_000_000.0
TIMEOUT = 60


def _env() -> dict[str, str]:
    env = dict(os.environ)
    package_root = str(Path(decido_service.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    return env


def _spawn(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=_env(),
    )


def _reap(procs: list[subprocess.Popen[str]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=TIMEOUT)
        for stream in (p.stdin, p.stdout, p.stderr):
            if stream:
                stream.close()


RACER = """
    import sys
    from decido_service.store import CounterSpec
    from decido_service.store.blocking import open_blocking
    db, limit, attempts, amount = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    store = open_blocking(db)
    specs = [CounterSpec("race.month", "k", "month", limit, amount),
             CounterSpec("race.all", "k", "month", None, amount),
             CounterSpec("race.minute", "k", "minute", 10**9, 1)]
    store.admissions.peek(specs, now={now})          # connection open before the start signal
    print("ready", flush=True)
    sys.stdin.readline()                  # the barrier: every child starts at once
    admitted = sum(store.admit(specs, now={now}).admitted for _ in range(attempts))
    store.close()
    print(admitted, flush=True)
""".replace("{now}", repr(NOW))


@pytest.mark.parametrize(("procs_n", "attempts", "limit", "amount"),
                         [(8, 25, 50, 1), (8, 25, 50, 3)])
def test_exact_limit_across_processes(tmp_path: Path, procs_n: int, attempts: int, limit: int,
                                      amount: int) -> None:
    db = str(tmp_path / "race.db")
    open_blocking(db).close()  # create + migrate once, as the server's main process does
    procs = [_spawn(RACER, db, str(limit), str(attempts), str(amount)) for _ in range(procs_n)]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        counts = []
        for p in procs:
            out, err = p.communicate(timeout=TIMEOUT)
            assert p.returncode == 0, err
            counts.append(int(out.strip()))
    finally:
        _reap(procs)
    expected = limit // amount  # admissions that fit: used never exceeds the limit
    assert sum(counts) == expected
    with open_blocking(db) as store:
        month, total, minute = store.admissions.peek(
            [CounterSpec("race.month", "k", "month", limit, 0),
             CounterSpec("race.all", "k", "month", None, 0),
             CounterSpec("race.minute", "k", "minute", None, 0)], now=NOW)
    assert month.used == expected * amount
    assert total.used == expected * amount  # refused requests counted nowhere (all-or-nothing)
    assert minute.used == expected


SELF_KILL = """
    import json, os, signal, sys
    from decido_service.store import CounterSpec
    from decido_service.store.blocking import open_blocking
    from decido_service.types import Budget, OptimizeRequest, RunDocument
    store = open_blocking(sys.argv[1])
    record, secret = store.accounts.create_key("sdk", "pro", "durable")
    document = RunDocument(request=OptimizeRequest(), budget=Budget(max_evaluations=1,
                                                                    time_limit=1.0))
    store.runs.record({"id": "run-1", "key_id": record["id"], "engine": "dss", "dims": 2,
                       "document": document})
    print(json.dumps({"id": record["id"], "secret": secret}), flush=True)
    result = store.admit([CounterSpec("decide.month", record["id"], "month", 10, 3)], now={now})
    assert result.admitted
    os.kill(os.getpid(), signal.SIGKILL)   # right after admit returned: no close, no atexit
""".replace("{now}", repr(NOW))


def test_admitted_usage_survives_sigkill(tmp_path: Path) -> None:
    db = str(tmp_path / "durable.db")
    proc = _spawn(SELF_KILL, db)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        _reap([proc])
    assert proc.returncode == -signal.SIGKILL, err
    made = json.loads(out.splitlines()[0])
    with open_blocking(db) as store:
        key = store.accounts.find_key(made["secret"])
        assert key is not None and key["id"] == made["id"]
        month = CounterSpec("decide.month", made["id"], "month", 10, 0)
        state = store.admissions.peek([month], now=NOW)[0]
        assert state.used == 3
        assert [r.id for r in store.runs.page(made["id"], 100)] == ["run-1"]


LOOPER = """
    import sys
    from decido_service.store import CounterSpec
    from decido_service.store.blocking import open_blocking
    store = open_blocking(sys.argv[1])
    spec = [CounterSpec("decide.minute", "k", "minute", None, 1)]
    while True:
        used = store.admit(spec, now={now}).counters[0].used
        print(used, flush=True)            # "the response": sent only after the commit
""".replace("{now}", repr(NOW))


def test_every_reported_admission_survives_external_sigkill(tmp_path: Path) -> None:
    db = str(tmp_path / "loop.db")
    open_blocking(db).close()
    proc = _spawn(LOOPER, db)
    try:
        seen = [int(proc.stdout.readline()) for _ in range(50)]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=TIMEOUT)
    finally:
        _reap([proc])
    assert seen == list(range(1, 51))
    with open_blocking(db) as store:
        minute = CounterSpec("decide.minute", "k", "minute", None, 0)
        used = store.admissions.peek([minute], now=NOW)[0].used
    assert used >= seen[-1]  # every admission the child reported is on disk


FRESH_OPEN = """
    import sys
    from decido_service.store import CounterSpec
    from decido_service.store.blocking import open_blocking
    print("ready", flush=True)
    sys.stdin.readline()
    store = open_blocking(sys.argv[1])       # every child creates/migrates the same new file
    store.admit([CounterSpec("open.minute", "k", "minute", None, 1)], now={now})
    store.close()
    print("ok", flush=True)
""".replace("{now}", repr(NOW))


@pytest.mark.parametrize("round_", range(2))
def test_workers_opening_a_new_file_together(tmp_path: Path, round_: int) -> None:
    db = str(tmp_path / f"fresh{round_}.db")
    procs = [_spawn(FRESH_OPEN, db) for _ in range(8)]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        for p in procs:
            out, err = p.communicate(timeout=TIMEOUT)
            assert (p.returncode, out.strip()) == (0, "ok"), err
    finally:
        _reap(procs)
    with open_blocking(db) as store:
        assert store.admissions.peek([CounterSpec("open.minute", "k", "minute", None, 0)],
                          now=NOW)[0].used == 8
