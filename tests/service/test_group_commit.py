"""GroupCommit: when a batch is committed, what each request hears, and what survives a
cancelled waiter. The store is a real SQLite file; the event loop is asyncio's own."""

from __future__ import annotations

import asyncio

import pytest

from decido_service.store import (
    AdmissionRequest,
    CounterSpec,
    DecisionEntry,
    StoreError,
    open_store,
)
from decido_service.store.group import GroupCommit

NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def _spec(limit: int | None = None, name: str = "c") -> list[CounterSpec]:
    return [CounterSpec(name, "k", "month", limit, 1)]


def _req(limit: int | None = None) -> AdmissionRequest:
    return AdmissionRequest(_spec(limit), NOW)


class _Recording:
    """A store wrapper that records the size of every admit_many batch."""

    def __init__(self, store) -> None:  # noqa: ANN001 - any Store
        self.store = store
        self.sizes: list[int] = []

    async def admit_many(self, requests, decisions=()):  # noqa: ANN001, ANN201
        self.sizes.append(len(requests))
        return await self.store.admissions.admit_many(requests, decisions)


@pytest.fixture
def db(tmp_path):  # noqa: ANN001, ANN201
    return str(tmp_path / "gc.db")


def _run(db: str, scenario):  # noqa: ANN001, ANN202
    """Run ``scenario(store)`` on a fresh async store of ``db`` in a new event loop."""
    async def main():  # noqa: ANN202
        store = await open_store(db)
        try:
            return await scenario(store)
        finally:
            await store.close()

    return asyncio.run(main())


def _used(db: str) -> int:
    async def peek(store):  # noqa: ANN001, ANN202
        return (await store.admissions.peek(_spec(), NOW))[0].used
    return _run(db, peek)


def test_requests_of_one_turn_share_one_commit(db) -> None:  # noqa: ANN001
    sizes: list[int] = []

    async def main(store) -> list:  # noqa: ANN001
        recording = _Recording(store)
        recording.sizes = sizes
        commit = GroupCommit(recording)  # type: ignore[arg-type]
        answers = await asyncio.gather(*(commit.submit(_req()) for _ in range(10)))
        assert commit.batches == 1 and commit.admissions == 10
        return answers

    answers = _run(db, main)
    assert sizes == [10]
    assert [a.counters[0].used for a in answers] == list(range(1, 11))


def test_a_batch_waits_while_it_grows(db) -> None:  # noqa: ANN001
    """Requests that arrive on the turns after the first one join its batch, as long as
    each turn adds some; a turn that adds none sends it."""
    turns = GroupCommit.MAX_TURNS - 2

    async def main(store):  # noqa: ANN001, ANN202
        recording = _Recording(store)
        commit = GroupCommit(recording)  # type: ignore[arg-type]
        futures = []
        for _ in range(turns):
            futures.append(commit.submit(_req()))
            await asyncio.sleep(0)  # one turn of the loop
        return recording.sizes, await asyncio.gather(*futures)

    sizes, answers = _run(db, main)
    assert sizes == [turns]
    assert sorted(a.counters[0].used for a in answers) == list(range(1, turns + 1))


def test_a_steady_stream_is_still_committed(db) -> None:  # noqa: ANN001
    """A request on every turn cannot hold a batch back past MAX_TURNS turns."""
    turns = 5 * GroupCommit.MAX_TURNS

    async def main(store):  # noqa: ANN001, ANN202
        recording = _Recording(store)
        commit = GroupCommit(recording)  # type: ignore[arg-type]
        futures = []
        for _ in range(turns):
            futures.append(commit.submit(_req()))
            await asyncio.sleep(0)
        await asyncio.gather(*futures)
        return recording.sizes

    sizes = _run(db, main)
    assert sum(sizes) == turns
    assert len(sizes) >= 2 and sizes[0] <= GroupCommit.MAX_TURNS
    assert _used(db) == turns


def test_a_big_batch_is_sent_at_once_and_the_next_gathers_meanwhile(db) -> None:  # noqa: ANN001
    async def main(store):  # noqa: ANN001, ANN202
        recording = _Recording(store)
        commit = GroupCommit(recording)  # type: ignore[arg-type]
        first = [commit.submit(_req()) for _ in range(GroupCommit.MAX_BATCH)]
        await asyncio.sleep(0)  # the settle check sees a full batch: sent now
        await asyncio.sleep(0)  # (the task that sends it starts on the next turn)
        assert recording.sizes == [GroupCommit.MAX_BATCH]
        later = [commit.submit(_req()) for _ in range(10)]  # while the first is in flight
        await asyncio.gather(*first, *later)
        return recording.sizes

    assert _run(db, main) == [GroupCommit.MAX_BATCH, 10]
    assert _used(db) == GroupCommit.MAX_BATCH + 10


def test_a_cancelled_waiter_is_counted_all_the_same(db) -> None:  # noqa: ANN001
    async def main(store):  # noqa: ANN001, ANN202
        commit = GroupCommit(store.admissions)
        future = commit.submit(_req(limit=5))
        future.cancel()  # the handler went away before the commit
        other = commit.submit(_req(limit=5))
        used = (await other).counters[0].used
        await commit.drain()
        return used

    assert _run(db, main) == 2
    assert _used(db) == 2


def test_a_store_error_reaches_every_waiter() -> None:
    class Broken:
        async def admit_many(self, requests, decisions=()):  # noqa: ANN001, ANN201
            raise RuntimeError("disk on fire")

    commit = GroupCommit(Broken())  # type: ignore[arg-type]

    async def main() -> list:
        return await asyncio.gather(*(commit.submit(_req()) for _ in range(3)),
                                    return_exceptions=True)

    answers = asyncio.run(main())
    assert all(isinstance(a, StoreError) and "disk on fire" in str(a) for a in answers)


def test_decision_log_entries_ride_with_the_next_batch(db) -> None:  # noqa: ANN001
    def entry(i: int) -> DecisionEntry:
        return DecisionEntry(f"dec_{i}", "k", "2026-01-01T00:00:00Z", 1767225600.0,
                             '{"best": "a"}', f'{{"i": {i}}}', None)

    async def main(store):  # noqa: ANN001, ANN202
        recording = _Recording(store)
        commit = GroupCommit(recording)  # type: ignore[arg-type]
        admitted, *_ = await asyncio.gather(commit.submit(_req()),
                                            *(commit.log(entry(i)) for i in range(3)))
        listed = await store.decisions.page("k", 10)
        return recording.sizes, admitted, listed

    sizes, admitted, listed = _run(db, main)
    assert sizes == [1] and admitted.admitted  # one transaction for all four
    assert [d["id"] for d in listed] == ["dec_2", "dec_1", "dec_0"]
