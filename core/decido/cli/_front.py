"""``decido optimize --objective ... --objective ...``: a run of several objectives, here or
on a server, its front printed as a table (``--csv FILE`` writes it).

An ``--objective`` is an expression, or ``NAME=EXPRESSION``, or ``NAME:max=EXPRESSION``
(``min``/``max``, or ``minimize``/``maximize``, as ``decido decide --criterion`` takes them):
the objective's name (the front's column; default ``f1``, ``f2``, ...) and its own goal
(default: ``--maximize``'s, else minimize).
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path
from typing import Any

import click

import decido
from decido.cli._output import add_row, print_table, table
from decido.cli._progress import ProgressDisplay, run_monitored
from decido.goals import goal_name
from decido.optimize import optimize_front
from decido.pareto import ParetoResult

__all__ = ["numbers", "objective", "points", "run_here", "show", "write_csv"]

#: NAME[:GOAL]=EXPRESSION (a single ``=``: ``==`` belongs to an expression)
_NAMED = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*([A-Za-z]+)\s*)?=(?!=)(.*)\Z",
                    re.DOTALL)
#: the most variables shown as columns of their own (more: one column ``x``)
_X_COLUMNS = 8
_SHOWN_X = 10


def objective(text: str) -> dict[str, Any] | str:
    """An ``--objective``: ``{"name", "expression"[, "goal"]}`` for ``NAME[:GOAL]=EXPR``,
    else the expression as it is (the library names it)."""
    match = _NAMED.match(text)
    if match is None:
        return text
    name, goal, expression = match.groups()
    out: dict[str, Any] = {"name": name, "expression": expression.strip()}
    if goal is not None:
        long = goal_name(goal.lower())
        if long is None:
            raise click.BadParameter(f"{text!r}: the goal after {name}: is min or max",
                                     param_hint="--objective")
        out["goal"] = long
    return out


def numbers(_: click.Context, param: click.Parameter, text: str | None
            ) -> list[float] | None:
    """The callback of an option of one number per objective (``--reference-point
    1.1,1.1``)."""
    if text is None:
        return None
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected numbers separated by commas, one per "
                                 "objective", param=param) from None


def run_here(objectives: list[Any], box: list[list[float]], args: dict[str, Any],
             display: ProgressDisplay) -> tuple[ParetoResult, bool]:
    """The run in a thread with a :class:`decido.RunMonitor`, as one objective's (Ctrl-C
    stops it: it ends ``stopped`` with its front so far)."""
    checked = {k: v for k, v in args.items() if v is not None}
    try:
        result, interrupted = run_monitored(
            lambda monitor: optimize_front(objectives, box, monitor=monitor, **checked), display)
    except decido.EngineError as exc:  # every fault, not only the first
        raise click.ClickException("; ".join(
            e["message"] for e in exc.errors) if exc.errors else str(exc)) from None
    display.update(result.evaluations, result.hypervolume, result.elapsed)
    return result, interrupted


def points(k: int) -> str:
    """``1 point``, ``2 points``."""
    return f"{k} point" + ("" if k == 1 else "s")


def _number(v: float) -> str:
    return format(v, ".6g")


def _x_names(result: ParetoResult) -> list[str]:
    n = len(result.pareto[0]["x"]) if result.pareto else 0
    return result.variables if result.variables is not None else [f"x{j}" for j in range(n)]


def show(result: ParetoResult, as_json: bool) -> None:
    """The front as a table (one row a point, by its first objective's value: the point's
    index in ``pareto``, its objectives' values, then x), then the run's summary;
    ``as_json``: :meth:`decido.ParetoResult.to_dict` as one line."""
    if as_json:
        click.echo(json.dumps(result.to_dict()))
        return
    names = [f"{o['name']} ({o['goal'][:3]})" for o in result.objectives]
    xs = _x_names(result)
    wide = len(xs) > _X_COLUMNS
    rows = table("#", *names, *(["x"] if wide else xs),
                 *([] if result.feasible else ["max_violation"]))
    order = sorted(range(len(result.pareto)), key=lambda i: [
        math.inf if math.isnan(v) else v for v in result.pareto[i]["f"]])
    for i in order:
        p = result.pareto[i]
        x = p["x"]
        cells = ["[" + ", ".join(_number(v) for v in x[:_SHOWN_X]) +
                 (f", ... ({len(x)} values)]" if len(x) > _SHOWN_X else "]")] if wide \
            else [_number(v) for v in x]
        add_row(rows, i, *(_number(v) for v in p["f"]), *cells,
                *([] if result.feasible else [_number(p["max_violation"])]))
    print_table(rows)
    status = result.message if result.message.startswith(result.status) else \
        f"{result.status}: {result.message}"
    ref = ", ".join(_number(v) for v in result.reference_point)
    lines = [("status", status), ("front", points(len(result.pareto))),
             ("hypervolume", f"{result.hypervolume:.10g} at ({ref})"),
             ("evaluations", f"{result.evaluations} ({result.iterations} iterations)"),
             ("elapsed", f"{result.elapsed:.3f} s"),
             ("engine", f"{result.engine} (seed {result.seed})")]
    width = max(len(name) for name, _ in lines)
    for name, value in lines:
        click.echo(f"{name.ljust(width)}  {value}")


def write_csv(result: ParetoResult, path: Path) -> None:
    """The front as CSV: ``id``, the objectives' values, the variables (``x0``, ``x1``, ...
    or their names), ``feasible`` (1 or 0) and ``max_violation``; a table that ``decido
    decide`` reads as the front's options (the ids and attributes of
    :meth:`decido.ParetoResult.options`)."""
    names = [o["name"] for o in result.objectives]
    try:
        with path.open("w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(["id", *names, *_x_names(result), "feasible", "max_violation"])
            for i, p in enumerate(result.pareto):
                writer.writerow([i, *(repr(v) for v in p["f"]), *(repr(v) for v in p["x"]),
                                 int(p["feasible"]),
                                 repr(p["max_violation"]) if math.isfinite(
                                     p["max_violation"]) else ""])
    except OSError as exc:
        raise click.ClickException(f"cannot write {path}: {exc.strerror}") from None
