"""Validation of a decision request: fields, criteria, params and options.

Everything here only reads the request; it never scores.  Faults are collected in a
:class:`Faults` (every fault found, not only the first) and raised together as one
``DecisionError``.  The request's shape -- its members, method names, normalizations,
weightings, goals, preference functions and limits -- is read from the tables below
and from ``decido._mcdm_methods``; ``decido._mcdm_schema`` writes the JSON Schema of
the request from the same tables.
"""

from __future__ import annotations

import difflib
import math
import operator
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from decido._mcdm_methods import (
    ASCENDING,
    DEFAULT_NORMALIZATION,
    METHODS,
    NORMALIZATIONS,
    PREFERENCES,
    WEIGHTINGS,
)
from decido.errors import DecidoError, ExpressionError

#: Limits of the library, read at each call (the service sets tighter per-plan
#: limits).  ``max_promethee_options`` bounds the feasible options of PROMETHEE II,
#: which compares every pair: O(m^2 k) time.
LIMITS = {
    "max_options": 100_000,
    "max_criteria": 64,
    "max_constraints": 256,
    "max_promethee_options": 5_000,
    "max_batch": 1_000,
}
#: a ``DecisionError`` lists at most this many faults
MAX_FAULTS = 50

ALL_METHODS = ("expression", *METHODS)
GOALS = ("maximize", "minimize")
#: members of a request, each with what it holds (the JSON Schema reads this table)
FIELDS = {
    "id": "an id echoed first in the answer",
    "options": "the options",
    "method": "the scoring method",
    "criteria": "the criteria of the multi-criteria methods",
    "normalization": "the normalization (wsm, wpm, topsis, waspas)",
    "weighting": "how the weights are found",
    "params": "method parameters",
    "constraints": "expressions every feasible option satisfies",
    "top_k": "length of the returned ranking",
    "explain": "add an explanation to each ranking entry",
    "sensitivity": "add the weight intervals that keep the top choice",
    "log": "read by the service (decision log); ignored here",
    "expression": "the score of method 'expression'",
    "goal": "maximize or minimize the score of method 'expression'",
}
#: boolean members of a request
FLAGS = ("explain", "sensitivity", "log")
CRITERION_FIELDS = ("attribute", "goal", "weight")
#: parameters of each method
PARAMS = {
    "vikor": ("v",),
    "promethee2": ("preference", "q", "p"),
    "waspas": ("lambda",),
    "spotis": ("bounds",),
}
ALL_PARAMS = tuple(dict.fromkeys(name for names in PARAMS.values() for name in names))
#: parameters between 0 and 1, and their defaults
UNIT_PARAMS = {"v": 0.5, "lambda": 0.5}
#: per-criterion parameters (PROMETHEE II) each preference function needs
PREFERENCE_NEEDS = {
    "usual": (),
    "u_shape": ("q",),
    "v_shape": ("p",),
    "level": ("q", "p"),
    "linear": ("q", "p"),
}
# a member name written plainly in a dotted path (anything else is quoted)
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

Where = tuple[Any, ...]


# ---------------------------------------------------------------- paths
def dotted(where: Where) -> str:
    """``("options", 3, "attributes", "lead time")`` -> ``options[3].attributes["lead time"]``."""
    out = ""
    for seg in where:
        if isinstance(seg, int):
            out += f"[{seg}]"
        elif not out or _PLAIN_KEY.match(seg):
            out += f".{seg}" if out else seg
        else:
            out += f"[{_quote(seg)}]"
    return out


def pointer(where: Where) -> str:
    """The JSON pointer (RFC 6901) of a path: ``/options/3/attributes/lead time``."""
    return "".join("/" + str(seg).replace("~", "~0").replace("/", "~1") for seg in where)


