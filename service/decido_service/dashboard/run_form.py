"""The new-run page's form: expression, bounds, engine, goal, budget, seed, options -> the
body of ``POST /v1/runs``, and the faults of either the form or the API, each next to the
field it is about.

- **Bounds**: ``lower:upper`` (or ``lower upper``) once, for every one of **dimensions**
  variables, or one such pair per line, one line per variable (dimensions then blank or
  the number of lines).
- **Objectives** (optional, a run of several): one per line, ``name goal expression``
  (``goal`` min/max, optional: the form's goal); given, they are sent instead of the
  expression, with **reference point** (optional: numbers, one per objective).
- **Engine**: blank takes the API's default for the kind of run (one objective or several).
- **Options**: ``name=value`` pairs, separated by spaces, commas or lines
  (``stop_on_convergence=0``).
- Budget (**max evaluations**, **time limit**) and **seed** are optional: blank takes the
  API's default.

:func:`body_of` finds the faults of the text formats (a bound that is not a number, a
pair missing its upper end); everything else is checked where an API request is, and the
problem document's faults are put back next to their fields by :func:`faults_of`.
"""

from __future__ import annotations

import re
from typing import Any

from decido.goals import goal_name
from decido_service.http.problems import ApiError

__all__ = ["FIELDS", "FormFaults", "body_of", "defaults", "faults_of"]

_SPLIT = re.compile(r"[\s,]+")
_DIMS_MAX = 100_000  # a form's repeated bound: beyond any tier (the API names the cap)


class FormFaults(ValueError):
    """The form's faults: ``{field: [message, ...]}`` (``""``: about the whole form)."""

    def __init__(self, faults: dict[str, list[str]]) -> None:
        super().__init__("; ".join(m for ms in faults.values() for m in ms))
        self.faults = faults


def defaults() -> dict[str, str]:
    """The form as first shown: a small example the user can edit (Rastrigin, 10-D; the
    engine blank: the API's default for the kind of run)."""
    return {"expression": "10*n + sum(x**2 - 10*cos(2*pi*x))", "objectives": "",
            "reference_point": "", "bounds": "-5.12:5.12", "dims": "10", "engine": "",
            "goal": "minimize", "max_evaluations": "20000", "time_limit": "", "seed": "",
            "options": ""}


#: the form's fields, in page order
FIELDS = tuple(defaults())
#: the body member of a fault's JSON pointer -> the form field it is shown next to (a
#: field's own name, but the expression's)
_FIELD_OF_MEMBER = {**{f: f for f in FIELDS}, "objective_expression": "expression"}


def body_of(fields: dict[str, str]) -> dict[str, Any]:
    """The ``POST /v1/runs`` body of the form's ``fields``; :class:`FormFaults` naming
    every fault the form's formats have."""
    faults: dict[str, list[str]] = {}
    body: dict[str, Any] = {"goal": fields.get("goal", "").strip() or "minimize"}
    engine = fields.get("engine", "").strip()
    if engine:
        body["engine"] = engine
    objectives = _objectives(fields.get("objectives", ""), faults)
    if objectives:
        body["objectives"] = objectives
        point = fields.get("reference_point", "").strip()
        if point:
            body["reference_point"] = _numbers(point, "reference_point", faults)
    else:
        body["objective_expression"] = fields.get("expression", "").strip()
    body["bounds"] = _bounds(fields.get("bounds", ""), fields.get("dims", "").strip(), faults)
    for name, kind in (("max_evaluations", int), ("time_limit", float), ("seed", int)):
        text = fields.get(name, "").strip()
        if text:
            value = _number(text, kind)
            if value is None:
                what = "a whole number" if kind is int else "a number"
                faults.setdefault(name, []).append(f"{text!r} is not {what}")
            body[name] = value
    options = _options(fields.get("options", ""), faults)
    if options:
        body["options"] = options
    if faults:
        raise FormFaults(faults)
    return body


