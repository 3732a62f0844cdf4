"""The decide page's form: options as CSV or JSON, criteria lines, constraints -> the body
of ``POST /v1/decide``, or every fault found, each naming where it is.

- **Options**, CSV: a header row naming the columns, one of them the id column (``id``
  unless the form names another); every other column is an attribute whose cells are
  numbers. JSON: a list of ``{"id": ..., "attributes": {...}}`` (the API's form) or of flat
  objects ``{"id": ..., "price": 18.5, ...}``. Ids are unique.
- **Criteria**: one per line, ``attribute goal weight`` (``goal`` ``min``/``minimize`` or
  ``max``/``maximize``, read by :func:`decido.goals.goal_name`; the weight optional: the
  library's default, 1; ``low..high`` a weight interval, a decision under uncertainty);
  not used by the method ``expression``.
- **Weighting** (optional): one of the library's weightings (its vocabulary's list);
  ``unknown`` (and any interval weight) asks for a decision under uncertainty.
- **Constraints**: one expression per line.
- **Decision makers** (optional, a group decision): the API's JSON list, or one block per
  decision maker, blocks separated by a blank line: a first line ``id`` or ``id weight``,
  then either lines ``attribute weight`` (direct weights) or the rows of a pairwise matrix
  (as **Pairwise**); **aggregation** the API's member of that name.
- **Pairwise** (optional; weighting ``ahp``): the criteria's pairwise judgments, one row
  per line in the order of the criteria, entries separated by spaces or commas, as numbers
  or fractions (``1/3``); ``-`` below the diagonal for the reciprocal of the entry above.
- **explain** and **sensitivity**: the API's switches of the same names (checkboxes); not
  sent under uncertainty, where the library ignores them (the rank acceptabilities
  explain the ranking).
- **From a run** (``from_run``, set by "choose from this front"): the options are that
  run's front (:mod:`decido_service.dashboard.front`), the options box is not read. **From
  a study** (``from_study``): the study's front, or its completed trials (one objective).
- **Samples** and **seed** (optional): a decision under uncertainty; CSV cells
  ``low..high`` are uncertain values (an interval in the options asks for
  the library's default number of samples when no number is given).

The form starts empty, the example (:data:`EXAMPLE`) shown greyed in its boxes and filled
by "Use the example": what the user pastes is all that is sent.

The body is checked by :func:`decido.decide` as any API request is; the faults this module
finds are the ones the form's text formats add (a row with a missing column, a cell that is
not a number, an id given twice).
"""

from __future__ import annotations

from typing import Any

import orjson

from decido.decisions.vocabulary import AGGREGATIONS, DEFAULT_SAMPLES, EXPRESSION_METHOD
from decido.decisions.vocabulary import ALL_METHODS as METHODS
from decido.decisions.vocabulary import WEIGHTING_NAMES as WEIGHTINGS
from decido.goals import goal_name
from decido.option_table import cell_value, options_from_csv, table_value

__all__ = ["AGGREGATIONS", "EXAMPLE", "FIELDS", "METHODS", "SOURCES", "WEIGHTINGS", "FormError",
           "body_of", "defaults", "example"]

#: the members that name where the options come from instead of the options box (a run's
#: front, a study's front or completed trials): "choose from this front"
SOURCES = ("from_run", "from_study")
#: the example the form shows greyed in its empty boxes, and fills on "Use the example"
EXAMPLE: dict[str, str] = {
    "options": "id,price,quality,lead_time\ns1,18.5,7.2,5\ns2,22,8.1,12\ns3,15,6,3\n",
    "criteria": "price minimize 5\nquality maximize 3\nlead_time minimize 2",
    "constraints": "price <= 25"}
#: the most options the form takes (a bigger decision belongs to the API)
MAX_OPTIONS = 10_000