def _segments(path: str) -> Where:
    """The segments of a dotted path (the inverse of :func:`dotted`)."""
    out: list[Any] = []
    i, n = 0, len(path)
    while i < n:
        ch = path[i]
        if ch == ".":
            i += 1
        elif ch == "[" and i + 1 < n and path[i + 1] == '"':
            j, name = i + 2, []
            while j < n and path[j] != '"':
                if path[j] == "\\" and j + 1 < n:
                    j += 1
                name.append(path[j])
                j += 1
            out.append("".join(name))
            i = j + 2
        elif ch == "[":
            j = path.find("]", i)
            j = n if j < 0 else j
            out.append(int(path[i + 1 : j]) if path[i + 1 : j].isdigit() else path[i + 1 : j])
            i = j + 1
        else:
            j = i
            while j < n and path[j] not in ".[":
                j += 1
            out.append(path[i:j])
            i = j
    return tuple(out)


def attr_path(prefix: str, name: str) -> str:
    """``prefix.name``, or ``prefix["name"]`` when the name is not plain."""
    if _PLAIN_KEY.match(name):
        return f"{prefix}.{name}"
    return f"{prefix}[{_quote(name)}]"


def _quote(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ---------------------------------------------------------------- errors
class DecisionError(DecidoError, ValueError):
    """An invalid decision request.

    Attributes:
        code: stable machine code of the first fault (``"unknown_method"``,
            ``"unknown_attribute"``, ``"missing_attribute"``, ``"duplicate_option_id"``,
            ``"non_finite_value"``, ``"non_positive_value"``, ``"out_of_bounds"``,
            ``"missing_weight"``, ``"invalid_params"``, ``"invalid_request"``,
            ``"invalid_expression"``, ``"unknown_normalization"``,
            ``"unknown_weighting"``, ``"too_many"``).
        message: one-line explanation of the first fault.
        path: its field, e.g. ``criteria[1].weight`` or ``options[3].attributes.price``.
        position: for an expression fault, the character offset in that expression (the
            ``ExpressionError`` is the ``__cause__``), else None.
        errors: every fault found (at most ``MAX_FAULTS``), the first first: dicts
            ``{"pointer", "code", "message"}`` plus ``"position"`` for expressions, where
            ``pointer`` is the JSON pointer of the field (``/options/3/attributes/price``).
    """

    def __init__(
        self,
        code: str,
        message: str,
        path: str | Where,
        position: int | None = None,
        errors: list[dict[str, Any]] | None = None,
    ) -> None:
        where = path if isinstance(path, tuple) else _segments(path)
        self.code = code
        self.message = message
        self.path = dotted(where) if isinstance(path, tuple) else path
        self.position = position
        self.errors = errors if errors is not None else [_fault(where, code, message, position)]
        at = f" at position {position}" if position is not None else ""
        more = f" (and {len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
        super().__init__(f"{self.path}: {message}{at}{more}" if self.path else message + more)

    def to_dict(self, errors: bool = False) -> dict[str, Any]:
        """``{"code", "message", "path"}`` of the first fault, ``"position"`` for an
        expression; with ``errors``, also ``"errors"`` (every fault)."""
        out: dict[str, Any] = {"code": self.code, "message": self.message, "path": self.path}
        if self.position is not None:
            out["position"] = self.position
        if errors:
            out["errors"] = self.errors
        return out

    def __reduce__(self) -> Any:  # keep pickling (process pools) working
        return (type(self), (self.code, self.message, self.path, self.position, self.errors))


def _fault(where: Where, code: str, message: str, position: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"pointer": pointer(where), "code": code, "message": message}
    if position is not None:
        out["position"] = position
    return out


class Faults:
    """The faults found in one request; :meth:`check` raises them as one error."""

    __slots__ = ("items", "first")

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.first: tuple[Where, str, str, int | None, BaseException | None] | None = None

    def __bool__(self) -> bool:
        return self.first is not None

    def add(
        self,
        where: Where,
        code: str,
        message: str,
        position: int | None = None,
        cause: BaseException | None = None,
    ) -> None:
        """Record one fault (past ``MAX_FAULTS`` it is dropped)."""
        if self.first is None:
            self.first = (where, code, message, position, cause)
        if len(self.items) < MAX_FAULTS:
            self.items.append(_fault(where, code, message, position))

    def full(self) -> bool:
        """Whether no more fault would be listed."""
        return len(self.items) >= MAX_FAULTS

    def check(self) -> None:
        """Raise the faults found so far, if any."""
        if self.first is None:
            return
        where, code, message, position, cause = self.first
        err = DecisionError(code, message, where, position, self.items)
        if cause is not None:
            raise err from cause
        raise err


def fail(where: Where, code: str, message: str) -> DecisionError:
    """One fault as an error (for the checks that stop at once)."""
    return DecisionError(code, message, where)


def _did_you_mean(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {str: "a string", bool: "a boolean", list: "an array", dict: "an object"}.get(
        type(value), type(value).__name__
    )


class _Bad(Exception):
    """A value refused by a field check, with its ``code`` and ``message``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message


def _number(value: Any) -> float:
    """A finite real number (bool excluded), else :class:`_Bad`."""
    kind = type(value)
    if (
        kind is not float
        and kind is not int
        and (
            isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating))
        )
    ):
        raise _Bad("invalid_request", f"expected a number, got {_kind(value)}")
    try:
        x = float(value)
    except OverflowError:  # an integer beyond the largest double
        raise _Bad("non_finite_value", "value is too large for a double") from None
    if not math.isfinite(x):
        raise _Bad("non_finite_value", f"value must be finite, got {x}")
    return x


def _choice(value: Any, choices: Sequence[str], what: str) -> str:
    if type(value) is not str or value not in choices:
        hint = _did_you_mean(value, choices) if isinstance(value, str) else ""
        listed = ", ".join(choices)
        raise _Bad("invalid_request", f"unknown {what} {value!r}{hint} (one of: {listed})")
    return value


# ---------------------------------------------------------------- the plan
@dataclass
class Criterion:
    attribute: str
    benefit: bool
    weight: float | None


@dataclass
class Plan:
    """A validated request: what to compute, before any option is looked at."""

    method: str
    normalization: str | None
    weighting: str | None
    criteria: list[Criterion]
    params: dict[str, Any]
    constraints: list[str]
    expression: str | None
    higher_is_better: bool
    top_k: int | None
    explain: bool
    sensitivity: bool
    request_id: Any
    warnings: list[dict[str, Any]] = field(default_factory=list)

    def warn(self, code: str, message: str, path: str | None = None) -> None:
        item: dict[str, Any] = {"code": code, "message": message}
        if path is not None:
            item["path"] = path
        self.warnings.append(item)


def parse_plan(request: Any, faults: Faults) -> Plan:
    """Check every member that does not depend on the options; faults go to ``faults``."""
    if type(request) is not dict and not isinstance(request, Mapping):
        raise fail((), "invalid_request", f"a decision is an object, not {_kind(request)}")
    for key in request:
        if key not in FIELDS:
            hint = _did_you_mean(key, sorted(FIELDS)) if isinstance(key, str) else ""
            faults.add((str(key),), "invalid_request", f"unknown field {key!r}{hint}")
    get = request.get
    method = get("method")
    if method is None:
        method = "expression" if get("expression") is not None else "wsm"
    try:
        method = _choice(method, ALL_METHODS, "method")
    except _Bad as bad:
        faults.add(("method",), "unknown_method", bad.message)
        method = None
    explain = _flag(get("explain"), "explain", faults)
    sensitivity = _flag(get("sensitivity"), "sensitivity", faults)
    _flag(get("log"), "log", faults)  # read by the service
    plan = Plan(
        method=method or "wsm",
        normalization=None,
        weighting=None,
        criteria=[],
        params={},
        constraints=_constraints(get("constraints"), faults),
        expression=None,
        higher_is_better=method not in ASCENDING,
        top_k=_top_k(get("top_k"), faults),
        explain=explain,
        sensitivity=sensitivity,
        request_id=_request_id(get("id"), faults),
    )
    normalization, weighting = get("normalization"), get("weighting")
    for name, value, choices in (
        ("normalization", normalization, NORMALIZATIONS),
        ("weighting", weighting, WEIGHTINGS),
    ):
        if value is not None:
            try:
                _choice(value, choices, name)
            except _Bad as bad:
                faults.add((name,), f"unknown_{name}", bad.message)
    if method == "expression":
        _expression_fields(plan, request, faults)
        for name in ("criteria", "normalization", "weighting", "params", "sensitivity"):
            if get(name) is not None and get(name) is not False:
                plan.warn("ignored_field", f"{name} is not used by method 'expression'", name)
        plan.sensitivity = False
        return plan
    for name in ("expression", "goal"):
        if get(name) is not None:
            plan.warn("ignored_field", f"{name} is only used by method 'expression'", name)
    if method in DEFAULT_NORMALIZATION:
        plan.normalization = normalization or DEFAULT_NORMALIZATION[method]
    elif normalization is not None:
        plan.warn(
            "ignored_field",
            f"method {method!r} uses its own normalization; normalization is ignored",
            "normalization",
        )
    plan.weighting = weighting if weighting in WEIGHTINGS else "given"
    plan.criteria = _criteria(get("criteria"), plan.weighting == "given", faults)
    if plan.weighting != "given" and any(c.weight is not None for c in plan.criteria):
        plan.warn("ignored_field", f"weights are computed by {plan.weighting!r}", "criteria")
    if method is not None:
        plan.params = _params(method, get("params"), plan, faults)
    return plan


def _request_id(value: Any, faults: Faults) -> Any:
    if value is None or (isinstance(value, (str, int)) and not isinstance(value, bool)):
        return value
    faults.add(("id",), "invalid_request", f"id must be a string or an integer, not {_kind(value)}")
    return None


def _flag(value: Any, name: str, faults: Faults) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        faults.add((name,), "invalid_request", f"expected true or false, got {_kind(value)}")
        return False
    return value


def _top_k(value: Any, faults: Faults) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        faults.add(("top_k",), "invalid_request", f"top_k must be an integer >= 1, got {value!r}")
        return None
    return int(value)


def _constraints(value: Any, faults: Faults) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence):
        faults.add(
            ("constraints",),
            "invalid_request",
            f"constraints is a list of expressions, not {_kind(value)}",
        )
        return []
    if len(value) > LIMITS["max_constraints"]:
        faults.add(
            ("constraints",),
            "too_many",
            f"{len(value)} constraints (limit {LIMITS['max_constraints']})",
        )
        return []
    texts = []
    for j, text in enumerate(value):
        if isinstance(text, str):
            texts.append(text)
        else:
            faults.add(
                ("constraints", j),
                "invalid_request",
                f"a constraint is an expression string, not {_kind(text)}",
            )
    return texts if len(texts) == len(value) else []


def _expression_fields(plan: Plan, request: Mapping[str, Any], faults: Faults) -> None:
    text = request.get("expression")
    if not isinstance(text, str):
        faults.add(
            ("expression",),
            "invalid_request",
            "method 'expression' needs an expression string"
            if text is None
            else f"expression must be a string, not {_kind(text)}",
        )
    else:
        plan.expression = text
    goal = request.get("goal")
    if goal is not None:
        try:
            _choice(goal, GOALS, "goal")
        except _Bad as bad:
            faults.add(("goal",), "invalid_request", bad.message)
    plan.higher_is_better = goal != "minimize"


def _criteria(value: Any, need_weights: bool, faults: Faults) -> list[Criterion]:
    if type(value) is not list and (not isinstance(value, Sequence) or isinstance(value, str)):
        value = None
    if not value:
        faults.add(("criteria",), "invalid_request", "criteria must be a non-empty list")
        return []
    if len(value) > LIMITS["max_criteria"]:
        faults.add(
            ("criteria",), "too_many", f"{len(value)} criteria (limit {LIMITS['max_criteria']})"
        )
        return []
    out: list[Criterion] = []
    seen: set[str] = set()
    for j, item in enumerate(value):
        criterion = _criterion(item, j, need_weights, seen, faults)
        if criterion is not None:
            out.append(criterion)
    return out if len(out) == len(value) else []


def _criterion(
    item: Any, j: int, need_weights: bool, seen: set[str], faults: Faults
) -> Criterion | None:
    here = ("criteria", j)
    if type(item) is not dict and not isinstance(item, Mapping):
        faults.add(here, "invalid_request", f"a criterion is an object, not {_kind(item)}")
        return None
    ok = True
    for key in item:
        if key not in CRITERION_FIELDS:
            hint = _did_you_mean(key, CRITERION_FIELDS) if isinstance(key, str) else ""
            faults.add((*here, str(key)), "invalid_request", f"unknown field {key!r}{hint}")
            ok = False
    name = item.get("attribute")
    if not isinstance(name, str) or not name:
        faults.add((*here, "attribute"), "invalid_request", "attribute must be a non-empty string")
        ok = False
    elif name in seen:
        faults.add(
            (*here, "attribute"), "invalid_request", f"attribute {name!r} is used by two criteria"
        )
        ok = False
    else:
        seen.add(name)
    goal = item.get("goal", "maximize")
    if goal not in GOALS or type(goal) is not str:
        try:
            _choice(goal, GOALS, f"criteria[{j}].goal")
        except _Bad as bad:
            faults.add((*here, "goal"), "invalid_request", bad.message)
            ok = False
    weight = item.get("weight")
    if weight is not None:
        try:
            weight = _number(weight)
            if weight <= 0:
                raise _Bad("non_positive_value", f"a weight must be > 0, got {weight}")
        except _Bad as bad:
            faults.add((*here, "weight"), bad.code, bad.message)
            ok = False
    elif need_weights:
        faults.add(
            (*here, "weight"),
            "missing_weight",
            "weighting 'given' needs a weight for every criterion "
            "(or use weighting 'equal', 'entropy', 'critic' or 'std')",
        )
        ok = False
    return Criterion(str(name), goal == "maximize", weight) if ok else None


def _params(method: str, value: Any, plan: Plan, faults: Faults) -> dict[str, Any]:
    if value is None:
        value = {}
    if type(value) is not dict and not isinstance(value, Mapping):
        faults.add(("params",), "invalid_params", f"params is an object, not {_kind(value)}")
        return {"normalization": plan.normalization}
    own = PARAMS.get(method, ())
    for key in value:
        if key not in ALL_PARAMS:
            hint = _did_you_mean(key, own) if isinstance(key, str) else ""
            faults.add(
                ("params", str(key)),
                "invalid_params",
                f"unknown parameter {key!r}{hint}"
                + (f" (method {method!r} takes: {', '.join(own)})" if own else ""),
            )
        elif key not in own:
            plan.warn(
                "ignored_field", f"parameter {key!r} is not used by {method!r}", f"params.{key}"
            )
    names = [c.attribute for c in plan.criteria]
    out: dict[str, Any] = {"normalization": plan.normalization}
    for key in own:
        if key in UNIT_PARAMS:
            out[key] = _unit(value.get(key, UNIT_PARAMS[key]), ("params", key), faults)
    if method == "promethee2":
        out.update(_promethee(value, names, faults))
    elif method == "spotis":
        out["bounds"] = _bounds(value.get("bounds"), names, faults)
    return out


def _unit(value: Any, where: Where, faults: Faults) -> float:
    try:
        x = _number(value)
    except _Bad as bad:
        faults.add(where, "invalid_params", bad.message)
        return 0.5
    if not 0.0 <= x <= 1.0:
        faults.add(where, "invalid_params", f"must be between 0 and 1, got {x}")
    return x


def _per_criterion(value: Any, names: list[str], where: Where, faults: Faults) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        faults.add(
            where,
            "invalid_params",
            f"expected an object {{attribute: value}}, not {_kind(value)}",
        )
        return {}
    for key in value:
        if key not in names:
            hint = _did_you_mean(key, names) if isinstance(key, str) else ""
            faults.add((*where, str(key)), "invalid_params", f"{key!r} is not a criterion{hint}")
    return dict(value)


def _promethee(value: Mapping[str, Any], names: list[str], faults: Faults) -> dict[str, Any]:
    try:
        pref = _choice(value.get("preference", "usual"), PREFERENCES, "params.preference")
    except _Bad as bad:
        faults.add(("params", "preference"), "invalid_params", bad.message)
        pref = "usual"
    arrays = {}
    for key in ("q", "p"):
        given = value.get(key)
        if key not in PREFERENCE_NEEDS[pref]:
            arrays[key] = np.zeros(len(names)) if key == "q" else np.ones(len(names))
            continue
        table = _per_criterion(given if given is not None else {}, names, ("params", key), faults)
        row = []
        for name in names:
            here = ("params", key, name)
            if name not in table:
                faults.add(
                    here, "invalid_params", f"preference {pref!r} needs {key} for every criterion"
                )
                row.append(1.0)
                continue
            try:
                x = _number(table[name])
            except _Bad as bad:
                faults.add(here, "invalid_params", bad.message)
                x = 1.0
            if x < 0 or (key == "p" and x == 0):
                bound = "> 0" if key == "p" else ">= 0"
                faults.add(here, "invalid_params", f"{key} must be {bound}")
            row.append(x)
        arrays[key] = np.array(row)
    if pref in ("level", "linear"):
        for j in np.flatnonzero(arrays["q"] >= arrays["p"]).tolist():
            faults.add(("params", "q", names[j]), "invalid_params", "q must be smaller than p")
    return {"preference": pref, **arrays}


def _bounds(value: Any, names: list[str], faults: Faults) -> dict[str, tuple[float, float]]:
    if value is None:
        return {}
    table = _per_criterion(value, names, ("params", "bounds"), faults)
    out = {}
    for name, pair in table.items():
        here = ("params", "bounds", str(name))
        if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
            faults.add(here, "invalid_params", "bounds are [low, high]")
            continue
        try:
            lo, hi = _number(pair[0]), _number(pair[1])
        except _Bad as bad:
            faults.add(here, "invalid_params", bad.message)
            continue
        if not lo < hi:
            faults.add(here, "invalid_params", f"low must be < high, got [{lo}, {hi}]")
            continue
        out[name] = (lo, hi)
    return out


# ---------------------------------------------------------------- options
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
                ("options", i), "invalid_request", f"an option is an object, not {_kind(opt)}"
            )
            ok = False
            continue
        oid = opt.get("id")
        if isinstance(oid, bool) or not isinstance(oid, (str, int)):
            faults.add(
                ("options", i, "id"),
                "invalid_request",
                f"id must be a string or an integer, not {_kind(oid)}",
            )
            ok = False
        attrs = opt.get("attributes")
        if not isinstance(attrs, Mapping):
            faults.add(
                ("options", i, "attributes"),
                "invalid_request",
                f"attributes is an object, not {_kind(attrs)}",
            )
            ok = False
        elif not _names_are_strings(attrs, ("options", i, "attributes"), faults):
            ok = False
    return ok


def _names_are_strings(attrs: Mapping[Any, Any], where: Where, faults: Faults) -> bool:
    """Whether every attribute name is a string (only Python callers can send another)."""
    for name in attrs:
        if not isinstance(name, str):
            faults.add(where, "invalid_request", f"attribute names are strings, not {_kind(name)}")
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


def expression_fault(faults: Faults, exc: ExpressionError, where: Where) -> None:
    """An expression that does not compile, as a fault with its position."""
    faults.add(where, "invalid_expression", f"{exc.code}: {exc.message}", exc.position, exc)
