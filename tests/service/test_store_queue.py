"""The store contract of the run queue and idempotency records, on SQLite and PostgreSQL:
the per-key cap checked, the request counted and the run written in one transaction,
claims that never hand one run to two claimers,
leases that expire, conditional updates, deleting and pruning finished runs, idempotency
keys (new, pending, mismatch, done, forgotten, expired)."""

from __future__ import annotations

import asyncio
from typing import Any

from test_store_contract import DOCUMENT, backend, run, url  # noqa: F401 - fixtures

from decido_service.store import Admission, AdmissionRequest, CounterSpec, Store, open_store

NOW = 1_750_000_000.0


def a_run(run_id: str, key_id: str = "k1", state: str = "queued", **extra: Any
          ) -> dict[str, Any]:
    return {"id": run_id, "key_id": key_id, "engine": "dss", "dims": 2, "goal": "minimize",
            "state": state, "document": DOCUMENT, **extra}


def counted(limit: int | None = None, key_id: str = "k1") -> AdmissionRequest:
    """The admission a run is enqueued with: one more on a month counter of ``key_id``."""
    return AdmissionRequest([CounterSpec("optimize.month", key_id, "month", limit)], NOW)


def enqueued(result: Admission | str) -> bool:
    return isinstance(result, Admission) and result.admitted


def test_enqueue_respects_the_cap_per_key(url: str) -> None:  # noqa: F811
    async def scenario(store: Store) -> None:
        runs = store.runs
        assert enqueued(await runs.enqueue(a_run("r1"), counted(), 2))
        assert enqueued(await runs.enqueue(a_run("r2"), counted(), 2))
        assert await runs.enqueue(a_run("r3"), counted(), 2) == "cap"
        assert await runs.get("k1", "r3") is None  # nothing written
        assert enqueued(await runs.enqueue(a_run("o1", key_id="k2"), counted(), 2))
        assert enqueued(await runs.enqueue(a_run("r4"), counted(), None))  # no cap
        await runs.update("r1", {"state": "succeeded"})
        assert enqueued(await runs.enqueue(a_run("r5"), counted(), 4))  # r2, r4, r5
        # the queue's cap counts queued runs of every key
        assert await runs.enqueue(a_run("o2", key_id="k2"), counted(), None, 4) == "queue"
        await runs.update("r2", {"state": "running"})
        assert enqueued(await runs.enqueue(a_run("o2", key_id="k2"), counted(), None, 4))
        # refused by a cap: not counted either
        used = await store.admissions.peek(counted().specs, NOW)
        assert used[0].used == 6  # r1, r2, o1, r4, r5, o2 (each key's counter is "k1" here)

    run(url, scenario)


def test_a_run_is_enqueued_and_counted_in_one_transaction(url: str) -> None:  # noqa: F811
    """A refused count writes no run; an admitted one writes both, and says so."""
    async def scenario(store: Store) -> None:
        first = await store.runs.enqueue(a_run("r1"), counted(limit=1), 5)
        assert isinstance(first, Admission) and first.admitted
        assert first.counters[0].used == 1 and first.counters[0].remaining == 0
        refused = await store.runs.enqueue(a_run("r2"), counted(limit=1), 5)
        assert isinstance(refused, Admission) and not refused.admitted
        assert refused.refused is not None and refused.refused.name == "optimize.month"
        assert await store.runs.get("k1", "r2") is None
        assert [s.used for s in await store.admissions.peek(counted().specs, NOW)] == [1]
        # a revoked key's run is refused the same way (the admission names the key)
        record, _ = await store.accounts.create_key("free", "free")
        await store.accounts.revoke_key(record["id"])
        gone = await store.runs.enqueue(a_run("r3", key_id=record["id"]), AdmissionRequest(
            [], NOW, record["id"]), None)
        assert isinstance(gone, Admission) and gone.revoked_at is not None
        assert await store.runs.get(record["id"], "r3") is None

    run(url, scenario)


def test_concurrent_enqueues_of_one_key_stop_exactly_at_the_cap(url: str) -> None:  # noqa: F811
    async def main() -> None:
        stores = [await open_store(url) for _ in range(3)]
        try:
            results = await asyncio.gather(*(
                stores[i % 3].runs.enqueue(a_run(f"r{i}"), counted(), 5) for i in range(30)))
            assert sum(map(enqueued, results)) == 5 and results.count("cap") == 25
            assert len(await stores[0].runs.unfinished()) == 5
            assert (await stores[1].admissions.peek(counted().specs, NOW))[0].used == 5
        finally:
            for s in stores:
                await s.close()

    asyncio.run(main())


