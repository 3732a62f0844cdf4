"""Process settings: defaults and ``DECIDO_*`` environment overrides.

A :class:`Settings` is a frozen dataclass; build one with :meth:`Settings.from_env` (the
environment over the defaults, keyword arguments over both) and derive variants with
:func:`dataclasses.replace`.

The plan and tier tables (:attr:`Settings.plans`, :attr:`Settings.tiers`) and their
defaults are in :mod:`decido_service.tiers`; ``DECIDO_PLANS`` / ``DECIDO_TIERS`` hold JSON
merged field by field over the defaults: ``DECIDO_PLANS='{"free": {"minute": 20}}'`` changes
one number. Every other field ``name`` of :class:`Settings` is read from ``DECIDO_<NAME>``
(``DECIDO_DB`` or ``DECIDO_STORE`` for :attr:`~Settings.db`).
``DECIDO_FAKE_NOW`` (epoch seconds; tests only) fixes :attr:`Settings.clock`.
"""

from __future__ import annotations

import copy
import ipaddress
import json
import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any

from decido_service.tiers import (
    DEFAULT_PLANS,
    DEFAULT_TIERS,
    PLAN_FIELDS,
    TIER_FIELDS,
    Table,
    check_table,
    merge_table,
)


@dataclass(frozen=True)
class Settings:
    """Everything the service reads at start. Build with :meth:`from_env`."""

    db: str = "./decido.db"
    """Store URL (``--store``/``--db``, ``DECIDO_STORE``/``DECIDO_DB``):
    ``postgresql://user@host/db``, ``sqlite:///abs/path.db``, ``sqlite:relative.db`` or a
    plain path (see :func:`decido_service.store.open_store`)."""
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    body_limit: int = 1024 * 1024
    """Request body cap in bytes (413 above)."""
    run_threads: int = 2
    """Optimization runs executing at once per worker process."""
    run_queue: int = 8
    """Runs waiting for a thread per worker process; beyond it: 503 ``overloaded``."""
    run_backlog: int = 1000
    """Runs ``queued`` in the store (every worker and node; ``POST /v1/runs``) beyond which
    a submission is 503 ``overloaded`` with ``Retry-After``."""
    run_lease: int = 20
    """Seconds a process owns a run it executes without renewing its lease (renewed with
    every progress write); a run whose lease ran out is ``failed`` ``interrupted``."""
    run_retention_days: int = 30
    """Days a finished run is kept."""
    keys_per_hour: int = 5
    """``POST /v1/keys`` per client address per UTC hour (counter ``keys.hour``)."""
    sign_ins_per_minute: int = 30
    """Tries of the dashboard's sign-in form per minute, per client address (counter
    ``sign_in.address``) and per key prefix tried (``sign_in.prefix``); beyond: 429 with
    ``Retry-After``."""
    decision_retention_days: int = 30
    """Days the decision log keeps an entry."""
    decision_log_bytes: int = 64 * 1024 * 1024
    """Bytes a key's decision log may hold (summaries, requests and answers as stored);
    beyond it the key's oldest entries are deleted first, the newest always kept (0: no
    cap)."""
    forwarded_allow_ips: str = ""
    """Peers whose ``X-Forwarded-For`` is believed: comma-separated addresses or networks
    (``10.0.0.0/8, ::1``), ``*`` for every peer; empty (the default) trusts no proxy."""
    header_timeout: int = 5
    """Seconds a request head may go without a byte arriving (408 and closed after)."""
    body_timeout: int = 10
    """Seconds a request body has to arrive whole (408 after)."""
    keep_alive_timeout: int = 10
    """Seconds an open connection may wait before (or between) requests."""
    connections_per_address: int = 64
    """Open connections per client address and worker process (0: no cap)."""
    sse_heartbeat: int = 15
    """Seconds between two ``: heartbeat`` comments of a run's event stream."""
    worker_streams: int = 400
    """Event streams (``GET /v1/runs/{id}/events`` and the dashboard's) open at once in a
    worker process, every key together, beside each key's tier cap (``max_streams``); one
    more is 503 ``overloaded`` with ``Retry-After`` (:mod:`decido_service.streams`; 0: no
    cap)."""
    study_events: int = 10_000
    """Events a study keeps for its stream's resumes (``GET /v1/studies/{id}/events``):
    the newest; older ones are deleted as new ones are written, and a watcher resuming
    from before them gets the ``study`` event again (docs/studies.md)."""
    session_secret: str = ""
    """The dashboard's HMAC secret for session cookies and CSRF tokens (at least 32
    characters); empty: one is made once and kept in the store, shared by every worker."""
    session_hours: int = 8
    """Hours a dashboard session lasts from sign-in."""
    tls: int = 0
    """1: the service is reached over HTTPS (say, behind a TLS proxy): the dashboard's
    cookies are ``Secure``."""
    webhook_allow_networks: str = ""
    """Networks (comma-separated CIDRs) webhooks may be delivered to although they are not
    public, and over plain http (on-premises receivers, tests); empty by default."""
    webhook_concurrency: int = 8
    """Webhook deliveries in progress at once per worker process."""
    webhook_key_concurrency: int = 4
    """Webhook deliveries of one key in progress at once, every worker and node together
    (one key's slow receivers never hold every delivery slot)."""
    webhook_endpoint_concurrency: int = 2
    """Webhook deliveries to one endpoint in progress at once, every worker and node
    together."""
    webhook_schedule: str = ""
    """Seconds between a webhook delivery's attempts, comma-separated (the first is the
    delay of the first attempt); empty: the Standard Webhooks schedule."""
    plans: Table = field(default_factory=lambda: copy.deepcopy(DEFAULT_PLANS))
    tiers: Table = field(default_factory=lambda: copy.deepcopy(DEFAULT_TIERS))
    clock: Callable[[], float] = field(default=time.time, compare=False, repr=False)
    """Epoch seconds; injectable so tests can move across minutes and months."""

    def __post_init__(self) -> None:
        for least, names in (
                (1, ("port", "workers", "body_limit", "run_threads", "keys_per_hour",
                     "sign_ins_per_minute", "decision_retention_days", "session_hours",
                     "header_timeout", "body_timeout", "keep_alive_timeout", "sse_heartbeat",
                     "run_lease", "run_retention_days", "study_events", "webhook_concurrency",
                     "webhook_key_concurrency", "webhook_endpoint_concurrency")),
                (0, ("run_queue", "run_backlog", "connections_per_address",
                     "decision_log_bytes", "worker_streams"))):
            for name in names:
                value = getattr(self, name)
                if not isinstance(value, int) or isinstance(value, bool) or value < least:
                    what = "a positive integer" if least else "an integer >= 0"
                    raise ValueError(f"setting {name!r} must be {what}, got {value!r}")
        check_table("plans", self.plans, PLAN_FIELDS)
        check_table("tiers", self.tiers, TIER_FIELDS)
        for name, row in self.tiers.items():
            if row["max_time_limit"] is None:
                raise ValueError(f"tiers[{name!r}]['max_time_limit'] cannot be unlimited")
        trusted_networks(self.forwarded_allow_ips)  # ValueError for a bad entry
        webhook_networks(self.webhook_allow_networks)
        self.delivery_schedule  # noqa: B018 - ValueError for a bad schedule
        if self.session_secret and len(self.session_secret) < 32:
            raise ValueError("setting 'session_secret' must have at least 32 characters")
        if self.tls not in (0, 1):
            raise ValueError(f"setting 'tls' must be 0 or 1, got {self.tls!r}")

    @property
    def trusted_proxies(self) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
        """The networks of :attr:`forwarded_allow_ips`."""
        return trusted_networks(self.forwarded_allow_ips)

    @property
    def delivery_schedule(self) -> tuple[float, ...]:
        """The seconds between a webhook delivery's attempts (:attr:`webhook_schedule`)."""
        from decido_service.webhooks.delivery import SCHEDULE

        if not self.webhook_schedule.strip():
            return SCHEDULE
        try:
            out = tuple(float(part) for part in self.webhook_schedule.split(","))
        except ValueError:
            out = ()
        if not out or not all(math.isfinite(d) and d >= 0 for d in out):
            raise ValueError("webhook_schedule: expected seconds >= 0, comma-separated, not "
                             f"{self.webhook_schedule!r}")
        return out

    def now(self) -> float:
        """The current time in epoch seconds, from :attr:`clock`."""
        return float(self.clock())

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Defaults, then ``DECIDO_*`` variables from ``environ`` (default ``os.environ``),
        then ``overrides`` (``None`` values in ``overrides`` are ignored, so argparse
        results can be passed straight in). Raises ``ValueError`` naming a bad variable."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            var = f"DECIDO_{f.name.upper()}"
            if f.type == "str" and env.get(var):
                values[f.name] = env[var]
            elif f.type == "int" and env.get(var):
                try:
                    values[f.name] = int(env[var])
                except ValueError:
                    raise ValueError(f"{var} must be an integer, got {env[var]!r}") from None
        if env.get("DECIDO_STORE"):
            if env.get("DECIDO_DB") and env["DECIDO_DB"] != env["DECIDO_STORE"]:
                raise ValueError("DECIDO_STORE and DECIDO_DB name different stores; set one")
            values["db"] = env["DECIDO_STORE"]
        if env.get("DECIDO_FAKE_NOW"):
            values["clock"] = FixedClock.parse(env["DECIDO_FAKE_NOW"])
        if env.get("DECIDO_PLANS"):
            values["plans"] = merge_table(DEFAULT_PLANS, _json_env(env, "DECIDO_PLANS"))
        if env.get("DECIDO_TIERS"):
            values["tiers"] = merge_table(DEFAULT_TIERS, _json_env(env, "DECIDO_TIERS"))
        known = {f.name for f in fields(cls)}
        for name, value in overrides.items():
            if name not in known:
                raise TypeError(f"unknown setting {name!r}")
            if value is not None:
                values[name] = value
        return cls(**values)


