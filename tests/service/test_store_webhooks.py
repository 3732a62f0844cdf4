"""The store's webhooks concern on SQLite and PostgreSQL alike: a run's deliveries are
written with its final state (and only then), the per-key cap, claims that never give one
delivery to two callers, leases, the lost lease, 410 and five days of failures."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

from test_store_contract import DOCUMENT, backend, run, url  # noqa: F401 - fixtures

from decido_service.store import Store, run_row
from decido_service.store.webhooks import CANDIDATES
from decido_service.webhooks.worker import FAILING_AFTER

NOW = 1_750_000_000.0


def hook(key_id: str, n: int, events: list[str], enabled: int = 1) -> dict[str, Any]:
    return {"id": f"wh_{n:024x}", "key_id": key_id, "url": "https://h.example/",
            "events": json.dumps(events), "enabled": enabled, "secret": "whsec_x",
            "created_at": "2025-06-15T15:06:40Z"}


def test_run_deliveries_come_with_the_final_state(url: str) -> None:  # noqa: F811
    async def scenario(store: Store) -> None:
        assert await store.webhooks.create(hook("k1", 1, ["run.succeeded"]), 2)
        assert await store.webhooks.create(hook("k1", 2, ["*"]), 2)
        assert not await store.webhooks.create(hook("k1", 3, ["*"]), 2)  # the cap
        assert await store.webhooks.create(hook("k1", 4, ["*"], enabled=0), None)
        assert await store.webhooks.create(hook("k2", 5, ["*"]), 2)  # another key's
        await store.runs.record({"id": "run_a", "key_id": "k1", "state": "running",
                                "owner": "p", "engine": "dss", "document": DOCUMENT})
        await store.runs.update("run_a", {"state": "running"})  # not final: nothing
        assert await store.webhooks.claim("w", NOW, NOW + 60, 10) == []
        assert not await store.runs.update("run_a", {"state": "cancelled"}, {"owner": "q"})
        assert await store.webhooks.claim("w", NOW, NOW + 60, 10) == []
        assert await store.runs.update("run_a", {"state": "succeeded",
                                                "finished_at": "2025-06-15T15:06:41Z"},
                                      {"owner": "p"})
        claimed = await store.webhooks.claim("w", NOW + 1e9, NOW + 2e9, 10)
        assert sorted(c["webhook_id"] for c in claimed) == [f"wh_{1:024x}", f"wh_{2:024x}"]
        assert {c["event"] for c in claimed} == {"run.succeeded"}
        payload = json.loads(claimed[0]["payload"])
        assert payload["id"] == "run_a" and payload["state"] == "succeeded"
        # the run's row as it was written with its final state
        assert run_row(payload) == await store.runs.get("k1", "run_a")
        assert claimed[0]["created_at"] == "2025-06-15T15:06:41Z"
        await store.runs.record({"id": "run_b", "key_id": "k1", "state": "running",
                                "document": DOCUMENT})
        await store.runs.update("run_b", {"state": "failed"})  # only hook 2 wants it
        later = await store.webhooks.claim("w", NOW + 1e9, NOW + 60, 10)
        assert [(c["webhook_id"], c["event"]) for c in later] == [(f"wh_{2:024x}",
                                                                   "run.failed")]

    run(url, scenario)


def delivery(n: int, webhook: int, due: float) -> dict[str, Any]:
    return {"id": f"msg_{n:024x}", "webhook_id": f"wh_{webhook:024x}", "key_id": "k1",
            "event": "webhook.test", "payload": "{}", "created_at": "2025-06-15T15:06:40Z",
            "state": "pending", "attempts": "[]", "next_attempt": due, "retry_index": 1}


def test_claims_leases_and_outcomes(url: str) -> None:  # noqa: F811
    async def scenario(store: Store) -> None:
        await store.webhooks.create(hook("k1", 1, ["*"]), None)
        for n in range(20):
            await store.webhooks.add_delivery(delivery(n, 1, NOW))
        await store.webhooks.add_delivery(delivery(99, 1, NOW + 100))  # not due yet
        taken = await asyncio.gather(*(store.webhooks.claim(f"w{i}", NOW, NOW + 60, 3)
                                       for i in range(10)))
        ids = [d["id"] for batch in taken for d in batch]
        assert len(ids) == len(set(ids)) == 20  # each taken once
        assert await store.webhooks.claim("late", NOW + 30, NOW + 90, 50) == []  # leased
        first = taken[0][0]
        again = await store.webhooks.claim("late", NOW + 61, NOW + 121, 50)
        assert len(again) == 20  # the leases ran out: taken over
        record = {"id": first["id"], "webhook_id": first["webhook_id"], "attempts": "[{}]",
                  "state": "pending", "next_attempt": NOW + 200, "retry_index": 2}
        assert not await store.webhooks.finish(record, first["owner"], "failed", NOW,
                                               FAILING_AFTER)  # no longer its own
        assert await store.webhooks.finish(record, "late", "failed", NOW, FAILING_AFTER)
        got = await store.webhooks.get_delivery("k1", first["webhook_id"], first["id"])
        assert got is not None and got["attempts"] == "[{}]" and got["owner"] is None
        w = await store.webhooks.get("k1", first["webhook_id"])
        assert w is not None and w["enabled"] and w["failing_since"] == NOW
        # still failing 5 days later: disabled; its deliveries are no longer claimed
        second = {**record, "id": again[1]["id"]}
        assert await store.webhooks.finish(second, "late", "failed", NOW + FAILING_AFTER,
                                           FAILING_AFTER)
        w = await store.webhooks.get("k1", first["webhook_id"])
        assert w is not None and not w["enabled"] and w["disabled_reason"] == "failing"
        assert await store.webhooks.claim("x", NOW + 1e6, NOW + 2e6, 50) == []
        # enabled again, a success ends the streak; a 410 disables at once
        await store.webhooks.update("k1", w["id"], {"enabled": 1, "disabled_reason": None,
                                                    "failing_since": None})
        third = {**record, "id": again[2]["id"], "state": "delivered"}
        assert await store.webhooks.finish(third, "late", "failed", NOW + 1, FAILING_AFTER)
        assert await store.webhooks.finish({**third, "id": again[3]["id"]}, "late", "ok",
                                           NOW + 2, FAILING_AFTER)
        w = await store.webhooks.get("k1", w["id"])
        assert w is not None and w["failing_since"] is None
        assert await store.webhooks.finish({**third, "id": again[4]["id"]}, "late", "gone",
                                           NOW + 3, FAILING_AFTER)
        w = await store.webhooks.get("k1", w["id"])
        assert w is not None and not w["enabled"] and w["disabled_reason"] == "gone"
        # pages, newest first; resend; delete takes the deliveries along
        page = await store.webhooks.page_deliveries("k1", w["id"], 5)
        assert [d["id"] for d in page] == [f"msg_{n:024x}" for n in (99, 19, 18, 17, 16)]
        rest = await store.webhooks.page_deliveries("k1", w["id"], 100, page[-1]["id"])
        assert len(rest) == 16
        # a delivery id that is not one of them is the position it gives
        between = await store.webhooks.page_deliveries("k1", w["id"], 2, f"msg_{20:024x}")
        assert [d["id"] for d in between] == [f"msg_{n:024x}" for n in (19, 18)]
        assert await store.webhooks.resend("k1", w["id"], first["id"], NOW + 5, 8)
        assert not await store.webhooks.resend("k2", w["id"], first["id"], NOW + 5, 8)
        assert await store.webhooks.delete("k1", w["id"])
        assert await store.webhooks.page_deliveries("k1", w["id"], 5) == []
        assert not await store.webhooks.delete("k1", w["id"])

    run(url, scenario)


def keyed(n: int, key_id: str, webhook: int, due: float) -> dict[str, Any]:
    return {**delivery(n, webhook, due), "key_id": key_id}


def test_claims_are_fair_across_keys_within_the_caps(url: str) -> None:  # noqa: F811
    """One key's 80 due deliveries (older than another key's) never queue the other key's
    behind them; a key never has more than ``per_key`` attempts in flight, an endpoint
    never more than ``per_endpoint``, every claimer together."""
    async def scenario(store: Store) -> None:
        for w in range(1, 6):
            await store.webhooks.create(hook("busy", w, ["*"]), None)
        await store.webhooks.create(hook("calm", 9, ["*"]), None)
        for n in range(80):
            await store.webhooks.add_delivery(keyed(n, "busy", 1 + n % 5, NOW - 100 + n))
        await store.webhooks.add_delivery(keyed(100, "calm", 9, NOW))
        caps = {"per_key": 4, "per_endpoint": 2}
        first = await store.webhooks.claim("w1", NOW, NOW + 60, 2, **caps)
        # the busy key's oldest and the calm key's only one: fair, not the 2 oldest
        assert sorted((d["key_id"], d["id"]) for d in first) == [
            ("busy", f"msg_{0:024x}"), ("calm", f"msg_{100:024x}")]
        taken = await asyncio.gather(*(store.webhooks.claim(f"w{i}", NOW, NOW + 60, 8, **caps)
                                       for i in range(2, 8)))
        held = first + [d for batch in taken for d in batch]
        busy = [d for d in held if d["key_id"] == "busy"]
        assert len(busy) == 4  # the key's cap, every claimer together
        assert max(Counter(d["webhook_id"] for d in busy).values()) <= 2
        # one attempt ends: one more of the key may go; a lease that ran out frees its slot
        done = busy[0]
        assert await store.webhooks.finish(
            {"id": done["id"], "webhook_id": done["webhook_id"], "attempts": "[{}]",
             "state": "delivered", "next_attempt": None, "retry_index": 1},
            done["owner"], "ok", NOW, FAILING_AFTER)
        assert len(await store.webhooks.claim("w9", NOW, NOW + 60, 8, **caps)) == 1
        assert await store.webhooks.claim("w9", NOW, NOW + 60, 8, **caps) == []
        again = await store.webhooks.claim("w9", NOW + 61, NOW + 121, 8, **caps)
        assert Counter(d["key_id"] for d in again) == {"busy": 4, "calm": 1}
        # one endpoint alone: its cap holds although the key's allows more
        await store.webhooks.create(hook("solo", 20, ["*"]), None)
        for n in range(200, 210):
            await store.webhooks.add_delivery(keyed(n, "solo", 20, NOW))
        solo = await store.webhooks.claim("w10", NOW + 61, NOW + 121, 8, **caps)
        assert [d["key_id"] for d in solo].count("solo") == 2

    run(url, scenario)


def test_a_flood_of_one_key_delays_another_by_one_claim_at_most(url: str) -> None:  # noqa: F811
    """Of the due deliveries of keys and endpoints below their caps, a claim ranks the
    CANDIDATES due first: a key with more, older ones is at its cap after that claim and
    passed over by the next, which takes the other key's."""
    async def scenario(store: Store) -> None:
        await store.webhooks.create(hook("flood", 1, ["*"]), None)
        await store.webhooks.create(hook("calm", 2, ["*"]), None)
        for n in range(CANDIDATES + 50):
            await store.webhooks.add_delivery(keyed(n, "flood", 1, NOW - 1000 + n))
        await store.webhooks.add_delivery(keyed(10_000, "calm", 2, NOW))
        caps = {"per_key": 4, "per_endpoint": 4}
        first = await store.webhooks.claim("w1", NOW, NOW + 60, 8, **caps)
        assert Counter(d["key_id"] for d in first) == {"flood": 4}
        second = await store.webhooks.claim("w2", NOW, NOW + 60, 8, **caps)
        assert [d["key_id"] for d in second] == ["calm"]

    run(url, scenario)
