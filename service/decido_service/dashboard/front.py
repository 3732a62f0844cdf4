"""Runs of several objectives on the dashboard: the facts of a front, the decide form filled
with one ("choose from this front"), and the compare page's two kinds of runs.

"Choose from this front" is the API's bridge (:mod:`decido_service.decisions.bridge`):
``/dashboard/decide?from_run=run_…`` shows the decide form with the run's front as its
options (read-only: they come from the run) and the objectives with their goals and equal
weights as its criteria; the form sends ``from_run``, and the decision is made, counted and
logged as ``POST /v1/decide`` with that body (:mod:`decido_service.dashboard.actions`; each
ranking item with its point's ``x`` and ``f``). A study's page does the same with
``from_study`` (its front, or its completed trials for one objective; option ids: the
trials' numbers).
"""

from __future__ import annotations

import time
from typing import Any

import orjson

import decido
from decido_service import limits
from decido_service.config import Settings
from decido_service.dashboard import decide_form, summary
from decido_service.decisions import bridge
from decido_service.http.context import ApiRequest
from decido_service.runs import front as run_front
from decido_service.store import KeyRecord, Store
from decido_service.types import FrontQuery, Run, RunFront

__all__ = ["COMPARE_POINTS", "COMPARE_SECONDS", "PREVIEW_VARIABLES", "compare_kinds",
           "decide_fields", "front_facts", "shown_front", "source"]

#: the most variables the decide page's preview of a front shows (its options have all)
PREVIEW_VARIABLES = 20
#: the compare page measures the final fronts at a common reference point when they hold
#: at most this many points together, all within this many seconds (the exact
#: hypervolume of 4 or more objectives can take hours: past either, a note says so)
COMPARE_POINTS, COMPARE_SECONDS = 5_000, 2.0


def front_facts(view: dict[str, Any]) -> dict[str, Any]:
    """A run's front as its page shows it: ``hypervolume`` and ``size`` (the result's, or
    the progress's while it runs), and ``points`` (how many the result holds, 0 before
    it ends)."""
    result, progress = view.get("result") or {}, view.get("progress") or {}
    if result:
        size = result.get("front_size") or 0
        return {"hypervolume": result.get("hypervolume"), "size": size, "points": size}
    return {"hypervolume": progress.get("hypervolume"), "size": progress.get("front_size"),
            "points": 0}


async def shown_front(store: Store, settings: Settings, key: KeyRecord, run: Run
                      ) -> RunFront | None:
    """The points of ``run``'s front its page draws: the first page of ``GET
    /v1/runs/{id}/front`` (at most the key's tier's ``front_page_bytes``, about), so the
    page stays small whatever the front's size; ``None`` for a run without a front."""
    if run.result is None or run.result.front_size is None:
        return None
    cap = limits.tier_limits(key, settings=settings)["front_page_bytes"]
    return await run_front.page(store, key["id"], run.id, FrontQuery(), cap)


def _cell(value: Any) -> str:
    return "" if value is None else repr(float(value))


async def decide_fields(request: ApiRequest, key: KeyRecord, member: str, source_id: str,
                        sent: dict[str, str] | None = None) -> dict[str, str]:
    """The decide form's fields for the front named by ``member`` (``from_run``: one of
    the key's finished runs of several objectives; ``from_study``: one of its studies, its
    front or its completed trials; the bridge's 404, 409 or 422 otherwise): a preview of
    its options as CSV (the objectives and the first :data:`PREVIEW_VARIABLES` variables;
    ``hidden_variables`` says how many more the options have), the objectives as criteria,
    ``member`` set to ``source_id``. ``sent``: the fields a form sent, kept (the options
    are the front's)."""
    resolved, _ = await bridge.resolve(source(request, key), {member: source_id})
    options: list[dict[str, Any]] = resolved["options"]
    names = list(options[0]["attributes"]) if options else []
    shown = names[:len(resolved["criteria"]) + PREVIEW_VARIABLES]  # criteria: the objectives
    lines = [",".join(["id", *shown])]
    lines += [",".join([str(o["id"]), *(_cell(o["attributes"].get(n)) for n in shown)])
              for o in options]
    criteria = "\n".join(f"{c['attribute']} {c['goal']} {c['weight']:g}"
                         for c in resolved["criteria"])
    kept = {k: v for k, v in (sent or {}).items()
            if k not in ("options", "id_column", *decide_form.SOURCES)}
    return {**decide_form.defaults(), "criteria": criteria, "constraints": "", **kept,
            "options": "\n".join(lines) + "\n", "id_column": "id", member: source_id,
            "hidden_variables": str(len(names) - len(shown))}


