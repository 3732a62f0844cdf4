"""The decide page's form: options as CSV or JSON, criteria lines, constraints -> the body
of ``POST /v1/decide``, or every fault found, each naming where it is.

- **Options**, CSV: a header row naming the columns, one of them the id column (``id``
  unless the form names another); every other column is an attribute whose cells are
  numbers. JSON: a list of ``{"id": ..., "attributes": {...}}`` (the API's form) or of flat
  objects ``{"id": ..., "price": 18.5, ...}``. Ids are unique.
- **Criteria**: one per line, ``attribute goal weight`` (``goal`` ``min``/``minimize`` or
  ``max``/``maximize``, read by :func:`decido.goals.goal_name`; the weight optional: the
  library's default, 1); not used by the method ``expression``.
- **Constraints**: one expression per line.
- **Pairwise** (optional; weighting ``ahp``): the criteria's pairwise judgments, one row
  per line in the order of the criteria, entries separated by spaces or commas, as numbers
  or fractions (``1/3``); ``-`` below the diagonal for the reciprocal of the entry above.
- **explain** and **sensitivity**: the API's switches of the same names (checkboxes).
- **From a run** (``from_run``, set by "choose from this front"): the options are that
  run's front (:mod:`decido_service.dashboard.front`), the options box is not read.
- **Samples** and **seed** (optional): a decision under uncertainty; CSV cells
  ``low..high`` are uncertain values (an interval in the options asks for
  :data:`DEFAULT_SAMPLES` samples when no number is given).

The body is checked by :func:`decido.decide` as any API request is; the faults this module
finds are the ones the form's text formats add (a row with a missing column, a cell that is
not a number, an id given twice).
"""

from __future__ import annotations

from typing import Any

import orjson

import decido
from decido.goals import goal_name
from decido.option_table import cell_value, options_from_csv

__all__ = ["METHODS", "FormError", "body_of", "defaults"]

#: the methods of ``/v1/decide`` (the library's method table)
METHODS: tuple[str, ...] = tuple(m["name"] for m in decido.decision_methods())
#: samples of a decision whose options hold intervals when the form gives no number
DEFAULT_SAMPLES = 10_000
#: the most options the form takes (a bigger decision belongs to the API)
MAX_OPTIONS = 10_000


