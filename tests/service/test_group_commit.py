"""GroupCommit: when a batch is committed, what each request hears, and what survives a
cancelled waiter. The store is a real SQLite file; the event loop is asyncio's own."""

from __future__ import annotations

import asyncio

import pytest

from decido_service.admission import GroupCommit
from decido_service.store import CounterSpec, StoreError, open_store

NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def _spec(limit: int | None = None, name: str = "c") -> list[CounterSpec]:
    return [CounterSpec(name, "k", "month", limit, 1)]


class _Recording:
    """A store wrapper that records the size of every admit_many batch."""

    def __init__(self, store) -> None:  # noqa: ANN001 - any Store
        self.store = store
        self.sizes: list[int] = []

    def admit_many(self, requests):  # noqa: ANN001, ANN201
        self.sizes.append(len(requests))
        return self.store.admit_many(requests)


@pytest.fixture
def store(tmp_path):  # noqa: ANN001, ANN201
    s = open_store(str(tmp_path / "gc.db"))
    yield s
    s.close()


def test_requests_of_one_turn_share_one_commit(store) -> None:  # noqa: ANN001
    recording = _Recording(store)
    commit = GroupCommit(recording)  # type: ignore[arg-type]

    async def main() -> list:
        return await asyncio.gather(*(commit.admit(_spec(), NOW) for _ in range(10)))

    answers = asyncio.run(main())
    assert recording.sizes == [10]
    assert [a.counters[0].used for a in answers] == list(range(1, 11))
    assert commit.batches == 1 and commit.admissions == 10


def test_a_batch_waits_while_it_grows(store) -> None:  # noqa: ANN001
    """Requests that arrive on the turns after the first one join its batch, as long as
    each turn adds some; a turn that adds none commits it."""
    recording = _Recording(store)
    commit = GroupCommit(recording)  # type: ignore[arg-type]

    async def arrive_over_turns(turns: int) -> list:
        futures = []
        for _ in range(turns):
            futures.append(commit.admit(_spec(), NOW))
            await asyncio.sleep(0)  # one turn of the loop
        return await asyncio.gather(*futures)

    answers = asyncio.run(arrive_over_turns(GroupCommit.MAX_TURNS - 2))
    assert recording.sizes == [GroupCommit.MAX_TURNS - 2]
    assert sorted(a.counters[0].used for a in answers) == list(range(1, GroupCommit.MAX_TURNS - 1))


def test_a_steady_stream_is_still_committed(store) -> None:  # noqa: ANN001
    """A request on every turn cannot hold a batch back past MAX_TURNS turns."""
    recording = _Recording(store)
    commit = GroupCommit(recording)  # type: ignore[arg-type]
    turns = 5 * GroupCommit.MAX_TURNS

    async def stream() -> list:
        futures = []
        for _ in range(turns):
            futures.append(commit.admit(_spec(), NOW))
            await asyncio.sleep(0)
        return await asyncio.gather(*futures)

    asyncio.run(stream())
    assert sum(recording.sizes) == turns
    assert max(recording.sizes) <= GroupCommit.MAX_TURNS
    assert len(recording.sizes) >= 5


def test_a_big_batch_is_committed_at_once(store) -> None:  # noqa: ANN001
    recording = _Recording(store)
    commit = GroupCommit(recording)  # type: ignore[arg-type]
    n = GroupCommit.MAX_BATCH + 10

    async def main() -> None:
        first = [commit.admit(_spec(), NOW) for _ in range(GroupCommit.MAX_BATCH)]
        await asyncio.sleep(0)  # the settle check sees a full batch: committed now
        assert all(f.done() for f in first)
        await asyncio.gather(*first, *(commit.admit(_spec(), NOW) for _ in range(10)))

    asyncio.run(main())
    assert recording.sizes == [GroupCommit.MAX_BATCH, 10]
    assert store.peek(_spec(), now=NOW)[0].used == n


def test_a_cancelled_waiter_is_counted_all_the_same(store) -> None:  # noqa: ANN001
    commit = GroupCommit(store)

    async def main() -> None:
        future = commit.admit(_spec(limit=5), NOW)
        future.cancel()  # the handler went away before the commit
        other = commit.admit(_spec(limit=5), NOW)
        assert (await other).counters[0].used == 2

    asyncio.run(main())
    assert store.peek(_spec(), now=NOW)[0].used == 2


def test_a_store_error_reaches_every_waiter(store) -> None:  # noqa: ANN001
    class Broken:
        def admit_many(self, requests):  # noqa: ANN001, ANN201
            raise RuntimeError("disk on fire")

    commit = GroupCommit(Broken())  # type: ignore[arg-type]

    async def main() -> list:
        return await asyncio.gather(*(commit.admit(_spec(), NOW) for _ in range(3)),
                                    return_exceptions=True)

    answers = asyncio.run(main())
    assert all(isinstance(a, StoreError) and "disk on fire" in str(a) for a in answers)
