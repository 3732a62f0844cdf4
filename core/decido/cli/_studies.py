"""decido studies ...: the key's studies on a server (docs/studies.md), and the commands
of a shell loop for an objective that is a program: suggest prints trials (JSON lines,
or --format env lines a shell eval s), complete tells one."""

from __future__ import annotations

import json
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import click

from decido.cli import _inputs
from decido.cli._output import add_row, print_table, table
from decido.cli._progress import best_text
from decido.cli._remote import client_for, meta_option
from decido.status import STUDY_STATES, TRIAL_STATES

__all__ = ["FINISHED", "env_line", "studies"]

#: the exit status of suggest once the study makes no more trials (409 study_finished)
FINISHED = 3
_DEFAULT_SERVER = "http://127.0.0.1:8000"
_server = click.option("--server", envvar="DECIDO_URL", default=_DEFAULT_SERVER,
                       show_default=True, metavar="URL", help="the server (or $DECIDO_URL)")
_key = click.option("--key", envvar="DECIDO_KEY", metavar="KEY",
                    help="API key (default $DECIDO_KEY)")
_json = click.option("--json", "as_json", is_flag=True, help="print JSON")


def _remote(command: Any) -> Any:
    """--server and --key."""
    return _server(_key(command))


@click.group()
def studies() -> None:
    """The key's studies on a server (ask/tell): create, list, show, watch, suggest,
    complete, stop, delete."""


# ----------------------------------------------------------------- what is shown


def _counts(document: dict[str, Any]) -> str:
    """The trials by state, those there are: completed 10, active 2."""
    counts = document.get("trials") or {}
    return ", ".join(f"{s} {counts[s]}" for s in TRIAL_STATES if counts.get(s)) or "none"


def _total(document: dict[str, Any]) -> int:
    return sum(int(v) for v in (document.get("trials") or {}).values())


def _best(document: dict[str, Any]) -> str:
    """The best value and its trial (several objectives: the front's size)."""
    if document.get("pareto") is not None:
        return f"front of {len(document['pareto'])}"
    best = document.get("best")
    return "-" if best is None else f"{best_text(best['value'])} (trial {best['number']})"


def _labels(document: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in (document.get("metadata") or {}).items())


def _dims(spec: dict[str, Any]) -> int:
    return len(spec.get("variables") or spec.get("bounds") or [])


def _variables(trial: dict[str, Any]) -> str:
    return " ".join(f"{k}={_plain(v)}" for k, v in trial["variables"].items())


def _plain(value: Any) -> str:
    return format(value, ".10g") if isinstance(value, float) else str(value)


def _outcome(trial: dict[str, Any]) -> str:
    """A trial's value(s), or its reason."""
    if trial.get("values") is not None and len(trial["values"]) > 1:
        return " ".join(_plain(v) for v in trial["values"])
    if trial.get("value") is not None:
        return _plain(trial["value"])
    return trial.get("reason") or "-"


_NAME = re.compile(r"[^A-Za-z0-9_]")


def env_line(trial: dict[str, Any]) -> str:
    """A trial as TRIAL=3 X0=1.25 OPT=adam: shell assignments (eval them), its
    number and each variable by its name in capitals (other characters than letters,
    digits and _ as _), each value quoted for the shell."""
    pairs = [("TRIAL", str(trial["number"]))]
    for name, value in trial["variables"].items():
        var = _NAME.sub("_", str(name)).upper()
        pairs.append((f"_{var}" if var[:1].isdigit() else var, _plain(value)))
    return " ".join(f"{name}={shlex.quote(value)}" for name, value in pairs)


# ----------------------------------------------------------------- commands


@studies.command()
@click.option("--file", "spec_file", type=click.Path(exists=True, dir_okay=False,
                                                     path_type=Path),
              help="the study as JSON (the body of POST /v1/studies); options override it")
@click.option("-b", "--bounds", "bounds_", multiple=True, metavar="LO:HI",
              help="a real variable's range, once per variable (or once with --dims)")
@click.option("-n", "--dims", type=click.IntRange(min=1), help="the number of variables of "
                                                                 "one --bounds")
@click.option("--objective", "objectives", multiple=True, metavar="NAME",
              help="an objective's name; repeat for several (default: one, value)")
