"""limits.py: plan/tier tables with per-key overrides, counter specs, caps, headers, usage."""

from __future__ import annotations

import typing
from pathlib import Path

import msgspec
import pytest

from decido_service import limits
from decido_service.config import Settings
from decido_service.store import CounterSpec, CounterState, KeyRecord
from decido_service.store.blocking import open_blocking

S = Settings()
NOW = 1_733_011_200.0 + 90  # 2024-12-01T00:01:30Z


def key(plan: str = "free", tier: str = "free", overrides: dict | None = None,
        key_id: str = "k1") -> KeyRecord:
    return KeyRecord(id=key_id, prefix="dk_AbCdEfGh", plan=plan, tier=tier, label="acme",
                     created_at="2024-11-30T10:00:00Z", revoked_at=None, limits=overrides)


@pytest.mark.parametrize(
    ("plan", "minute", "month", "batch_max", "refused", "front", "smaa"),
    [("free", 10, 1_000, 10, 60, 1_000, 1_000_000),
     ("sdk", 100, 1_000_000, 100, 600, 10_000, 5_000_000),
     ("rtl", 1_000, 10_000_000, 1_000, 6_000, 100_000, 20_000_000),
     ("enterprise", 600, None, 1_000, 6_000, 100_000, 50_000_000)],
)
def test_plan_table(plan: str, minute: int, month: int | None, batch_max: int,
                    refused: int, front: int, smaa: int) -> None:
    assert limits.plan_limits(key(plan=plan), settings=S) == {
        "plan": plan, "minute": minute, "month": month, "batch_max": batch_max,
        "refused": refused, "from_run_points": front, "max_smaa_values": smaa}


@pytest.mark.parametrize(
    ("tier", "row"),
    [
        ("free", (10, 500, 50, 200_000, 10, 60, 1, 1, 4, 500, 100, 1 << 20, 2, 1_000,
                  1_200)),
        ("pro", (60, 10_000, 500, 2_000_000, 60, 600, 4, 5, 16, 2_000, 1_000, 4 << 20, 20,
                 10_000, 12_000)),
        ("team", (300, 50_000, 1_000, 10_000_000, 300, 3_000, 16, 20, 64, 10_000, 10_000,
                  8 << 20, 100, 100_000, 60_000)),
        ("enterprise", (600, None, None, 50_000_000, 600, 6_000, 64, 100, 256, 100_000,
                        100_000, 16 << 20, 1_000, 1_000_000, 120_000)),
    ],
)
def test_tier_table(tier: str, row: tuple) -> None:
    names = ("minute", "month", "max_dims", "max_evaluations", "max_time_limit", "refused",
             "max_runs", "max_webhooks", "max_streams", "max_archive_size", "max_start_points",
             "front_page_bytes", "max_studies", "max_study_trials", "study_minute")
    expected = {"tier": tier, **dict(zip(names, row, strict=True))}
    assert limits.tier_limits(key(tier=tier), settings=S) == expected


def test_per_key_overrides_replace_single_fields() -> None:
    k = key("enterprise", "enterprise",
            {"decision": {"minute": 5_000, "month": 123}, "optimization": {"max_dims": 20_000}})
    assert limits.plan_limits(k, settings=S) == {
        "plan": "enterprise", "minute": 5_000, "month": 123, "batch_max": 1_000,
        "refused": 6_000, "from_run_points": 100_000, "max_smaa_values": 50_000_000}
    t = limits.tier_limits(k, settings=S)
    assert t["max_dims"] == 20_000 and t["max_evaluations"] == 50_000_000


def test_unknown_plan_or_tier() -> None:
    with pytest.raises(ValueError, match="unknown plan"):
        limits.plan_limits(key(plan="gold"), settings=S)
    with pytest.raises(ValueError, match="unknown tier"):
        limits.tier_limits(key(tier="gold"), settings=S)


@pytest.mark.parametrize(
    "bad",
    [[1], {"billing": {}}, {"decision": 5}, {"decision": {"weekly": 1}},
     {"decision": {"minute": -1}}, {"decision": {"minute": 1.5}}, {"decision": {"minute": True}},
     {"optimization": {"max_time_limit": None}}],
)
def test_validate_overrides_rejects(bad: object) -> None:
    with pytest.raises(ValueError):
        limits.validate_overrides(bad)


def test_validate_overrides_accepts() -> None:
    ok = {"decision": {"month": None, "batch_max": 5000}, "optimization": {"max_dims": None}}
    assert limits.validate_overrides(ok) == ok
    assert limits.validate_overrides(None) is None


