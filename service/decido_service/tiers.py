"""The plan and tier tables: the defaults of every plan's and tier's limits, and their checks.

Each table is a dict of dicts, written here a field a line (one column a plan or tier):

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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["DEFAULT_PLANS", "DEFAULT_TIERS", "PLAN_FIELDS", "TIER_FIELDS", "Table",
           "check_table", "default_caps", "merge_table"]

#: name -> field -> value (None: unlimited)
Table = dict[str, dict[str, int | None]]

_PLAN_NAMES = ("free", "sdk", "rtl", "enterprise")
#: field -> the plans' values, in the order of ``_PLAN_NAMES``. Enterprise limits are set
#: per key (KeyRecord.limits); these are the defaults. Its per-minute default is finite so
#: that rate-limit headers are always meaningful.
_PLANS: dict[str, tuple[int | None, ...]] = {
    "minute": (10, 100, 1_000, 600),
    "month": (1_000, 1_000_000, 10_000_000, None),
    "batch_max": (10, 100, 1_000, 1_000),
    "refused": (60, 600, 6_000, 6_000),
    "from_run_points": (1_000, 10_000, 100_000, 100_000),
    "max_smaa_values": (1_000_000, 5_000_000, 20_000_000, 50_000_000),
}

_TIER_NAMES = ("free", "pro", "team", "enterprise")
#: field -> the tiers' values, in the order of ``_TIER_NAMES``
_TIERS: dict[str, tuple[int | None, ...]] = {
    "minute": (10, 60, 300, 600),
    "month": (500, 10_000, 50_000, None),
    "max_dims": (50, 500, 1_000, None),
    "max_evaluations": (200_000, 2_000_000, 10_000_000, 50_000_000),
    "max_time_limit": (10, 60, 300, 600),
    "refused": (60, 600, 3_000, 6_000),
    "max_runs": (1, 4, 16, 64),
    "max_webhooks": (1, 5, 20, 100),
    "max_streams": (4, 16, 64, 256),
    "max_archive_size": (500, 2_000, 10_000, 100_000),
    "max_start_points": (100, 1_000, 10_000, 100_000),
    "front_page_bytes": (1 << 20, 4 << 20, 8 << 20, 16 << 20),
    "max_studies": (2, 20, 100, 1_000),
    "max_study_trials": (1_000, 10_000, 100_000, 1_000_000),
    "study_minute": (1_200, 12_000, 60_000, 120_000),
}


def _rows(names: tuple[str, ...], columns: Mapping[str, tuple[int | None, ...]]) -> Table:
    return {name: {field: values[i] for field, values in columns.items()}
            for i, name in enumerate(names)}


PLAN_FIELDS: tuple[str, ...] = tuple(_PLANS)
TIER_FIELDS: tuple[str, ...] = tuple(_TIERS)
DEFAULT_PLANS: Table = _rows(_PLAN_NAMES, _PLANS)
DEFAULT_TIERS: Table = _rows(_TIER_NAMES, _TIERS)


def default_caps(table: Mapping[str, Mapping[str, int | None]], name: str) -> str:
    """One field of a default plan or tier table as the API's descriptions say it:
    ``free 500, pro 2,000, ...`` (``unlimited`` for None)."""
    return ", ".join(f"{row_name} {'unlimited' if row[name] is None else f'{row[name]:,}'}"
                     for row_name, row in table.items())


def merge_table(base: Mapping[str, Mapping[str, int | None]], update: Mapping[str, Any]
                ) -> Table:
    """``base`` with ``update`` merged in field by field (new names are added whole)."""
    merged = {name: dict(row) for name, row in base.items()}
    if not isinstance(update, Mapping):
        raise ValueError("a plan or tier table must be a JSON object")
    for name, row in update.items():
        if not isinstance(row, Mapping):
            raise ValueError(f"plan or tier {name!r} must be a JSON object")
        merged.setdefault(name, {}).update(row)
    return merged


def check_table(what: str, table: Mapping[str, Any], required: tuple[str, ...]) -> None:
    """``ValueError`` unless every row of ``table`` has exactly the fields ``required``,
    each an integer >= 0 or None (``what``: ``plans`` or ``tiers``, for the message)."""
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
