"""Admission rules: which counters a request passes, per-key limits, caps and headers.

Plain functions over a key record (:class:`~decido_service.store.KeyRecord`) and the plan
and tier tables of :class:`~decido_service.config.Settings` (``settings=None`` means
:func:`~decido_service.config.get_settings`, i.e. the defaults under ``DECIDO_*``).

Counters (``name``: subject, window): ``decide.minute`` (key, minute: requests to
``/v1/decide`` and ``/v1/batch``), ``decide.month`` (key, month: decisions, k for a batch
of k), ``optimize.minute`` (key, minute), ``optimize.month`` (key, month: runs),
``study.minute`` (key, minute: the suggest and tell calls of studies, the tier's
``study_minute``, apart from ``optimize.minute``: surface ``study``),
``decide.refused`` and ``optimize.refused`` (key, minute: refused requests, the plan's or
tier's ``refused`` budget; a refused study call is charged to ``optimize.refused``),
``keys.hour`` (client address, hour: ``POST /v1/keys``), ``sign_in.address`` and
``sign_in.prefix`` (client address, and the key prefix tried, minute: the dashboard's
sign-ins).
``/v1/usage`` counts nothing. In every list returned here the **first** spec is the one
the ``X-RateLimit-*`` headers describe.

Per-key overrides (``KeyRecord.limits``, meant for enterprise keys) look like
``{"decision": {"minute": 5000, "month": null}, "optimization": {"max_dims": 20000}}``;
they replace single fields of the key's plan and tier; ``null`` means unlimited.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from decido_service.config import Settings, get_settings
from decido_service.store import CounterSpec, CounterState, KeyRecord, iso_utc
from decido_service.tiers import PLAN_FIELDS, TIER_FIELDS
from decido_service.types.account import (
    DecisionUsage,
    KeyUsage,
    MinuteUsage,
    MonthUsage,
    OptimizationUsage,
    Usage,
)
from decido_service.types.optimize import OptimizeRequest

__all__ = [
    "LimitViolation",
    "check_batch",
    "headers_for",
    "SURFACES",
    "address_spec",
    "sign_in_specs",
    "Surface",
    "plan_limits",
    "Counters",
    "counters",
    "problem_fields",
    "refusal_code",
    "retry_after",
    "run_caps",
    "run_size_faults",
    "tier_limits",
    "usage_document",
    "usage_specs",
    "validate_overrides",
]

_SECTIONS: dict[str, tuple[str, ...]] = {"decision": PLAN_FIELDS, "optimization": TIER_FIELDS}
_NEVER_UNLIMITED = ("max_time_limit",)  # every run has a time limit


class LimitViolation(NamedTuple):
    """A request beyond a plan or tier cap (not a counter): 403 with ``code``
    (:func:`decido_service.http.problems.limit_error`)."""

    code: str
    field: str
    limit: int
    requested: float
    detail: str


def validate_overrides(limits: Any) -> dict[str, dict[str, int | None]] | None:
    """Check a per-key ``limits`` document; return it normalised or raise ``ValueError``."""
    if limits is None:
        return None
    if not isinstance(limits, Mapping):
        raise ValueError("limits must be an object like {\"decision\": {...}}")
    out: dict[str, dict[str, int | None]] = {}
    for section, values in limits.items():
        if section not in _SECTIONS:
            raise ValueError(f"limits: unknown section {section!r} (decision, optimization)")
        if not isinstance(values, Mapping):
            raise ValueError(f"limits.{section} must be an object")
        for name, value in values.items():
            if name not in _SECTIONS[section]:
                allowed = ", ".join(_SECTIONS[section])
                raise ValueError(f"limits.{section}: unknown field {name!r} ({allowed})")
            if value is None and name in _NEVER_UNLIMITED:
                raise ValueError(f"limits.{section}.{name} cannot be unlimited")
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 0
            ):
                raise ValueError(f"limits.{section}.{name} must be an integer >= 0 or null")
        out[section] = dict(values)
    return out


def _merged(table: Mapping[str, Mapping[str, Any]], name: str, what: str,
            override: Any) -> Mapping[str, Any]:
    """The row ``name`` of ``table`` with the key's ``override`` applied (the table's own
    row, not a copy, when the key has none: callers only read it)."""
    row = table.get(name)
    if row is None:
        raise ValueError(f"unknown {what} {name!r}; known: {', '.join(table)}")
    if override is None or not isinstance(override, Mapping):
        return row
    return {**row, **{k: v for k, v in override.items() if k in row}}


def _override(key: KeyRecord, section: str) -> Any:
    extra = key.get("limits")
    return extra.get(section) if extra else None


def _row(section: str, key: KeyRecord, s: Settings) -> Mapping[str, Any]:
    """The key's limits of ``section`` (``decision``: its plan's row, ``optimization``: its
    tier's), its overrides applied."""
    if section == "decision":
        return _merged(s.plans, key["plan"], "plan", _override(key, section))
    return _merged(s.tiers, key["tier"], "tier", _override(key, section))