def test_counters_of_each_surface() -> None:
    k = key("sdk", "pro")
    assert limits.Counters("decide", k, S).admit() == [
        CounterSpec("decide.minute", "k1", "minute", 100, 1),
        CounterSpec("decide.month", "k1", "month", 1_000_000, 1),
        CounterSpec("decide.refused", "k1", "minute", 600, 0, gate=True)]
    assert limits.Counters("batch", k, S).admit(37)[1] == CounterSpec(
        "decide.month", "k1", "month", 1_000_000, 37)
    assert limits.Counters("batch", k, S).admit(37)[0].amount == 1  # one request
    # the surfaces are a Literal (a typo is a type error); the table covers exactly them
    assert set(typing.get_args(limits.Surface)) == set(limits.SURFACES)
    assert limits.Counters("optimize", k, S).admit() == [
        CounterSpec("optimize.minute", "k1", "minute", 60, 1),
        CounterSpec("optimize.month", "k1", "month", 10_000, 1),
        CounterSpec("optimize.refused", "k1", "minute", 600, 0, gate=True)]
    study = limits.Counters("study", k, S)  # its own minute, no month
    assert study.admit(5) == study.admitted == [
        CounterSpec("study.minute", "k1", "minute", 12_000, 1),
        CounterSpec("optimize.refused", "k1", "minute", 600, 0, gate=True)]
    assert study.read() == [CounterSpec("study.minute", "k1", "minute", 12_000, 0)]
    assert study.row["max_studies"] == 20  # the tier's row, read once


