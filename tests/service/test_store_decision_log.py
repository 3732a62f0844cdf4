"""The decision log's byte cap on SQLite and PostgreSQL alike: a key's log holds at most
``decision_log_bytes`` bytes, its oldest entries deleted first in the transaction that
writes the new ones, the newest always kept; the running total stays the sum of what is
stored through batches, pruning, several stores appending at once, and the migration that
introduced it (sizes in UTF-8 bytes, not characters)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import pytest
from test_store_contract import backend, run, url  # noqa: F401 - fixtures

from decido_service.store import DecisionEntry, Store, open_store
from decido_service.store import schema as store_schema
from decido_service.store.decisions import KEEP, entry_size

NOW = 1_750_000_000.0
SIZE = 1000  # every entry made by ``_entry`` (unless ``extra``)


def _entry(i: int, key_id: str = "k1", epoch: float = NOW, extra: str = "") -> DecisionEntry:
    """Entry ``i`` of ``key_id``: ``SIZE`` bytes, plus the UTF-8 bytes of ``extra``."""
    summary, answer = json.dumps({"best": f"o{i}"}), json.dumps({"best": f"o{i}"})
    pad = SIZE - len(summary) - len(answer) - len(json.dumps({"n": i, "pad": ""}))
    request = json.dumps({"n": i, "pad": "x" * pad + extra}, ensure_ascii=False)
    entry = DecisionEntry(f"dec_{key_id}_{i:03d}", key_id, "2025-06-15T15:06:40Z", epoch,
                          summary, request, answer)
    assert entry_size(entry) == SIZE + len(extra.encode())
    return entry


async def _ids(store: Store, key_id: str) -> list[str]:
    """Every entry id of ``key_id``'s log, oldest first."""
    return [d["id"] for d in reversed(await store.decisions.page(key_id, 1000))]


async def _stored(store: Store, key_id: str) -> int:
    """The sum of the sizes of ``key_id``'s rows, as the database has them."""
    row = await store.database.read(lambda tx: tx.fetchrow(
        "SELECT COALESCE(SUM(size), 0) FROM decisions WHERE key_id = ?", key_id))
    assert row is not None
    return int(row[0])


async def _append(store: Store, *entries: DecisionEntry) -> None:
    await store.admissions.admit_many([], list(entries))