def plan_limits(key: KeyRecord, *, settings: Settings | None = None) -> dict[str, Any]:
    """``{"plan", "minute", "month", "batch_max", "refused", "max_smaa_values"}`` of the key
    (per-key overrides applied)."""
    return {"plan": key["plan"], **_row("decision", key, settings or get_settings())}


def tier_limits(key: KeyRecord, *, settings: Settings | None = None) -> dict[str, Any]:
    """``{"tier", "minute", "month", "max_dims", "max_evaluations", "max_time_limit"}``."""
    return {"tier": key["tier"], **_row("optimization", key, settings or get_settings())}


#: what a request is counted on: ``decide`` and ``batch`` share the plan's counters,
#: ``optimize`` the tier's, ``study`` (a study's suggest and tell calls) the tier's
#: ``study.minute`` and refused budget, and no month (a name not listed here is a type
#: error, never a 500)
Surface = Literal["decide", "batch", "optimize", "study"]
#: surface -> (the plan/tier table section, the counters' name prefix of its month and
#: refused budget)
SURFACES: dict[Surface, tuple[str, str]] = {
    "decide": ("decision", "decide"),
    "batch": ("decision", "decide"),
    "optimize": ("optimization", "optimize"),
    "study": ("optimization", "optimize"),
}


class Counters:
    """The counters of ``key`` on ``surface`` (decide, batch, optimize, study), built once
    from its plan or tier row (its overrides applied: :attr:`row`). In every list the
    first spec is the one the headers describe: :attr:`admitted` (one admitted request:
    the minute, the month (a study call has none) and the gate of the surface's
    refused-request budget), :meth:`admit`, :meth:`read`, :meth:`refused`."""

    __slots__ = ("admitted", "row")

    def __init__(self, surface: Surface, key: KeyRecord, settings: Settings | None = None
                 ) -> None:
        section, prefix = SURFACES[surface]
        self.row = lim = _row(section, key, settings or get_settings())
        key_id = key["id"]
        minute = CounterSpec("study.minute", key_id, "minute", lim["study_minute"], 1) \
            if surface == "study" else \
            CounterSpec(f"{prefix}.minute", key_id, "minute", lim["minute"], 1)
        month = [] if surface == "study" else [
            CounterSpec(f"{prefix}.month", key_id, "month", lim["month"], 1)]
        self.admitted = [minute, *month, CounterSpec(f"{prefix}.refused", key_id, "minute",
                                                     lim["refused"], 0, gate=True)]

    def admit(self, amount: int = 1) -> list[CounterSpec]:
        """:attr:`admitted`, its month counted ``amount`` (``k`` for a batch of ``k``
        decisions)."""
        specs = self.admitted
        if amount == 1 or len(specs) == 2:  # a study call has no month
            return specs
        return [specs[0], specs[1]._replace(amount=amount), specs[2]]

    def read(self) -> list[CounterSpec]:
        """A keyed read (docs/service.md, "Reads"): the minute counter observed (nothing
        counted, never refused)."""
        return [self.admitted[0]._replace(amount=0)]

    def refused(self) -> list[CounterSpec]:
        """A refused request (invalid, or over a cap): the minute counter observed and one
        more refusal on the surface's ``refused`` budget."""
        gate = self.admitted[-1]
        return [self.admitted[0]._replace(amount=0), gate._replace(amount=1, gate=False)]


#: the :class:`Counters` :func:`counters` built: (surface, key id) -> (the key record and
#: the settings they were built of, them)
_BUILT: dict[tuple[str, str], tuple[KeyRecord, Settings, Counters]] = {}
#: the most :data:`_BUILT` holds (past it, it starts again empty)
_BUILT_MAX = 10_000


def counters(surface: Surface, key: KeyRecord, settings: Settings) -> Counters:
    """``Counters(surface, key, settings)``, built once for as long as the same key record
    and settings come back: a worker's key cache hands every request of a key the same
    record for its ``ttl``, and building the counters (the row merged, three specs) cost
    about 20,000 instructions a request. A record read anew (another object, say with a
    changed plan) builds them again; records and settings are never changed in place."""
    found = _BUILT.get((surface, key["id"]))
    if found is not None and found[0] is key and found[1] is settings:
        return found[2]
    built = Counters(surface, key, settings)
    if len(_BUILT) >= _BUILT_MAX:
        _BUILT.clear()
    _BUILT[(surface, key["id"])] = (key, settings, built)
    return built