class FormError(ValueError):
    """The form's faults, each a sentence naming the row, column or line."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def defaults() -> dict[str, str]:
    """The form as first shown: a small example the user can edit."""
    return {"options": "id,price,quality,lead_time\ns1,18.5,7.2,5\ns2,22,8.1,12\ns3,15,6,3\n",
            "id_column": "id", "method": "topsis",
            "criteria": "price minimize 5\nquality maximize 3\nlead_time minimize 2",
            "constraints": "price <= 25", "expression": "", "top_k": "", "pairwise": "",
            "samples": "", "seed": "", "explain": "1", "sensitivity": "", "from_run": ""}


def body_of(fields: dict[str, str]) -> dict[str, Any]:
    """The ``/v1/decide`` body of the form's ``fields``; :class:`FormError` listing every
    fault found."""
    problems: list[str] = []
    from_run = fields.get("from_run", "").strip()
    body: dict[str, Any] = {"from_run": from_run} if from_run else {"options": _options(
        fields.get("options", ""), fields.get("id_column", "").strip() or "id", problems)}
    method = fields.get("method", "")
    body["method"] = method
    for switch in ("explain", "sensitivity"):  # checkboxes: sent only when checked
        if fields.get(switch):
            body[switch] = True
    if method not in METHODS:
        problems.append(f"method: pick one of {', '.join(METHODS)}")
    if method == "expression":
        body["expression"] = fields.get("expression", "").strip()
        if not body["expression"]:
            problems.append("expression: the method 'expression' needs a score expression")
    else:
        body["criteria"] = _criteria(fields.get("criteria", ""), problems)
    constraints = [c.strip() for c in fields.get("constraints", "").splitlines() if c.strip()]
    if constraints:
        body["constraints"] = constraints
    pairwise = _pairwise(fields.get("pairwise", ""), problems)
    if pairwise:
        body["pairwise"] = pairwise
    _uncertainty(body, fields, problems)
    top_k = fields.get("top_k", "").strip()
    if top_k:
        if top_k.isdigit() and int(top_k) >= 1:
            body["top_k"] = int(top_k)
        else:
            problems.append(f"top k: {top_k!r} is not a whole number of at least 1")
    if problems:
        raise FormError(problems)
    return body


def _pairwise(text: str, problems: list[str]) -> list[list[float | None]]:
    rows = []
    for line, raw in enumerate(text.splitlines(), start=1):
        cells = raw.replace(",", " ").split()
        if not cells:
            continue
        row: list[float | None] = []
        for cell in cells:
            if cell == "-":
                row.append(None)
                continue
            top, slash, bottom = cell.partition("/")
            parts = [cell_value(top), cell_value(bottom) if slash else 1.0]
            if not all(isinstance(x, float) for x in parts) or parts[1] == 0:
                problems.append(f"pairwise: line {line}: {cell!r} is not a number or a fraction")
                row.append(None)
                continue
            row.append(float(parts[0]) / float(parts[1]))
        rows.append(row)
    return rows


def _uncertainty(body: dict[str, Any], fields: dict[str, str], problems: list[str]) -> None:
    """``uncertainty`` when the form gives samples or the options hold intervals."""
    samples, seed = fields.get("samples", "").strip(), fields.get("seed", "").strip()
    intervals = any(isinstance(v, dict) for o in body.get("options", ())
                    for v in o.get("attributes", {}).values())
    if not (samples or seed or intervals):
        return
    uncertainty: dict[str, int] = {"samples": DEFAULT_SAMPLES}
    for name, text in (("samples", samples), ("seed", seed)):
        if text and not text.isdigit():
            problems.append(f"{name}: {text!r} is not a whole number")
        elif text:
            uncertainty[name] = int(text)
    body["uncertainty"] = uncertainty


def _options(text: str, id_column: str, problems: list[str]) -> list[dict[str, Any]]:
    stripped = text.strip()
    if not stripped:
        problems.append("options: paste or upload a CSV with a header row, or JSON")
        return []
    if stripped[0] in "[{":
        rows = _json_rows(stripped, problems)
    else:
        rows, found = options_from_csv(stripped, id_column, numbers_only=True)
        problems.extend(f"options: {problem}" for problem in found)
    seen: set[Any] = set()
    for n, option in enumerate(rows, start=1):
        if option["id"] in seen:
            problems.append(f"options: row {n}: the id {option['id']!r} is given twice")
        seen.add(option["id"])
    if len(rows) > MAX_OPTIONS:
        problems.append(f"options: at most {MAX_OPTIONS} in the form (send more to the API)")
    return rows


def _json_rows(text: str, problems: list[str]) -> list[dict[str, Any]]:
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        problems.append(f"options: not valid JSON ({exc})")
        return []
    if isinstance(data, dict):
        data = data.get("options")
    if not isinstance(data, list) or not all(isinstance(o, dict) and "id" in o for o in data):
        problems.append("options: JSON must be a list of objects, each with an 'id'")
        return []
    return [o if isinstance(o.get("attributes"), dict) else
            {"id": o["id"], "attributes": {k: v for k, v in o.items() if k != "id"}}
            for o in data]


def _criteria(text: str, problems: list[str]) -> list[dict[str, Any]]:
    out = []
    for line, raw in enumerate(text.splitlines(), start=1):
        parts = raw.split()
        if not parts:
            continue
        criterion: dict[str, Any] = {"attribute": parts[0]}
        if len(parts) > 1:
            goal = goal_name(parts[1].lower())
            if goal is None:
                problems.append(f"criteria: line {line}: goal {parts[1]!r} is not min or max")
            criterion["goal"] = goal
        if len(parts) > 2:
            weight = cell_value(parts[2])
            if isinstance(weight, str):
                problems.append(f"criteria: line {line}: weight {parts[2]!r} is not a number")
            criterion["weight"] = weight
        if len(parts) > 3:
            problems.append(f"criteria: line {line}: write 'attribute goal weight'")
        out.append(criterion)
    if not out:
        problems.append("criteria: give at least one line 'attribute goal weight'")
    return out
