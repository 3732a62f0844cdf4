"""What the dashboard shows of a study: a line of the studies table, the summary of its
spec, its objectives and variables as the study page's charts read them, and its trials as
the charts draw them. Pure functions of the API's documents (``Study`` and ``Trial`` as
JSON-ready data)."""

from __future__ import annotations

from typing import Any

from decido.goals import goal_name
from decido_service.dashboard.summary import number_text

__all__ = ["axes_of", "chart_trial", "objectives_of", "spec_summary", "study_row"]


def objectives_of(spec: dict[str, Any]) -> list[dict[str, str]]:
    """The study's objectives, ``{"name", "goal"}`` each (one objective: ``value`` with the
    study's goal), goals spelt out (``minimize``, ``maximize``)."""
    goal = goal_name(spec.get("goal") or "minimize") or "minimize"
    given = spec.get("objectives") or [{"name": "value", "goal": goal}]
    return [{"name": str(o["name"]), "goal": goal_name(o.get("goal") or goal) or goal}
            for o in given]


def axes_of(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The study's variables as axes of the parallel coordinates, in the order of a trial's
    ``x``: ``name``, ``kind`` (``real``, ``integer``, ``values``: numbers, ``categorical``:
    strings, whose coordinate is the index of the value), ``lower``, ``upper`` (of the
    coordinate), ``log``, ``values`` (the labels of a list of values)."""
    if spec.get("variables"):
        axes = []
        for v in spec["variables"]:
            if v.get("values") is not None:
                values = list(v["values"])
                categorical = any(isinstance(item, str) for item in values)
                axes.append({"name": str(v["name"]),
                             "kind": "categorical" if categorical else "values",
                             "lower": 0 if categorical else min(values),
                             "upper": len(values) - 1 if categorical else max(values),
                             "log": False, "values": [str(item) for item in values]})
            else:
                axes.append({"name": str(v["name"]), "kind": v.get("type") or "real",
                             "lower": v["lower"], "upper": v["upper"],
                             "log": bool(v.get("log")), "values": None})
        return axes
    return [{"name": f"x{i}", "kind": "real", "lower": lo, "upper": hi, "log": False,
             "values": None} for i, (lo, hi) in enumerate(spec.get("bounds") or [])]


def _variable_text(axis: dict[str, Any]) -> str:
    if axis["kind"] in ("values", "categorical"):
        return "one of " + ", ".join(axis["values"])
    scale = ", log scale" if axis["log"] else ""
    return (f"{axis['kind']} in [{number_text(axis['lower'])}, "
            f"{number_text(axis['upper'])}]{scale}")


def spec_summary(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec as the study page shows it: ``variables`` (name and a line each),
    ``objectives``, engine, seed, ``max_trials``, ``trial_lease``, ``early_stopping`` (a
    line or None), ``constraints``."""
    stopping = spec.get("early_stopping")
    return {"variables": [{"name": a["name"], "text": _variable_text(a)}
                          for a in axes_of(spec)],
            "objectives": objectives_of(spec), "engine": spec.get("engine"),
            "seed": spec.get("seed"), "max_trials": spec.get("max_trials"),
            "trial_lease": number_text(spec.get("trial_lease")),
            "early_stopping": None if not stopping else
            f"{stopping.get('rule')} rule, after {stopping.get('min_trials')} trials",
            "constraints": list(spec.get("constraints") or ())}


def study_row(study: dict[str, Any]) -> dict[str, Any]:
    """A line of a studies table from a ``Study`` document: id, state, engine, dims,
    objective (names and goals), trial counts (``total``, ``completed``, ``active``), best
    (the best value, or ``front of N`` for several objectives), created, labels."""
    spec = study.get("spec") or {}
    counts: dict[str, int] = study.get("trials") or {}
    objectives = objectives_of(spec)
    best: Any
    if len(objectives) > 1:
        pareto = study.get("pareto") or []
        best = f"front of {len(pareto)}" if pareto else None
    else:
        best = (study.get("best") or {}).get("value")
    return {"id": study["id"], "state": study["state"], "engine": spec.get("engine"),
            "dims": len(axes_of(spec)), "best": best,
            "objective": ", ".join(f"{o['name']} {o['goal'][:3]}" for o in objectives),
            "total": sum(counts.values()), "completed": counts.get("completed", 0),
            "active": counts.get("active", 0), "created": study["created_at"],
            "metadata": study.get("metadata") or {}}


def chart_trial(trial: dict[str, Any]) -> dict[str, Any]:
    """A completed trial as the study page's charts draw it: ``number``, ``x``, ``values``
    (in the objectives' order; one objective: ``[value]``)."""
    values = trial.get("values")
    if values is None:
        values = [trial.get("value")]
    return {"number": trial["number"], "x": trial["x"], "values": values}
