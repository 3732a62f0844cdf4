"""What the command line says, as the library's arguments: bounds, constraints (as an
exact penalty), criteria, and the options of a decision read from a CSV or JSON file."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import click

from decido.option_table import options_from_csv

__all__ = ["bounds", "criterion", "decision_request", "feasible", "penalized", "result_json"]

_COMPARISON = re.compile(r"^(?P<lhs>.+?)(?P<op><=|>=|==|<|>)(?P<rhs>[^<>=]+)$")
_GOALS = {"min": "minimize", "minimize": "minimize", "max": "maximize", "maximize": "maximize"}


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


def penalized(objective: str, constraints: tuple[str, ...], goal: str, weight: float) -> str:
    """The objective with each constraint ``A <= B`` (``>=``, ``<``, ``>``, ``==``) as an
    exact penalty: ``weight`` times its violation, added (minimize) or subtracted
    (maximize). A feasible point keeps its value."""
    if not constraints:
        return objective
    terms = []
    for text in constraints:
        m = _COMPARISON.match(text.strip())
        if m is None:
            raise click.BadParameter(f"{text!r}: expected LEFT <= RIGHT (or >=, <, >, ==)",
                                     param_hint="--constraint")
        lhs, op, rhs = m["lhs"].strip(), m["op"], m["rhs"].strip()
        excess = {"<=": f"({lhs}) - ({rhs})", "<": f"({lhs}) - ({rhs})",
                  ">=": f"({rhs}) - ({lhs})", ">": f"({rhs}) - ({lhs})"}.get(op)
        terms.append(f"abs(({lhs}) - ({rhs}))" if excess is None else f"max(0, {excess})")
    sign = "+" if goal == "minimize" else "-"
    return f"({objective}) {sign} {weight!r} * ({' + '.join(terms)})"


def feasible(constraints: tuple[str, ...], x: Any, tolerance: float = 1e-9) -> list[str]:
    """The constraints that ``x`` violates (beyond ``tolerance`` for ``==``)."""
    from decido import Expression

    out = []
    for text in constraints:
        m = _COMPARISON.match(text.strip())
        assert m is not None  # checked by penalized()
        if m["op"] == "==":
            check = f"abs(({m['lhs']}) - ({m['rhs']})) <= {tolerance!r}"
        else:
            check = text
        if Expression(check, n=len(x)).evaluate(x) == 0:
            out.append(text)
    return out


def criterion(text: str) -> dict[str, Any]:
    """``price:min:5`` -> ``{"attribute": "price", "goal": "minimize", "weight": 5.0}``
    (the weight may be left out: 1)."""
    parts = text.split(":")
    if len(parts) not in (2, 3) or parts[1] not in _GOALS or not parts[0]:
        raise click.BadParameter(f"{text!r}: expected ATTRIBUTE:min|max[:WEIGHT]",
                                 param_hint="--criterion")
    weight = _number(parts[2], "--criterion weight") if len(parts) == 3 else 1.0
    return {"attribute": parts[0], "goal": _GOALS[parts[1]], "weight": weight}


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
