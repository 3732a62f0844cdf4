"""The store contract: what every backend of :class:`decido_service.store.Store` must do,
run against SQLite and PostgreSQL alike (``backend`` parameter). Keys, admission at the
edge of a limit, windows rolling over, group commits judged like single admissions,
revocation inside the admission, the decision log, runs, migrations (versioned, applied
once by stores starting together, a newer database refused) and exact limits when several
stores (nodes) admit at once. PostgreSQL gets a throwaway database per test
(:mod:`pg_server`)."""

from __future__ import annotations

import asyncio
import json
import random
import uuid
from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pg_server import execute, throwaway_database

from decido_service import keys
from decido_service.store import (
    Admission,
    AdmissionRequest,
    CounterSpec,
    DecisionEntry,
    Store,
    StoreError,
    open_store,
)
from decido_service.store.group import GroupCommit
from decido_service.store.schema import MIGRATIONS
from decido_service.types import Budget, OptimizeRequest, RunDocument

T = TypeVar("T")
NOW = 1_750_000_000.0  # 2025-06-15T15:06:40Z
#: a run's document (every run row has one: the store keeps it and reads it back decoded)
DOCUMENT = RunDocument(request=OptimizeRequest(), budget=Budget(max_evaluations=1, time_limit=1.0))
#: the sqlite half is in process (the fast tier, tests/tiers.py), whereas the shared ``url``
#: fixture can reach PostgreSQL
BACKENDS = [pytest.param("sqlite", marks=pytest.mark.fast), "postgresql"]


def ts(text: str) -> float:
    """Epoch seconds of a UTC ``YYYY-MM-DDTHH:MM:SS`` text."""
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty store URL of the backend."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'contract.db'}"
        return
    with throwaway_database() as (_, pg_url):
        yield pg_url


def run(url: str, scenario: Callable[[Store], Awaitable[T]], **kw: Any) -> T:
    """``scenario(store)`` on the store at ``url``, opened and closed in a new event loop."""
    async def main() -> T:
        store = await open_store(url, **kw)
        try:
            return await scenario(store)
        finally:
            await store.close()

    return asyncio.run(main())


async def admit(store: Store, specs: list[CounterSpec], now: float) -> Admission:
    """One request's admission."""
    return (await store.admissions.admit_many([AdmissionRequest(specs, now)]))[0]


def spec(limit: int | None, amount: int = 1, name: str = "decide.month", subject: str = "k1",
         window: str = "month", gate: bool = False) -> CounterSpec:
    return CounterSpec(name, subject, window, limit, amount, gate)


# ---------------------------------------------------------------- keys


def test_keys_create_find_list_revoke(url: str) -> None:
    async def scenario(store: Store) -> None:
        assert isinstance(store, Store) and await store.ping()
        record, secret = await store.accounts.create_key("sdk", "pro", "acme")
        assert keys.is_well_formed(secret) and record["prefix"] == secret[:11]
        assert record == {"id": record["id"], "prefix": secret[:11], "plan": "sdk",
                          "tier": "pro", "label": "acme", "created_at": "2025-06-15T15:06:40Z",
                          "revoked_at": None, "limits": None}
        assert await store.accounts.find_key(secret) == record
        assert await store.accounts.get_key(record["id"]) == record
        other, _ = await store.accounts.create_key("free", "free")
        assert [r["id"] for r in await store.accounts.list_keys()] == [record["id"], other["id"]]
        assert await store.accounts.revoke_key(record["id"]) is True
        found = await store.accounts.find_key(secret)
        assert found is not None and found["revoked_at"] == "2025-06-15T15:06:40Z"
        assert await store.accounts.revoke_key(record["id"]) is True
        assert await store.accounts.revoke_key("no-such-id") is False
        assert (await store.accounts.get_key(other["id"]))["revoked_at"] is None
        assert await store.accounts.get_key("no-such-id") is None

    run(url, scenario, clock=lambda: NOW)


def test_keys_unknown_malformed_and_limits(url: str) -> None:
    limits = {"decision": {"minute": 5000, "month": None}, "optimization": {"max_dims": 20000}}

    async def scenario(store: Store) -> None:
        _, secret = await store.accounts.create_key("enterprise", "enterprise", "big", limits)
        assert (await store.accounts.find_key(secret))["limits"] == limits
        assert (await store.accounts.list_keys())[0]["limits"] == limits
        assert await store.accounts.find_key(keys.generate_secret()) is None
        for bad in ["", "dk_", "dk_short", "dk_" + "a" * 44, None, 42]:
            assert await store.accounts.find_key(bad) is None  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            await store.accounts.create_key("", "free")
        with pytest.raises(ValueError):
            await store.accounts.create_key("free", "free", limits=[1])  # type: ignore[arg-type]

    run(url, scenario)


