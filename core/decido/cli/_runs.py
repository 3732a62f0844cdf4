"""``decido runs list|show|watch|cancel``: the key's runs on a server."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from decido.cli._front import points
from decido.cli._front import show as show_front
from decido.cli._output import add_row, print_table, table
from decido.cli._progress import ProgressDisplay, best_text
from decido.cli._remote import INTERRUPTED, client_for, follow_cancelling, meta_option
from decido.pareto import ParetoResult
from decido.status import RUN_STATES

__all__ = ["runs"]

_DEFAULT_SERVER = "http://127.0.0.1:8000"
_server = click.option("--server", envvar="DECIDO_URL", default=_DEFAULT_SERVER,
                       show_default=True, metavar="URL", help="the server (or $DECIDO_URL)")
_key = click.option("--key", envvar="DECIDO_KEY", metavar="KEY",
                    help="API key (default $DECIDO_KEY)")
def _remote(command: Any) -> Any:
    """``--server`` and ``--key``."""
    return _server(_key(command))


_json = click.option("--json", "as_json", is_flag=True, help="print JSON")


@click.group()
def runs() -> None:
    """The key's runs on a server: list, show, watch, cancel."""


def _labels(document: dict[str, Any]) -> str:
    """A run's metadata as ``key=value`` pairs."""
    return " ".join(f"{k}={v}" for k, v in (document.get("metadata") or {}).items())


def _best(document: dict[str, Any]) -> str:
    """The best value (a run of several objectives: its front's hypervolume, ``hv``)."""
    result = document.get("result") or {}
    progress = document.get("progress") or {}
    if "hypervolume" in result or "hypervolume" in progress:
        return "hv " + best_text(result.get("hypervolume", progress.get("hypervolume")))
    return best_text(result.get("value", progress.get("best")))


@runs.command("list")
@click.option("--state", type=click.Choice(RUN_STATES), help="only runs in this state")
@click.option("--engine", help="only runs of this engine")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True,
              help="show at most this many (newest first)")
@meta_option("only runs with this label")
@_json
@_remote
def list_(state: str | None, engine: str | None, limit: int, metadata: dict[str, str] | None,
          as_json: bool, server: str, key: str | None) -> None:
    """The key's runs, newest first."""
    with client_for(server, key) as client:
        found = []
        for run in client.runs(state=state, engine=engine, metadata=metadata):
            found.append(run.document)
            if len(found) == limit:
                break
    if as_json:
        click.echo(json.dumps(found))
        return
    rows = table("id", "state", "engine", "dims", "created", "best", "metadata")
    for d in found:
        add_row(rows, d["id"], d["state"], d.get("engine"), d.get("dims"), d["created_at"],
                _best(d), _labels(d))
    print_table(rows)
    if not found:
        click.echo("(no runs)")


@runs.command()
@click.argument("run_id")
@_json
@_remote
def show(run_id: str, as_json: bool, server: str, key: str | None) -> None:
    """One run: its state, progress or result (a run of several objectives: its front)."""
    with client_for(server, key) as client:
        run = client.run(run_id)
        front = run.refresh().result if run.several and run.finished and not as_json \
            else None
        document = run.document
    if as_json:
        click.echo(json.dumps(document))
        return
    result = document.get("result") or {}
    problem = document.get("problem") or {}
    rows = [("id", document["id"]), ("state", document["state"]),
            ("engine", str(document.get("engine"))), ("dims", str(document.get("dims"))),
            ("created", document["created_at"]), ("finished", document.get("finished_at")),
            ("best", _best(document)), ("status", result.get("status")),
            ("evaluations", result.get("evaluations",
                                       (document.get("progress") or {}).get("evaluations"))),
            ("problem", problem.get("detail")), ("metadata", _labels(document) or None)]
    for name, value in rows:
        if value is not None:
            click.echo(f"{name.ljust(11)}  {value}")
    if isinstance(front, ParetoResult):
        click.echo()
        show_front(front, False)


@runs.command()
@click.argument("run_id")
@_remote
def watch(run_id: str, server: str, key: str | None) -> None:
    """Draw a run's progress until it ends (Ctrl-C cancels it and shows its best)."""
    with client_for(server, key) as client:
        run = client.run(run_id)
        budget = (run.document.get("request") or {}).get("max_evaluations")
        label = "hypervolume" if run.several else "best"
        with ProgressDisplay(budget, label=label) as display:
            result, interrupted = follow_cancelling(run, display)
    if interrupted:
        click.echo("interrupted: the run was cancelled; its best so far", err=True)
    best = "" if result is None else f"front of {points(len(result.pareto))}, hypervolume " \
        f"{result.hypervolume:.10g}" if isinstance(result, ParetoResult) else \
        f"best {result.fun:.10g}"
    click.echo(f"{run.id} {run.state}" + ("" if result is None else
                                          f": {result.status}, {best} after "
                                          f"{result.evaluations} evaluations"))
    if interrupted:
        sys.exit(INTERRUPTED)


@runs.command()
@click.argument("run_id")
@_remote
def cancel(run_id: str, server: str, key: str | None) -> None:
    """Ask a queued or running run to stop."""
    with client_for(server, key) as client:
        run = client.run(run_id).cancel()
    click.echo(f"{run.id}: cancel requested ({run.state})")