def faults_of(error: ApiError) -> dict[str, list[str]]:
    """The faults of a refused request by form field: each entry of a 422's ``errors``
    by its JSON pointer (``/bounds/3/0`` -> bounds, "variable 4: ..."), a 403 cap by its
    ``field`` (too many dimensions: next to dimensions), anything else about the whole
    form (``""``)."""
    faults: dict[str, list[str]] = {}
    extra = error.extra or {}
    entries = extra.get("errors") or []
    if error.code == "max_dims_exceeded":  # the number of bounds: what dimensions says
        return {"dims": [error.detail]}
    if not entries and extra.get("field"):
        entries = [{"pointer": "/" + str(extra["field"]), "message": error.detail}]
    if not entries:
        return {"": [error.detail]}
    for entry in entries:
        parts = str(entry.get("pointer") or "").split("/")[1:]
        field = _FIELD_OF_MEMBER.get(parts[0] if parts else "", "")
        message = str(entry.get("message") or error.detail)
        if field == "bounds" and len(parts) > 1 and parts[1].isdigit():
            message = f"variable {int(parts[1]) + 1}: {message}"
        elif field == "options" and len(parts) > 1:
            message = f"{parts[1]}: {message}"
        elif not field:
            message = f"{entry.get('field') or 'body'}: {message}"
        faults.setdefault(field, []).append(message)
    return faults


def _objectives(text: str, faults: dict[str, list[str]]) -> list[dict[str, str]]:
    """The objectives' lines ``name goal expression`` (the goal optional)."""
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        parts = line.split(None, 2)
        if not parts:
            continue
        objective = {"name": parts[0]}
        if len(parts) > 1 and goal_name(parts[1].lower()) is not None:
            objective["goal"] = parts[1].lower()
            parts = parts[:1] + parts[2:]
        else:
            parts = line.split(None, 1)
        if len(parts) < 2:
            faults.setdefault("objectives", []).append(
                f"line {n}: write 'name goal expression', such as 'cost min sum(x**2)'")
            continue
        objective["expression"] = parts[1].strip()
        out.append(objective)
    return out


def _numbers(text: str, name: str, faults: dict[str, list[str]]) -> list[float]:
    out = []
    for item in (i for i in _SPLIT.split(text) if i):
        value = _number(item, float)
        if value is None:
            faults.setdefault(name, []).append(f"{item!r} is not a number")
        out.append(float(value or 0.0))
    return out


def _number(text: str, kind: type[int] | type[float]) -> int | float | None:
    try:
        return kind(text)
    except ValueError:
        return None


def _pair(text: str) -> list[float] | None:
    """``lower:upper`` or ``lower upper`` as two floats, else ``None``."""
    parts = [p for p in re.split(r"[:\s,]+", text.strip()) if p]
    numbers = [_number(p, float) for p in parts]
    if len(numbers) != 2 or any(n is None for n in numbers):
        return None
    return [float(n) for n in numbers if n is not None]


def _bounds(text: str, dims_text: str, faults: dict[str, list[str]]) -> list[list[float]]:
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        faults.setdefault("bounds", []).append("give lower:upper, once or one line per variable")
        return []
    pairs = []
    for n, line in enumerate(lines, start=1):
        pair = _pair(line)
        if pair is None:
            where = f"line {n}: " if len(lines) > 1 else ""
            faults.setdefault("bounds", []).append(
                f"{where}{line.strip()!r} is not two numbers lower:upper")
        pairs.append(pair or [0.0, 0.0])
    dims = None
    if dims_text:
        dims = _number(dims_text, int)
        if dims is None or not 1 <= dims <= _DIMS_MAX:
            faults.setdefault("dims", []).append(
                f"{dims_text!r} is not a whole number from 1 to {_DIMS_MAX}")
            dims = None
    if len(pairs) == 1:
        return pairs * int(dims or 1)
    if dims is not None and dims != len(pairs):
        faults.setdefault("dims", []).append(
            f"{dims} dimensions, but {len(pairs)} lines of bounds (leave it blank)")
    return pairs


def _options(text: str, faults: dict[str, list[str]]) -> dict[str, float]:
    options: dict[str, float] = {}
    for item in (i for i in _SPLIT.split(text.strip()) if i):
        name, equals, value = item.partition("=")
        number = _number(value, float) if equals and name else None
        if number is None:
            faults.setdefault("options", []).append(f"{item!r} is not name=number")
            continue
        options[name] = number
    return options