def source(request: ApiRequest, key: KeyRecord) -> bridge.Source:
    """Where the page's front is read (the key's runs, its plan's cap)."""
    ctx = request.app.ctx
    return bridge.Source(ctx.store, key, ctx.decide_pool, ctx.settings)


def compare_kinds(views: list[dict[str, Any]]) -> dict[str, Any]:
    """The compare page's runs split by kind: ``single`` (one objective: convergence
    curves) and ``several`` (hypervolume curves) as table rows, ``mixed`` when both are
    there, ``notes`` on what the hypervolume curves can and cannot compare, and
    ``common``: when the runs of several objectives share their objectives, the reference
    point farthest out of theirs (objective by objective) at which each row's
    ``common_hv`` measures its final front (:func:`decido.hypervolume`, feasible points;
    ``own_hv`` and ``front_size``: the run's own). Bounded: no common measure past
    :data:`COMPARE_POINTS` points in all, and the fronts not measured within
    :data:`COMPARE_SECONDS` in all are left out (a note names each). CPU work: the page
    calls it in a worker thread."""
    rows = [summary.run_row_of_view(v) for v in views]
    several = [(v.get("result") or {}, r) for v, r in zip(views, rows, strict=True)
               if r["objectives"]]
    notes, common = [], None
    goals = [o["goal"] for o in several[0][1]["objectives"]] if several else []
    for result, row in several:
        row["front_size"] = result.get("front_size")
        row["own_hv"] = result.get("hypervolume")
    if len({orjson.dumps(r["objectives"]) for _, r in several}) > 1:
        notes.append("These runs of several objectives do not optimize the same objectives: "
                     "their hypervolumes measure different things.")
    elif several:
        common = _common_reference([result for result, _ in several], goals)
    total = sum(row["front_size"] or 0 for _, row in several)
    if common is not None and total > COMPARE_POINTS:
        notes.append(f"The final fronts hold {total} points together: the compare page "
                     f"measures them at one reference point up to {COMPARE_POINTS} points "
                     "(compare fewer or smaller runs, or measure them with "
                     "decido.hypervolume).")
        common = None
    if common is not None:
        deadline = time.monotonic() + COMPARE_SECONDS
        for result, row in several:
            front = [p["f"] for p in result.get("pareto") or () if p["feasible"]]
            row["common_hv"] = _bounded_hypervolume(front, common, goals, deadline, row,
                                                    notes)
        if len({orjson.dumps(result.get("reference_point")) for result, _ in several}) > 1:
            notes.append("Each curve is its run's hypervolume at its own reference point "
                         "(the front's nadir moved outward, as it was then): the curves show "
                         "each run's progress, and compare exactly only at one reference "
                         "point; the table measures every final front at one.")
    single = [r for r in rows if not r["objectives"]]
    return {"single": single, "several": [r for _, r in several],
            "mixed": bool(single) and bool(several), "notes": notes, "common": common}


def _bounded_hypervolume(front: list[list[float]], reference: list[float], goals: list[str],
                         deadline: float, row: dict[str, Any], notes: list[str]
                         ) -> float | None:
    """The hypervolume of ``front`` by ``deadline`` (``time.monotonic()``; None for an
    empty front, and None with a note naming the run past it)."""
    if not front:
        return None
    try:
        return decido.hypervolume(front, reference, goals,
                                  time_limit=max(deadline - time.monotonic(), 1e-3))
    except TimeoutError:
        notes.append(f"The front of {row['id']} ({len(front)} points of {len(goals)} "
                     f"objectives) was not measured at the common reference point: its exact "
                     f"hypervolume takes longer than the page's {COMPARE_SECONDS:g} s.")
        return None


def _common_reference(results: list[dict[str, Any]], goals: list[str]) -> list[float] | None:
    """The reference point farthest out of the finished runs' ones (``results``: one at
    least), objective by objective (None when a run has none, or one with a non-finite
    value)."""
    points: list[list[float]] = []
    for r in results:
        point = r.get("reference_point")
        if point is None or None in point or len(point) != len(goals):
            return None
        points.append(point)
    return [max(p[j] for p in points) if goal == "minimize" else min(p[j] for p in points)
            for j, goal in enumerate(goals)]
