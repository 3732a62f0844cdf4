"""Decisions under uncertainty (SMAA) on the service: the plan's cap on sampled values
(samples x options x the attributes read per option), checked before anything is sampled
or counted, per decision, per batch item and per batch; and the worker's sample threads,
one sampled decision per key at a time."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from conftest import LiveServer, auth, running
from test_api_decide import DECISION, usage
from test_api_meta import assert_problem

#: the free plan's cap on sampled values (tiers.DEFAULT_PLANS)
FREE_CAP = 1_000_000


def smaa(samples: int | None, m: int, k: int = 1, **extra: Any) -> dict[str, Any]:
    """A WSM decision of ``m`` options with ``k`` uncertain criteria, ``samples`` samples
    (``None``: the default, 10,000)."""
    options = [{"id": f"o{i}", "attributes": {
        f"c{j}": {"low": i + 1.0, "high": i + 3.0} for j in range(k)}} for i in range(m)]
    uncertainty: dict[str, Any] = {"seed": 3}
    if samples is not None:
        uncertainty["samples"] = samples
    return {"options": options, "method": "wsm",
            "criteria": [{"attribute": f"c{j}"} for j in range(k)],
            "uncertainty": uncertainty, **extra}


def faults(r: Any) -> list[tuple[str, str]]:
    return [(e["pointer"], e["code"]) for e in
            assert_problem(r, 422, "validation_failed")["errors"]]


def test_a_decision_over_the_plans_cap_is_refused_before_sampling(server: LiveServer,
                                                                    free_key: str) -> None:
    h = auth(free_key)
    assert usage(server, free_key)["decision"]["max_smaa_values"] == FREE_CAP
    started = time.monotonic()
    r = server.request("POST", "/v1/decide", smaa(100_000, 20), headers=h)  # 2,000,000
    assert faults(r) == [("/uncertainty/samples", "too_many")]
    assert "2,000,000 sampled values" in r.json()["errors"][0]["message"]
    assert time.monotonic() - started < 5  # nothing sampled
    # the default samples (10,000) x 101 options: the fault is at the member that has them
    assert faults(server.request("POST", "/v1/decide", smaa(None, 101), headers=h)) == [
        ("/uncertainty", "too_many")]
    # method expression: the names it reads count (4 of them: 10,000 x 30 x 4)
    expression = {k: v for k, v in smaa(10_000, 30, 4).items() if k != "criteria"}
    expression["method"] = "expression"
    r = server.request("POST", "/v1/decide", {**expression, "expression": "c0+c1+c2+c3"},
                       headers=h)
    assert faults(r) == [("/uncertainty/samples", "too_many")]
    assert usage(server, free_key)["decision"]["month"]["used"] == 0  # refused: not counted
    r = server.request("POST", "/v1/decide", {**expression, "expression": "c0+c1+c2"},
                       headers=h)  # 900,000: within the cap
    assert r.status == 200, r.body
    assert server.request("POST", "/v1/decide", smaa(50_000, 20), headers=h).status == 200
    assert usage(server, free_key)["decision"]["month"]["used"] == 2


def test_a_batch_is_capped_per_item_and_in_all(server: LiveServer, free_key: str) -> None:
    h = auth(free_key)
    one = smaa(10_000, 40)  # 400,000 sampled values
    defaults = {k: v for k, v in one.items() if k != "options"}
    items = [{"id": i, "options": one["options"]} for i in range(3)]
    r = server.request("POST", "/v1/batch", {"defaults": defaults, "decisions": items},
                       headers=h)  # 1,200,000 together
    assert faults(r) == [("/decisions", "too_many")]
    big = {**items[1], "uncertainty": {"samples": 30_000, "seed": 1}}  # 1,200,000 alone
    r = server.request("POST", "/v1/batch", {"defaults": defaults, "decisions": [big]},
                       headers=h)
    assert faults(r) == [("/decisions/0/uncertainty/samples", "too_many"),
                         ("/decisions", "too_many")]
    wide = {"id": 9, "options": smaa(10_000, 101)["options"]}  # the defaults' samples
    r = server.request("POST", "/v1/batch", {"defaults": defaults, "decisions": [wide]},
                       headers=h)
    assert faults(r) == [("/decisions/0", "too_many"), ("/decisions", "too_many")]
    assert usage(server, free_key)["decision"]["month"]["used"] == 0
    r = server.request("POST", "/v1/batch", {"defaults": defaults, "decisions": items[:2]},
                       headers=h)  # 800,000
    assert r.status == 200 and r.json()["n_ok"] == 2, r.body
    assert usage(server, free_key)["decision"]["month"]["used"] == 2


def test_one_sampled_decision_per_key_at_a_time_in_its_own_threads(tmp_path: Path) -> None:
    """While a key's sampled decision is computed, its next one is 503 ``overloaded``
    (nothing counted), and another key's requests are answered meanwhile."""
    with running(tmp_path, {}, workers=1) as server:
        busy, other = (server.create_key(plan="sdk")["key"] for _ in range(2))
        body = smaa(100_000, 25)  # 2,500,000 sampled values: about a second of CPU
        answers: list[Any] = [None, None]

        def send(i: int) -> None:
            answers[i] = server.request("POST", "/v1/decide", body, headers=auth(busy),
                                        timeout=300)

        threads = [threading.Thread(target=send, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        time.sleep(0.2)
        plain = server.request("POST", "/v1/decide", DECISION, headers=auth(other))
        assert plain.status == 200, plain.body
        sampled = server.request("POST", "/v1/decide", smaa(1_000, 5), headers=auth(other),
                                 timeout=300)  # another key's: a slot of its own
        assert sampled.status == 200, sampled.body
        for t in threads:
            t.join()
        statuses = sorted(a.status for a in answers)
        assert statuses == [200, 503], [a.body[:300] for a in answers]
        refused = next(a for a in answers if a.status == 503)
        assert refused.json()["code"] == "overloaded" and refused.header("retry-after") == "1"
        assert usage(server, busy)["decision"]["month"]["used"] == 1
        again = server.request("POST", "/v1/decide", body, headers=auth(busy), timeout=300)
        assert again.status == 200, again.body  # the slot was given back