def test_the_oldest_entries_go_first_once_a_key_is_over_its_cap(url: str) -> None:  # noqa: F811
    """Over the cap, the oldest entries go until the log fits in KEEP (63/64) of it."""
    async def scenario(store: Store) -> None:
        for i in range(3):
            await _append(store, _entry(i))
        await _append(store, _entry(0, "k2"))
        assert await store.decisions.stored_bytes("k1") == 3 * SIZE  # at the cap: all kept
        await _append(store, _entry(3))
        assert await _ids(store, "k1") == ["dec_k1_001", "dec_k1_002", "dec_k1_003"]
        await _append(store, *(_entry(i) for i in range(4, 9)))  # one batch of five
        assert await _ids(store, "k1") == ["dec_k1_006", "dec_k1_007", "dec_k1_008"]
        assert await store.decisions.get("k1", "dec_k1_005") is None
        assert await store.decisions.stored_bytes("k1") == await _stored(store, "k1") == 3 * SIZE
        # another key's log is its own
        assert await _ids(store, "k2") == ["dec_k2_000"]
        assert await store.decisions.stored_bytes("k2") == SIZE
        assert await store.decisions.stored_bytes("nobody") == 0

    run(url, scenario, decision_log_bytes=3 * SIZE + SIZE // 2)


def test_a_key_over_its_cap_is_brought_back_to_keep_of_it(url: str) -> None:  # noqa: F811
    """A key at its cap does not delete on every entry: once over, the log goes back to
    KEEP of the cap, and the next entries fit again until the cap is reached."""
    cap = 64 * SIZE

    async def scenario(store: Store) -> None:
        for i in range(64):
            await _append(store, _entry(i))
        assert len(await _ids(store, "k1")) == 64  # exactly at the cap: nothing deleted
        await _append(store, _entry(64))  # over: back to 63/64 of the cap
        assert await _ids(store, "k1") == [f"dec_k1_{i:03d}" for i in range(2, 65)]
        assert await store.decisions.stored_bytes("k1") == 63 * SIZE == int(cap * KEEP)
        await _append(store, _entry(65))  # fits again: nothing deleted
        assert len(await _ids(store, "k1")) == 64
        await _append(store, _entry(66, extra="y" * 31 * SIZE))  # 33 of the oldest go at once
        assert await _ids(store, "k1") == [f"dec_k1_{i:03d}" for i in range(35, 67)]
        assert await store.decisions.stored_bytes("k1") == await _stored(store, "k1") == 63 * SIZE

    run(url, scenario, decision_log_bytes=cap)


def test_the_newest_entry_is_kept_even_alone_above_the_cap(url: str) -> None:  # noqa: F811
    async def scenario(store: Store) -> None:
        await _append(store, _entry(0), _entry(1))
        big = _entry(2, extra="y" * 3 * SIZE)
        await _append(store, big)
        assert await _ids(store, "k1") == ["dec_k1_002"]
        assert await store.decisions.stored_bytes("k1") == entry_size(big)
        await _append(store, _entry(3))  # the big one is the oldest now: it goes
        assert await _ids(store, "k1") == ["dec_k1_003"]
        assert await store.decisions.stored_bytes("k1") == SIZE

    run(url, scenario, decision_log_bytes=2 * SIZE)


def test_sizes_are_utf8_bytes(url: str) -> None:  # noqa: F811
    async def scenario(store: Store) -> None:
        await _append(store, _entry(0, extra="é€😀"))  # 2 + 3 + 4 bytes, 3 characters
        assert await store.decisions.stored_bytes("k1") == SIZE + 9 == await _stored(store, "k1")
        await _append(store, _entry(1))  # over by 9 bytes: the first goes
        assert await _ids(store, "k1") == ["dec_k1_001"]

    run(url, scenario, decision_log_bytes=2 * SIZE)


def test_no_cap_keeps_everything(url: str) -> None:  # noqa: F811
    def scenario(key_id: str) -> Callable[[Store], Awaitable[None]]:
        async def body(store: Store) -> None:
            await _append(store, *(_entry(i, key_id) for i in range(20)))
            assert len(await _ids(store, key_id)) == 20
            assert await store.decisions.stored_bytes(key_id) == 20 * SIZE
        return body

    run(url, scenario("k1"))
    run(url, scenario("k2"), decision_log_bytes=0)


def test_pruning_takes_entries_off_the_totals(url: str) -> None:  # noqa: F811
    async def scenario(store: Store) -> None:
        await _append(store, _entry(0, epoch=NOW - 2 * 86_400), _entry(1, epoch=NOW - 2 * 86_400),
                      _entry(0, "k2", epoch=NOW - 2 * 86_400), _entry(2))
        assert await store.prune(NOW) == 3
        assert await store.decisions.stored_bytes("k1") == SIZE
        assert await store.decisions.stored_bytes("k2") == 0
        for i in range(3, 6):  # room for two more before the cap deletes anything
            await _append(store, _entry(i))
        assert await _ids(store, "k1") == ["dec_k1_003", "dec_k1_004", "dec_k1_005"]
        assert await store.decisions.stored_bytes("k1") == await _stored(store, "k1") == 3 * SIZE

    run(url, scenario, decision_retention=86_400.0, decision_log_bytes=3 * SIZE + SIZE // 2)


def test_stores_appending_and_pruning_at_once_keep_every_total_exact(url: str) -> None:  # noqa: F811
    """Three stores (nodes) append to two keys at once while a fourth prunes: nothing
    deadlocks, no key is ever above its cap, and each total is what its rows add up to."""
    cap = 5 * SIZE + SIZE // 2

    async def main() -> None:
        stores = [await open_store(url, decision_log_bytes=cap, decision_retention=86_400.0)
                  for _ in range(4)]
        try:
            old = [_entry(900 + i, k, epoch=NOW - 2 * 86_400) for i in range(4)
                   for k in ("k1", "k2")]
            await _append(stores[0], *old)

            async def writer(n: int) -> None:
                for i in range(15):
                    key = "k1" if i % 3 else "k2"
                    await _append(stores[n], _entry(n * 100 + i, key),
                                  *([_entry(n * 100 + 50 + i, key)] if i % 4 == 0 else []))

            async def pruner() -> None:
                for _ in range(5):
                    await stores[3].prune(NOW)
                    await asyncio.sleep(0)

            await asyncio.gather(*(writer(n) for n in range(3)), pruner())
            for key in ("k1", "k2"):
                total = await stores[3].decisions.stored_bytes(key)
                assert total == await _stored(stores[3], key) == 5 * SIZE
                ids = await _ids(stores[3], key)
                assert len(ids) == 5 and not any(i.startswith(f"dec_{key}_9") for i in ids)
        finally:
            for s in stores:
                await s.close()

    asyncio.run(main())


def test_the_migration_sizes_entries_logged_before_it(url: str,  # noqa: F811
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A database from before the cap (schema version 2) gets each entry's size in UTF-8
    bytes and each key's total; the cap applies from the next entry on."""
    migrations = store_schema.MIGRATIONS
    monkeypatch.setattr(store_schema, "MIGRATIONS", migrations[:2])

    async def before(store: Store) -> None:
        async def body(tx):  # type: ignore[no-untyped-def]
            await tx.executemany(
                "INSERT INTO decisions (id, key_id, created_at, created_epoch, summary,"
                " request, answer, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [_entry(0), _entry(1, extra="€"), _entry(0, "k2")])
        await store.database.write(body)

    run(url, before)
    monkeypatch.setattr(store_schema, "MIGRATIONS", migrations)

    async def after(store: Store) -> None:
        assert await store.decisions.stored_bytes("k1") == 2 * SIZE + 3
        assert await store.decisions.stored_bytes("k2") == SIZE
        assert await _stored(store, "k1") == 2 * SIZE + 3
        await _append(store, _entry(2))
        assert await _ids(store, "k1") == ["dec_k1_001", "dec_k1_002"]
        assert await store.decisions.stored_bytes("k1") == 2 * SIZE + 3

    run(url, after, decision_log_bytes=2 * SIZE + 3 + SIZE // 2)


def test_an_entry_s_labels_count_in_its_size() -> None:
    """The labels are kept in the row (its ``metadata`` column), so they count."""
    labels = '{"project": "bridge-é"}'
    assert entry_size(_entry(0)._replace(metadata=labels)) == SIZE + len(labels.encode())
