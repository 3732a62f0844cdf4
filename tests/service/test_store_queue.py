"""The store contract of the run queue and idempotency records, on SQLite and PostgreSQL:
the per-key cap checked with the insert, claims that never hand one run to two claimers,
leases that expire, conditional updates, deleting and pruning finished runs, idempotency
keys (new, pending, mismatch, done, forgotten, expired)."""

from __future__ import annotations

import asyncio
from typing import Any

from test_store_contract import backend, run, url  # noqa: F401 - fixtures

from decido_service.store import Store, open_store

NOW = 1_750_000_000.0


def a_run(run_id: str, key_id: str = "k1", state: str = "queued", **extra: Any
          ) -> dict[str, Any]:
    return {"id": run_id, "key_id": key_id, "engine": "dss", "dims": 2, "goal": "minimize",
            "state": state, "document": "{}", **extra}


def test_enqueue_respects_the_cap_per_key(url: str) -> None:  # noqa: F811
    async def scenario(store: Store) -> None:
        assert await store.enqueue_run(a_run("r1"), 2) is None
        assert await store.enqueue_run(a_run("r2"), 2) is None
        assert await store.enqueue_run(a_run("r3"), 2) == "cap"
        assert await store.get_run("k1", "r3") is None  # nothing written
        assert await store.enqueue_run(a_run("o1", key_id="k2"), 2) is None  # another key
        assert await store.enqueue_run(a_run("r4"), None) is None  # no cap
        await store.update_run("r1", {"state": "succeeded"})
        assert await store.enqueue_run(a_run("r5"), 4) is None  # r2, r4 + r5 unfinished
        # the queue's cap counts queued runs of every key
        assert await store.enqueue_run(a_run("o2", key_id="k2"), None, 4) == "queue"
        await store.update_run("r2", {"state": "running"})
        assert await store.enqueue_run(a_run("o2", key_id="k2"), None, 4) is None
        assert await store.discard_run("o2") and not await store.discard_run("o2")
        assert await store.get_run("k2", "o2") is None

    run(url, scenario)


def test_concurrent_enqueues_of_one_key_stop_exactly_at_the_cap(url: str) -> None:  # noqa: F811
    async def main() -> None:
        stores = [await open_store(url) for _ in range(3)]
        try:
            results = await asyncio.gather(*(
                stores[i % 3].enqueue_run(a_run(f"r{i}"), 5) for i in range(30)))
            assert results.count(None) == 5 and results.count("cap") == 25
            assert len(await stores[0].unfinished_runs()) == 5
        finally:
            for s in stores:
                await s.close()

    asyncio.run(main())


def test_claims_take_each_queued_run_once_in_order(url: str) -> None:  # noqa: F811
    async def main() -> None:
        stores = [await open_store(url) for _ in range(3)]
        try:
            for i in range(12):
                await stores[0].record_run(a_run(f"r{i:02d}"))
            await stores[0].record_run(a_run("owned", owner="x", lease_until=NOW + 60))
            await stores[0].record_run(a_run("done", state="succeeded"))
            claimed = await asyncio.gather(*(
                stores[i % 3].claim_run(f"w{i % 3}", NOW + 30) for i in range(16)))
            ids = [c["id"] for c in claimed if c is not None]
            assert sorted(ids) == [f"r{i:02d}" for i in range(12)]  # each once, no other
            assert all(c["lease_until"] == NOW + 30 for c in claimed if c is not None)
            assert await stores[1].claim_run("w1", NOW + 30) is None
            first = await stores[0].get_run("k1", "r00")
            assert first is not None and first["owner"] in ("w0", "w1", "w2")
        finally:
            for s in stores:
                await s.close()

    asyncio.run(main())


def test_leases_expire_and_updates_can_be_conditional(url: str) -> None:  # noqa: F811
    async def scenario(store: Store) -> None:
        await store.record_run(a_run("r1"))
        await store.record_run(a_run("r2"))
        one = await store.claim_run("w1", NOW + 10)
        two = await store.claim_run("w2", NOW + 30)
        assert one is not None and two is not None
        assert await store.expired_runs(NOW) == []
        assert [r["id"] for r in await store.expired_runs(NOW + 20)] == ["r1"]
        # renewing needs the lease the caller holds
        assert not await store.update_run("r1", {"lease_until": NOW + 60}, {"owner": "w2"})
        assert await store.update_run("r1", {"lease_until": NOW + 60}, {"owner": "w1"})
        assert await store.expired_runs(NOW + 20) == []
        # one of two sweepers acting on what they saw wins
        seen = {"owner": "w2", "lease_until": NOW + 30}
        assert await store.update_run("r2", {"state": "failed", "owner": None}, seen)
        assert not await store.update_run("r2", {"state": "failed", "owner": None}, seen)
        assert await store.update_run("r2", {"state": "failed"}, {"owner": None})
        finished = await store.get_run("k1", "r2")
        assert finished is not None and finished["state"] == "failed"
        assert finished["owner"] is None

    run(url, scenario)


def test_delete_and_prune_finished_runs(url: str) -> None:  # noqa: F811
    async def scenario(store: Store) -> None:
        await store.record_run(a_run("old", state="succeeded",
                                     finished_at="2025-01-01T00:00:00Z"))
        await store.record_run(a_run("new", state="failed", finished_at="2025-06-01T00:00:00Z"))
        await store.record_run(a_run("busy", state="running"))
        await store.record_run(a_run("theirs", key_id="k2", state="cancelled",
                                     finished_at="2025-01-01T00:00:00Z"))
        assert await store.prune_runs("2025-03-01T00:00:00Z") == 2  # old, theirs
        assert await store.get_run("k1", "old") is None
        assert await store.get_run("k1", "new") is not None
        assert await store.delete_runs("k1") == 1  # new; busy is not finished
        assert [r["id"] for r in await store.page_runs("k1", 10)] == ["busy"]

    run(url, scenario)


def test_idempotency_records(url: str) -> None:  # noqa: F811
    async def scenario(store: Store) -> None:
        day = 86400.0
        assert await store.idempotency_begin("k1", "a", "f1", NOW, day) == ("new", None)
        assert await store.idempotency_begin("k1", "a", "f1", NOW + 1, day) == ("pending", None)
        assert await store.idempotency_begin("k1", "a", "f2", NOW + 1, day) == ("mismatch", None)
        assert await store.idempotency_begin("k2", "a", "f2", NOW, day) == ("new", None)
        await store.idempotency_end("k1", "a", '{"answer": 1}')
        assert await store.idempotency_begin("k1", "a", "f1", NOW + 2, day) == (
            "done", '{"answer": 1}')
        await store.idempotency_end("k1", "a", None)  # a finished record is kept
        assert (await store.idempotency_begin("k1", "a", "f1", NOW + 3, day))[0] == "done"
        # 24 h later the key is new again, with any body
        assert await store.idempotency_begin("k1", "a", "f9", NOW + day + 1, day) == (
            "new", None)
        # a pending record forgotten (its admission failed): the retry is new
        await store.idempotency_end("k2", "a", None)
        assert await store.idempotency_begin("k2", "a", "f3", NOW, day) == ("new", None)

    run(url, scenario)