def test_key_accounts(url: str) -> None:
    """A key made with ``owner`` joins the owner's account; every key of the account lists
    the same keys (revoked included); a key without an owner is its own account."""
    async def scenario(store: Store) -> None:
        first, _ = await store.accounts.create_key("sdk", "pro", "main")
        stranger, _ = await store.accounts.create_key("free", "free")
        child, _ = await store.accounts.create_key("free", "free", "ci", owner=first["id"])
        grandchild, _ = await store.accounts.create_key("free", "free", owner=child["id"])
        orphan, _ = await store.accounts.create_key("free", "free", owner="no-such-id")
        await store.accounts.revoke_key(child["id"])
        account = [first["id"], child["id"], grandchild["id"]]
        for member in account:
            assert [k["id"] for k in await store.accounts.account_keys(member)] == account
        listed = await store.accounts.account_keys(first["id"])
        assert listed[1]["revoked_at"] is not None and listed[1]["label"] == "ci"
        strangers = await store.accounts.account_keys(stranger["id"])
        assert [k["id"] for k in strangers] == [stranger["id"]]
        assert [k["id"] for k in await store.accounts.account_keys(orphan["id"])] == [orphan["id"]]
        assert await store.accounts.account_keys("no-such-id") == []

    run(url, scenario)


def test_sessions(url: str) -> None:
    """A session gives its key until it expires or is closed; revoked keys are still
    returned (the caller ends their sessions); expired rows go when a session opens."""
    async def scenario(store: Store) -> None:
        key, _ = await store.accounts.create_key("free", "free")
        await store.accounts.open_session("s1", key["id"], NOW + 60, NOW)
        await store.accounts.open_session("s2", key["id"], NOW + 120, NOW)
        assert (await store.accounts.session_key("s1", NOW))["id"] == key["id"]
        assert await store.accounts.session_key("s1", NOW + 60) is None  # expired
        assert await store.accounts.session_key("nope", NOW) is None
        await store.accounts.close_session("s2")
        await store.accounts.close_session("s2")  # twice: nothing happens
        assert await store.accounts.session_key("s2", NOW) is None
        await store.accounts.revoke_key(key["id"])
        assert (await store.accounts.session_key("s1", NOW))["revoked_at"] is not None
        await store.accounts.open_session("s3", key["id"], NOW + 300, NOW + 100)  # s1 pruned
        assert await store.accounts.session_key("s1", NOW) is None

    run(url, scenario)


def test_service_secrets_are_made_once(url: str) -> None:
    """The first candidate stored under a name is what every store on the database reads."""
    async def main() -> list[str]:
        stores = await asyncio.gather(*(open_store(url) for _ in range(3)))
        try:
            got = await asyncio.gather(*(s.accounts.service_secret("session", f"c{i}")
                                         for i, s in enumerate(stores)))
            got.append(await stores[0].accounts.service_secret("session", "late"))
            got.append(await stores[1].accounts.service_secret("other", "x"))
            return got
        finally:
            for s in stores:
                await s.close()

    got = asyncio.run(main())
    assert got[0] in ("c0", "c1", "c2") and got[:4] == [got[0]] * 4 and got[4] == "x"


# ---------------------------------------------------------------- admission


def test_admission_at_the_limit_edge(url: str) -> None:
    async def scenario(store: Store) -> None:
        results = [(await store.admissions.admit_many([AdmissionRequest([spec(3)], NOW)]))[0]
                   for _ in range(5)]
        assert [r.admitted for r in results] == [True, True, True, False, False]
        assert [r.counters[0].used for r in results] == [1, 2, 3, 3, 3]
        assert [r.counters[0].remaining for r in results] == [2, 1, 0, 0, 0]
        assert results[3].refused == results[3].counters[0] and results[0].refused is None
        # an amount that would cross the limit is refused even with room for less
        two = spec(4, amount=2, subject="k2")
        got = await store.admissions.admit_many([AdmissionRequest([two], NOW) for _ in range(3)])
        assert [a.admitted for a in got] == [True, True, False]
        # a gate passes while used < limit and never counts; observed never refuses
        gate = spec(2, name="g", gate=True)
        assert (await store.admissions.admit_many([AdmissionRequest([gate, spec(None, name="o",
                                                                    amount=0)], NOW)]))[0].admitted
        assert [c.used for c in await store.admissions.peek([spec(3), two, gate], NOW)] == [3, 4, 0]
        assert (await admit(store, [spec(0, amount=0, name="z")], NOW)).admitted
        assert not (await admit(store, [spec(0, name="z")], NOW)).admitted

    run(url, scenario)


