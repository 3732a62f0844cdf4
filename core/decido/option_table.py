"""``decido.option_table``: the options of a decision read from a CSV table: one text
format, one reader, for Python (:func:`options_from_csv`), the CLI (``decido decide
options.csv``) and the dashboard's decide form.

A header row names the columns; one of them is the id column (``id_column``; by default
``id`` when the header has it, else the first column) and every other one an attribute.
Blank lines are skipped. A cell that reads as a finite number is that number; a cell
``low..high`` of two finite numbers is an uncertain value ``{"low": low, "high": high}``
(uniform, for a decision with ``uncertainty``); any other cell is kept as its text
(``numbers_only``: named as a problem instead).
"""

from __future__ import annotations

import csv
import io
import math
from typing import Any

__all__ = ["cell_value", "options_from_csv", "table_value"]


def cell_value(text: str) -> float | str:
    """A cell: the finite number it reads as, else its text (stripped)."""
    try:
        value = float(text)
    except ValueError:
        return text.strip()
    return value if math.isfinite(value) else text.strip()


def table_value(text: str) -> float | dict[str, float] | str:
    """A table cell: :func:`cell_value`, or ``{"low", "high"}`` for ``low..high``."""
    low, dots, high = text.partition("..")
    if dots:
        pair = cell_value(low), cell_value(high)
        if isinstance(pair[0], float) and isinstance(pair[1], float):
            return {"low": pair[0], "high": pair[1]}
    return cell_value(text)


def options_from_csv(text: str, id_column: str | None = None, *,
                     numbers_only: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    """``(options, problems)`` of a CSV table (module docs): the options as the API takes
    them (``{"id", "attributes"}``), and every problem found, each a sentence naming the
    line or column (the options are not to be used when there is one)."""
    rows = csv.reader(io.StringIO(text))
    header = [name.strip() for name in next(rows, [])]
    if not any(header):
        return [], ["the table has no header row"]
    key = id_column or ("id" if "id" in header else header[0])
    if key not in header:
        return [], [f"the header row has no {key!r} column (it has {', '.join(header)})"]
    problems = []
    if len(set(header)) != len(header):
        problems.append("the header row names a column twice")
    id_at = header.index(key)
    options = []
    for line, cells in enumerate(rows, start=2):
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            problems.append(f"line {line} has {len(cells)} fields, the header has "
                            f"{len(header)} (a missing or extra column)")
            continue
        attributes: dict[str, Any] = {}
        for name, cell in zip(header, cells, strict=True):
            if name == key:
                continue
            value = table_value(cell)
            if numbers_only and isinstance(value, str):
                problems.append(f"line {line}, column {name!r}: {value!r} is not a number")
            attributes[name] = value
        options.append({"id": cells[id_at].strip(), "attributes": attributes})
    if not options and not problems:
        problems.append("the table has no rows below its header row")
    return options, problems