def usage_specs(key: KeyRecord, *, settings: Settings | None = None) -> list[CounterSpec]:
    """The five counters ``/v1/usage`` shows, observed (nothing counted): decide.minute
    (the one the headers describe), decide.month, optimize.minute, optimize.month,
    study.minute."""
    decide = Counters("decide", key, settings).admitted[:2]
    optimize = Counters("optimize", key, settings).admitted[:2]
    study = Counters("study", key, settings).admitted[:1]
    return [spec._replace(amount=0) for spec in (*decide, *optimize, *study)]


def address_spec(address: str, *, settings: Settings | None = None) -> CounterSpec:
    """The per-address throttle of ``POST /v1/keys`` (``keys.hour``)."""
    s = settings or get_settings()
    return CounterSpec("keys.hour", address, "hour", s.keys_per_hour, 1)


def sign_in_specs(address: str, prefix: str | None, *,
                  settings: Settings | None = None) -> list[CounterSpec]:
    """The throttle of the dashboard's sign-in form: ``sign_in.address`` (the client
    address) and, for a well-formed key, ``sign_in.prefix`` (its public prefix: guesses
    at one key from many addresses), each ``sign_ins_per_minute`` tries a minute."""
    s = settings or get_settings()
    specs = [CounterSpec("sign_in.address", address, "minute", s.sign_ins_per_minute, 1)]
    if prefix is not None:
        specs.append(CounterSpec("sign_in.prefix", prefix, "minute", s.sign_ins_per_minute, 1))
    return specs


def headers_for(state: CounterState) -> dict[str, str]:
    """``X-RateLimit-Limit``, ``-Remaining``, ``-Reset`` (epoch seconds) for one counter.

    An unlimited counter (only possible through a per-key override) gets ``Reset`` only."""
    headers = {"X-RateLimit-Reset": str(state.reset)}
    if state.limit is not None:
        headers["X-RateLimit-Limit"] = str(state.limit)
        headers["X-RateLimit-Remaining"] = str(state.remaining)
    return headers


def retry_after(state: CounterState, now: float) -> int:
    """Whole seconds until ``state``'s window resets (at least 1): the ``Retry-After``."""
    return max(1, math.ceil(state.reset - now))


def resets_in(state: CounterState, now: float) -> str:
    """When ``state``'s window resets, for a sentence: ``in 40 s``, ``in 12 min``,
    ``in 5 h``; a longer wait with its date (``on 2026-12-01T00:00:00Z, in 3 days``)."""
    wait = retry_after(state, now)
    if wait < 120:
        return f"in {wait} s"
    if wait < 7200:
        return f"in {math.ceil(wait / 60)} min"
    if wait < 172_800:
        return f"in {math.ceil(wait / 3600)} h"
    return f"on {iso_utc(state.reset)}, in {math.ceil(wait / 86_400)} days"


def refusal_code(state: CounterState) -> str:
    """The problem ``code`` of a 429 for a refused counter."""
    if state.name == "keys.hour":
        return "key_creation_throttled"
    if state.name.endswith(".refused"):
        return "too_many_refused"
    if state.name.endswith(".month"):
        return "monthly_quota_exceeded"
    return "rate_limited"


def problem_fields(state: CounterState) -> dict[str, Any]:
    """The extra members of a 429 body: ``limit`` (counter name), ``limit_value``, ``reset``."""
    return {"limit": state.name, "limit_value": state.limit, "reset": state.reset}


def check_batch(
    key: KeyRecord, size: int, *, settings: Settings | None = None
) -> LimitViolation | None:
    """``None`` when a batch of ``size`` decisions fits the plan's ``batch_max``."""
    cap = plan_limits(key, settings=settings)["batch_max"]
    return _beyond(cap, size, "batch_too_large", "decisions",
                   f"a batch of {size} decisions is above the {key['plan']} plan's cap of {cap}")


def _beyond(cap: int | None, requested: float | None, code: str, field: str,
            detail: str) -> LimitViolation | None:
    """The violation when ``requested`` is above ``cap`` (None for either: none)."""
    if cap is None or requested is None or requested <= cap:
        return None
    return LimitViolation(code, field, cap, requested, detail)


def _more(field: str, cap: int | None, unit: str, settings: Settings | None) -> str:
    """Where a larger ``field`` than ``cap`` is to be had: the first tier of the table
    (in its order) that allows more, and how its keys are made (``""``: none does, or
    ``cap`` is no limit)."""
    if cap is None:
        return ""
    for tier, row in (settings or get_settings()).tiers.items():
        value = row.get(field)
        if value is None or value > cap:
            allows = "no limit" if value is None else f"{value} {unit}"
            return (f"; the {tier} tier allows {allows} (its keys are made by the "
                    f"service's operator: decido keys create --tier {tier})")
    return ""