def test_admission_is_all_or_nothing(url: str) -> None:
    minute = spec(10, name="decide.minute", window="minute")
    month = spec(4, amount=3)

    async def scenario(store: Store) -> None:
        assert (await admit(store, [minute, month], NOW)).admitted
        refused = (await store.admissions.admit_many([AdmissionRequest([minute, month], NOW)]))[0]
        assert not refused.admitted and refused.refused.name == "decide.month"
        assert [c.used for c in refused.counters] == [1, 3]
        assert [c.used for c in await store.admissions.peek([minute, month], NOW)] == [1, 3]
        ok = (await store.admissions.admit_many([AdmissionRequest([minute, spec(4)], NOW)]))[0]
        assert ok.admitted and [c.used for c in ok.counters] == [2, 4]
        a, b = spec(0, name="a"), spec(0, name="b")
        assert (await admit(store, [a, b], NOW)).refused.name == "a"

    run(url, scenario)


def test_windows_roll_over(url: str) -> None:
    """A minute's count ends with its minute, an hour's with its hour, a month's with the
    calendar month (December into January)."""
    minute = spec(2, name="m", window="minute")
    hour = spec(2, name="h", window="hour")
    month = spec(2, name="mo", window="month")
    eve = ts("2025-12-31T23:59:59")

    async def scenario(store: Store) -> None:
        for _ in range(2):
            assert (await store.admissions.admit_many([AdmissionRequest([minute, hour, month],
                                                              eve)]))[0].admitted
        full = (await store.admissions.admit_many([AdmissionRequest([minute], eve)]))[0]
        assert not full.admitted and full.counters[0].reset == ts("2026-01-01T00:00:00")
        new_year = ts("2026-01-01T00:00:00")
        got = await admit(store, [minute, hour, month], new_year)
        assert got.admitted and [c.used for c in got.counters] == [1, 1, 1]
        assert got.counters[2].window_end == ts("2026-02-01T00:00:00")
        states = await store.admissions.peek([minute, hour, month], eve)
        assert [c.used for c in states] == [2, 2, 2]
        # one minute on: the minute is free again, the hour and month are not
        later = new_year + 60
        got = await store.admissions.admit_many([AdmissionRequest([minute], later),
                                      AdmissionRequest([hour], later),
                                      AdmissionRequest([hour], later)])
        assert [a.admitted for a in got] == [True, True, False]

    run(url, scenario)


_NAMES = st.sampled_from(["a", "b", "c"])
_SPEC = st.builds(
    lambda name, limit, amount, window: CounterSpec(name, "k", window, limit, amount),
    _NAMES, st.one_of(st.none(), st.integers(0, 6)), st.integers(0, 3),
    st.sampled_from(["minute", "month"]))
_REQUEST = st.lists(_SPEC, min_size=1, max_size=3, unique_by=lambda s: (s.name, s.window))


@settings(max_examples=25, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.lists(_REQUEST, min_size=1, max_size=6), min_size=1, max_size=4))
def test_a_batch_is_judged_like_one_request_at_a_time(url: str, batches: list) -> None:
    """Whatever the batch (limits reached inside it or not), ``admit_many`` answers what a
    plain model of one-at-a-time admission answers. Each example has subjects of its own."""
    subject = f"s{uuid.uuid4().hex}"
    counts: dict[tuple[str, str], int] = {}

    def model(specs: list[CounterSpec]) -> tuple[bool, list[int], str | None]:
        used = [counts.get((s.name, s.window), 0) for s in specs]
        over = [s.name for s, u in zip(specs, used, strict=True)
                if s.limit is not None and u + s.amount > s.limit]
        if over:
            return False, used, over[0]
        for s in specs:
            counts[(s.name, s.window)] = counts.get((s.name, s.window), 0) + s.amount
        return True, [u + s.amount for s, u in zip(specs, used, strict=True)], None

    async def scenario(store: Store) -> None:
        for batch in batches:
            mine = [[s._replace(subject=subject) for s in specs] for specs in batch]
            got = await store.admissions.admit_many([AdmissionRequest(specs, NOW)
                                                     for specs in mine])
            for specs, answer in zip(mine, got, strict=True):
                admitted, used, refused = model(specs)
                assert answer.admitted == admitted
                assert [c.used for c in answer.counters] == used
                assert (answer.refused.name if answer.refused else None) == refused
        probe = [CounterSpec(n, subject, w, None, 0) for n, w in sorted(counts)]
        states = await store.admissions.peek(probe, NOW)
        assert [c.used for c in states] == [counts[(p.name, p.window)]
                                                                  for p in probe]

    run(url, scenario)


