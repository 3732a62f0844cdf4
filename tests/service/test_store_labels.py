"""The label index (:mod:`decido_service.store.labels`) on SQLite and PostgreSQL: a row's
labels are index rows from the transaction that writes it until the one that deletes it
(however it goes: deleted, pruned, trimmed by the byte cap), the migration indexes the rows
stored before it, and a page filtered by a label reads the label's rows only, however many
rows of the key do not have it."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from test_store_contract import DOCUMENT, backend, run, url  # noqa: F401 - fixtures

from decido_service.store import DecisionEntry, Store
from decido_service.store import schema as store_schema

NOW = 1_750_000_000.0


def _decision(i: int, key_id: str = "k", labels: dict[str, str] | None = None,
              epoch: float = NOW) -> DecisionEntry:
    return DecisionEntry(f"dec_{key_id}_{i:06d}", key_id, "2025-06-15T15:06:40Z", epoch,
                         json.dumps({"best": f"o{i}"}), json.dumps({"n": i}), None,
                         json.dumps(labels) if labels else None)


def _run(i: int, key_id: str = "k", labels: dict[str, str] | None = None,
         state: str = "succeeded") -> dict[str, Any]:
    finished = "2025-06-15T15:06:40Z" if state == "succeeded" else None
    return {"id": f"run_{key_id}_{i:06d}", "key_id": key_id, "state": state,
            "finished_at": finished, "metadata": labels, "document": DOCUMENT}


async def _label_rows(store: Store, table: str) -> list[tuple[str, str, str, str]]:
    """Every row of a label table, as (key, name, value, row id)."""
    base = "runs" if table == "run_labels" else "decisions"
    rows = await store.database.read(lambda tx: tx.fetch(
        f"SELECT l.key_id, l.name, l.value, t.id FROM {table} l LEFT JOIN {base} t"
        " ON t.seq = l.seq"))
    return sorted((r[0], r[1], r[2], r[3]) for r in rows)


def test_label_rows_live_and_die_with_their_rows(url: str) -> None:  # noqa: F811
    async def scenario(store: Store) -> None:
        await store.runs.record(_run(1, labels={"a": "1", "b": "x"}))
        await store.runs.record(_run(2, labels={"a": "1"}, state="queued"))
        await store.runs.record(_run(3))
        await store.runs.record(_run(4, "k2", {"a": "1"}))
        assert await _label_rows(store, "run_labels") == sorted([
            ("k", "a", "1", "run_k_000001"), ("k", "b", "x", "run_k_000001"),
            ("k", "a", "1", "run_k_000002"), ("k2", "a", "1", "run_k2_000004")])
        assert await store.runs.delete("k", "run_k_000001") == "succeeded"
        assert await store.runs.delete_finished("k2") == 1
        assert await _label_rows(store, "run_labels") == [("k", "a", "1", "run_k_000002")]
        await store.runs.update("run_k_000002", {"state": "succeeded",
                                                 "finished_at": "2025-06-15T15:06:40Z"})
        assert await store.runs.prune("2025-06-16T00:00:00Z") == 2
        assert await _label_rows(store, "run_labels") == []

        await store.admissions.admit_many([], [
            _decision(1, labels={"p": "A"}, epoch=NOW - 10), _decision(2),
            _decision(3, labels={"p": "A", "q": "é"}), _decision(4, "k2", {"p": "A"})])
        assert await _label_rows(store, "decision_labels") == sorted([
            ("k", "p", "A", "dec_k_000001"), ("k", "p", "A", "dec_k_000003"),
            ("k", "q", "é", "dec_k_000003"), ("k2", "p", "A", "dec_k2_000004")])
        assert await store.decisions.prune(NOW - 5) == 1
        assert [d["id"] for d in await store.decisions.page("k", 10, metadata={"p": "A"})] \
            == ["dec_k_000003"]
        assert ("k", "p", "A", "dec_k_000001") not in await _label_rows(
            store, "decision_labels")

    run(url, scenario)


def test_the_byte_cap_trims_label_rows_too(url: str) -> None:  # noqa: F811
    async def scenario(store: Store) -> None:
        for i in range(20):
            await store.admissions.admit_many([], [_decision(i, labels={"p": str(i % 2)})])
        kept = [d["id"] for d in await store.decisions.page("k", 100)]
        assert 0 < len(kept) < 20
        labelled = {row[3] for row in await _label_rows(store, "decision_labels")}
        assert labelled == set(kept)
        odd = await store.decisions.page("k", 100, metadata={"p": "1"})
        assert [d["id"] for d in odd] == [i for i in kept if int(i[-6:]) % 2]

    run(url, scenario, decision_log_bytes=200)  # about six entries of ~35 bytes


def test_the_migration_indexes_the_rows_stored_before_it(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A store of schema version 3 (no label tables) gets its runs' and decisions' labels
    indexed by the upgrade; filters find them, and rows without labels get none."""
    migrations = store_schema.MIGRATIONS
    monkeypatch.setattr(store_schema, "MIGRATIONS", migrations[:3])

    async def before(store: Store) -> None:
        async def body(tx: Any) -> None:
            await tx.executemany(
                "INSERT INTO runs (id, key_id, created_at, state, metadata, document) VALUES"
                " (?, ?, '2025-06-15T15:06:40Z', 'queued', ?, ?)",
                [(*run, msgspec.json.encode(DOCUMENT).decode()) for run in (
                    ("run_a", "k", '{"p": "A", "z": ""}'), ("run_b", "k", None),
                    ("run_c", "k2", '{"p": "A"}'), ("run_d", None, '{"p": "A"}'))])
            await tx.executemany(
                "INSERT INTO decisions (id, key_id, created_at, created_epoch, summary,"
                " request, metadata) VALUES (?, ?, '2025-06-15T15:06:40Z', 0, '{}', '{}', ?)",
                [("dec_a", "k", '{"p": "A"}'), ("dec_b", "k", None), ("dec_c", "k", '{"p": "B"}')])
        await store.database.write(body)

    run(url, before)
    monkeypatch.setattr(store_schema, "MIGRATIONS", migrations)

    async def after(store: Store) -> None:
        assert [r.id for r in await store.runs.page("k", 10, metadata={"p": "A"})] \
            == ["run_a"]
        assert [r.id for r in await store.runs.page("k", 10, metadata={"z": ""})] \
            == ["run_a"]
        assert [d["id"] for d in await store.decisions.page("k", 10, metadata={"p": "B"})] \
            == ["dec_c"]
        assert len(await _label_rows(store, "run_labels")) == 3  # run_a's two, run_c's one
        assert len(await _label_rows(store, "decision_labels")) == 2

    run(url, after)