@click.option("--goal", type=click.Choice(["minimize", "maximize", "min", "max"]))
@click.option("--engine", help="an engine id (default auto)")
@click.option("--seed", type=click.IntRange(min=0))
@click.option("--max-trials", type=click.IntRange(min=1), help="trials the engine suggests")
@click.option("--trial-lease", type=click.FloatRange(1, 86_400),
              help="seconds a trial is held without a heartbeat (default 600)")
@click.option("--constraint", "constraints", multiple=True, metavar="EXPR",
              help="a constraint over variables, objectives and metrics, e.g. "
                   "'latency <= 100'; repeatable")
@meta_option("a label of the study (studies list --meta filters by it)")
@_json
@_remote
def create(spec_file: Path | None, bounds_: tuple[str, ...], dims: int | None,
           objectives: tuple[str, ...], goal: str | None, engine: str | None,
           seed: int | None, max_trials: int | None, trial_lease: float | None,
           constraints: tuple[str, ...], metadata: dict[str, str] | None, as_json: bool,
           server: str, key: str | None) -> None:
    """Create a study; prints its id (STUDY=$(decido studies create ...))."""
    body: dict[str, Any] = {}
    if spec_file is not None:
        try:
            body = json.loads(spec_file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise click.BadParameter(f"{spec_file}: {exc}", param_hint="--file") from None
        if not isinstance(body, dict):
            raise click.BadParameter(f"{spec_file}: not a JSON object", param_hint="--file")
    given = {"objectives": list(objectives) or None, "goal": goal, "engine": engine,
             "seed": seed, "max_trials": max_trials, "trial_lease": trial_lease,
             "constraints": list(constraints) or None, "metadata": metadata,
             "bounds": _inputs.bounds(bounds_, dims) if bounds_ else None}
    body.update({k: v for k, v in given.items() if v is not None})
    with client_for(server, key) as client:
        study = client.studies.create(**body)
    click.echo(json.dumps(study.document) if as_json else study.id)


@studies.command("list")
@click.option("--state", type=click.Choice(STUDY_STATES), help="only studies in this state")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True,
              help="show at most this many (newest first)")
@meta_option("only studies with this label")
@_json
@_remote
def list_(state: str | None, limit: int, metadata: dict[str, str] | None, as_json: bool,
          server: str, key: str | None) -> None:
    """The key's studies, newest first."""
    found = []
    with client_for(server, key) as client:
        for study in client.studies.list(state=state, metadata=metadata):
            found.append(study.document)
            if len(found) == limit:
                break
    if as_json:
        click.echo(json.dumps(found))
        return
    rows = table("id", "state", "engine", "dims", "trials", "best", "created", "metadata")
    for d in found:
        add_row(rows, d["id"], d["state"], d["spec"].get("engine"), _dims(d["spec"]),
                _total(d), _best(d), d["created_at"], _labels(d))
    print_table(rows)
    if not found:
        click.echo("(no studies)")


@studies.command()
@click.argument("study_id")
@click.option("--trials", "with_trials", is_flag=True, help="and every trial")
@_json
@_remote
def show(study_id: str, with_trials: bool, as_json: bool, server: str,
         key: str | None) -> None:
    """One study: its state, trials by state, best (or front); --trials lists them."""
    with client_for(server, key) as client:
        study = client.studies.get(study_id)
        trials = [t.document for t in study.trials()] if with_trials else []
    d = study.document
    if as_json:
        click.echo(json.dumps({**d, "trial_list": trials} if with_trials else d))
        return
    spec = d["spec"]
    best = d.get("best")
    rows = [("id", d["id"]), ("state", d["state"]), ("engine", spec.get("engine")),
            ("dims", str(_dims(spec))), ("max_trials", spec.get("max_trials")),
            ("created", d["created_at"]), ("trials", f"{_total(d)}: {_counts(d)}"),
            ("best", _best(d)), ("at", None if best is None else _variables(best)),
            ("metadata", _labels(d) or None)]
    for name, value in rows:
        if value is not None:
            click.echo(f"{name.ljust(10)}  {value}")
    front = d.get("pareto")
    shown = trials or (front or [])
    if shown:
        click.echo()
        rows_ = table("trial", "state", "value", "variables")
        for t in shown:
            add_row(rows_, t["number"], t["state"], _outcome(t), _variables(t))
        print_table(rows_)


@studies.command()
@click.argument("study_id")
@click.option("--interval", type=click.FloatRange(0.05, 3600), default=1.0,
              show_default=True, help="seconds between two reads")
