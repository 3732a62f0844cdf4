"""Validation of a decision request: fields, criteria, params and options.

Everything here only reads the request and raises ``DecisionError`` with the
field path; it never scores.  ``decido.decide`` calls it first, then computes.
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

ALL_METHODS = ("expression", *METHODS)
FIELDS = frozenset(
    {
        "id",
        "options",
        "method",
        "criteria",
        "normalization",
        "weighting",
        "params",
        "constraints",
        "top_k",
        "explain",
        "expression",
        "goal",
    }
)
GOALS = ("maximize", "minimize")
_CRITERION_FIELDS = frozenset({"attribute", "goal", "weight"})
PARAMS = {
    "vikor": ("v",),
    "promethee2": ("preference", "q", "p"),
    "waspas": ("lambda",),
    "spotis": ("bounds",),
}
_ALL_PARAMS = frozenset(name for names in PARAMS.values() for name in names)
#: names an attribute cannot take in expressions (keywords and built-in functions)
RESERVED = frozenset(
    "and or not abs sqrt exp log log2 log10 log1p expm1 sin cos tan asin acos atan sinh cosh "
    "tanh floor ceil round sign atan2 hypot min max where clip sum prod mean norm cumsum".split()
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TOKEN = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d*)?|([A-Za-z_][A-Za-z0-9_]*)")


class DecisionError(DecidoError, ValueError):
    """An invalid decision request.

    Attributes:
        code: stable machine code (``"unknown_method"``, ``"unknown_attribute"``,
            ``"missing_attribute"``, ``"duplicate_option_id"``, ``"non_finite_value"``,
            ``"non_positive_value"``, ``"out_of_bounds"``, ``"missing_weight"``,
            ``"invalid_params"``, ``"invalid_request"``, ``"invalid_expression"``,
            ``"unknown_normalization"``, ``"unknown_weighting"``, ``"too_many"``).
        message: one-line explanation.
        path: the field, e.g. ``criteria[1].weight`` or ``options[3].attributes.price``.
        position: for expression errors, the character offset in that expression
            (the ``ExpressionError`` is the ``__cause__``), else None.
    """

    def __init__(self, code: str, message: str, path: str, position: int | None = None) -> None:
        self.code = code
        self.message = message
        self.path = path
        self.position = position
        where = f" at position {position}" if position is not None else ""
        super().__init__(f"{path}: {message}{where}" if path else message)

    def to_dict(self) -> dict[str, Any]:
        """``{"code", "message", "path"}`` plus ``"position"`` for expressions."""
        out: dict[str, Any] = {"code": self.code, "message": self.message, "path": self.path}
        if self.position is not None:
            out["position"] = self.position
        return out

    def __reduce__(self):  # keep pickling (process pools) working
        return (type(self), (self.code, self.message, self.path, self.position))


def attr_path(prefix: str, name: str) -> str:
    """``prefix.name``, or ``prefix["name"]`` when the name is not an identifier."""
    if _IDENT.match(name):
        return f"{prefix}.{name}"
    return f"{prefix}[{_quote(name)}]"


def _quote(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _did_you_mean(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def _number(value: Any, path: str) -> float:
    """A finite real number (bool excluded)."""
    kind = type(value)
    if (
        kind is not float
        and kind is not int
        and (
            isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating))
        )
    ):
        raise DecisionError("invalid_request", f"expected a number, got {_kind(value)}", path)
    try:
        x = float(value)
    except OverflowError:  # an integer beyond the largest double
        raise DecisionError("non_finite_value", "value is too large for a double", path) from None
    if not math.isfinite(x):
        raise DecisionError("non_finite_value", f"value must be finite, got {x}", path)
    return x


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {str: "a string", bool: "a boolean", list: "an array", dict: "an object"}.get(
        type(value), type(value).__name__
    )


def _choice(value: Any, choices: Sequence[str], path: str, code: str) -> str:
    if not isinstance(value, str) or value not in choices:
        hint = _did_you_mean(value, choices) if isinstance(value, str) else ""
        raise DecisionError(
            code,
            f"unknown {path} {value!r}{hint} (one of: {', '.join(choices)})",
            path,
        )
    return value


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
    request_id: Any
    warnings: list[dict[str, Any]] = field(default_factory=list)

    def warn(self, code: str, message: str, path: str | None = None) -> None:
        item: dict[str, Any] = {"code": code, "message": message}
        if path is not None:
            item["path"] = path
        self.warnings.append(item)


def parse_plan(request: Any) -> Plan:
    """Check every field that does not depend on the options."""
    if type(request) is not dict and not isinstance(request, Mapping):
        raise DecisionError("invalid_request", f"a decision is an object, not {_kind(request)}", "")
    for key in request:
        if key not in FIELDS:
            hint = _did_you_mean(key, sorted(FIELDS)) if isinstance(key, str) else ""
            raise DecisionError("invalid_request", f"unknown field {key!r}{hint}", str(key))
    get = request.get
    method = get("method")
    if method is None:
        method = "expression" if get("expression") is not None else "wsm"
    method = _choice(method, ALL_METHODS, "method", "unknown_method")
    plan = Plan(
        method=method,
        normalization=None,
        weighting=None,
        criteria=[],
        params={},
        constraints=_constraints(get("constraints")),
        expression=None,
        higher_is_better=method not in ASCENDING,
        top_k=_top_k(get("top_k")),
        explain=_flag(get("explain"), "explain"),
        request_id=_request_id(get("id")),
    )
    normalization, weighting = get("normalization"), get("weighting")
    if normalization is not None:
        _choice(normalization, NORMALIZATIONS, "normalization", "unknown_normalization")
    if weighting is not None:
        _choice(weighting, WEIGHTINGS, "weighting", "unknown_weighting")
    if method == "expression":
        _expression_fields(plan, request)
        for name in ("criteria", "normalization", "weighting", "params"):
            if get(name) is not None:
                plan.warn("ignored_field", f"{name} is not used by method 'expression'", name)
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
    plan.weighting = weighting or "given"
    plan.criteria = _criteria(get("criteria"), plan.weighting == "given")
    if plan.weighting != "given" and any(c.weight is not None for c in plan.criteria):
        plan.warn("ignored_field", f"weights are computed by {plan.weighting!r}", "criteria")
    plan.params = _params(method, get("params"), plan)
    return plan


def _request_id(value: Any) -> Any:
    if value is None or (isinstance(value, (str, int)) and not isinstance(value, bool)):
        return value
    raise DecisionError(
        "invalid_request", f"id must be a string or an integer, not {_kind(value)}", "id"
    )


def _flag(value: Any, path: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise DecisionError("invalid_request", f"expected true or false, got {_kind(value)}", path)
    return value


def _top_k(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise DecisionError(
            "invalid_request", f"top_k must be an integer >= 1, got {value!r}", "top_k"
        )
    return int(value)


def _constraints(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise DecisionError(
            "invalid_request",
            f"constraints is a list of expressions, not {_kind(value)}",
            "constraints",
        )
    if len(value) > LIMITS["max_constraints"]:
        raise DecisionError(
            "too_many",
            f"{len(value)} constraints (limit {LIMITS['max_constraints']})",
            "constraints",
        )
    for j, text in enumerate(value):
        if not isinstance(text, str):
            raise DecisionError(
                "invalid_request",
                f"a constraint is an expression string, not {_kind(text)}",
                f"constraints[{j}]",
            )
    return list(value)


def _expression_fields(plan: Plan, request: Mapping[str, Any]) -> None:
    text = request.get("expression")
    if not isinstance(text, str):
        raise DecisionError(
            "invalid_request",
            "method 'expression' needs an expression string"
            if text is None
            else f"expression must be a string, not {_kind(text)}",
            "expression",
        )
    plan.expression = text
    goal = request.get("goal")
    goal = "maximize" if goal is None else _choice(goal, GOALS, "goal", "invalid_request")
    plan.higher_is_better = goal == "maximize"


def _criteria(value: Any, need_weights: bool) -> list[Criterion]:
    if type(value) is not list and (not isinstance(value, Sequence) or isinstance(value, str)):
        value = None
    if not value:
        raise DecisionError("invalid_request", "criteria must be a non-empty list", "criteria")
    if len(value) > LIMITS["max_criteria"]:
        raise DecisionError(
            "too_many", f"{len(value)} criteria (limit {LIMITS['max_criteria']})", "criteria"
        )
    out: list[Criterion] = []
    seen: set[str] = set()
    for j, item in enumerate(value):
        if type(item) is not dict and not isinstance(item, Mapping):
            raise DecisionError(
                "invalid_request", f"a criterion is an object, not {_kind(item)}", f"criteria[{j}]"
            )
        for key in item:
            if key not in _CRITERION_FIELDS:
                raise DecisionError(
                    "invalid_request", f"unknown field {key!r}", f"criteria[{j}].{key}"
                )
        name = item.get("attribute")
        if not isinstance(name, str) or not name:
            raise DecisionError(
                "invalid_request",
                "attribute must be a non-empty string",
                f"criteria[{j}].attribute",
            )
        if name in seen:
            raise DecisionError(
                "invalid_request",
                f"attribute {name!r} is used by two criteria",
                f"criteria[{j}].attribute",
            )
        seen.add(name)
        goal = item.get("goal", "maximize")
        if goal not in GOALS or type(goal) is not str:
            _choice(goal, GOALS, f"criteria[{j}].goal", "invalid_request")
        weight = item.get("weight")
        if weight is not None:
            weight = _number(weight, f"criteria[{j}].weight")
            if weight <= 0:
                raise DecisionError(
                    "non_positive_value",
                    f"a weight must be > 0, got {weight}",
                    f"criteria[{j}].weight",
                )
        elif need_weights:
            raise DecisionError(
                "missing_weight",
                "weighting 'given' needs a weight for every criterion "
                "(or use weighting 'equal', 'entropy', 'critic' or 'std')",
                f"criteria[{j}].weight",
            )
        out.append(Criterion(name, goal == "maximize", weight))
    return out


def _params(method: str, value: Any, plan: Plan) -> dict[str, Any]:
    if value is None:
        value = {}
    if type(value) is not dict and not isinstance(value, Mapping):
        raise DecisionError("invalid_params", f"params is an object, not {_kind(value)}", "params")
    own = PARAMS.get(method, ())
    for key in value:
        if key not in _ALL_PARAMS:
            hint = _did_you_mean(key, own) if isinstance(key, str) else ""
            raise DecisionError(
                "invalid_params",
                f"unknown parameter {key!r}{hint}"
                + (f" (method {method!r} takes: {', '.join(own)})" if own else ""),
                f"params.{key}",
            )
        if key not in own:
            plan.warn(
                "ignored_field", f"parameter {key!r} is not used by {method!r}", f"params.{key}"
            )
    names = [c.attribute for c in plan.criteria]
    out: dict[str, Any] = {"normalization": plan.normalization}
    if method == "vikor":
        out["v"] = _unit(value.get("v", 0.5), "params.v")
    elif method == "waspas":
        out["lambda"] = _unit(value.get("lambda", 0.5), "params.lambda")
    elif method == "promethee2":
        out.update(_promethee(value, names))
    elif method == "spotis":
        out["bounds"] = _bounds(value.get("bounds"), names)
    return out


def _unit(value: Any, path: str) -> float:
    try:
        x = _number(value, path)
    except DecisionError as exc:
        raise DecisionError("invalid_params", exc.message, path) from None
    if not 0.0 <= x <= 1.0:
        raise DecisionError("invalid_params", f"must be between 0 and 1, got {x}", path)
    return x


def _per_criterion(value: Any, names: list[str], path: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise DecisionError(
            "invalid_params", f"expected an object {{attribute: value}}, not {_kind(value)}", path
        )
    for key in value:
        if key not in names:
            hint = _did_you_mean(key, names) if isinstance(key, str) else ""
            raise DecisionError(
                "invalid_params", f"{key!r} is not a criterion{hint}", attr_path(path, str(key))
            )
    return dict(value)


def _promethee(value: Mapping[str, Any], names: list[str]) -> dict[str, Any]:
    pref = _choice(
        value.get("preference", "usual"), PREFERENCES, "params.preference", "invalid_params"
    )
    need = {
        "usual": (),
        "u_shape": ("q",),
        "v_shape": ("p",),
        "level": ("q", "p"),
        "linear": ("q", "p"),
    }
    arrays = {}
    for key in ("q", "p"):
        given = value.get(key)
        if key not in need[pref]:
            arrays[key] = np.zeros(len(names)) if key == "q" else np.ones(len(names))
            continue
        table = _per_criterion(given if given is not None else {}, names, f"params.{key}")
        row = []
        for name in names:
            path = attr_path(f"params.{key}", name)
            if name not in table:
                raise DecisionError(
                    "invalid_params", f"preference {pref!r} needs {key} for every criterion", path
                )
            try:
                x = _number(table[name], path)
            except DecisionError as exc:
                raise DecisionError("invalid_params", exc.message, path) from None
            if x < 0 or (key == "p" and x == 0):
                raise DecisionError(
                    "invalid_params", f"{key} must be {'> 0' if key == 'p' else '>= 0'}", path
                )
            row.append(x)
        arrays[key] = np.array(row)
    if pref in ("level", "linear"):
        bad = np.nonzero(arrays["q"] >= arrays["p"])[0]
        if bad.size:
            raise DecisionError(
                "invalid_params", "q must be smaller than p", attr_path("params.q", names[bad[0]])
            )
    return {"preference": pref, **arrays}


def _bounds(value: Any, names: list[str]) -> dict[str, tuple[float, float]]:
    if value is None:
        return {}
    table = _per_criterion(value, names, "params.bounds")
    out = {}
    for name, pair in table.items():
        path = attr_path("params.bounds", name)
        if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise DecisionError("invalid_params", "bounds are [low, high]", path)
        try:
            lo, hi = _number(pair[0], path), _number(pair[1], path)
        except DecisionError as exc:
            raise DecisionError("invalid_params", exc.message, path) from None
        if not lo < hi:
            raise DecisionError("invalid_params", f"low must be < high, got [{lo}, {hi}]", path)
        out[name] = (lo, hi)
    return out


# ---------------------------------------------------------------- options
def parse_options(value: Any) -> tuple[list[Any], list[Mapping[str, Any]]]:
    """Ids and attribute mappings; checked in bulk, walked one by one only to
    name the first bad option."""
    if type(value) is not list and (isinstance(value, str) or not isinstance(value, Sequence)):
        value = None  # not a list: refused just below
    if not value:
        raise DecisionError("invalid_request", "options must be a non-empty list", "options")
    if len(value) > LIMITS["max_options"]:
        raise DecisionError(
            "too_many", f"{len(value)} options (limit {LIMITS['max_options']})", "options"
        )
    try:
        ids = list(map(operator.itemgetter("id"), value))
        attrs = list(map(operator.itemgetter("attributes"), value))
        ok = set(map(type, ids)) <= {str, int} and set(map(type, attrs)) <= {dict}
    except (TypeError, KeyError, IndexError):
        ok = False
    if not ok:
        _find_bad_option(value)
        ids = [o["id"] for o in value]
        attrs = [o["attributes"] for o in value]
    if len(set(ids)) != len(ids):
        seen: set[Any] = set()
        for i, oid in enumerate(ids):
            if oid in seen:
                raise DecisionError(
                    "duplicate_option_id", f"option id {oid!r} is used twice", f"options[{i}].id"
                )
            seen.add(oid)
    return ids, attrs


def _find_bad_option(options: Sequence[Any]) -> None:
    for i, opt in enumerate(options):
        path = f"options[{i}]"
        if not isinstance(opt, Mapping):
            raise DecisionError(
                "invalid_request", f"an option is an object, not {_kind(opt)}", path
            )
        oid = opt.get("id")
        if isinstance(oid, bool) or not isinstance(oid, (str, int)):
            raise DecisionError(
                "invalid_request",
                f"id must be a string or an integer, not {_kind(oid)}",
                f"{path}.id",
            )
        attrs = opt.get("attributes")
        if not isinstance(attrs, Mapping):
            raise DecisionError(
                "invalid_request",
                f"attributes is an object, not {_kind(attrs)}",
                f"{path}.attributes",
            )
        _check_names(attrs, f"{path}.attributes")


def _check_names(attrs: Mapping[Any, Any], path: str) -> None:
    """Refuse an attribute name that is not a string (possible from Python, never from
    JSON)."""
    for name in attrs:
        if not isinstance(name, str):
            raise DecisionError(
                "invalid_request", f"attribute names are strings, not {_kind(name)}", path
            )


def expression_names(text: str) -> list[str]:
    """Identifiers that may be attributes in an expression (keywords, function
    names and the inside of numbers such as ``1e5`` are skipped)."""
    out = []
    for match in _TOKEN.finditer(text):
        name = match.group(1)
        if name and name not in RESERVED and name not in out:
            out.append(name)
    return out


def attribute_names(attrs: list[Mapping[str, Any]]) -> list[str]:
    """Every attribute name of every option, in first-seen order (error paths only).

    A name that is not a string is refused here, where names are listed for a message,
    rather than checked on every request."""
    for i, a in enumerate(attrs):
        _check_names(a, f"options[{i}].attributes")
    return list(dict.fromkeys(name for a in attrs for name in a))


def locate_attribute(attrs: list[Mapping[str, Any]], name: str) -> bool:
    """Whether any option has the attribute."""
    return name in attrs[0] or any(name in a for a in attrs)


def expression_error(exc: ExpressionError, path: str) -> DecisionError:
    err = DecisionError("invalid_expression", f"{exc.code}: {exc.message}", path, exc.position)
    err.__cause__ = exc
    return err
