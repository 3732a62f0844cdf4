"""SQLite store: schema and migrations, keys, counters (single process), runs, URLs."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest
from test_store_contract import DOCUMENT

from decido_service import keys
from decido_service.store import (
    Admission,
    AdmissionRequest,
    CounterSpec,
    DecisionEntry,
    Store,
    StoreError,
    open_store,
    schema,
)
from decido_service.store.blocking import BlockingStore, open_blocking
from decido_service.store.schema import MIGRATIONS
from decido_service.store.sqlite import SQLiteDatabase, parse_sqlite_url

NOW = 1_750_000_000.0  # 2025-06-15T15:06:40Z


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "decido.db"


@pytest.fixture
def store(db: Path):
    s = open_blocking(str(db), clock=lambda: NOW)
    yield s
    s.close()


# ---------------------------------------------------------------- schema


def test_open_store_is_an_async_store_off_the_event_loop(db: Path) -> None:
    async def scenario() -> None:
        store = await open_store(str(db))
        try:
            assert isinstance(store, Store)
            assert await store.ping()
            record, secret = await store.accounts.create_key("free", "pro", "async")
            assert (await store.accounts.find_key(secret))["id"] == record["id"]
            loop_thread = threading.get_ident()
            database = store.database
            assert isinstance(database, SQLiteDatabase)
            seen = await asyncio.get_running_loop().run_in_executor(
                database._writer, threading.get_ident)
            assert seen != loop_thread  # the blocking calls run in the store's threads
            spec = CounterSpec("t.minute", record["id"], "minute", 1, 1)
            first, second = await store.admissions.admit_many([AdmissionRequest([spec], NOW),
                                                    AdmissionRequest([spec], NOW)])
            assert (first.admitted, second.admitted) == (True, False)
            assert (await store.admissions.peek([spec], NOW))[0].used == 1
        finally:
            await store.close()

    asyncio.run(scenario())


def test_a_slow_read_does_not_hold_up_the_reads_behind_it(db: Path) -> None:
    """Reads run side by side (several read threads): a key's usage is read while a long
    read (a page that reads many rows, here a query counting to ten million) is still
    going."""
    slow_sql = ("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c"
                " WHERE n < 10000000) SELECT count(*) FROM c")

    async def scenario() -> None:
        store = await open_store(str(db))
        try:
            record, _ = await store.accounts.create_key("free", "pro", "reader")
            spec = CounterSpec("t.minute", record["id"], "minute", 5, 1)
            slow = asyncio.ensure_future(store.database.read(lambda tx: tx.fetch(slow_sql)))
            await asyncio.sleep(0.1)  # the slow read has started
            assert not slow.done()
            for _ in range(3):
                assert (await store.admissions.peek([spec], NOW))[0].used == 0
            assert not slow.done()  # the quick reads were answered while it ran
            assert (await slow)[0][0] == 10_000_000
        finally:
            await store.close()

    asyncio.run(scenario())


def test_open_store_without_create_names_the_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.db"
    with pytest.raises(StoreError, match="nowhere.db"):
        asyncio.run(open_store(str(missing), create=False))
    assert not missing.exists()


def test_database_is_in_wal_mode(store: BlockingStore, db: Path) -> None:
    assert store.run(store.store.ping())
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"schema_version", "keys", "counters", "runs"} <= tables


def test_migrate_is_idempotent_and_versioned(store: BlockingStore, db: Path) -> None:
    database = store.store.database
    assert isinstance(database, SQLiteDatabase)
    store.run(database.migrate())
    store.run(database.migrate())
    assert store.run(database.schema_version()) == len(MIGRATIONS)
    with sqlite3.connect(db) as raw:
        rows = raw.execute("SELECT version FROM schema_version ORDER BY version").fetchall()
    assert [r[0] for r in rows] == list(range(1, len(MIGRATIONS) + 1))


def _version(s: BlockingStore) -> int:
    database = s.store.database
    assert isinstance(database, SQLiteDatabase)
    return s.run(database.schema_version())


def test_new_migration_is_applied_once(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    open_blocking(str(db)).close()
    note = ("ALTER TABLE keys ADD COLUMN note TEXT",)
    monkeypatch.setattr(schema, "MIGRATIONS", [*MIGRATIONS, note])
    with open_blocking(str(db)) as s:
        assert _version(s) == len(MIGRATIONS) + 1
    open_blocking(str(db)).close()  # nothing left to apply: the column is not added twice
    with sqlite3.connect(db) as raw:
        cols = [r[1] for r in raw.execute("PRAGMA table_info(keys)")]
        versions = [r[0] for r in raw.execute("SELECT version FROM schema_version")]
    assert "note" in cols and versions == list(range(1, len(MIGRATIONS) + 2))


def test_failed_migration_rolls_back(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    open_blocking(str(db)).close()
    bad = ("CREATE TABLE half (x)", "SELECT no_such_column FROM keys")
    monkeypatch.setattr(schema, "MIGRATIONS", [*MIGRATIONS, bad])
    with pytest.raises(StoreError, match="no_such_column"):
        open_blocking(str(db))
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT name FROM sqlite_master WHERE name='half'").fetchone() is None
        assert raw.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == len(
            MIGRATIONS
        )


def test_newer_schema_is_refused(db: Path) -> None:
    open_blocking(str(db)).close()
    with sqlite3.connect(db) as raw:
        raw.execute("INSERT INTO schema_version VALUES (999, 'future')")
    with pytest.raises(StoreError, match="newer"):
        open_blocking(str(db))


def test_concurrent_migrations_from_threads(db: Path) -> None:
    errors: list[BaseException] = []

    def opener() -> None:
        try:
            open_blocking(str(db)).close()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    with open_blocking(str(db)) as s:
        assert _version(s) == len(MIGRATIONS)


# ---------------------------------------------------------------- keys


def test_create_find_list_revoke(store: BlockingStore) -> None:
    record, secret = store.accounts.create_key("sdk", "pro", "acme")
    assert keys.is_well_formed(secret)
    assert record["prefix"] == secret[:11]
    assert record == {
        "id": record["id"], "prefix": secret[:11], "plan": "sdk", "tier": "pro",
        "label": "acme", "created_at": "2025-06-15T15:06:40Z", "revoked_at": None,
        "limits": None,
    }
    assert len(record["id"]) == 32
    assert store.accounts.find_key(secret) == record
    other, _ = store.accounts.create_key("free", "free")
    assert [r["id"] for r in store.accounts.list_keys()] == [record["id"], other["id"]]
    assert store.accounts.revoke_key(record["id"]) is True
    found = store.accounts.find_key(secret)
    assert found is not None and found["revoked_at"] == "2025-06-15T15:06:40Z"
    assert store.accounts.revoke_key(record["id"]) is True  # idempotent, keeps the first time
    assert store.accounts.revoke_key("no-such-id") is False
    assert store.accounts.get_key(other["id"])["revoked_at"] is None


def test_find_key_unknown_and_malformed(store: BlockingStore, monkeypatch) -> None:
    store.accounts.create_key("free", "free")
    assert store.accounts.find_key(keys.generate_secret()) is None

    def no_lookup() -> None:
        raise AssertionError("a malformed key reached the database")

    monkeypatch.setattr(store.store.database, "_conn", no_lookup)
    for bad in ["", "dk_", "dk_short", "xx_" + "a" * 43, "dk_" + "a" * 42 + "!", "dk_" + "a" * 44,
                None, 42]:
        assert store.accounts.find_key(bad) is None


def test_limits_round_trip(store: BlockingStore) -> None:
    limits = {"decision": {"minute": 5000, "month": None}, "optimization": {"max_dims": 20000}}
    record, secret = store.accounts.create_key("enterprise", "enterprise", "big", limits)
    assert store.accounts.find_key(secret)["limits"] == limits
    assert store.accounts.list_keys()[0]["limits"] == limits


def test_create_key_rejects_bad_arguments(store: BlockingStore) -> None:
    with pytest.raises(ValueError):
        store.accounts.create_key("", "free")
    with pytest.raises(ValueError):
        store.accounts.create_key("free", "free", limits=[1])  # type: ignore[arg-type]


def test_no_plaintext_secret_in_database_files(db: Path) -> None:
    store = open_blocking(str(db))
    secrets_ = [store.accounts.create_key("sdk", "pro", f"k{i}")[1] for i in range(5)]
    store.accounts.revoke_key(store.accounts.list_keys()[0]["id"])
    for s in secrets_:
        assert store.accounts.find_key(s) is not None
    files = sorted(db.parent.glob(db.name + "*"))
    assert any(f.name.endswith("-wal") for f in files)  # checked while the WAL holds data
    blobs = b"".join(f.read_bytes() for f in files)
    store.close()
    blobs += b"".join(f.read_bytes() for f in sorted(db.parent.glob(db.name + "*")))
    for s in secrets_:
        assert s.encode() not in blobs
        assert s[3:].encode() not in blobs  # not even without the prefix
        assert s[11:].encode() not in blobs  # nor the non-public part
        assert keys.hash_secret(s).encode() in blobs  # the hash is what is kept


# ---------------------------------------------------------------- counters


def spec(limit: int | None, amount: int = 1, name: str = "decide.month", subject: str = "k1",
         window: str = "month") -> CounterSpec:
    return CounterSpec(name, subject, window, limit, amount)


def test_admit_counts_until_the_limit(store: BlockingStore) -> None:
    results = [store.admit([spec(3)], now=NOW) for _ in range(5)]
    assert [r.admitted for r in results] == [True, True, True, False, False]
    assert [r.counters[0].used for r in results] == [1, 2, 3, 3, 3]
    assert [r.counters[0].remaining for r in results] == [2, 1, 0, 0, 0]
    assert results[3].refused == results[3].counters[0]
    assert results[0].refused is None
    assert store.admissions.peek([spec(3)], now=NOW)[0].used == 3


def test_admit_is_all_or_nothing(store: BlockingStore) -> None:
    minute = spec(10, name="decide.minute", window="minute")
    month = spec(4, amount=3)
    assert store.admit([minute, month], now=NOW).admitted
    refused = store.admit([minute, month], now=NOW)  # month would reach 6 > 4
    assert not refused.admitted
    assert refused.refused.name == "decide.month"
    assert [c.used for c in refused.counters] == [1, 3]  # states before the request
    states = store.admissions.peek([minute, month], now=NOW)
    assert [c.used for c in states] == [1, 3]  # nothing counted
    ok = store.admit([minute, spec(4, amount=1)], now=NOW)
    assert ok.admitted and [c.used for c in ok.counters] == [2, 4]


def test_first_refused_counter_is_reported(store: BlockingStore) -> None:
    a, b = spec(0, name="a"), spec(0, name="b")
    assert store.admit([a, b], now=NOW).refused.name == "a"
    assert store.admit([b, a], now=NOW).refused.name == "b"


def test_unlimited_counter_passes_and_is_counted(store: BlockingStore) -> None:
    for _ in range(3):
        result = store.admit([spec(None, amount=7)], now=NOW)
        assert result.admitted and result.counters[0].remaining is None
    assert store.admissions.peek([spec(None)], now=NOW)[0].used == 21


def test_amount_zero_and_limit_zero(store: BlockingStore) -> None:
    assert store.admit([spec(0, amount=0)], now=NOW).admitted
    assert not store.admit([spec(0, amount=1)], now=NOW).admitted


def test_counters_are_separate_by_name_subject_window(store: BlockingStore) -> None:
    store.admit([spec(5, subject="k1")], now=NOW)
    store.admit([spec(5, subject="k2"), spec(5, name="x.minute", window="minute")], now=NOW)
    used = [s.used for s in store.admissions.peek(
        [spec(5, subject="k1"), spec(5, subject="k2"), spec(5, name="x.minute", window="minute"),
         spec(5, subject="k3")], now=NOW)]
    assert used == [1, 1, 1, 0]


def test_states_carry_window_and_reset(store: BlockingStore) -> None:
    result = store.admit([spec(5, name="m", window="minute"), spec(5, name="h", window="hour"),
                          spec(5)], now=NOW)
    minute, hour, month = result.counters
    assert (minute.window_start, minute.window_end, minute.reset) == (
        1_749_999_960, 1_750_000_020, 1_750_000_020)
    assert (hour.window_start, hour.window_end) == (1_749_999_600, 1_750_003_200)
    assert (month.window_start, month.window_end) == (1_748_736_000, 1_751_328_000)  # June 2025


def test_bad_specs_are_rejected(store: BlockingStore) -> None:
    with pytest.raises(ValueError, match="window"):
        store.admit([spec(1, window="week")], now=NOW)
    with pytest.raises(ValueError, match="amount"):
        store.admit([spec(1, amount=-1)], now=NOW)
    with pytest.raises(ValueError, match="twice"):
        store.admit([spec(1), spec(2)], now=NOW)


def test_threads_share_one_file_exactly(db: Path) -> None:
    limit, threads_n, attempts = 60, 8, 25
    admitted: list[int] = []
    start = threading.Barrier(threads_n)

    def worker() -> None:
        with open_blocking(str(db)) as store:  # a store (connections, loop) per thread
            start.wait(timeout=30)
            n = 0
            for _ in range(attempts):
                if store.admit([spec(limit, name="race"), spec(None, name="all")],
                               now=NOW).admitted:
                    n += 1
        admitted.append(n)

    pool = [threading.Thread(target=worker) for _ in range(threads_n)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: provoke races
    try:
        for t in pool:
            t.start()
        for t in pool:
            t.join(timeout=60)
    finally:
        sys.setswitchinterval(interval)
    assert len(admitted) == threads_n
    assert sum(admitted) == limit
    with open_blocking(str(db)) as store:
        race, total = store.admissions.peek([spec(limit, name="race"), spec(None, name="all")],
                                            now=NOW)
    assert race.used == limit and total.used == limit  # refused attempts counted nowhere


# ---------------------------------------------------------------- group commit
# (admit_many against a model of one-at-a-time admission: test_store_contract.py, on
# both backends)


def test_admit_many_checks_revocation_in_the_transaction(store: BlockingStore) -> None:
    live, _ = store.accounts.create_key("sdk", "team")
    gone, _ = store.accounts.create_key("sdk", "team")
    assert store.accounts.revoke_key(gone["id"])
    minute = spec(10, name="decide.minute", window="minute")
    out = store.admissions.admit_many([
        AdmissionRequest([minute._replace(subject=live["id"])], NOW, live["id"]),
        AdmissionRequest([minute._replace(subject=gone["id"])], NOW, gone["id"]),
        AdmissionRequest([minute._replace(subject="x")], NOW, "no-such-key"),
        AdmissionRequest([minute._replace(subject="anon")], NOW),
    ])
    assert [a.admitted for a in out] == [True, False, False, True]
    assert out[1].revoked_at == store.accounts.get_key(gone["id"])["revoked_at"]
    assert out[2].revoked_at is not None and out[2].refused is None
    assert out[0].revoked_at is None and out[3].revoked_at is None
    used = [c.used for c in store.admissions.peek([minute._replace(subject=live["id"]),
                                        minute._replace(subject=gone["id"]),
                                        minute._replace(subject="x")], now=NOW)]
    assert used == [1, 0, 0]  # revoked and unknown keys are not counted


def test_admit_many_of_nothing(store: BlockingStore) -> None:
    assert store.admissions.admit_many([]) == []


def test_prune_drops_old_minute_and_hour_rows_only(store: BlockingStore) -> None:
    old = NOW - 40 * 86_400  # May 2025
    store.admit([spec(None, name="m", window="minute"), spec(None, name="h", window="hour"),
                 spec(None)], now=old)
    store.admit([spec(None, name="m", window="minute")], now=NOW)
    assert store.prune(NOW) == 2
    assert [s.used for s in store.admissions.peek([spec(None, name="m", window="minute"),
                                                   spec(None)], now=NOW)] == [1, 0]
    assert store.admissions.peek([spec(None)], now=old)[0].used == 1  # the old month is kept


def test_the_store_prunes_on_a_schedule_not_in_admissions(db: Path) -> None:
    async def scenario() -> list[int]:
        store = await open_store(str(db))
        try:
            minute = [spec(None, name="m", window="minute")]
            now = time.time()  # the job prunes as of the clock
            for when in (now - 86_400, now):
                await store.admissions.admit_many([AdmissionRequest(minute, when)])
            counts = [_rows(db)]  # an admission prunes nothing
            store.start_pruning(interval=0.01)
            for _ in range(1000):  # until the job has run (at most ~10 s)
                if _rows(db) == 1:
                    break
                await asyncio.sleep(0.01)
            return [*counts, _rows(db)]
        finally:
            await store.close()

    assert asyncio.run(scenario()) == [2, 1]


def _rows(db: Path) -> int:
    with sqlite3.connect(db) as raw:
        return int(raw.execute("SELECT COUNT(*) FROM counters").fetchone()[0])


# ---------------------------------------------------------------- runs, lifecycle, URLs


def test_record_run(store: BlockingStore) -> None:
    store.runs.record({
        "id": "r1", "key_id": "k", "created_at": "2025-06-15T15:06:40Z", "engine": "dss",
        "dims": 3, "status": "converged", "value": 0.5, "evaluations": 100, "elapsed_ms": 1.5,
        "goal": "minimize", "seed": 2**64 - 1, "ignored": "x", "document": DOCUMENT,
    })
    store.runs.record({"key_id": "k", "engine": "de", "document": DOCUMENT})
    runs = store.runs.page("k", 100)
    assert [r.engine for r in runs] == ["de", "dss"]  # newest first (same second: rowid)
    first = next(r for r in runs if r.id == "r1")
    assert first.seed == str(2**64 - 1) and first.value == 0.5
    second = next(r for r in runs if r.id != "r1")
    assert second.created_at == "2025-06-15T15:06:40Z" and len(second.id) == 32


def test_closed_store_raises_store_error(db: Path) -> None:
    async def scenario() -> None:
        store = await open_store(str(db))
        await store.close()
        with pytest.raises(StoreError):
            await store.admissions.admit_many([AdmissionRequest([spec(1)], NOW)])
        assert await store.ping() is False

    asyncio.run(scenario())


def test_unreachable_database_raises_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError):
        open_blocking(str(tmp_path / "missing-dir" / "x.db"))


def test_ping_false_before_migration(db: Path) -> None:
    async def scenario() -> list[bool]:
        database = SQLiteDatabase(db)
        try:
            before = await database.ping()
            await database.migrate()
            return [before, await database.ping()]
        finally:
            await database.close()

    assert asyncio.run(scenario()) == [False, True]


@pytest.mark.parametrize(
    ("url", "path", "options"),
    [
        ("/tmp/a.db", "/tmp/a.db", {}),
        ("rel/a.db", "rel/a.db", {}),
        ("sqlite:///tmp/a.db", "/tmp/a.db", {}),
        ("sqlite:////tmp/a.db", "/tmp/a.db", {}),
        ("sqlite:rel/a.db", "rel/a.db", {}),
        ("sqlite:///tmp/a.db?synchronous=full", "/tmp/a.db", {"synchronous": "full"}),
        ("sqlite:///a.db?busy_timeout=50", "/a.db", {"busy_timeout_ms": 50}),
    ],
)
def test_parse_sqlite_url(url: str, path: str, options: dict) -> None:
    assert parse_sqlite_url(url) == (path, options)


@pytest.mark.parametrize(
    "url", ["", ":memory:", "sqlite::memory:", "postgres://x/y", "sqlite://host/x.db",
            "sqlite:///a.db?mode=ro"])
def test_parse_sqlite_url_rejects(url: str) -> None:
    with pytest.raises(ValueError):
        parse_sqlite_url(url)


def test_synchronous_full_option(tmp_path: Path) -> None:
    store = open_blocking(f"sqlite://{tmp_path}/full.db?synchronous=full")
    database = store.store.database
    assert isinstance(database, SQLiteDatabase) and database.synchronous == "FULL"
    assert database._conn().execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert store.admit([spec(1)], NOW) == Admission(True, store.admissions.peek([spec(1)], NOW),
                                                    None)
    store.close()
    with pytest.raises(ValueError):
        SQLiteDatabase(tmp_path / "x.db", synchronous="off")


# ---------------------------------------------------------------- decision log


def _decision(i: int, created: str) -> DecisionEntry:
    epoch = datetime.fromisoformat(created.replace("Z", "+00:00")).timestamp()
    return DecisionEntry(f"dec_{i:03d}", "k1", created, epoch, '{"best": "o1"}', "{}", None)


def test_decision_log_is_pruned_after_its_retention(db: Path) -> None:
    s = open_blocking(str(db), decision_retention=86400.0)
    try:
        s.admissions.admit_many([], [_decision(1, created="2025-06-13T00:00:00Z"),
                          _decision(2, created="2025-06-15T00:00:00Z")])
        s.prune(now=NOW)  # 2025-06-15T15:06:40Z: the first is older than a day
        assert [d["id"] for d in s.decisions.page("k1", 10)] == ["dec_002"]
    finally:
        s.close()