def test_claims_take_each_queued_run_once_in_order(url: str) -> None:  # noqa: F811
    async def main() -> None:
        stores = [await open_store(url) for _ in range(3)]
        try:
            for i in range(12):
                await stores[0].runs.record(a_run(f"r{i:02d}"))
            await stores[0].runs.record(a_run("owned", owner="x", lease_until=NOW + 60))
            await stores[0].runs.record(a_run("done", state="succeeded"))
            claimed = await asyncio.gather(*(
                stores[i % 3].runs.claim(f"w{i % 3}", NOW + 30) for i in range(16)))
            ids = [c.id for c in claimed if c is not None]
            assert sorted(ids) == [f"r{i:02d}" for i in range(12)]  # each once, no other
            assert all(c.lease_until == NOW + 30 for c in claimed if c is not None)
            assert await stores[1].runs.claim("w1", NOW + 30) is None
            first = await stores[0].runs.get("k1", "r00")
            assert first is not None and first.owner in ("w0", "w1", "w2")
        finally:
            for s in stores:
                await s.close()

    asyncio.run(main())


def test_leases_expire_and_updates_can_be_conditional(url: str) -> None:  # noqa: F811
    async def scenario(store: Store) -> None:
        await store.runs.record(a_run("r1"))
        await store.runs.record(a_run("r2"))
        one = await store.runs.claim("w1", NOW + 10)
        two = await store.runs.claim("w2", NOW + 30)
        assert one is not None and two is not None
        assert await store.runs.expired(NOW) == []
        assert [r.id for r in await store.runs.expired(NOW + 20)] == ["r1"]
        # renewing needs the lease the caller holds
        assert not await store.runs.update("r1", {"lease_until": NOW + 60}, {"owner": "w2"})
        assert await store.runs.update("r1", {"lease_until": NOW + 60}, {"owner": "w1"})
        assert await store.runs.expired(NOW + 20) == []
        # one of two sweepers acting on what they saw wins
        seen = {"owner": "w2", "lease_until": NOW + 30}
        assert await store.runs.update("r2", {"state": "failed", "owner": None}, seen)
        assert not await store.runs.update("r2", {"state": "failed", "owner": None}, seen)
        assert await store.runs.update("r2", {"state": "failed"}, {"owner": None})
        finished = await store.runs.get("k1", "r2")
        assert finished is not None and finished.state == "failed"
        assert finished.owner is None

    run(url, scenario)


def test_delete_and_prune_finished_runs(url: str) -> None:  # noqa: F811
    async def scenario(store: Store) -> None:
        await store.runs.record(a_run("old", state="succeeded",
                                     finished_at="2025-01-01T00:00:00Z"))
        await store.runs.record(a_run("new", state="failed", finished_at="2025-06-01T00:00:00Z"))
        await store.runs.record(a_run("busy", state="running"))
        await store.runs.record(a_run("theirs", key_id="k2", state="cancelled",
                                     finished_at="2025-01-01T00:00:00Z"))
        assert await store.runs.prune("2025-03-01T00:00:00Z") == 2  # old, theirs
        assert await store.runs.get("k1", "old") is None
        assert await store.runs.get("k1", "new") is not None
        assert await store.runs.delete_finished("k1") == 1  # new; busy is not finished
        assert [r.id for r in await store.runs.page("k1", 10)] == ["busy"]

    run(url, scenario)


def test_idempotency_records(url: str) -> None:  # noqa: F811
    async def scenario(store: Store) -> None:
        day = 86400.0
        assert await store.runs.idempotency_begin("k1", "a", "f1", NOW, day) == ("new", None)
        begin = store.runs.idempotency_begin
        assert await begin("k1", "a", "f1", NOW + 1, day) == ("pending", None)
        assert await begin("k1", "a", "f2", NOW + 1, day) == ("mismatch", None)
        assert await store.runs.idempotency_begin("k2", "a", "f2", NOW, day) == ("new", None)
        await store.runs.idempotency_end("k1", "a", '{"answer": 1}')
        assert await store.runs.idempotency_begin("k1", "a", "f1", NOW + 2, day) == (
            "done", '{"answer": 1}')
        await store.runs.idempotency_end("k1", "a", None)  # a finished record is kept
        assert (await store.runs.idempotency_begin("k1", "a", "f1", NOW + 3, day))[0] == "done"
        # 24 h later the key is new again, with any body
        assert await store.runs.idempotency_begin("k1", "a", "f9", NOW + day + 1, day) == (
            "new", None)
        # a pending record forgotten (its admission failed): the retry is new
        await store.runs.idempotency_end("k2", "a", None)
        assert await store.runs.idempotency_begin("k2", "a", "f3", NOW, day) == ("new", None)

    run(url, scenario)


