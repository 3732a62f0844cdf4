"""decido.decide_batch: defaults, ids, order, and per-item errors."""

from __future__ import annotations

import json

import pytest

import decido
from decido import DecisionError

OPTIONS = [
    {"id": "a", "attributes": {"price": 10.0, "quality": 7.0}},
    {"id": "b", "attributes": {"price": 12.0, "quality": 9.0}},
    {"id": "c", "attributes": {"price": 9.0, "quality": 6.0}},
]
CRITERIA = [
    {"attribute": "price", "goal": "minimize", "weight": 1},
    {"attribute": "quality", "goal": "maximize", "weight": 1},
]


def test_defaults_merge_shallowly_and_items_win():
    batch = {
        "defaults": {"options": OPTIONS, "criteria": CRITERIA, "method": "wsm"},
        "decisions": [
            {"id": "one"},
            {"id": "two", "method": "topsis", "top_k": 1},
            {"id": 3, "method": "expression", "expression": "quality", "criteria": None},
            {"id": "four", "constraints": ["price > 100"]},
        ],
    }
    out = decido.decide_batch(batch)
    json.dumps(out, allow_nan=False)
    assert (out["n_decisions"], out["n_ok"], out["n_error"]) == (4, 4, 0)
    results = out["results"]
    assert [r["id"] for r in results] == ["one", "two", 3, "four"]
    assert all(next(iter(r)) == "id" for r in results)
    assert results[0] == {"id": "one", **decido.decide(batch["defaults"])}
    assert results[1]["method"] == "topsis" and len(results[1]["ranking"]) == 1
    assert results[2]["best"] == "b" and results[2]["warnings"] == []
    assert results[3]["status"] == "infeasible"


def test_one_bad_item_never_fails_the_batch():
    batch = {
        "defaults": {"options": OPTIONS, "criteria": CRITERIA},
        "decisions": [
            {"id": "ok"},
            {"id": "bad-method", "method": "electre"},
            {"id": None, "top_k": "three"},
            {"id": "bad-expr", "constraints": ["price <"]},
            {"method": "vikor"},
        ],
    }
    out = decido.decide_batch(batch)
    assert (out["n_decisions"], out["n_ok"], out["n_error"]) == (5, 2, 3)
    r = out["results"]
    assert [x["status"] for x in r] == ["ok", "error", "error", "error", "ok"]
    assert r[1] == {
        "id": "bad-method",
        "status": "error",
        "error": {"code": "unknown_method", "message": r[1]["error"]["message"], "path": "method"},
    }
    assert r[2]["id"] is None and r[2]["error"]["path"] == "top_k"
    assert r[3]["error"] | {"message": ""} == {
        "code": "invalid_expression", "message": "", "path": "constraints[0]", "position": 7,
    }  # fmt: skip
    assert r[4]["id"] is None and r[4]["method"] == "vikor"


def test_unexpected_failures_are_item_errors(monkeypatch):
    import sys

    mod = sys.modules["decido.decisions.pipeline"]

    def boom(request):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(mod, "decide", boom)
    out = decido.decide_batch({"decisions": [{"id": 1}]})
    assert out["results"][0]["error"] == {
        "code": "internal_error", "message": "RuntimeError", "path": "",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("batch", "path"),
    [
        ([], ""),
        ({"decisions": "x"}, "decisions"),
        ({}, "decisions"),
        ({"defaults": [1], "decisions": []}, "defaults"),
        ({"decisions": [], "extra": 1}, "extra"),
    ],
)
def test_a_malformed_envelope_raises(batch, path):
    with pytest.raises(DecisionError) as info:
        decido.decide_batch(batch)
    assert info.value.path == path


def test_batch_limit():
    limits = decido.DECISION_LIMITS
    old = limits["max_batch"]
    limits["max_batch"] = 2
    try:
        with pytest.raises(DecisionError) as info:
            decido.decide_batch({"decisions": [{}, {}, {}]})
        assert info.value.code == "too_many"
    finally:
        limits["max_batch"] = old
    assert decido.decide_batch({"decisions": []}) == {
        "results": [], "n_decisions": 0, "n_ok": 0, "n_error": 0,
    }  # fmt: skip


def test_an_item_that_is_not_an_object_refuses_the_batch_naming_each():
    with pytest.raises(decido.DecisionError) as caught:
        decido.decide_batch({"decisions": [{"id": "a"}, "not an object", 3]})
    assert [e["pointer"] for e in caught.value.errors] == ["/decisions/1", "/decisions/2"]
    assert caught.value.path == "decisions[1]"
