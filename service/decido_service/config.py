"""Service settings: defaults, ``DECIDO_*`` environment overrides, plan and tier tables.

A :class:`Settings` is a frozen dataclass; build one with :meth:`Settings.from_env` (the
environment over the defaults, keyword arguments over both) and derive variants with
:func:`dataclasses.replace`. The plan and tier tables are plain dicts of dicts:

- ``plans[name]`` (decision plans): ``minute`` requests per minute, ``month`` decisions per
  UTC calendar month, ``batch_max`` items per ``/v1/batch``, ``from_run_points`` front
  points one request decides on through ``from_run`` (a batch's items together; 422
  beyond), ``max_smaa_values`` the sampled values (samples x options x criteria) of a
  decision under uncertainty, and of a batch's together
  (:mod:`decido_service.decisions.sampling`);
- ``tiers[name]`` (optimization tiers): ``minute`` requests per minute, ``month``
  optimizations per month, ``max_dims`` (number of bounds), ``max_evaluations`` and
  ``max_time_limit`` (seconds): the per-run compute caps;
- ``tiers[name]["max_runs"]``: the key's runs ``queued`` or ``running`` at once
  (``/v1/runs`` and ``/v1/optimize`` together; 429 ``too_many_runs`` beyond; Enterprise
  keys can be given their own with ``limits.optimization.max_runs``);
- ``tiers[name]["max_webhooks"]``: the key's webhook endpoints (403 ``too_many_webhooks``
  beyond; docs/webhooks.md);
- ``tiers[name]["max_archive_size"]`` and ``tiers[name]["max_start_points"]``: the largest
  front a run of several objectives keeps (``archive_size``) and the most start points
  (``x0`` rows) a run takes; a request above either is a 422 listing each;
- ``tiers[name]["max_streams"]``: the key's open event streams (``GET
  /v1/runs/{id}/events`` and the dashboard's) per worker process; 429 ``too_many_streams``
  beyond;
- ``tiers[name]["front_page_bytes"]``: the bytes of points a page of a run's front
  (``GET /v1/runs/{id}/front``, the dashboard's run page) carries, about (at least one
  point: :func:`decido_service.pages.within`); ``None``: the whole front in one page;
- ``tiers[name]["max_studies"]``: the key's ``active`` studies (429 ``too_many_studies``
  beyond); ``tiers[name]["max_study_trials"]``: the trials a study's engine suggests
  (``max_trials`` above it is 403 ``compute_cap_exceeded``; a study without one gets it);
  a study's variables are capped by ``max_dims`` (docs/studies.md, "Limits");
- ``tiers[name]["study_minute"]``: the key's study calls per minute (suggest, complete,
  batch complete, add trials, report, heartbeat, abandon: counter ``study.minute``, apart
  from ``minute``, so a study's workers never spend the key's other requests, nor they the
  workers'; 429 ``rate_limited`` beyond);
- in both, ``refused``: refused requests (invalid, or over a cap) per minute on that
  surface, counted apart from ``minute`` so a few mistakes never cost real allowance; past
  it the key gets 429 ``too_many_refused`` on that surface until the minute ends.

``None`` means unlimited. ``DECIDO_PLANS`` / ``DECIDO_TIERS`` hold JSON merged field by
field over the defaults: ``DECIDO_PLANS='{"free": {"minute": 20}}'`` changes one number.
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

PLAN_FIELDS: tuple[str, ...] = ("minute", "month", "batch_max", "refused", "from_run_points",
                                "max_smaa_values")
TIER_FIELDS: tuple[str, ...] = (
    "minute",
    "month",
    "max_dims",
    "max_evaluations",
    "max_time_limit",
    "refused",
    "max_runs",
    "max_webhooks",
    "max_streams",
    "max_archive_size",
    "max_start_points",
    "front_page_bytes",
    "max_studies",
    "max_study_trials",
    "study_minute",
)

DEFAULT_PLANS: dict[str, dict[str, int | None]] = {
    "free": {"minute": 10, "month": 1_000, "batch_max": 10, "refused": 60,
             "from_run_points": 1_000, "max_smaa_values": 1_000_000},
    "sdk": {"minute": 100, "month": 1_000_000, "batch_max": 100, "refused": 600,
            "from_run_points": 10_000, "max_smaa_values": 5_000_000},
    "rtl": {"minute": 1_000, "month": 10_000_000, "batch_max": 1_000, "refused": 6_000,
            "from_run_points": 100_000, "max_smaa_values": 20_000_000},
    # Enterprise limits are set per key (KeyRecord.limits); these are the defaults. The
    # per-minute default is finite so that rate-limit headers are always meaningful.
    "enterprise": {"minute": 600, "month": None, "batch_max": 1_000, "refused": 6_000,
                   "from_run_points": 100_000, "max_smaa_values": 50_000_000},
}

DEFAULT_TIERS: dict[str, dict[str, int | None]] = {
    "free": {
        "minute": 10,
        "month": 500,
        "max_dims": 50,
        "max_evaluations": 200_000,
        "max_time_limit": 10,
        "refused": 60,
        "max_runs": 1,
        "max_webhooks": 1,
        "max_streams": 4,
        "max_archive_size": 500,
        "max_start_points": 100,
        "front_page_bytes": 1 << 20,
        "max_studies": 2,
        "max_study_trials": 1_000,
        "study_minute": 1_200,
    },
    "pro": {
        "minute": 60,
        "month": 10_000,
        "max_dims": 500,
        "max_evaluations": 2_000_000,
        "max_time_limit": 60,
        "refused": 600,
        "max_runs": 4,
        "max_webhooks": 5,
        "max_streams": 16,
        "max_archive_size": 2_000,
        "max_start_points": 1_000,
        "front_page_bytes": 4 << 20,
        "max_studies": 20,
        "max_study_trials": 10_000,
        "study_minute": 12_000,
    },
    "team": {
        "minute": 300,
        "month": 50_000,
        "max_dims": 1_000,
        "max_evaluations": 10_000_000,
        "max_time_limit": 300,
        "refused": 3_000,
        "max_runs": 16,
        "max_webhooks": 20,
        "max_streams": 64,
        "max_archive_size": 10_000,
        "max_start_points": 10_000,
        "front_page_bytes": 8 << 20,
        "max_studies": 100,
        "max_study_trials": 100_000,
        "study_minute": 60_000,
    },
    "enterprise": {
        "minute": 600,
        "month": None,
        "max_dims": None,
        "max_evaluations": 50_000_000,
        "max_time_limit": 600,
        "refused": 6_000,
        "max_runs": 64,
        "max_webhooks": 100,
        "max_streams": 256,
        "max_archive_size": 100_000,
        "max_start_points": 100_000,
        "front_page_bytes": 16 << 20,
        "max_studies": 1_000,
        "max_study_trials": 1_000_000,
        "study_minute": 120_000,
    },
}

#: Environment variable -> Settings field (integers, then strings).
_ENV_INT: dict[str, str] = {
    "DECIDO_PORT": "port",
    "DECIDO_WORKERS": "workers",
    "DECIDO_BODY_LIMIT": "body_limit",
    "DECIDO_RUN_THREADS": "run_threads",
    "DECIDO_RUN_QUEUE": "run_queue",
    "DECIDO_RUN_BACKLOG": "run_backlog",
    "DECIDO_KEYS_PER_HOUR": "keys_per_hour",
    "DECIDO_SIGN_INS_PER_MINUTE": "sign_ins_per_minute",
    "DECIDO_DECISION_RETENTION_DAYS": "decision_retention_days",
    "DECIDO_DECISION_LOG_BYTES": "decision_log_bytes",
    "DECIDO_HEADER_TIMEOUT": "header_timeout",
    "DECIDO_BODY_TIMEOUT": "body_timeout",
    "DECIDO_KEEP_ALIVE_TIMEOUT": "keep_alive_timeout",
    "DECIDO_CONNECTIONS_PER_ADDRESS": "connections_per_address",
    "DECIDO_SSE_HEARTBEAT": "sse_heartbeat",
    "DECIDO_WORKER_STREAMS": "worker_streams",
    "DECIDO_STUDY_EVENTS": "study_events",
    "DECIDO_RUN_LEASE": "run_lease",
    "DECIDO_RUN_RETENTION_DAYS": "run_retention_days",
    "DECIDO_TLS": "tls",
    "DECIDO_SESSION_HOURS": "session_hours",
    "DECIDO_WEBHOOK_CONCURRENCY": "webhook_concurrency",
    "DECIDO_WEBHOOK_KEY_CONCURRENCY": "webhook_key_concurrency",
    "DECIDO_WEBHOOK_ENDPOINT_CONCURRENCY": "webhook_endpoint_concurrency",
}
_ENV_STR: dict[str, str] = {"DECIDO_DB": "db", "DECIDO_HOST": "host",
                            "DECIDO_FORWARDED_ALLOW_IPS": "forwarded_allow_ips",
                            "DECIDO_SESSION_SECRET": "session_secret",
                            "DECIDO_WEBHOOK_ALLOW_NETWORKS": "webhook_allow_networks",
                            "DECIDO_WEBHOOK_SCHEDULE": "webhook_schedule"}


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
    plans: dict[str, dict[str, int | None]] = field(
        default_factory=lambda: copy.deepcopy(DEFAULT_PLANS)
    )
    tiers: dict[str, dict[str, int | None]] = field(
        default_factory=lambda: copy.deepcopy(DEFAULT_TIERS)
    )
    clock: Callable[[], float] = field(default=time.time, compare=False, repr=False)
    """Epoch seconds; injectable so tests can move across minutes and months."""

    def __post_init__(self) -> None:
        for name in ("port", "workers", "body_limit", "run_threads", "keys_per_hour",
                     "sign_ins_per_minute",
                     "decision_retention_days", "session_hours",
                     "header_timeout", "body_timeout", "keep_alive_timeout", "sse_heartbeat",
                     "run_lease", "run_retention_days", "study_events",
                     "webhook_concurrency",
                     "webhook_key_concurrency", "webhook_endpoint_concurrency"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"setting {name!r} must be a positive integer, got {value!r}")
        for name in ("run_queue", "run_backlog", "connections_per_address",
                     "decision_log_bytes", "worker_streams"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"setting {name!r} must be an integer >= 0, got {value!r}")
        _check_table("plans", self.plans, PLAN_FIELDS)
        _check_table("tiers", self.tiers, TIER_FIELDS)
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
        for var, name in _ENV_STR.items():
            if env.get(var):
                values[name] = env[var]
        if env.get("DECIDO_STORE"):
            if env.get("DECIDO_DB") and env["DECIDO_DB"] != env["DECIDO_STORE"]:
                raise ValueError("DECIDO_STORE and DECIDO_DB name different stores; set one")
            values["db"] = env["DECIDO_STORE"]
        for var, name in _ENV_INT.items():
            if env.get(var):
                try:
                    values[name] = int(env[var])
                except ValueError:
                    raise ValueError(f"{var} must be an integer, got {env[var]!r}") from None
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


def default_caps(table: Mapping[str, Mapping[str, int | None]], name: str) -> str:
    """One field of a default plan or tier table as the API's descriptions say it:
    ``free 500, pro 2,000, ...`` (``unlimited`` for None)."""
    return ", ".join(f"{row_name} {'unlimited' if row[name] is None else f'{row[name]:,}'}"
                     for row_name, row in table.items())


def merge_table(
    base: Mapping[str, Mapping[str, int | None]], update: Mapping[str, Any]
) -> dict[str, dict[str, int | None]]:
    """``base`` with ``update`` merged in field by field (new names are added whole)."""
    merged = {name: dict(row) for name, row in base.items()}
    if not isinstance(update, Mapping):
        raise ValueError("a plan or tier table must be a JSON object")
    for name, row in update.items():
        if not isinstance(row, Mapping):
            raise ValueError(f"plan or tier {name!r} must be a JSON object")
        merged.setdefault(name, {}).update(row)
    return merged


def _json_env(env: Mapping[str, str], var: str) -> Any:
    try:
        return json.loads(env[var])
    except json.JSONDecodeError as exc:
        raise ValueError(f"{var} is not valid JSON: {exc}") from None


def _check_table(what: str, table: Mapping[str, Any], required: tuple[str, ...]) -> None:
    if not table:
        raise ValueError(f"setting {what!r} must name at least one entry")
    for name, row in table.items():
        missing = [f for f in required if f not in row]
        if missing:
            raise ValueError(f"{what}[{name!r}] lacks {', '.join(missing)}")
        unknown = sorted(set(row) - set(required))
        if unknown:
            raise ValueError(f"{what}[{name!r}] has unknown fields {', '.join(unknown)}")
        for f in required:
            value = row[f]
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 0
            ):
                raise ValueError(f"{what}[{name!r}][{f!r}] must be an integer >= 0 or null")


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