def test_an_admitted_run_answers_its_idempotency_record(url: str) -> None:  # noqa: F811
    """The run and its idempotency answer are one transaction: a refused run leaves the
    record pending (the caller forgets it), an admitted one finds it answered."""
    async def scenario(store: Store) -> None:
        day = 86400.0
        assert await store.runs.idempotency_begin("k1", "a", "f", NOW, day) == ("new", None)
        assert await store.runs.enqueue(a_run("r1"), counted(limit=0), 5,
                                        idempotency=("a", '{"run": "r1"}')) != "cap"
        assert await store.runs.get("k1", "r1") is None
        assert (await store.runs.idempotency_begin("k1", "a", "f", NOW, day))[0] == "pending"
        assert enqueued(await store.runs.enqueue(a_run("r1"), counted(), 5,
                                                 idempotency=("a", '{"run": "r1"}')))
        assert await store.runs.idempotency_begin("k1", "a", "f", NOW, day) == (
            "done", '{"run": "r1"}')
        await store.runs.idempotency_end("k1", "a", None)  # an answered record stays
        assert (await store.runs.idempotency_begin("k1", "a", "f", NOW, day))[0] == "done"

    run(url, scenario)


def test_claims_are_fair_across_keys(url: str) -> None:  # noqa: F811
    """A key with a backlog does not hold another key's run back: each claim takes the
    oldest run of the key with the fewest runs taken (ties: the oldest run)."""
    async def scenario(store: Store) -> None:
        for i in range(4):
            await store.runs.record(a_run(f"a{i}", key_id="ka"))
        await store.runs.record(a_run("b0", key_id="kb"))
        await store.runs.record(a_run("b1", key_id="kb"))
        await store.runs.record(a_run("c0", key_id="kc", owner="x", lease_until=NOW + 60))
        await store.runs.record(a_run("c1", key_id="kc"))
        order = []
        while (row := await store.runs.claim("w", NOW + 30)) is not None:
            order.append(row.id)
        # ka and kb have none taken, kc one: a0; then kb (0 taken) b0; then ka, kb and kc
        # all have one: the oldest, a1; then b1 (kb 1, kc 1: b1 is older than c1), ...
        assert order == ["a0", "b0", "a1", "b1", "c1", "a2", "a3"], order

    run(url, scenario)


def test_an_expired_lease_gives_the_run_back_until_its_attempts_are_spent(
        url: str) -> None:  # noqa: F811
    """The sweep gives a run whose process stopped back to the queue from its start
    (its progress gone, its request and budget kept) until it has been started
    RUN_ATTEMPTS times, then fails it ``interrupted``; a ``/v1/optimize`` run (a
    deadline: its client was the process's) fails at once."""
    from decido_service.runs.execution import RUN_ATTEMPTS
    from decido_service.runs.queue import sweep
    from decido_service.schemas import decode_optimize
    from decido_service.types import Budget, RunDocument, RunProgress

    req = decode_optimize(b'{"bounds": [[-1, 1]], "objective_expression": "x[0]**2",'
                          b' "seed": 5}')
    doc = RunDocument(request=req, budget=Budget(max_evaluations=100, time_limit=5.0),
                      started_at="2025-06-15T15:06:40Z",
                      progress=RunProgress(evaluations=10, iterations=1, best=0.5,
                                           elapsed_ms=3.0))
    sync = RunDocument(request=req, budget=Budget(max_evaluations=100, time_limit=5.0,
                                                  deadline=NOW + 5))

    async def scenario(store: Store) -> None:
        await store.runs.record(a_run("r1", document=doc, state="running",
                                      owner="dead", lease_until=NOW - 1))
        await store.runs.record(a_run("s1", document=sync, state="running",
                                      owner="dead", lease_until=NOW - 1))
        for attempt in range(1, RUN_ATTEMPTS):
            assert await sweep(store, NOW) == (2 if attempt == 1 else 1)
            row = await store.runs.get("k1", "r1")
            assert row is not None and row.state == "queued" and row.owner is None
            assert row.attempts == attempt
            assert row.document == RunDocument(request=req, budget=doc.budget)
            claimed = await store.runs.claim("w", NOW - 1)  # taken, then its lease runs out
            assert claimed is not None and claimed.id == "r1"
            assert claimed.attempts == attempt
        sync_row = await store.runs.get("k1", "s1")
        assert sync_row is not None and sync_row.state == "failed"
        assert await sweep(store, NOW) == 1
        row = await store.runs.get("k1", "r1")
        assert row is not None and row.state == "failed"
        assert row.document.problem is not None
        assert row.document.problem.code == "interrupted"
        assert await sweep(store, NOW) == 0

    run(url, scenario)
