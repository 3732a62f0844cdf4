"""What the dashboard's tables and summaries show of a run, a request and the usage."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

import msgspec

from decido_service.http.problems import ApiError
from decido_service.store import short_id
from decido_service.types import DecisionLogPage, Run, RunList
from decido_service.types.studies import StudyList, Trial, TrialList

__all__ = ["compare_notes", "decision_row", "excluded_by_constraint", "label_filters",
           "next_query", "number_text", "objective_text", "objectives_of", "request_summary",
           "run_row", "run_row_of_view", "usage_bars"]

#: the largest magnitude written as a whole number (past it, floats are not exact integers)
_WHOLE_MAX = 2.0**53


def number_text(value: Any) -> str:
    """A number as an option's value is read: a whole number without a decimal point
    (``stop_on_convergence=0``, not ``0.0``: the API keeps options as floats), any other
    float in its shortest exact form; other values as they are."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= _WHOLE_MAX:
        return str(int(value))
    return str(value)


def excluded_by_constraint(infeasible: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A decision answer's ``infeasible`` (each option with the constraints it violates)
    by constraint: ``{"constraint", "ids"}`` per constraint that excludes an option, in
    the order they first appear (an option is under each constraint it violates)."""
    by: dict[str, list[Any]] = {}
    for option in infeasible:
        for text in option.get("violated") or ():
            by.setdefault(str(text), []).append(option.get("id"))
    return [{"constraint": text, "ids": ids} for text, ids in by.items()]


def run_row(run: Run) -> dict[str, Any]:
    """A line of a runs table from a ``Run``."""
    view: dict[str, Any] = msgspec.to_builtins(run)
    return run_row_of_view(view)


def run_row_of_view(view: dict[str, Any]) -> dict[str, Any]:
    """A line of a runs table from a ``Run`` document: id, state, engine, dims, objective
    (:func:`objective_text`; ``objective_title``: every expression), best value (a run of
    several objectives: ``"HV "`` and its front's hypervolume), evaluations, created,
    duration (ms), seed; ``objectives``: :func:`objectives_of`."""
    result, progress = view.get("result"), view.get("progress")
    source = result or progress or {}
    request = view.get("request") or {}
    objectives = objectives_of(request)
    if objectives is None:
        best = result.get("value") if result else (progress or {}).get("best")
    else:
        volume = source.get("hypervolume")
        best = None if volume is None else f"HV {volume:.6g}"
    seed = (result or {}).get("seed", request.get("seed"))
    return {"id": view["id"], "state": view["state"], "engine": view["engine"],
            "dims": view["dims"], "best": best, "evaluations": source.get("evaluations"),
            "created": view["created_at"], "duration_ms": source.get("elapsed_ms"),
            "seed": seed, "live": view["state"] in ("queued", "running"),
            "objective": objective_text(request), "objectives": objectives,
            "objective_title": "; ".join(f"{o['name']} ({o['goal']}): {o['expression']}"
                                         for o in objectives) if objectives
            else request.get("objective_expression")}


def objectives_of(request: dict[str, Any]) -> list[dict[str, str]] | None:
    """The objectives of a run of several (``{name, goal, expression}``, each goal filled
    in with the request's), or None for a run of one objective."""
    objectives = request.get("objectives")
    if not objectives:
        return None
    goal = request.get("goal") or "minimize"
    return [{"name": o["name"], "goal": o.get("goal") or goal,
             "expression": o["expression"]} for o in objectives]


def objective_text(request: dict[str, Any]) -> str:
    """What a run optimizes, in a line: its expression, or the names of its objectives
    with their goals (``cost min, quality max``)."""
    objectives = objectives_of(request)
    if objectives is None:
        return str(request.get("objective_expression") or "")
    return ", ".join(f"{o['name']} {o['goal'][:3]}" for o in objectives)


def decision_row(entry: dict[str, Any]) -> dict[str, Any]:
    """A line of a decision log table from a list entry (:func:`~decido_service.decisions.
    log.list_entry`, a decision or a batch): id, kind, method, best, how many options
    (decisions of a batch), status, created."""
    method: Any
    if entry.get("kind") == "batch":
        method = "batch"
        best: Any = f"{entry.get('n_ok', 0)} of {entry.get('n_decisions', 0)} ok"
        count = entry.get("n_decisions")
    else:
        method, best, count = entry.get("method"), entry.get("best"), entry.get("n_options")
    return {"id": entry["id"], "kind": entry.get("kind"), "method": method, "best": best,
            "count": count, "status": entry.get("status"), "created": entry["created_at"],
            "metadata": entry.get("metadata") or {}}


def request_summary(request: dict[str, Any]) -> dict[str, Any]:
    """The request of a run as the run page shows it: the expression, a summary of the
    bounds (readable at d = 1000: how many, the range of lower and upper bounds, whether
    they are all the same), engine, goal, options, seed and budget."""
    bounds = request.get("bounds") or []
    lows = [b[0] for b in bounds]
    highs = [b[1] for b in bounds]
    same = len({(lo, hi) for lo, hi in zip(lows, highs, strict=True)}) == 1
    return {"expression": request.get("objective_expression"), "dims": len(bounds),
            "bounds": (f"[{lows[0]:g}, {highs[0]:g}] for every variable" if same else
                       f"lower {min(lows):g} … {max(lows):g}, upper {min(highs):g} … "
                       f"{max(highs):g}") if bounds else "none",
            "options": {k: number_text(v) for k, v in (request.get("options") or {}).items()},
            **{name: request.get(name) for name in ("engine", "goal", "seed", "max_evaluations",
                                                    "time_limit", "target")}}


def compare_notes(requests: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """What differs between the requests of runs compared on one plot (``{run id:
    request}``): their objectives, goals and bounds, each a note ``{"what": ..., "groups":
    [(text, [short ids])]}`` only when the runs do not all agree on it."""
    aspects = (("objectives", _objective_text), ("goals", lambda r: str(r.get("goal"))),
               ("bounds", _bounds_text))
    notes = []
    for what, text_of in aspects:
        groups: dict[str, list[str]] = {}
        for run_id, request in requests.items():
            groups.setdefault(text_of(request), []).append(short_id(run_id))
        if len(groups) > 1:
            notes.append({"what": what, "groups": list(groups.items())})
    return notes


def _objective_text(request: dict[str, Any]) -> str:
    objectives = request.get("objectives")
    if objectives:
        return "; ".join(f"{o.get('name')}: {o.get('expression')}" for o in objectives)
    return str(request.get("objective_expression"))


def _bounds_text(request: dict[str, Any]) -> str:
    if request.get("variables"):
        return "variables " + ", ".join(
            f"{v.get('name')} " + (f"in {v['values']}" if v.get("values") is not None else
                                   f"[{number_text(v.get('lower'))}, "
                                   f"{number_text(v.get('upper'))}]")
            for v in request["variables"])
    summary = request_summary(request)
    return f"{summary['dims']} variables: {summary['bounds']}"


def usage_bars(usage: dict[str, Any]) -> list[dict[str, Any]]:
    """The overview's bars: used against the limit, this minute and this month, for
    decisions and optimization (``percent`` ``None`` when unlimited)."""
    bars = []
    for surface, label in (("decision", "Decisions"), ("optimization", "Optimizations")):
        doc = usage[surface]
        for window in ("minute", "month"):
            state = doc[window]
            limit = state["limit"]
            used = state["used"] if "used" in state else (
                None if limit is None else limit - state["remaining"])
            percent = None if not limit else min(100.0, 100.0 * (used or 0) / limit)
            bars.append({"label": f"{label} this {window}", "used": used, "limit": limit,
                         "percent": percent,
                         "width": None if percent is None else max(0, math.ceil(percent))})
    return bars


def next_query(filters: Mapping[str, str | None],
               found: RunList | DecisionLogPage | StudyList | TrialList) -> str | None:
    """The query string of the page after ``found`` (the filters and its last row's id, a
    trial's number), None for the last page."""
    if not found.has_more:
        return None
    last = found.data[-1]
    after = last.number if isinstance(last, Trial) else last.id
    return urlencode({**{k: v for k, v in filters.items() if v}, "starting_after": after})


def label_filters(text: str | None) -> dict[str, str]:
    """The labels of a list's filter box, ``project=bridge-A, team=north`` (pairs apart by
    commas), as the ``metadata[key]`` query parameters of the API's lists; 400
    ``invalid_parameter`` for a pair without ``=``."""
    out: dict[str, str] = {}
    for pair in (text or "").split(","):
        if not pair.strip():
            continue
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ApiError("invalid_parameter",
                           f"labels: {pair.strip()!r} is not key=value (e.g. project=bridge-A)")
        out[f"metadata[{name.strip()}]"] = value.strip()
    return out
