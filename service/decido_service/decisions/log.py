"""The decision log: what is recorded of a ``/v1/decide`` or ``/v1/batch`` call, and pages.

Every call is recorded for its key unless its body says ``"log": false`` (for a batch:
``"defaults": {"log": false}``), with the body's ``metadata`` as its labels (a batch:
``defaults.metadata`` and its items' own ``metadata`` together, one value a key;
:mod:`decido.metadata`). An entry keeps the request, a summary (the
method, the best option and whether it is tied, the top of the ranking, counts, the time it
took) and the whole answer when its JSON is at most :data:`ANSWER_CAP` bytes (else
``answer`` is ``null`` and the summary says ``answer_truncated``). Entries are committed
with the call's admission or the group commit's next batch
(:mod:`decido_service.decisions.decide`) before the answer is sent, and kept
``decision_retention_days`` (30 by default); a key's log holds at most
``decision_log_bytes`` (64 MiB by default), its oldest entries deleted first
(:mod:`decido_service.store.decisions`).

A summary keeps option ids (``best``, and the ids and bests of ``top``) of at most
:data:`ID_CAP` characters: a longer one is cut to :data:`ID_CAP` characters, the last of
them ``…`` (the entry's ``request`` has it whole). A list is a page of at most ``limit``
entries and about :data:`PAGE_BYTES` bytes (:func:`page`): fewer entries when they are
large (entries logged before summaries were cut can be), at least one, ``has_more`` true
when any is left for the next page (:func:`decido_service.pages.within`, the rule a run's
front is paged by too).

Lists are pages (:mod:`decido_service.types.params`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec
import orjson

from decido.metadata import MAX_KEYS, metadata_faults
from decido.optimize import Problem
from decido_service.errors import ServiceError, field_error, validation_error
from decido_service.pages import within
from decido_service.store import (
    DecisionEntry,
    DecisionRecord,
    Store,
    iso_utc,
    metadata_text,
    ordered_id,
)
from decido_service.types import DecisionLogEntry, DecisionLogPage, DecisionLogRecord

__all__ = ["ANSWER_CAP", "ID_CAP", "PAGE_BYTES", "TOP", "DecisionEntry", "entry", "find",
           "labels", "page", "short_id", "wants_log"]

#: the largest answer (JSON bytes) kept whole in an entry
ANSWER_CAP = 256 * 1024
#: how many of the ranking's first options a summary keeps
TOP = 10
#: the longest option id (characters) a summary keeps whole
ID_CAP = 200
#: the bytes of a list page's entries, about (a page holds at least one entry)
PAGE_BYTES = 1 << 20


def short_id(value: Any) -> Any:
    """An option id as a summary keeps it: a string above :data:`ID_CAP` characters cut
    to :data:`ID_CAP` (its last character ``…``), anything else as it is."""
    if isinstance(value, str) and len(value) > ID_CAP:
        return value[:ID_CAP - 1] + "…"
    return value


def _short_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    """``summary`` with its option ids cut (:func:`short_id`): a stored one, which may have
    been logged before summaries were cut."""
    out = dict(summary)
    if "best" in out:
        out["best"] = short_id(out["best"])
    out["top"] = [{**item, **{k: short_id(item[k]) for k in ("id", "best") if k in item}}
                  for item in out.get("top") or ()]
    return out


E = TypeVar("E", bound=DecisionLogEntry)


def wants_log(body: Any, batch: bool) -> bool:
    """Whether the call is to be logged: ``log`` (of the body, or of a batch's
    ``defaults``) is true, null or absent; 400 ``invalid_parameter`` when it is not a
    boolean."""
    holder = body.get("defaults") if batch and isinstance(body, dict) else body
    flag = holder.get("log") if isinstance(holder, dict) else None
    if flag is None:  # absent or null: the default
        return True
    if not isinstance(flag, bool):
        where = "defaults.log" if batch else "log"
        raise ServiceError("invalid_parameter", f"{where} must be true or false, not {flag!r}")
    return flag


def labels(body: Any, batch: bool) -> dict[str, str] | None:
    """The ``metadata`` of a call's entry: the body's; a batch's, its ``defaults``' and
    its items' together (:func:`_batch_labels`). A decision's with a fault is ``None``
    (:func:`decido.decide` lists its faults with the request's others)."""
    if batch:
        return _batch_labels(body)
    found = body.get("metadata") if isinstance(body, dict) else None
    return None if found is None or metadata_faults(found) else dict(found)


def _batch_labels(body: Any) -> dict[str, str] | None:
    """A batch's one entry's labels: those of its ``defaults`` and of each item that has
    its own (an item with faulty ones is that item's error, its labels left out). 422
    naming each fault when the defaults' have one (``/defaults/metadata/<key>``: every
    item would be refused for it), when two give one key different values (the entry
    has one value a key: ``/decisions/<i>/metadata/<key>``), or when they add up to more
    keys than labels may have."""
    defaults = body.get("defaults") if isinstance(body, dict) else None
    items = body.get("decisions") if isinstance(body, dict) else None
    found = defaults.get("metadata") if isinstance(defaults, dict) else None
    problems = [Problem(("defaults", "metadata", *where), code, message)
                for where, code, message in metadata_faults(found)]
    merged: dict[str, str] = {} if problems or found is None else dict(found)
    given = dict.fromkeys(merged, "/defaults/metadata")
    for i, item in enumerate(items if isinstance(items, list) else ()):
        own = item.get("metadata") if isinstance(item, dict) else None
        if own is None or metadata_faults(own):
            continue
        for name, value in own.items():
            if merged.setdefault(name, value) != value:
                problems.append(Problem(("decisions", i, "metadata", name),
                                        "invalid_metadata",
                                        f"a batch is one log entry with one value a label: "
                                        f"{name!r} is {value!r} here and {merged[name]!r} "
                                        f"in {given[name]}"))
            given.setdefault(name, f"/decisions/{i}/metadata")
    if len(merged) > MAX_KEYS and not problems:
        problems.append(Problem(("decisions",), "invalid_metadata",
                                f"the batch's labels (its defaults' and its items' together) "
                                f"have {len(merged)} keys; at most {MAX_KEYS} are allowed"))
    if problems:
        raise validation_error([field_error(p.field, p.code, p.message, pointer=p.pointer)
                                for p in problems])
    return merged or None


def entry(key_id: str, now: float, request: bytes, answer: Mapping[str, Any],
          answer_json: bytes, *, batch: bool, elapsed_ms: float,
          metadata: Mapping[str, str] | None = None) -> DecisionEntry:
    """The log entry of one answered call: ``request`` is the body as received,
    ``answer_json`` the answer as sent (kept when at most :data:`ANSWER_CAP` bytes),
    ``metadata`` its labels (:func:`labels`)."""
    whole = len(answer_json) <= ANSWER_CAP
    summary = _batch_summary(answer) if batch else _summary(answer)
    summary["elapsed_ms"] = round(elapsed_ms, 3)
    summary["answer_truncated"] = not whole
    return DecisionEntry(ordered_id("dec_", now), key_id, iso_utc(now), now,
                         orjson.dumps(summary).decode(), request.decode(),
                         answer_json.decode() if whole else None, metadata_text(metadata))


def _summary(answer: Mapping[str, Any]) -> dict[str, Any]:
    """A decision's summary, its option ids cut (:func:`short_id`): built that way at once
    rather than cut by :func:`_short_summary` after (which cost as much as the rest of the
    entry)."""
    get = answer.get
    return {"kind": "decide", "status": get("status"), "method": get("method"),
            "best": short_id(get("best")), "best_is_tied": get("best_is_tied"),
            "n_options": get("n_options"), "n_feasible": get("n_feasible"),
            # of a ranking entry (explained or not) its id, rank and score
            "top": [{"id": short_id(r["id"]), "rank": r["rank"], "score": r["score"]}
                    for r in get("ranking", ())[:TOP]]}


def _batch_summary(answer: Mapping[str, Any]) -> dict[str, Any]:
    """A batch's summary, its ids cut (:func:`short_id`), as :func:`_summary`."""
    results = answer.get("results", [])
    return {"kind": "batch", "status": "ok" if answer.get("n_error") == 0 else "partial",
            "n_decisions": answer.get("n_decisions"), "n_ok": answer.get("n_ok"),
            "n_error": answer.get("n_error"),
            "top": [{"id": short_id(r.get("id")), "best": short_id(r.get("best")),
                     "status": r.get("status")} for r in results[:TOP]]}


async def page(store: Store, key_id: str, limit: int, after: str | None = None,
               metadata: Mapping[str, str] | None = None) -> DecisionLogPage:
    """A page of ``key_id``'s log, newest first (only the entries with every label of
    ``metadata``): at most ``limit`` entries and about :data:`PAGE_BYTES` bytes of them
    (at least one; summaries with their ids cut), and whether more follow (``after``: a
    well-formed entry id, :class:`DecisionPage`)."""
    found = await store.decisions.page(key_id, limit + 1, after, metadata)
    shown, cut = within((_typed(r, DecisionLogEntry) for r in found[:limit]), PAGE_BYTES)
    return DecisionLogPage(data=shown, has_more=cut or len(found) > limit)


async def find(store: Store, key_id: str, decision_id: str) -> DecisionLogRecord:
    """One entry of ``key_id``'s log with its request and answer; 404 ``not_found``
    otherwise."""
    found = await store.decisions.get(key_id, decision_id)
    if found is None:
        raise ServiceError("not_found", f"no decision {decision_id!r} in this key's log")
    return _typed(found, DecisionLogRecord, request=found["request"], answer=found["answer"])


def _typed(record: DecisionRecord, kind: type[E], **more: Any) -> E:
    return msgspec.convert({"id": record["id"], "created_at": record["created_at"],
                            **_short_summary(record["summary"]),
                            "metadata": record["metadata"], **more}, kind)