def test_revocation_is_checked_in_the_admission(url: str) -> None:
    async def scenario(store: Store) -> None:
        live, _ = await store.accounts.create_key("sdk", "team")
        gone, _ = await store.accounts.create_key("sdk", "team")
        assert await store.accounts.revoke_key(gone["id"])
        minute = spec(10, name="decide.minute", window="minute")
        out = await store.admissions.admit_many([
            AdmissionRequest([minute._replace(subject=live["id"])], NOW, live["id"]),
            AdmissionRequest([minute._replace(subject=gone["id"])], NOW, gone["id"]),
            AdmissionRequest([minute._replace(subject="x")], NOW, "no-such-key"),
            AdmissionRequest([minute._replace(subject="anon")], NOW),
        ])
        assert [a.admitted for a in out] == [True, False, False, True]
        assert out[1].revoked_at == (await store.accounts.get_key(gone["id"]))["revoked_at"]
        assert out[2].revoked_at is not None and out[2].refused is None
        assert out[0].revoked_at is None and out[3].revoked_at is None
        used = [c.used for c in await store.admissions.peek([minute._replace(subject=live["id"]),
                                                  minute._replace(subject=gone["id"]),
                                                  minute._replace(subject="x")], NOW)]
        assert used == [1, 0, 0]
        assert await store.admissions.admit_many([]) == []

    run(url, scenario)


def test_bad_specs_are_value_errors(url: str) -> None:
    async def scenario(store: Store) -> None:
        for bad in ([spec(1, window="week")], [spec(1, amount=-1)], [spec(1), spec(2)]):
            with pytest.raises(ValueError):
                await store.admissions.admit_many([AdmissionRequest(bad, NOW)])

    run(url, scenario)


def test_stores_admitting_at_once_admit_exactly_the_limit(url: str) -> None:
    """Three stores (three nodes' pools) with a group commit each, 60 concurrent requests
    each, one counter of limit 50: exactly 50 admitted, the other counter counts them."""
    limit = 50

    async def main() -> list[int]:
        stores = [await open_store(url) for _ in range(3)]
        try:
            commits = [GroupCommit(s.admissions) for s in stores]
            requests = [AdmissionRequest([spec(limit, name="race", window="minute"),
                                          spec(None, name="all", window="minute")], NOW)
                        for _ in range(60)]
            futures = [commits[i % 3].submit(r) for i, r in enumerate(requests * 3)]
            random.shuffle(futures)
            answers = await asyncio.gather(*futures)
            admitted = sum(a.admitted for a in answers)
            states = await stores[0].admissions.peek([spec(limit, name="race", window="minute"),
                                           spec(None, name="all", window="minute")], NOW)
            return [admitted, *(s.used for s in states)]
        finally:
            for s in stores:
                await s.close()

    assert asyncio.run(main()) == [limit, limit, limit]


# ---------------------------------------------------------------- decision log, runs


def _decision(i: int, key_id: str = "k1", created: str = "2025-06-15T15:06:40Z",
              epoch: float = 1750000000.0) -> DecisionEntry:
    return DecisionEntry(f"dec_{i:03d}", key_id, created, epoch,
                         json.dumps({"method": "wsm", "best": f"o{i}"}), json.dumps({"n": i}),
                         None if i % 2 else json.dumps({"best": f"o{i}"}))


def test_decision_log(url: str) -> None:
    async def scenario(store: Store) -> None:
        await store.admissions.admit_many([], [_decision(i) for i in range(5)]
                                          + [_decision(9, "k2")])
        first = await store.decisions.page("k1", 2)
        assert [d["id"] for d in first] == ["dec_004", "dec_003"]
        assert first[0]["request"] is None and first[0]["summary"]["best"] == "o4"
        rest = await store.decisions.page("k1", 10, starting_after="dec_003")
        assert [d["id"] for d in rest] == ["dec_002", "dec_001", "dec_000"]
        # a cursor that is not one of the key's is the position its id gives
        assert [d["id"] for d in await store.decisions.page(
            "k1", 10, starting_after="dec_009")] == [f"dec_00{i}" for i in range(4, -1, -1)]
        assert [d["id"] for d in await store.decisions.page(
            "k1", 10, starting_after="dec_0025")] == ["dec_002", "dec_001", "dec_000"]
        assert await store.decisions.page("k1", 10, starting_after="dec_") == []
        got = await store.decisions.get("k1", "dec_002")
        assert got["request"] == {"n": 2} and got["answer"] == {"best": "o2"}
        assert (await store.decisions.get("k1", "dec_001"))["answer"] is None
        assert await store.decisions.get("k2", "dec_002") is None

    run(url, scenario)


