"""The options of a decision request: their shape, ids and attribute names.

Checked in bulk (one pass in C over the ids and attribute mappings), walked one by one
only to name the faulty options; then the values the decision uses, into one column-major matrix.
"""

from __future__ import annotations

import array
import numbers
import operator
from collections.abc import Mapping, Sequence
from math import isfinite
from typing import Any

import numpy as np
from numpy.typing import NDArray

from decido.decisions.faults import Faults, Where, kind_of
from decido.decisions.vocabulary import LIMITS

#: matrices of at most this many values are checked with Python's builtins (finiteness,
#: constant columns), which cost less than NumPy's calls there and give the same answers
SMALL_MATRIX = 64

Array = NDArray[np.float64]

def parse_options(value: Any, faults: Faults) -> tuple[list[Any], list[Mapping[str, Any]]] | None:
    """Ids and attribute mappings, or None when the options are faulty (every fault goes
    to ``faults``).  Checked in bulk, walked one by one only to name the bad options."""
    if type(value) is not list and (isinstance(value, str) or not isinstance(value, Sequence)):
        value = None  # not a list: refused just below
    if not value:
        faults.add(("options",), "invalid_request", "options must be a non-empty list")
        return None
    if len(value) > LIMITS["max_options"]:
        faults.add(
            ("options",), "too_many", f"{len(value)} options (limit {LIMITS['max_options']})"
        )
        return None
    try:
        ids = list(map(operator.itemgetter("id"), value))
        attrs = list(map(operator.itemgetter("attributes"), value))
        ok = set(map(type, ids)) <= {str, int} and set(map(type, attrs)) <= {dict}
    except (TypeError, KeyError, IndexError):
        ok = False
    if not ok and not _check_options(value, faults):
        return None
    if not ok:
        ids = [o["id"] for o in value]
        attrs = [o["attributes"] for o in value]
    if len(set(ids)) != len(ids):
        seen: set[Any] = set()
        for i, oid in enumerate(ids):
            if oid in seen:
                faults.add(
                    ("options", i, "id"), "duplicate_option_id", f"option id {oid!r} is used twice"
                )
            seen.add(oid)
        return None
    return ids, attrs


def _check_options(options: Sequence[Any], faults: Faults) -> bool:
    """Whether every option is well formed; the faults of the others go to ``faults``."""
    ok = True
    for i, opt in enumerate(options):
        if faults.full():
            return False
        if not isinstance(opt, Mapping):
            faults.add(
                ("options", i), "invalid_request", f"an option is an object, not {kind_of(opt)}"
            )
            ok = False
            continue
        oid = opt.get("id")
        if isinstance(oid, bool) or not isinstance(oid, (str, int)):
            faults.add(
                ("options", i, "id"),
                "invalid_request",
                f"id must be a string or an integer, not {kind_of(oid)}",
            )
            ok = False
        attrs = opt.get("attributes")
        if not isinstance(attrs, Mapping):
            faults.add(
                ("options", i, "attributes"),
                "invalid_request",
                f"attributes is an object, not {kind_of(attrs)}",
            )
            ok = False
        elif not _names_are_strings(attrs, ("options", i, "attributes"), faults):
            ok = False
    return ok


def _names_are_strings(attrs: Mapping[Any, Any], where: Where, faults: Faults) -> bool:
    """Whether every attribute name is a string (only Python callers can send another)."""
    for name in attrs:
        if not isinstance(name, str):
            faults.add(where, "invalid_request",
                       f"attribute names are strings, not {kind_of(name)}")
            return False
    return True


def attribute_names(attrs: list[Mapping[str, Any]], faults: Faults) -> list[str] | None:
    """Every attribute name of every option, in first-seen order (messages only), or
    None when some name is not a string (a fault, raised here, where names are listed,
    rather than checked on every request)."""
    ok = True
    for i, a in enumerate(attrs):
        ok = _names_are_strings(a, ("options", i, "attributes"), faults) and ok
    return list(dict.fromkeys(name for a in attrs for name in a)) if ok else None


def locate_attribute(attrs: list[Mapping[str, Any]], name: str) -> bool:
    """Whether any option has the attribute."""
    return name in attrs[0] or any(name in a for a in attrs)


def value_matrix(attrs: list[Mapping[str, Any]], columns: list[str], faults: Faults
                 ) -> Array | None:
    """Options x columns as float64, column-major (see :func:`_values`), or None after a
    fault."""
    if not columns:
        return np.empty((len(attrs), 0))
    flat = _values(attrs, columns, faults)
    if flat is None:
        return None
    return np.frombuffer(flat, dtype=np.float64).reshape(len(columns), len(attrs)).T


def _values(
    attrs: list[Mapping[str, Any]], columns: list[str], faults: Faults
) -> array.array[float] | None:
    """Options x columns, column-major (column by column), as an ``array('d')`` of finite
    values (JSON booleans count as 1 and 0), or None when some value is missing or not a
    finite number (each such value is a fault).

    One pass in C over the values (``array('d').fromlist`` accepts exactly the real
    numbers); anything else is found and named by :func:`_checked`.
    """
    flat = array.array("d")
    try:
        flat.fromlist([a[name] for name in columns for a in attrs])
    except (KeyError, TypeError, OverflowError):
        return _checked(attrs, columns, faults)
    # a finite sum means finite values (an overflowing sum only takes the exact check);
    # for a few values Python's sum costs less than NumPy's two calls
    if len(flat) <= SMALL_MATRIX and isfinite(sum(flat)):
        return flat
    X = np.frombuffer(flat, dtype=np.float64)
    if not np.isfinite(X).all():
        return _checked(attrs, columns, faults)
    return flat


def _checked(
    attrs: list[Mapping[str, Any]], columns: list[str], faults: Faults
) -> array.array[float] | None:
    """:func:`_values` walked value by value: every fault found goes to ``faults``."""
    flat = array.array("d", bytes(8 * len(attrs) * len(columns)))
    ok = True
    for i, a in enumerate(attrs):
        for j, name in enumerate(columns):
            if faults.full():
                return None
            where = ("options", i, "attributes", name)
            if name not in a:
                faults.add(
                    where,
                    "missing_attribute",
                    f"option has no attribute {name!r} (every option needs the attributes "
                    "that criteria, constraints and expressions use)",
                )
                ok = False
                continue
            v = a[name]
            if not isinstance(v, numbers.Real):
                faults.add(where, "invalid_request", _not_a_number(v))
                ok = False
                continue
            try:
                x = float(v)
            except OverflowError:
                faults.add(where, "non_finite_value", "value is too large for a double")
                ok = False
                continue
            if not isfinite(x):
                faults.add(where, "non_finite_value", f"value must be finite, got {x}")
                ok = False
                continue
            flat[j * len(attrs) + i] = x
    return flat if ok else None


def _not_a_number(v: Any) -> str:
    if isinstance(v, Mapping):
        return ("uncertain values ({low, high} or {mean, sd}) need the member uncertainty, "
                f"got {kind_of(v)}")
    return f"attribute values are numbers, got {kind_of(v)}"
