"""Validation of a decision request's members: fields, criteria and params.

Everything here only reads the request; it never scores.  Faults are collected in a
``Faults`` (every fault found, not only the first; ``decido.decisions.faults``) and raised
together as one ``DecisionError``.  What a request may hold is read from its types
(``decido.decisions.types``: the members, from which ``decido.decisions.schema`` derives the
JSON Schema) and from the tables of ``decido.decisions.vocabulary`` (methods, with their
parameters' readers, normalizations, weightings, goals and limits).  The members of
judgments, groups and uncertainty are read by ``decido.decisions.extras``; the options by
``decido.decisions.options``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from decido.decisions._kernels import NORMALIZATIONS
from decido.decisions.decision import Criterion, Decision
from decido.decisions.extras import (
    EXTRA_FIELDS,
    EXTRA_WEIGHTINGS,
    default_weighting,
    parse_extras,
    parse_uncertain,
    weight_interval,
)
from decido.decisions.faults import (
    Bad,
    Faults,
    choice,
    did_you_mean,
    fail,
    kind_of,
    known_members,
    number,
)
from decido.decisions.params import UNIT_PARAMS, Param
from decido.decisions.types import CRITERION_MEMBERS, REQUEST_MEMBERS
from decido.decisions.vocabulary import (
    ALL_METHODS,
    ALL_PARAMS,
    DEFAULT_GOAL,
    DEFAULT_METHOD,
    DEFAULT_WEIGHT,
    EXPRESSION_METHOD,
    LIMITS,
    METHODS,
    WEIGHTING_NAMES,
)
from decido.goals import goal_name, goal_problem
from decido.metadata import metadata_faults


def parse_request(request: Any, faults: Faults) -> Decision:
    """Check every member that does not depend on the options; faults go to ``faults``."""
    if type(request) is not dict and not isinstance(request, Mapping):
        raise fail((), "invalid_request", f"a decision is an object, not {kind_of(request)}")
    for key in request:
        if key not in REQUEST_MEMBERS:
            hint = did_you_mean(key, sorted(REQUEST_MEMBERS)) if isinstance(key, str) else ""
            faults.add((str(key),), "invalid_request", f"unknown field {key!r}{hint}")
    get = request.get
    method = get("method")
    if method is None:
        method = EXPRESSION_METHOD if get("expression") is not None else DEFAULT_METHOD
    try:
        method = choice(method, ALL_METHODS, "method")
    except Bad as bad:
        faults.add(("method",), "unknown_method", bad.message)
        method = None
    explain = _flag(get("explain"), "explain", faults)
    sensitivity = _flag(get("sensitivity"), "sensitivity", faults)
    _flag(get("log"), "log", faults)  # read by the service
    for where, code, message in metadata_faults(get("metadata")):  # read by the service
        faults.add(("metadata", *where), code, message)
    plan = Decision(
        method or DEFAULT_METHOD,
        _constraints(get("constraints"), faults),
        method is None or not METHODS[method].ascending,
        _top_k(get("top_k"), faults),
        explain,
        sensitivity,
        _request_id(get("id"), faults),
    )
    normalization, weighting = get("normalization"), get("weighting")
    extras = not EXTRA_FIELDS.isdisjoint(request)
    if extras:
        parse_uncertain(plan, request, faults)
    for name, value, choices in (
        ("normalization", normalization, NORMALIZATIONS),
        ("weighting", weighting, WEIGHTING_NAMES),
    ):
        if value is not None:
            try:
                choice(value, choices, name)
            except Bad as bad:
                faults.add((name,), f"unknown_{name}", bad.message)
    if method is not None and METHODS[method].by_expression:
        _expression_fields(plan, request, faults)
        for name in ("criteria", "normalization", "weighting", "params", "sensitivity",
                     "pairwise", "ahp_method", "decision_makers", "aggregation"):
            if get(name) is not None and get(name) is not False:
                plan.warn("ignored_field", f"{name} is not used by method 'expression'", name)
        plan.sensitivity = False
        return plan
    for name in ("expression", "goal"):
        if get(name) is not None:
            plan.warn("ignored_field", f"{name} is only used by method 'expression'", name)
    default = METHODS[method].normalization if method is not None else None
    if default is not None:
        plan.normalization = normalization or default
    elif normalization is not None and method is not None:
        plan.warn(
            "ignored_field",
            f"method {method!r} uses its own normalization; normalization is ignored",
            "normalization",
        )
    if weighting is None:
        weighting = default_weighting(request) if extras else "given"
    plan.weighting = weighting if weighting in WEIGHTING_NAMES else "given"
    need_weights = plan.weighting == "given" and get("decision_makers") is None
    plan.criteria = _criteria(get("criteria"), plan, need_weights, faults)
    if plan.weighting not in ("given", "unknown") and any(
        c.weight is not None or c.interval is not None for c in plan.criteria
    ):
        plan.warn("ignored_field", f"weights are computed by {plan.weighting!r}", "criteria")
    if extras or plan.weighting in EXTRA_WEIGHTINGS:
        parse_extras(plan, request, faults)
    if method is not None:
        plan.params = _params(method, get("params"), plan, faults)
    return plan


def _request_id(value: Any, faults: Faults) -> Any:
    if value is None or (isinstance(value, (str, int)) and not isinstance(value, bool)):
        return value
    faults.add(("id",), "invalid_request",
               f"id must be a string or an integer, not {kind_of(value)}")
    return None


def _flag(value: Any, name: str, faults: Faults) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        faults.add((name,), "invalid_request", f"expected true or false, got {kind_of(value)}")
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
            f"constraints is a list of expressions, not {kind_of(value)}",
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
                f"a constraint is an expression string, not {kind_of(text)}",
            )
    return texts if len(texts) == len(value) else []


def _expression_fields(plan: Decision, request: Mapping[str, Any], faults: Faults) -> None:
    text = request.get("expression")
    if not isinstance(text, str):
        faults.add(
            ("expression",),
            "invalid_request",
            "method 'expression' needs an expression string"
            if text is None
            else f"expression must be a string, not {kind_of(text)}",
        )
    else:
        plan.expression = text
    goal = request.get("goal")
    if goal is not None and goal_name(goal) is None:
        faults.add(("goal",), "invalid_request", goal_problem("goal", goal))
    plan.higher_is_better = goal_name(goal) != "minimize"


def _criteria(value: Any, plan: Decision, need_weights: bool, faults: Faults
              ) -> list[Criterion]:
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
        criterion = _criterion(item, j, plan, need_weights, seen, faults)
        if criterion is not None:
            out.append(criterion)
    return out if len(out) == len(value) else []


def _criterion(
    item: Any, j: int, plan: Decision, need_weights: bool, seen: set[str], faults: Faults
) -> Criterion | None:
    here = ("criteria", j)
    ok = known_members(item, here, CRITERION_MEMBERS, "a criterion", faults)
    if not isinstance(item, Mapping):
        return None
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
    goal = goal_name(item.get("goal", DEFAULT_GOAL))
    if goal is None:
        faults.add((*here, "goal"), "invalid_request",
                   goal_problem(f"criteria[{j}].goal", item.get("goal")))
        ok = False
    weight = item.get("weight")
    span = None
    kind = type(weight)  # (an ABC's isinstance costs more than a number's whole check)
    if kind is not float and kind is not int and isinstance(weight, Mapping):
        span = weight_interval(plan, weight, (*here, "weight"), faults)
        ok = ok and span is not None
        weight = None
    elif weight is not None:
        try:
            weight = number(weight)
            if weight <= 0:
                raise Bad("non_positive_value", f"a weight must be > 0, got {weight}")
            if plan.weighting == "unknown":
                raise Bad("invalid_request", "under weighting 'unknown' a weight is an "
                          "interval {low, high} of its share, or absent")
        except Bad as bad:
            faults.add((*here, "weight"), bad.code, bad.message)
            ok = False
    if item.get("weight") is None and need_weights:
        weight = DEFAULT_WEIGHT
    return Criterion(str(name), goal == "maximize", weight, span) if ok else None


def _params(method: str, value: Any, plan: Decision, faults: Faults) -> dict[str, Any]:
    if value is None:
        value = {}
    if type(value) is not dict and not isinstance(value, Mapping):
        faults.add(("params",), "invalid_params", f"params is an object, not {kind_of(value)}")
        return {"normalization": plan.normalization}
    row = METHODS[method]
    own = row.params
    for key in value:
        if key not in ALL_PARAMS:
            hint = did_you_mean(key, own) if isinstance(key, str) else ""
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
        param = UNIT_PARAMS.get(key)
        if param is not None:
            out[key] = _unit(value.get(key, param.default), param, faults)
    if row.read_params is not None:
        out.update(row.read_params(value, names, faults))
    return out


def _unit(value: Any, param: Param, faults: Faults) -> float:
    """A number in the parameter's [low, high]."""
    try:
        x = number(value)
    except Bad as bad:
        faults.add(("params", param.name), "invalid_params", bad.message)
        return float(param.default)
    if not param.low <= x <= param.high:
        faults.add(("params", param.name), "invalid_params",
                   f"must be between {param.low:g} and {param.high:g}, got {x}")
    return x