def test_prune_deletes_old_counter_windows_and_decisions(url: str) -> None:
    """Minute and hour rows an hour past their window, and decision-log entries past the
    retention, go; month rows (the usage record) and younger rows stay."""
    async def scenario(store: Store) -> None:
        old = NOW - 40 * 86_400  # May 2025
        minute, hour = spec(None, name="m", window="minute"), spec(None, name="h", window="hour")
        await admit(store, [minute, hour, spec(None)], old)
        await admit(store, [minute], NOW)
        await store.admissions.admit_many([], [_decision(1, epoch=NOW - 2 * 86_400),
                                               _decision(2, epoch=NOW - 3600)])
        assert await store.prune(NOW) == 3  # two counter rows, one decision
        assert [s.used for s in await store.admissions.peek([minute, spec(None)], NOW)] == [1, 0]
        assert (await store.admissions.peek([spec(None)], old))[0].used == 1
        assert [d["id"] for d in await store.decisions.page("k1", 10)] == ["dec_002"]
        assert await store.prune(NOW) == 0

    run(url, scenario, decision_retention=86_400.0)


def test_a_request_s_log_entry_is_written_only_when_it_is_admitted(url: str) -> None:
    """The entry an admission request carries is committed with it, and not at all when
    the request is refused."""
    spec = CounterSpec("decisions", "k1", "minute", 1)

    async def scenario(store: Store) -> None:
        now = 1750000000.0
        first, second = await store.admissions.admit_many([
            AdmissionRequest([spec], now, log=_decision(1)),
            AdmissionRequest([spec], now, log=_decision(2))])
        assert first.admitted and not second.admitted
        assert [d["id"] for d in await store.decisions.page("k1", 10)] == ["dec_001"]

    run(url, scenario)


def test_runs(url: str) -> None:
    async def scenario(store: Store) -> None:
        await store.runs.record({
            "id": "r1", "key_id": "k", "created_at": "2025-06-15T15:06:40Z", "engine": "dss",
            "dims": 3, "status": "converged", "value": 0.5, "evaluations": 100,
            "elapsed_ms": 1.5, "goal": "minimize", "seed": 2**64 - 1, "ignored": "x",
            "document": DOCUMENT})
        await store.runs.record({"key_id": "k", "engine": "de", "seed": 7, "document": DOCUMENT})
        runs = await store.runs.page("k", 100)
        assert [r.engine for r in runs] == ["de", "dss"]
        first = next(r for r in runs if r.id == "r1")
        assert first.seed == str(2**64 - 1) and first.value == 0.5
        assert first.dims == 3 and first.evaluations == 100 and first.document == DOCUMENT
        second = next(r for r in runs if r.id != "r1")
        assert second.seed == 7 and second.created_at == "2025-06-15T15:06:40Z"
        assert await store.runs.page("other", 100) == []

    run(url, scenario, clock=lambda: NOW)


def test_run_lifecycle_pages_cancel_and_delete(url: str) -> None:
    async def scenario(store: Store) -> None:
        ids = [f"run_{i:024x}" for i in range(5)]
        for i, run_id in enumerate(ids):
            await store.runs.record({"id": run_id, "key_id": "k", "engine": "de" if i % 2
                                    else "dss", "state": "queued", "document": DOCUMENT,
                                    "seed": 2**64 - 1 if i == 0 else i})
        await store.runs.record({"id": "run_" + "f" * 24, "key_id": "other", "state": "queued",
                                 "document": DOCUMENT})
        started = msgspec.structs.replace(DOCUMENT, started_at="2025-06-15T15:06:41Z")
        assert await store.runs.update(ids[0], {"state": "running", "document": started})
        assert await store.runs.count_by_state() == {"queued": 5, "running": 1}  # every key's
        assert not await store.runs.update("run_" + "e" * 24, {"state": "running"})
        with pytest.raises(ValueError):
            await store.runs.update(ids[0], {"key_id": "other"})
        with pytest.raises(ValueError):
            await store.runs.update(ids[0], {})
        got = await store.runs.get("k", ids[0])
        assert got is not None and got.state == "running" and got.document == started
        assert got.seed == str(2**64 - 1) and got.cancel_requested is False
        assert await store.runs.get("other", ids[0]) is None  # another key's run
        # pages: newest first, a cursor, filters
        page = await store.runs.page("k", 3)
        assert [r.id for r in page] == ids[::-1][:3]
        rest = await store.runs.page("k", 3, starting_after=page[-1].id)
        assert [r.id for r in rest] == ids[1::-1]
        assert [r.id for r in await store.runs.page("k", 10, engine="de")] == [ids[3], ids[1]]
        assert [r.id for r in await store.runs.page("k", 10, state="running")] == [ids[0]]
        assert [r.id for r in await store.runs.page("k", 10, ids[3], "queued", "dss")
                ] == [ids[2]]
        # another key's run (or one deleted, or never made): the position its id gives
        assert [r.id for r in await store.runs.page(
            "k", 3, starting_after="run_" + "f" * 24)] == ids[::-1][:3]
        assert await store.runs.page("other", 3, starting_after=ids[4]) == []
        assert [r.id for r in await store.runs.page(
            "other", 3, starting_after="run_" + "f" * 23 + "g")] == ["run_" + "f" * 24]
        # cancel: flagged while unfinished; a finished run keeps its flag unset
        assert await store.runs.request_cancel("k", ids[0]) == "running"
        flagged = await store.runs.get("k", ids[0])
        assert flagged is not None and flagged.cancel_requested is True
        assert await store.runs.cancel_requested(ids[0]) is True  # the flag alone
        assert await store.runs.cancel_requested(ids[2]) is False
        assert await store.runs.cancel_requested("run_" + "e" * 24) is None
        assert await store.runs.request_cancel("other", ids[0]) is None
        await store.runs.update(ids[1], {"state": "succeeded", "value": 1.5, "seed": 9,
                                        "finished_at": "2025-06-15T15:06:41Z"})
        assert await store.runs.request_cancel("k", ids[1]) == "succeeded"
        done = await store.runs.get("k", ids[1])
        assert done is not None and done.cancel_requested is False
        assert done.value == 1.5 and done.seed == 9
        # delete: finished runs only, own runs only
        assert await store.runs.delete("k", ids[0]) == "running"
        assert await store.runs.delete("other", ids[1]) is None
        assert await store.runs.delete("k", ids[1]) == "succeeded"
        assert await store.runs.get("k", ids[1]) is None
        assert await store.runs.delete("k", ids[1]) is None
        assert len(await store.runs.page("k", 10)) == 4
        unfinished = await store.runs.unfinished()  # every key's, oldest first
        assert [r.id for r in unfinished] == [ids[0], *ids[2:], "run_" + "f" * 24]

    run(url, scenario, clock=lambda: NOW)