def test_a_label_filter_reads_the_label_s_rows_only(tmp_path: Any) -> None:
    """SQLite's virtual-machine steps of a filtered page (its progress handler): a label
    on 3 of the key's rows costs the same among 400 rows as among 4,000 (the old filter
    read every row of the key: ten times the steps). Runs and decisions alike."""
    path = f"sqlite:///{tmp_path / 'labels.db'}"

    async def steps(store: Store, page: Any) -> int:
        count = [0]

        def tick() -> int:
            count[0] += 1
            return 0

        async def install(tx: Any) -> None:  # the read thread's connection
            tx.conn.set_progress_handler(tick, 10)

        async def remove(tx: Any) -> None:
            tx.conn.set_progress_handler(None, 0)

        await store.database.read(install)
        try:
            assert len(await page()) == 3
        finally:
            await store.database.read(remove)
        return count[0]

    async def scenario(store: Store) -> tuple[list[int], list[int]]:
        runs, decisions = [], []
        done = 0
        for total in (400, 4000):
            for i in range(done, total):
                labels = {"p": "rare"} if i in (5, 6, 7) else {"p": "common", "n": str(i)}
                await store.runs.record(_run(i, labels=labels))
            await store.admissions.admit_many([], [
                _decision(i, labels={"p": "rare"} if i in (5, 6, 7) else {"p": "common"})
                for i in range(done, total)])
            done = total
            runs.append(await steps(store, lambda: store.runs.page(
                "k", 10, metadata={"p": "rare"})))
            decisions.append(await steps(store, lambda: store.decisions.page(
                "k", 10, metadata={"p": "rare"})))
        return runs, decisions

    runs, decisions = run(path, scenario)
    assert runs[1] < 1.5 * runs[0] + 20, runs
    assert decisions[1] < 1.5 * decisions[0] + 20, decisions
