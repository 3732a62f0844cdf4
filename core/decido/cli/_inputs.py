"""What the command line says, as the library's arguments: bounds, criteria, the options of
a decision read from a CSV or JSON file; and which constraints a result violates."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import click

from decido.design import DEFAULT_CONSTRAINT_TOLERANCE
from decido.goals import goal_name
from decido.option_table import options_from_csv

__all__ = ["bounds", "criterion", "decision_request", "dims_note", "result_json", "violated"]



def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise click.BadParameter(f"{what}: {text!r} is not a number") from None
    return value


def bounds(given: tuple[str, ...], dims: int | None) -> list[list[float]]:
    """``--bounds LO:HI`` once with ``--dims N`` (the same pair N times), or once per
    variable."""
    pairs = []
    for text in given:
        lo, sep, hi = text.partition(":")
        if not sep:
            raise click.BadParameter(f"{text!r}: expected LO:HI, e.g. -5:5", param_hint="--bounds")
        pairs.append([_number(lo, "--bounds"), _number(hi, "--bounds")])
    if dims is not None:
        if len(pairs) != 1:
            raise click.BadParameter("--dims N takes one --bounds LO:HI (used for each of the N "
                                     "variables); without --dims, give one --bounds per variable",
                                     param_hint="--dims")
        pairs = pairs * dims
    return pairs


def dims_note(expression: str, given: tuple[str, ...], dims: int | None) -> str | None:
    """What to tell a user who gave one ``--bounds`` and no ``--dims`` for an expression over
    the whole vector x (``sum(x**2)``: it would use x[1] if there were one), so the one
    dimension assumed is said, not silent; None otherwise."""
    if dims is not None or len(given) != 1:
        return None
    from decido.errors import DecidoError
    from decido.expression import Expression

    try:
        grows = bool(Expression(expression, n=2).structure.used[1])
    except DecidoError:  # the run says what is wrong with it
        return None
    return ("decido: optimizing over 1 dimension (one --bounds and no --dims); for N "
            "dimensions give --dims N, or one --bounds per variable") if grows else None


def violated(constraints: tuple[str, ...], result: Any) -> list[str]:
    """The constraints (as given) that ``result.x`` violates beyond the run's tolerance:
    every one when the run found no feasible point and reported none."""
    if result.feasible:
        return []
    report = result.constraints
    if len(report) != len(constraints):
        return list(constraints)
    return [text for text, c in zip(constraints, report, strict=True)
            if c["violation"] is None or c["violation"] > DEFAULT_CONSTRAINT_TOLERANCE]


def criterion(text: str) -> dict[str, Any]:
    """``price:min:5`` -> ``{"attribute": "price", "goal": "minimize", "weight": 5.0}``
    (the weight may be left out: the library's default, 1)."""
    parts = text.split(":")
    goal = goal_name(parts[1]) if len(parts) in (2, 3) else None
    if goal is None or not parts[0]:
        raise click.BadParameter(f"{text!r}: expected ATTRIBUTE:min|max[:WEIGHT]",
                                 param_hint="--criterion")
    out: dict[str, Any] = {"attribute": parts[0], "goal": goal}
    if len(parts) == 3:
        out["weight"] = _number(parts[2], "--criterion weight")
    return out


def _csv_options(text: str, id_column: str | None) -> list[dict[str, Any]]:
    options, problems = options_from_csv(text, id_column)
    if problems:
        raise click.BadParameter("the CSV file: " + "; ".join(problems))
    return options


def decision_request(path: Path, id_column: str | None) -> dict[str, Any]:
    """The decision request read from ``path``: a CSV file with a header row (one option a
    row; the ``id`` column, else the first, names it), or JSON (a whole request with
    ``options``, or a list of options)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise click.BadParameter(f"cannot read {path}: {exc.strerror}") from None
    if path.suffix.lower() != ".json" and not text.lstrip().startswith(("{", "[")):
        return {"options": _csv_options(text, id_column)}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise click.BadParameter(f"{path} is not valid JSON: {exc}") from None
    if isinstance(data, list):
        return {"options": data}
    if isinstance(data, dict):
        return data
    raise click.BadParameter(f"{path}: expected a request object or a list of options")


def result_json(result: Any, violated: list[str] | None) -> dict[str, Any]:
    """A :class:`decido.OptimizeResult` as the JSON that ``--json`` prints."""
    out = {"x": result.x.tolist(), "fun": None if not math.isfinite(result.fun) else result.fun,
           "status": result.status, "message": result.message,
           "evaluations": result.evaluations, "iterations": result.iterations,
           "elapsed": result.elapsed, "engine": result.engine, "seed": result.seed,
           "goal": result.goal}
    if violated is not None:
        out["feasible"] = not violated
        out["violated"] = violated
    return out