def test_a_runs_front_is_written_with_its_final_state_read_in_chunks_and_deleted_with_it(
        url: str) -> None:
    async def scenario(store: Store) -> None:
        ids = [f"run_{i:024x}" for i in range(4)]
        for run_id in ids:
            await store.runs.record({"id": run_id, "key_id": "k", "state": "running",
                                     "owner": "me", "document": DOCUMENT})
        chunks = [(0, 2, '[{"p": 0}, {"p": 1}]'), (2, 1, '[{"p": 2}]'), (3, 3, "[3, 4, 5]")]
        # written only with the update (here a lost one writes nothing)
        assert not await store.runs.update(ids[0], {"state": "succeeded"}, {"owner": "you"},
                                           chunks)
        assert await store.runs.front(ids[0], -1, 10) == []
        for run_id in ids:
            assert await store.runs.update(run_id, {
                "state": "succeeded", "finished_at": "2025-06-15T15:06:41Z"}, {"owner": "me"},
                chunks)
        assert await store.runs.front(ids[0], -1, 10) == chunks
        assert await store.runs.front(ids[0], -1, 2) == chunks[:2]
        assert await store.runs.front(ids[0], 1, 10) == chunks[1:]  # after point 1
        assert await store.runs.front(ids[0], 3, 10) == chunks[2:]  # within a chunk
        assert await store.runs.front(ids[0], 5, 10) == []
        row = await store.runs.get("k", ids[0])
        # a run's row never holds its front
        assert row is not None and "front" not in msgspec.structs.asdict(row)
        # deleted with its run: one, the key's finished ones, the old ones
        assert await store.runs.delete("k", ids[0]) == "succeeded"
        assert await store.runs.front(ids[0], -1, 10) == []
        assert await store.runs.prune("2025-06-16T00:00:00Z") == 3
        assert [await store.runs.front(r, -1, 10) for r in ids] == [[]] * 4
        await store.runs.record({"id": ids[0], "key_id": "k", "state": "running",
                                 "document": DOCUMENT})
        assert await store.runs.update(ids[0], {"state": "failed"}, None, chunks[:1])
        assert await store.runs.delete_finished("k") == 1
        assert await store.runs.front(ids[0], -1, 10) == []

    run(url, scenario, clock=lambda: NOW)


# ---------------------------------------------------------------- schema, lifecycle


def _version_rows(backend: str, url: str) -> list[int]:
    if backend == "sqlite":
        import sqlite3

        with sqlite3.connect(url.removeprefix("sqlite://")) as raw:
            rows = raw.execute("SELECT version FROM schema_version ORDER BY version")
            return [r[0] for r in rows.fetchall()]
    rows = execute(url, "SELECT version FROM schema_version ORDER BY version")
    return [int(r[0]) for r in rows]  # type: ignore[call-overload]


