"""config.py: defaults, DECIDO_* environment overrides, plan/tier tables, validation."""

from __future__ import annotations

import dataclasses

import pytest

from decido_service import config, limits
from decido_service.config import Settings
from decido_service.store import KeyRecord
from decido_service.tiers import DEFAULT_PLANS, DEFAULT_TIERS


def test_defaults() -> None:
    s = Settings.from_env({})
    assert (s.db, s.host, s.port, s.workers) == ("./decido.db", "127.0.0.1", 8000, 1)
    assert (s.body_limit, s.run_threads, s.run_queue) == (1_048_576, 2, 8)
    assert (s.keys_per_hour, s.forwarded_allow_ips, s.trusted_proxies) == (5, "", ())
    assert s.plans == DEFAULT_PLANS and s.tiers == DEFAULT_TIERS
    assert s.plans is not DEFAULT_PLANS  # a copy: changing it leaves the defaults alone
    assert isinstance(s.now(), float)


def test_environment_overrides() -> None:
    env = {
        "DECIDO_DB": "sqlite:///tmp/x.db", "DECIDO_HOST": "0.0.0.0", "DECIDO_PORT": "9000",
        "DECIDO_WORKERS": "4", "DECIDO_BODY_LIMIT": "2048", "DECIDO_RUN_THREADS": "3",
        "DECIDO_RUN_QUEUE": "0", "DECIDO_KEYS_PER_HOUR": "9",
        "DECIDO_FORWARDED_ALLOW_IPS": "10.0.0.0/8, ::1",
        "DECIDO_PLANS": '{"free": {"minute": 20}, "startup": {"minute": 50, "month": 5000,'
                        ' "batch_max": 50, "refused": 300, "from_run_points": 500,'
                        ' "max_smaa_values": 10}}',
        "DECIDO_TIERS": '{"pro": {"max_dims": 800}}',
        "UNRELATED": "x",
    }
    s = Settings.from_env(env)
    assert (s.db, s.host, s.port, s.workers, s.body_limit) == (
        "sqlite:///tmp/x.db", "0.0.0.0", 9000, 4, 2048)
    assert (s.run_threads, s.run_queue, s.keys_per_hour) == (3, 0, 9)
    assert [str(n) for n in s.trusted_proxies] == ["10.0.0.0/8", "::1/128"]
    assert s.plans["free"] == {"minute": 20, "month": 1_000, "batch_max": 10, "refused": 60,
                               "from_run_points": 1_000, "max_smaa_values": 1_000_000}
    assert s.plans["startup"]["month"] == 5000
    assert s.tiers["pro"]["max_dims"] == 800 and s.tiers["pro"]["month"] == 10_000
    k = KeyRecord(id="k", prefix="dk_x", plan="startup", tier="pro", label=None,
                  created_at="", revoked_at=None, limits=None)
    assert limits.plan_limits(k, settings=s)["minute"] == 50


def test_keyword_overrides_win_and_none_is_ignored() -> None:
    s = Settings.from_env({"DECIDO_PORT": "9000"}, port=7000, host=None)
    assert s.port == 7000 and s.host == "127.0.0.1"
    with pytest.raises(TypeError):
        Settings.from_env({}, colour="blue")
    assert dataclasses.replace(s, workers=2).workers == 2


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DECIDO_PORT": "eighty"}, "DECIDO_PORT"),
        ({"DECIDO_WORKERS": "0"}, "workers"),
        ({"DECIDO_RUN_QUEUE": "-1"}, "run_queue"),
        ({"DECIDO_PLANS": "{"}, "DECIDO_PLANS"),
        ({"DECIDO_PLANS": "[]"}, "JSON object"),
        ({"DECIDO_PLANS": '{"free": 3}'}, "free"),
        ({"DECIDO_PLANS": '{"new": {"minute": 1}}'}, "lacks"),
        ({"DECIDO_PLANS": '{"free": {"hourly": 1}}'}, "unknown fields"),
        ({"DECIDO_TIERS": '{"free": {"max_dims": -5}}'}, "max_dims"),
        ({"DECIDO_TIERS": '{"free": {"max_time_limit": null}}'}, "max_time_limit"),
    ],
)
def test_bad_environment_is_reported(env: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Settings.from_env(env)


def test_get_settings_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    config.get_settings.cache_clear()
    monkeypatch.setenv("DECIDO_KEYS_PER_HOUR", "33")
    try:
        assert config.get_settings().keys_per_hour == 33
        assert config.get_settings() is config.get_settings()
    finally:
        config.get_settings.cache_clear()


def test_injectable_clock() -> None:
    s = Settings(clock=lambda: 42)
    assert s.now() == 42.0


def test_fake_now_fixes_the_clock() -> None:
    s = Settings.from_env({"DECIDO_FAKE_NOW": "1741953630.5"})
    assert s.now() == 1741953630.5 == s.now()
    assert Settings.from_env({}).clock is not s.clock
    for bad in ("soon", "nan", "-1", "inf"):
        with pytest.raises(ValueError, match="DECIDO_FAKE_NOW"):
            Settings.from_env({"DECIDO_FAKE_NOW": bad})