def run_caps(
    key: KeyRecord,
    dims: int,
    max_evaluations: int | None = None,
    time_limit: float | None = None,
    *,
    default_evaluations: int | None = None,
    settings: Settings | None = None,
) -> tuple[dict[str, Any], LimitViolation | None]:
    """The ``max_evaluations`` and ``time_limit`` a run gets, or the cap it exceeds.

    More ``dims`` (the number of bounds) than the tier's ``max_dims`` is a 403
    ``max_dims_exceeded``; a requested value above the tier's cap, a 403
    ``compute_cap_exceeded``. An absent one
    becomes ``min(default, cap)``: the evaluation default is ``default_evaluations`` or the
    library's ``max(10000, 2000 * dims)``; the time limit defaults to the cap, so every run
    has one."""
    t = tier_limits(key, settings=settings)
    eval_cap, time_cap = t["max_evaluations"], t["max_time_limit"]
    violation = _beyond(
        t["max_dims"], dims, "max_dims_exceeded", "bounds",
        f"{dims} dimensions asked; the {key['tier']} tier allows at most {t['max_dims']} "
        f"dimensions{_more('max_dims', t['max_dims'], 'dimensions', settings)}"
    ) or _beyond(
        eval_cap, max_evaluations, "compute_cap_exceeded", "max_evaluations",
        f"max_evaluations {max_evaluations} is above the {key['tier']} tier's cap of "
        f"{eval_cap}") or _beyond(
        time_cap, time_limit, "compute_cap_exceeded", "time_limit",
        f"time_limit {time_limit} s is above the {key['tier']} tier's cap of {time_cap} s")
    if violation is not None:
        return {}, violation
    if max_evaluations is None:
        default = default_evaluations if default_evaluations is not None else max(
            10_000, 2_000 * dims)
        max_evaluations = default if eval_cap is None else min(default, eval_cap)
    if time_limit is None:
        time_limit = float(time_cap)
    return {"max_evaluations": max_evaluations, "time_limit": time_limit}, None


def run_size_faults(key: KeyRecord, req: OptimizeRequest, *,
                    settings: Settings | None = None) -> list[LimitViolation]:
    """The faults of a run beyond its tier's size caps, each a 422 entry (code
    ``above_tier_cap``): an ``archive_size`` above ``max_archive_size`` (the front a run of
    several objectives keeps, whose thinning and hypervolume grow with it) and more start
    points (``x0`` rows) than ``max_start_points`` (each evaluated and offered to the front
    before the engine starts)."""
    t = tier_limits(key, settings=settings)
    tier, front_cap, x0_cap = key["tier"], t["max_archive_size"], t["max_start_points"]
    archive_size, start_points = req.archive_size, req.start_points
    found = [_beyond(
        front_cap, archive_size, "above_tier_cap", "archive_size",
        f"archive_size {archive_size} is above the {tier} tier's cap of {front_cap} points"
        f"{_more('max_archive_size', front_cap, 'points', settings)}"), _beyond(
        x0_cap, start_points, "above_tier_cap", "x0",
        f"{start_points} start points given; the {tier} tier takes at most {x0_cap}"
        f"{_more('max_start_points', x0_cap, 'start points', settings)}")]
    return [v for v in found if v is not None]


def usage_document(states: list[CounterState], key: KeyRecord, *,
                   settings: Settings | None = None) -> Usage:
    """The ``/v1/usage`` answer from the states of :func:`usage_specs` (in that order):
    the key, its decision plan and optimization tier with current per-minute and
    per-month usage."""
    p, t = plan_limits(key, settings=settings), tier_limits(key, settings=settings)
    d_min, d_month, o_min, o_month, s_min = states
    return Usage(
        key=KeyUsage(key["id"], key["prefix"], key["label"], key["created_at"]),
        decision=DecisionUsage(p["plan"], _minute(d_min), _month(d_month), p["batch_max"],
                               p["refused"], p["max_smaa_values"]),
        optimization=OptimizationUsage(t["tier"], _minute(o_min), _month(o_month),
                                       _minute(s_min), t["max_dims"], t["max_evaluations"],
                                       t["max_time_limit"], t["refused"]))


def _minute(state: CounterState) -> MinuteUsage:
    return MinuteUsage(state.limit, state.remaining, state.reset)


def _month(state: CounterState) -> MonthUsage:
    return MonthUsage(state.limit, state.used, state.remaining, iso_utc(state.window_start),
                      iso_utc(state.window_end), state.reset)
