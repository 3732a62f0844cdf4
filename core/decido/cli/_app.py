"""``decido optimize`` and ``decido decide``: here, or on a server with ``--server``."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

import decido
from decido.cli import _front, _inputs
from decido.cli._output import add_row, print_table, table
from decido.cli._progress import ProgressDisplay, run_monitored
from decido.cli._remote import (
    INTERRUPTED,
    client_for,
    meta_option,
    needs_server,
    server_options,
    submit_and_follow,
)
from decido.optimize import OptimizeResult
from decido.pareto import ParetoResult
from decido.run_spec import RunSpec, fields

__all__ = ["INTERRUPTED", "decide", "optimize"]

_SHOWN_X = 10
F = TypeVar("F", bound=Callable[..., Any])


def _flag(name: str) -> str:
    """The option of a keyword: ``--a-b`` of ``a_b``."""
    return "--" + name.replace("_", "-")


def _front_options(command: F) -> F:
    """The options of the keywords only a run of several objectives takes
    (:class:`decido.run_spec.RunSpec`'s fields of scope ``several``, their doc the help):
    an integer field takes a positive integer, any other one number per objective."""
    for f in reversed([f for f in fields() if f.metadata["scope"] == "several"]):
        integer = str(f.type).startswith("int")
        command = click.option(
            _flag(f.name), f.name, type=click.IntRange(min=1) if integer else None,
            metavar=None if integer else "V,V,...", callback=None if integer else _front.numbers,
            help="several objectives: " + f.metadata["doc"])(command)
    return command


@click.command()
@click.argument("expression", required=False)
@click.option("--objective", "objectives", multiple=True, metavar="[NAME[:max]=]EXPR",
              help="one of several objectives instead of EXPRESSION (repeat it: the run's "
                   "Pareto front is printed), e.g. 'cost=sum(x**2)' or 'gain:max=x[0]'")
@click.option("--bounds", "-b", "bounds", multiple=True, required=True, metavar="LO:HI",
              help="the box: once with --dims N, or once per variable")
@click.option("--dims", "-n", type=click.IntRange(min=1), help="number of variables")
@click.option("--constraint", "-c", "constraints", multiple=True, metavar="LEFT<=RIGHT",
              help="a constraint ([name:] LEFT <= RIGHT, >= or ==) over x, kept by the "
                   "engine (decido.optimize's constraints); repeatable")
@click.option("--maximize", "goal", flag_value="maximize", help="maximize (default: minimize)")
@click.option("--minimize", "goal", flag_value="minimize", default=True, hidden=True)
@click.option("--engine", "-e", help="an engine id (decido.engines(); default dss)")
@click.option("--seed", type=click.IntRange(min=0), help="replays a run")
@click.option("--budget", type=click.IntRange(min=1),
              help="most evaluations (default max(10000, 2000 n))")
@click.option("--time-limit", type=click.FloatRange(min=0, min_open=True), help="seconds")
@click.option("--target", type=float, help="stop once the best value is this good")
@click.option("--option", "-o", "options", multiple=True, metavar="NAME=VALUE",
              help="an engine option; repeatable")
@_front_options
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path),
              help="several objectives: also write the front to this CSV file")
@click.option("--json", "as_json", is_flag=True, help="print the result as one JSON object")
@meta_option("a label of the run on the server (runs list --meta filters by it)")
@server_options
def optimize(expression: str | None, objectives: tuple[str, ...], bounds: tuple[str, ...],
             dims: int | None, constraints: tuple[str, ...], goal: str, engine: str | None,
             seed: int | None, budget: int | None, time_limit: float | None,
             target: float | None, options: tuple[str, ...], csv_path: Path | None,
             as_json: bool, metadata: dict[str, str] | None, server: str | None,
             key: str | None, **front: Any) -> None:
    """Optimize EXPRESSION over the vector x: here, or on a server with --server.

    With --objective EXPR given twice or more instead: the Pareto front of the objectives,
    printed as a table (each point's objective values and x; --csv FILE writes it).

    A progress bar on a terminal (plain lines otherwise, on stderr); Ctrl-C stops the run
    (on a server: cancels it, at any moment) and prints the best point so far (exit 130)."""
    needs_server(metadata, server)
    if (expression is None) == (not objectives):
        raise click.UsageError("give EXPRESSION, or --objective EXPR for each of several "
                               "objectives" + (", not both" if objectives else ""))
    several = {**{_flag(name): value for name, value in front.items()}, "--csv": csv_path}
    if not objectives and any(v is not None for v in several.values()):
        raise click.UsageError("only with several objectives (--objective): " + ", ".join(
            k for k, v in several.items() if v is not None))
    parsed = [_front.objective(o) for o in objectives]
    box = _inputs.bounds(bounds, dims)
    texts = [expression] if expression is not None else [
        o["expression"] if isinstance(o, dict) else o for o in parsed]
    note = next((n for n in (_inputs.dims_note(t, bounds, dims) for t in texts) if n), None)
    if note is not None:
        click.echo(note, err=True)
    args: dict[str, Any] = {"goal": goal, "engine": engine, "seed": seed, "target": target,
                            "max_evaluations": budget, "time_limit": time_limit,
                            "options": _engine_options(options) or None,
                            "constraints": list(constraints) or None,
                            "metadata": metadata}
    total = RunSpec(max_evaluations=budget).budget(len(box))
    if objectives:
        args.update(front)
        _optimize_front(parsed, box, args, total, csv_path, as_json, server, key)
        return
    assert expression is not None
    result: OptimizeResult | None
    with ProgressDisplay(total) as display:
        if server is None:
            result, interrupted = _run_here(expression, box, args, display)
        else:
            with client_for(server, key) as client:
                outcome, interrupted = submit_and_follow(client, expression, box, args,
                                                         display)
            result = outcome if isinstance(outcome, OptimizeResult) else None
    if result is None:
        if not interrupted:
            raise click.ClickException("the run was cancelled before it started")
        click.echo("interrupted: the run was cancelled before it started (no point yet)",
                   err=True)
        sys.exit(INTERRUPTED)
    violated = _inputs.violated(constraints, result) if constraints else None
    if interrupted:
        click.echo("interrupted: the best point so far", err=True)
    _show(result, violated, as_json)
    if interrupted:
        sys.exit(INTERRUPTED)


def _optimize_front(objectives: list[Any], box: list[list[float]], args: dict[str, Any],
                    total: int, csv_path: Path | None, as_json: bool, server: str | None,
                    key: str | None) -> None:
    """A run of several objectives, here or on ``server``: its front as a table."""
    front: ParetoResult | None
    with ProgressDisplay(total, label="hypervolume") as display:
        if server is None:
            front, interrupted = _front.run_here(objectives, box, args, display)
        else:
            with client_for(server, key) as client:
                outcome, interrupted = submit_and_follow(client, objectives, box, args,
                                                         display)
            front = outcome if isinstance(outcome, ParetoResult) else None
    if front is None:
        if not interrupted:
            raise click.ClickException("the run was cancelled before it started")
        click.echo("interrupted: the run was cancelled before it started (no front yet)",
                   err=True)
        sys.exit(INTERRUPTED)
    if interrupted:
        click.echo("interrupted: the front so far", err=True)
    _front.show(front, as_json)
    if csv_path is not None:
        _front.write_csv(front, csv_path)
        click.echo(f"wrote {_front.points(len(front.pareto))} to {csv_path}", err=True)
    if interrupted:
        sys.exit(INTERRUPTED)


def _engine_options(given: tuple[str, ...]) -> dict[str, float]:
    out = {}
    for text in given:
        name, sep, value = text.partition("=")
        try:
            out[name] = float(value) if sep else float("nan")
        except ValueError:
            sep = ""
        if not sep or not name:
            raise click.BadParameter(f"{text!r}: expected NAME=NUMBER", param_hint="--option")
    return out


def _run_here(expression: str, box: list[list[float]], args: dict[str, Any],
              display: ProgressDisplay) -> tuple[OptimizeResult, bool]:
    """Run in a thread with a :class:`decido.RunMonitor`; this thread draws the progress
    and, on Ctrl-C, stops the run (it ends ``stopped`` with its best so far)."""
    checked = {k: v for k, v in args.items() if v is not None}
    result, interrupted = run_monitored(
        lambda monitor: decido.optimize(expression, box, monitor=monitor, **checked), display)
    display.update(result.evaluations, result.fun, result.elapsed)
    return result, interrupted


def _show(result: OptimizeResult, violated: list[str] | None, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(_inputs.result_json(result, violated)))
        return
    x = ", ".join(format(v, ".6g") for v in result.x[:_SHOWN_X])
    more = f", ... ({len(result.x)} values)" if len(result.x) > _SHOWN_X else ""
    status = result.message if result.message.startswith(result.status) else \
        f"{result.status}: {result.message}"
    rows = [("status", status), ("best value", f"{result.fun:.10g}"),
            ("x", f"[{x}{more}]"),
            ("evaluations", f"{result.evaluations} ({result.iterations} iterations)"),
            ("elapsed", f"{result.elapsed:.3f} s"),
            ("engine", f"{result.engine} (seed {result.seed})")]
    if violated is not None:
        rows.append(("feasible", "yes" if not violated else "no: " + "; ".join(violated)))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        click.echo(f"{name.ljust(width)}  {value}")


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--method", "-m", help="topsis, wsm, wpm, vikor, ... (default: the request's, "
                                     "else topsis)")
@click.option("--criterion", "criteria", multiple=True, metavar="ATTR:min|max[:WEIGHT]",
              help="a criterion; repeatable")
@click.option("--expression", help="score the options with this expression instead")
@click.option("--constraint", "constraints", multiple=True, metavar="EXPR",
              help="a constraint over the attributes, e.g. 'price <= 25'; repeatable")
@click.option("--top-k", type=click.IntRange(min=1), help="rank only the best K")
@click.option("--id", "id_column", metavar="COLUMN", help="the CSV column naming an option "
                                                          "(default: id, else the first)")
@click.option("--json", "as_json", is_flag=True, help="print the whole answer as JSON")
@meta_option("a label of the decision in the server's log")
@server_options
def decide(file: Path, method: str | None, criteria: tuple[str, ...], expression: str | None,
           constraints: tuple[str, ...], top_k: int | None, id_column: str | None,
           as_json: bool, metadata: dict[str, str] | None, server: str | None,
           key: str | None) -> None:
    """Rank the options of FILE (CSV with a header row, or JSON) and print the ranking."""
    needs_server(metadata, server)
    request = _inputs.decision_request(file, id_column)
    if criteria:
        request["criteria"] = [_inputs.criterion(c) for c in criteria]
    if expression is not None:
        request["expression"] = expression
    if constraints:
        request["constraints"] = list(constraints)
    if method is not None:
        request["method"] = method
    elif "criteria" in request and "expression" not in request:
        request.setdefault("method", "topsis")
    if top_k is not None:
        request["top_k"] = top_k
    if server is None:
        answer = decido.decide(request)
    else:
        with client_for(server, key) as client:
            answer = client.decide(request, metadata=metadata)
    if as_json:
        click.echo(json.dumps(answer))
        return
    _ranking(answer)


def _ranking(answer: dict[str, Any]) -> None:
    rows = table("rank", "id", "score")
    for row in answer.get("ranking", []):
        score = row.get("score")
        add_row(rows, row["rank"], row["id"], "-" if score is None else format(score, ".6g"))
    print_table(rows)
    for item in answer.get("infeasible", []):
        click.echo(f"infeasible: {item['id']} ({'; '.join(item['violated'])})")
    if answer.get("best_is_tied"):
        click.echo(f"tied at the top: {json.dumps(answer['ties'][0])}")