@_remote
def watch(study_id: str, interval: float, server: str, key: str | None) -> None:
    """Follow a study: a line each time its counts or best change, until it finishes
    (completed, or stopped with no trial active); Ctrl-C stops watching (exit 130)."""
    last = None
    with client_for(server, key) as client:
        study = client.studies.get(study_id)
        while True:
            line = f"trials {study.n_trials}: {_counts(study.document)}  best " \
                   f"{_best(study.document)}"
            if line != last:
                click.echo(line)
                last = line
            if study.finished:
                break
            time.sleep(interval)
            study.refresh()
    click.echo(f"{study.id} {study.state}: {study.n_trials} trials, best "
               f"{_best(study.document)}")


@studies.command()
@click.argument("study_id")
@click.option("--count", type=click.IntRange(1, 1000), default=1, show_default=True,
              help="trials to hand out")
@click.option("--client-id", help="who holds them: a client that still holds active "
                                  "trials gets those back")
@click.option("--format", "fmt", type=click.Choice(["json", "env"]), default="json",
              show_default=True, help="json: one trial a line; env: TRIAL=3 X0=... lines")
@_remote
def suggest(study_id: str, count: int, client_id: str | None, fmt: str, server: str,
            key: str | None) -> None:
    """Trials to evaluate, one a line. Exits with status 3 once the study makes no more
    (409 study_finished), so a shell loop ends there."""
    from decido.client import StudyFinished

    with client_for(server, key) as client:
        try:
            trials = client.studies.get(study_id).suggest(count, client_id)
        except StudyFinished as exc:
            click.echo(f"decido: {exc.detail}", err=True)
            sys.exit(FINISHED)
    for trial in trials:
        click.echo(env_line(trial.document) if fmt == "env" else json.dumps(trial.document))


@studies.command()
@click.argument("study_id")
@click.argument("number", type=click.IntRange(min=0))
@click.option("--value", "values", multiple=True, type=float, metavar="V",
              help="the objective's value; repeat for each of several objectives")
@click.option("--metric", "metrics", multiple=True, metavar="NAME=V",
              help="a reported number the constraints may read; repeatable")
@click.option("--failed", metavar="REASON", help="the evaluation failed")
@click.option("--infeasible", metavar="REASON", help="the point cannot be evaluated")
@_json
@_remote
def complete(study_id: str, number: int, values: tuple[float, ...],
             metrics: tuple[str, ...], failed: str | None, infeasible: str | None,
             as_json: bool, server: str, key: str | None) -> None:
    """Tell a trial's result: --value V (--value per objective), or --failed
    REASON / --infeasible REASON."""
    told = [name for name, given in (("--value", values), ("--failed", failed),
                                     ("--infeasible", infeasible)) if given]
    if len(told) != 1:
        raise click.UsageError("give one of --value V, --failed REASON, --infeasible REASON")
    found: dict[str, float] = {}
    for text in metrics:
        name, sep, value = text.partition("=")
        try:
            found[name] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name:
            raise click.BadParameter(f"{text!r}: expected NAME=NUMBER", param_hint="--metric")
    args: dict[str, Any] = {"metrics": found or None}
    if failed is not None or infeasible is not None:
        args = {"state": "failed" if failed is not None else "infeasible",
                "reason": failed if failed is not None else infeasible}
    elif len(values) == 1:
        args["value"] = values[0]
    else:
        args["values"] = list(values)
    with client_for(server, key) as client:
        trial = client.studies.get(study_id).tell(number, **args)
    click.echo(json.dumps(trial.document) if as_json else
               f"trial {trial.number} {trial.state}: {_outcome(trial.document)}")


@studies.command()
@click.argument("study_id")
@_remote
def stop(study_id: str, server: str, key: str | None) -> None:
    """Stop a study: no more suggestions (active trials can still be told)."""
    with client_for(server, key) as client:
        study = client.studies.get(study_id).stop()
    click.echo(f"{study.id} {study.state}: trials {_counts(study.document)}")


@studies.command()
@click.argument("study_id")
@_remote
def delete(study_id: str, server: str, key: str | None) -> None:
    """Delete a stopped or completed study."""
    with client_for(server, key) as client:
        client.studies.get(study_id).delete()
    click.echo(f"{study_id} deleted")