def test_one_gate_per_request_builds_its_counters_once(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """The request's one Gate merges its tier's row once, at its first use: the counters,
    the run cap (``max_runs``) and a refusal's counters read the same row (they each
    merged it again before)."""
    from types import SimpleNamespace

    from decido_service import admission

    merged: list[str] = []
    row = limits._row
    monkeypatch.setattr(limits, "_row", lambda *a: merged.append(a[0]) or row(*a))
    services, tally, k = SimpleNamespace(settings=S), SimpleNamespace(), key("sdk", "pro")
    gate = admission.gate(services, tally, k, "optimize")
    assert merged == []  # nothing built before it is used
    assert admission.gate(services, tally, k, "optimize") is gate
    assert gate.counters.row["max_runs"] == 4
    assert gate.counted().specs == gate.counters.admitted
    assert gate.counters.refused()[1].name == "optimize.refused"
    assert merged == ["optimization"]
    other = admission.gate(services, tally, k, "decide")
    assert other is not gate and other.counters.row["max_smaa_values"] == 5_000_000


def test_counters_built_once_per_key_record() -> None:
    """A worker builds a surface's counters once while the key cache hands back the same
    record (and settings): a record read anew, with its plan changed, gets its own."""
    k = key("sdk", "pro")
    built = limits.counters("decide", k, S)
    assert limits.counters("decide", k, S) is built
    assert built.admitted == limits.Counters("decide", k, S).admitted
    assert limits.counters("batch", k, S) is not built  # another surface
    assert limits.counters("decide", key("free", "pro"), S).admitted[0].limit == 10
    assert limits.counters("decide", k, S) is not built  # the record before it is gone
    other = Settings(plans={**S.plans, "sdk": {**S.plans["sdk"], "minute": 7}})
    assert limits.counters("decide", k, other).admitted[0].limit == 7


def test_address_spec() -> None:
    assert limits.address_spec("10.0.0.1", settings=S) == CounterSpec(
        "keys.hour", "10.0.0.1", "hour", 5, 1)
    assert limits.address_spec("a", settings=Settings(keys_per_hour=2)).limit == 2


def test_refusal_and_usage_specs() -> None:
    k = key("sdk", "pro")
    assert limits.Counters("decide", k, S).refused() == [
        CounterSpec("decide.minute", "k1", "minute", 100, 0),
        CounterSpec("decide.refused", "k1", "minute", 600, 1)]
    assert limits.Counters("optimize", k, S).refused()[1] == CounterSpec(
        "optimize.refused", "k1", "minute", 600, 1)
    assert [(s.name, s.amount) for s in limits.usage_specs(k, settings=S)] == [
        ("decide.minute", 0), ("decide.month", 0), ("optimize.minute", 0),
        ("optimize.month", 0), ("study.minute", 0)]


def state(name: str = "decide.minute", limit: int | None = 10, used: int = 3) -> CounterState:
    remaining = None if limit is None else max(limit - used, 0)
    return CounterState(name, limit, used, remaining, 1_733_011_260, 1_733_011_200, 1_733_011_260)


def test_headers_for() -> None:
    assert limits.headers_for(state()) == {
        "X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "7", "X-RateLimit-Reset": "1733011260"}
    assert limits.headers_for(state(used=12))["X-RateLimit-Remaining"] == "0"
    assert limits.headers_for(state(limit=None)) == {"X-RateLimit-Reset": "1733011260"}


def test_retry_after_and_refusal() -> None:
    assert limits.retry_after(state(), 1_733_011_200.2) == 60
    assert limits.retry_after(state(), 1_733_011_259.9) == 1
    assert limits.retry_after(state(), 1_733_011_300) == 1
    assert limits.refusal_code(state("decide.minute")) == "rate_limited"
    assert limits.refusal_code(state("decide.refused")) == "too_many_refused"
    assert limits.refusal_code(state("optimize.month")) == "monthly_quota_exceeded"
    assert limits.refusal_code(state("decide.month")) == "monthly_quota_exceeded"
    assert limits.refusal_code(state("keys.hour")) == "key_creation_throttled"
    assert limits.problem_fields(state()) == {
        "limit": "decide.minute", "limit_value": 10, "reset": 1_733_011_260}


def test_check_batch() -> None:
    assert limits.check_batch(key("free"), 10, settings=S) is None
    v = limits.check_batch(key("free"), 11, settings=S)
    assert (v.code, v.field, v.limit, v.requested) == ("batch_too_large", "decisions", 10, 11)


def test_run_caps() -> None:
    free = key(tier="free")
    assert limits.run_caps(free, 3, settings=S) == (
        {"max_evaluations": 10_000, "time_limit": 10.0}, None)  # library default under the cap
    assert limits.run_caps(free, 50, settings=S)[1] is None
    caps, v = limits.run_caps(free, 51, settings=S)
    assert caps == {} and (v.code, v.field, v.limit) == ("max_dims_exceeded", "bounds", 50)
    wide = key(tier="free", overrides={"optimization": {"max_dims": None}})
    assert limits.run_caps(wide, 500, settings=S)[0]["max_evaluations"] == 200_000  # capped
    assert limits.run_caps(free, 3, 200_000, 10, settings=S) == (
        {"max_evaluations": 200_000, "time_limit": 10}, None)
    assert limits.run_caps(free, 3, default_evaluations=7, settings=S)[0]["max_evaluations"] == 7
    caps, v = limits.run_caps(free, 3, 200_001, settings=S)
    assert caps == {} and (v.code, v.field, v.limit) == ("compute_cap_exceeded",
                                                         "max_evaluations", 200_000)
    _, v = limits.run_caps(free, 3, None, 10.5, settings=S)
    assert (v.code, v.field, v.limit) == ("compute_cap_exceeded", "time_limit", 10)
    ent = key(tier="enterprise", overrides={"optimization": {"max_evaluations": None}})
    assert limits.run_caps(ent, 10, 10**12, settings=S)[0] == {
        "max_evaluations": 10**12, "time_limit": 600.0}
    assert limits.run_caps(ent, 10, settings=S)[0]["max_evaluations"] == 20_000
    assert limits.run_caps(key(tier="enterprise"), 10**6, settings=S)[1] is None  # no max_dims


def test_usage_document(tmp_path: Path) -> None:
    store = open_blocking(str(tmp_path / "u.db"))
    k = key("sdk", "pro")
    store.admit(limits.Counters("batch", k, S).admit(25), now=NOW)
    store.admit(limits.Counters("optimize", k, S).admit(), now=NOW)
    for _ in range(3):
        store.admit(limits.Counters("study", k, S).admit(), now=NOW)
    states = store.admissions.peek(limits.usage_specs(k, settings=S), now=NOW)
    store.close()
    doc = msgspec.to_builtins(limits.usage_document(states, k, settings=S))
    assert doc == {
        "key": {"id": "k1", "prefix": "dk_AbCdEfGh", "label": "acme",
                "created": "2024-11-30T10:00:00Z"},
        "decision": {
            "plan": "sdk",
            "minute": {"limit": 100, "remaining": 99, "reset": 1_733_011_320},
            "month": {"limit": 1_000_000, "used": 25, "remaining": 999_975,
                      "period_start": "2024-12-01T00:00:00Z",
                      "period_end": "2025-01-01T00:00:00Z", "reset": 1_735_689_600},
            "batch_max": 100, "refused_per_minute": 600, "max_smaa_values": 5_000_000,
        },
        "optimization": {
            "tier": "pro",
            "minute": {"limit": 60, "remaining": 59, "reset": 1_733_011_320},
            "month": {"limit": 10_000, "used": 1, "remaining": 9_999,
                      "period_start": "2024-12-01T00:00:00Z",
                      "period_end": "2025-01-01T00:00:00Z", "reset": 1_735_689_600},
            "study_minute": {"limit": 12_000, "remaining": 11_997, "reset": 1_733_011_320},
            "max_dims": 500, "max_evaluations": 2_000_000, "max_time_limit": 60,
            "refused_per_minute": 600,
        },
    }