class FormError(ValueError):
    """The form's faults, each a sentence naming the row, column or line."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def defaults() -> dict[str, str]:
    """The form as first shown: empty boxes (the example greyed in them), method topsis,
    ``explain`` on."""
    return {"options": "", "id_column": "id", "method": "topsis", "criteria": "",
            "constraints": "", "expression": "", "top_k": "", "pairwise": "",
            "weighting": "", "decision_makers": "", "aggregation": "",
            "samples": "", "seed": "", "explain": "1", "sensitivity": "", "from_run": "",
            "from_study": ""}


#: the form's fields
FIELDS = tuple(defaults())


def example() -> dict[str, str]:
    """The form filled with :data:`EXAMPLE` (the page's "Use the example" without
    script)."""
    return {**defaults(), **EXAMPLE}


def body_of(fields: dict[str, str]) -> dict[str, Any]:
    """The ``/v1/decide`` body of the form's ``fields``; :class:`FormError` listing every
    fault found."""
    problems: list[str] = []
    named = [(name, value) for name in SOURCES if (value := fields.get(name, "").strip())]
    body: dict[str, Any] = dict(named[:1]) if named else {"options": _options(
        fields.get("options", ""), fields.get("id_column", "").strip() or "id", problems)}
    method = fields.get("method", "")
    body["method"] = method
    for switch in ("explain", "sensitivity"):  # checkboxes: sent only when checked
        if fields.get(switch):
            body[switch] = True
    if method not in METHODS:
        problems.append(f"method: pick one of {', '.join(METHODS)}")
    if method == EXPRESSION_METHOD:
        body["expression"] = fields.get("expression", "").strip()
        if not body["expression"]:
            problems.append("expression: the method 'expression' needs a score expression")
    else:
        body["criteria"] = _criteria(fields.get("criteria", ""), problems)
    constraints = [c.strip() for c in fields.get("constraints", "").splitlines() if c.strip()]
    if constraints:
        body["constraints"] = constraints
    _weights(body, fields, problems)
    _uncertainty(body, fields, problems)
    if "uncertainty" in body:  # ignored there (with a warning the user did not ask for)
        body.pop("explain", None)
        body.pop("sensitivity", None)
    top_k = fields.get("top_k", "").strip()
    if top_k:
        if top_k.isdigit() and int(top_k) >= 1:
            body["top_k"] = int(top_k)
        else:
            problems.append(f"top k: {top_k!r} is not a whole number of at least 1")
    if problems:
        raise FormError(problems)
    return body


def _weights(body: dict[str, Any], fields: dict[str, str], problems: list[str]) -> None:
    """``weighting``, ``pairwise``, ``decision_makers`` and ``aggregation`` as given."""
    for name, allowed in (("weighting", WEIGHTINGS), ("aggregation", AGGREGATIONS)):
        value = fields.get(name, "").strip()
        if value:
            if value not in allowed:
                problems.append(f"{name}: pick one of {', '.join(allowed)}")
            body[name] = value
    pairwise = _pairwise(fields.get("pairwise", "").splitlines(), "pairwise", 1, problems)
    if pairwise:
        body["pairwise"] = pairwise
    members = _members(fields.get("decision_makers", ""), problems)
    if members:
        body["decision_makers"] = members


def _pairwise(lines: list[str], where: str, first: int,
              problems: list[str]) -> list[list[float | None]]:
    """The rows of a pairwise matrix (``lines``, the first numbered ``first``)."""
    rows = []
    for line, raw in enumerate(lines, start=first):
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
                problems.append(f"{where}: line {line}: {cell!r} is not a number or a fraction")
                row.append(None)
                continue
            row.append(float(parts[0]) / float(parts[1]))
        rows.append(row)
    return rows


def _members(text: str, problems: list[str]) -> list[dict[str, Any]]:
    """The decision makers: the API's JSON list, or blocks (module docs)."""
    stripped = text.strip()
    if not stripped:
        return []
    if stripped[0] == "[":  # a list, or not valid JSON
        return _json(stripped, "decision makers", problems) or []
    members: list[dict[str, Any]] = []
    block: list[tuple[int, str]] = []
    for line, raw in [*enumerate(text.splitlines(), start=1), (0, "")]:
        if raw.strip():
            block.append((line, raw))
        elif block:
            members.append(_member(block, problems))
            block = []
    return members


def _member(block: list[tuple[int, str]], problems: list[str]) -> dict[str, Any]:
    """One decision maker's block: ``id [weight]``, then ``attribute weight`` lines or
    the rows of a pairwise matrix."""
    (line, head), rest = block[0], block[1:]
    where = "decision makers"
    parts = head.split()
    member: dict[str, Any] = {"id": parts[0]}
    if len(parts) > 1:
        weight = cell_value(parts[1])
        if isinstance(weight, str) or len(parts) > 2:
            problems.append(f"{where}: line {line}: write 'id' or 'id weight' first")
        member["weight"] = weight
    if not rest:
        problems.append(f"{where}: line {line}: give {parts[0]!r} lines 'attribute weight' "
                        "or the rows of a pairwise matrix")
        return member
    first = rest[0][1].replace(",", " ").split()[0]
    if isinstance(cell_value(first.partition("/")[0]), float) or first == "-":
        member["pairwise"] = _pairwise([raw for _, raw in rest], where, rest[0][0], problems)
        return member
    weights: dict[str, Any] = {}
    for n, raw in rest:
        pair = raw.split()
        value = cell_value(pair[1]) if len(pair) == 2 else ""
        if isinstance(value, str):
            problems.append(f"{where}: line {n}: write 'attribute weight' (a number)")
        weights[pair[0]] = value
    member["weights"] = weights
    return member


def _uncertainty(body: dict[str, Any], fields: dict[str, str], problems: list[str]) -> None:
    """``uncertainty`` when the form gives samples, the options or the weights hold
    intervals, or the weighting is ``unknown``."""
    samples, seed = fields.get("samples", "").strip(), fields.get("seed", "").strip()
    intervals = any(isinstance(v, dict) for o in body.get("options", ())
                    for v in o.get("attributes", {}).values()) or any(
        isinstance(c.get("weight"), dict) for c in body.get("criteria", ()))
    if not (samples or seed or intervals or body.get("weighting") == "unknown"):
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
        problems.append("options: the box is empty: paste or upload your options (a CSV "
                        "with a header row and an id column, or JSON), or press "
                        "\"Use the example\"")
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


def _json(text: str, where: str, problems: list[str]) -> Any:
    """``text`` parsed (an object or a list), else None and a fault naming ``where``."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        problems.append(f"{where}: not valid JSON ({exc})")
        return None


def _json_rows(text: str, problems: list[str]) -> list[dict[str, Any]]:
    data = _json(text, "options", problems)
    if data is None:
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
            weight = table_value(parts[2])
            if isinstance(weight, str):
                problems.append(f"criteria: line {line}: weight {parts[2]!r} is not a number "
                                "or an interval low..high")
            criterion["weight"] = weight
        if len(parts) > 3:
            problems.append(f"criteria: line {line}: write 'attribute goal weight'")
        out.append(criterion)
    if not out:
        problems.append("criteria: give at least one line 'attribute goal weight' (such as "
                        "'price min 5'), an attribute of your options")
    return out