def _set_version(backend: str, url: str, version: int) -> None:
    sql = f"INSERT INTO schema_version (version, applied_at) VALUES ({version}, 'future')"
    if backend == "sqlite":
        import sqlite3

        with sqlite3.connect(url.removeprefix("sqlite://")) as raw:
            raw.execute(sql)
        return
    execute(url, sql)


def test_stores_starting_together_migrate_once(backend: str, url: str) -> None:
    """Six stores open an empty database at the same moment: each migration is applied
    exactly once, and every store works."""
    async def main() -> list[bool]:
        stores = await asyncio.gather(*(open_store(url) for _ in range(6)))
        try:
            return [await s.ping() for s in stores]
        finally:
            for s in stores:
                await s.close()

    assert asyncio.run(main()) == [True] * 6
    assert _version_rows(backend, url) == list(range(1, len(MIGRATIONS) + 1))


def test_a_newer_database_is_refused(backend: str, url: str) -> None:
    run(url, lambda store: store.ping())
    _set_version(backend, url, len(MIGRATIONS) + 5)
    with pytest.raises(StoreError, match="newer than this code"):
        run(url, lambda store: store.ping())


def test_open_without_create_refuses_an_empty_store(backend: str, url: str) -> None:
    with pytest.raises(StoreError, match="decido keys create"):
        run(url, lambda store: store.ping(), create=False)
    run(url, lambda store: store.ping())  # now it exists
    assert run(url, lambda store: store.ping(), create=False) is True


def test_a_closed_store_raises_store_error(url: str) -> None:
    async def main() -> None:
        store = await open_store(url)
        await store.close()
        with pytest.raises(StoreError):
            await store.admissions.admit_many([AdmissionRequest([spec(1)], NOW)])
        assert await store.ping() is False

    asyncio.run(main())


# ---------------------------------------------------------------- choosing the store


def test_postgres_urls_and_their_options() -> None:
    from decido_service.store.postgres_url import (
        POOL_MAX,
        is_postgres_url,
        parse_postgres_url,
        redact_url,
    )

    got = parse_postgres_url("postgresql://u:pw@db:5433/d?sslmode=require&pool_max=8"
                             "&pool_timeout=0.5&connect_timeout=2&command_timeout=3")
    assert got.dsn == "postgresql://u:pw@db:5433/d?sslmode=require"
    assert (got.pool_min, got.pool_max, got.pool_timeout, got.connect_timeout,
            got.command_timeout) == (1, 8, 0.5, 2.0, 3.0)
    assert parse_postgres_url("postgres://u@/d?host=/run/pg").pool_max == POOL_MAX
    assert [is_postgres_url(u) for u in ("postgresql://x/y", "postgres://x/y", "sqlite:///a",
                                         "/a/b.db", "postgresql:x")] == [True, True, False,
                                                                         False, False]
    for bad in ("postgresql://u@h/d?pool_max=0", "postgresql://u@h/d?pool_min=5&pool_max=2",
                "postgresql://u:pw@h/d?pool_timeout=soon"):
        with pytest.raises(ValueError) as info:
            parse_postgres_url(bad)
        assert "pw" not in str(info.value)
    assert redact_url("postgresql://u:secret@h/d?password=also&x=1") == (
        "postgresql://u:***@h/d?password=***&x=1")
    assert redact_url("/plain/path.db") == "/plain/path.db"


def test_open_store_dispatches_on_the_url(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"cannot connect to postgresql://u:\*\*\*@127\.0\.0\.1"):
        asyncio.run(open_store("postgresql://u:secret@127.0.0.1:1/x?connect_timeout=2"))
    with pytest.raises(ValueError, match="expected sqlite: or postgresql://"):
        asyncio.run(open_store("mysql://u@h/d"))
    assert run(f"sqlite:///{tmp_path / 'a.db'}", lambda store: store.ping())


def test_store_option_and_variable() -> None:
    from decido_service.cli import keys, serve
    from decido_service.config import Settings

    assert Settings.from_env({"DECIDO_STORE": "postgresql://a/b"}).db == "postgresql://a/b"
    assert Settings.from_env({"DECIDO_DB": "x.db"}).db == "x.db"
    assert Settings.from_env({"DECIDO_DB": "x.db", "DECIDO_STORE": "x.db"}).db == "x.db"
    with pytest.raises(ValueError, match="DECIDO_STORE and DECIDO_DB"):
        Settings.from_env({"DECIDO_DB": "x.db", "DECIDO_STORE": "postgresql://a/b"})
    listing = keys.commands["list"]
    for flag in ("--store", "--db"):
        assert listing.make_context("list", [flag, "postgresql://a/b"]).params["db"] == \
            "postgresql://a/b"
        assert serve.make_context("serve", [flag, "y.db"]).params["db"] == "y.db"


