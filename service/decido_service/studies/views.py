"""Store rows of studies and trials as the API's types, and trials as the JSON a row
keeps (a study's ``summary``: its best trial or its front)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
import orjson

from decido_service.store import iso_utc
from decido_service.types.studies import TRIAL_STATES, Study, Trial

__all__ = ["public_spec", "study_view", "trial_json", "trial_view"]


def trial_view(row: Mapping[str, Any]) -> Trial:
    """The API's ``Trial`` of a trial row."""
    vals = None if row["vals"] is None else orjson.loads(row["vals"])
    lease = row["lease_until"] if row["state"] == "active" else None
    return Trial(number=int(row["number"]), state=row["state"], x=orjson.loads(row["x"]),
                 variables=orjson.loads(row["variables"]),
                 value=vals[0] if vals is not None and len(vals) == 1 else None,
                 values=vals, metrics={} if row["metrics"] is None
                 else orjson.loads(row["metrics"]),
                 client_id=row["client_id"],
                 lease_expires_at=None if lease is None else iso_utc(lease),
                 created_at=row["created_at"], completed_at=row["completed_at"],
                 reason=row["reason"])


def trial_json(row: Mapping[str, Any]) -> dict[str, Any]:
    """A trial row as JSON-ready data (the ``Trial`` shape)."""
    out: dict[str, Any] = msgspec.to_builtins(trial_view(row))
    return out


def public_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The spec a study shows: the library's arguments (engine resolved, seed drawn)
    and the service's (``trial_lease``, ``early_stopping``)."""
    lib = dict(spec["library"])
    lib.pop("options", None)
    lib.pop("constraint_tolerance", None)
    return {**lib, "trial_lease": spec["trial_lease"], "early_stopping": spec["early_stopping"]}


def study_view(row: Mapping[str, Any]) -> Study:
    """The API's ``Study`` of a study row."""
    spec = orjson.loads(row["spec"])
    counts = orjson.loads(row["counts"])
    summary = {} if row["summary"] is None else orjson.loads(row["summary"])
    several = spec["library"].get("objectives") is not None and \
        len(spec["library"]["objectives"]) > 1
    best = summary.get("best")
    return Study(id=row["id"], state=row["state"], created_at=row["created_at"],
                 spec=public_spec(spec),
                 trials={s: int(counts.get(s, 0)) for s in TRIAL_STATES},
                 best=None if several or best is None else msgspec.convert(best, Trial),
                 pareto=msgspec.convert(summary.get("pareto") or [], list[Trial])
                 if several else None,
                 metadata=row["metadata"])