class FixedClock:
    """A clock that always says the same epoch second: ``DECIDO_FAKE_NOW``, for tests only
    (a service on it never leaves its minute, so per-minute limits never reset)."""

    def __init__(self, epoch: float) -> None:
        self.epoch = float(epoch)

    @classmethod
    def parse(cls, text: str) -> FixedClock:
        """From ``DECIDO_FAKE_NOW``'s text; ``ValueError`` naming the variable if bad."""
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"DECIDO_FAKE_NOW must be epoch seconds, got {text!r}")
        return cls(value)

    def __call__(self) -> float:
        return self.epoch

    def __repr__(self) -> str:
        return f"FixedClock({self.epoch!r})"


def _json_env(env: Mapping[str, str], var: str) -> Any:
    try:
        return json.loads(env[var])
    except json.JSONDecodeError as exc:
        raise ValueError(f"{var} is not valid JSON: {exc}") from None


Networks = tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]


def _networks(text: str, setting: str, *, star: bool) -> Networks:
    """The comma-separated networks of ``setting``'s ``text`` (``star``: ``*`` is every
    address); ``ValueError`` naming the setting for a bad entry."""
    out: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        if star and item == "*":
            out += [ipaddress.ip_network("0.0.0.0/0"), ipaddress.ip_network("::/0")]
            continue
        try:
            out.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(f"{setting}: {item!r} is not an address or network") from None
    return tuple(out)


@lru_cache(maxsize=16)
def trusted_networks(text: str) -> Networks:
    """The networks of a ``forwarded_allow_ips`` setting (``*``: every address)."""
    return _networks(text, "forwarded_allow_ips", star=True)


@lru_cache(maxsize=16)
def webhook_networks(text: str) -> Networks:
    """The networks of a ``webhook_allow_networks`` setting."""
    return _networks(text, "webhook_allow_networks", star=False)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings from the environment (cached; tests pass their own)."""
    return Settings.from_env()