def test_cli_keys_on_the_store(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``decido keys create|list|revoke --store URL`` on either backend."""
    import json

    from decido import cli

    assert cli.main(["keys", "list", "--store", url]) == 1  # nothing there yet
    assert "decido keys create" in capsys.readouterr().err
    assert cli.main(["keys", "create",
                     "--create", "--plan", "sdk", "--label", "cli", "--store", url,
                     "--json"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert cli.main(["keys", "list", "--db", url, "--json"]) == 0
    assert [k["id"] for k in json.loads(capsys.readouterr().out)] == [made["id"]]
    assert cli.main(["keys", "revoke", made["id"], "--store", url]) == 0
    assert "Revoked key" in capsys.readouterr().out
    assert cli.main(["keys", "revoke", "nope", "--store", url]) == 1
    found = run(url, lambda store: store.accounts.find_key(made["key"]))
    assert found is not None and found["revoked_at"] is not None


def test_ordered_ids_sort_by_creation_time_and_differ() -> None:
    from decido_service.store import ordered_id

    ids = [ordered_id("dec_", 1_767_225_600.0 + i / 1000) for i in range(50)]
    assert ids == sorted(ids) and len(set(ids)) == 50
    assert all(len(i) == 4 + 24 and int(i[4:], 16) >= 0 for i in ids)
    same_ms = {ordered_id("run_", 1_767_225_600.0) for _ in range(1000)}
    assert len(same_ms) == 1000  # 48 random bits apart within one millisecond


# ---------------------------------------------------------------- metadata (labels)

#: labels with what SQL and JSON paths treat specially (quotes, dots, brackets in values,
#: unicode, an empty value) and a value that is a number's text
LABELS = [{"project": "bridge-A", "team": "north"}, {"project": "bridge-B"},
          {"project": "bridge-A", "team": "south", "it's": 'a "q"', "a.b": "x[0]"},
          {}, {"project": "bridge-A", "zone": "", "π": "3.14"}, {"n": "7"}]


def test_runs_and_decisions_filter_by_their_labels(url: str) -> None:
    """Labels are kept as given (``{}`` for none), and a page keeps the rows with every
    label asked for, newest first, with its cursor; another key's rows never."""
    async def scenario(store: Store) -> None:
        ids = [f"run_{i:024x}" for i in range(len(LABELS))]
        for run_id, labels in zip(ids, LABELS, strict=True):
            await store.runs.record({"id": run_id, "key_id": "k", "state": "queued",
                                     "metadata": labels, "document": DOCUMENT})
        await store.runs.record({"id": "run_" + "f" * 24, "key_id": "other",
                                 "metadata": {"project": "bridge-A"}, "document": DOCUMENT})
        await store.admissions.admit_many([], [
            _decision(i, "k")._replace(metadata=json.dumps(labels) if labels else None)
            for i, labels in enumerate(LABELS)] + [
            _decision(90, "other")._replace(metadata='{"project": "bridge-A"}')])
        assert [(await store.runs.get("k", i)).metadata for i in ids] == LABELS
        assert [(await store.decisions.get("k", f"dec_{i:03d}") or {})["metadata"]
                for i in range(len(LABELS))] == LABELS
        cases = [({"project": "bridge-A"}, [4, 2, 0]), ({"project": "bridge-A", "team": "south"},
                 [2]), ({"it's": 'a "q"', "a.b": "x[0]"}, [2]), ({"zone": ""}, [4]),
                 ({"π": "3.14"}, [4]), ({"n": "7"}, [5]), ({"project": "bridge-C"}, []),
                 ({"team": "north", "project": "bridge-B"}, []), ({}, [5, 4, 3, 2, 1, 0])]
        for labels, want in cases:
            runs = await store.runs.page("k", 10, metadata=labels)
            assert [r.id for r in runs] == [ids[i] for i in want], labels
            decisions = await store.decisions.page("k", 10, metadata=labels)
            assert [d["id"] for d in decisions] == [f"dec_{i:03d}" for i in want], labels
            assert all(d["metadata"] == LABELS[i] for d, i in zip(decisions, want,
                                                                   strict=True))
        # a page after a cursor keeps filtering
        assert [r.id for r in await store.runs.page(
            "k", 1, starting_after=ids[4], metadata={"project": "bridge-A"})] == [ids[2]]
        assert [d["id"] for d in await store.decisions.page(
            "k", 1, "dec_004", {"project": "bridge-A"})] == ["dec_002"]
        assert [r.id for r in await store.runs.page(
            "k", 10, state="queued", metadata={"n": "7"})] == [ids[5]]

    run(url, scenario, clock=lambda: NOW)
