"""Validation of a decision request's members: fields, criteria and params.

Everything here only reads the request; it never scores.  Faults are collected in a
``Faults`` (every fault found, not only the first; ``decido._mcdm_faults``) and raised
together as one ``DecisionError``.  What a request may hold -- its members, methods,
normalizations, weightings, goals, parameters and limits -- is read from
``decido._mcdm_vocabulary``; ``decido._mcdm_schema`` writes the JSON Schema of the
request from the same tables.  The members of judgments, groups and uncertainty are
read by ``decido._mcdm_extras``; the options by ``decido._mcdm_options``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from decido._mcdm import NORMALIZATIONS
from decido._mcdm_decision import Criterion, Decision
from decido._mcdm_extras import (
    EXTRA_FIELDS,
    EXTRA_WEIGHTINGS,
    default_weighting,
    parse_extras,
    parse_uncertain,
    weight_interval,
)
from decido._mcdm_faults import (
    Bad,
    Faults,
    Where,
    choice,
    did_you_mean,
    fail,
    kind_of,
    known_members,
    number,
)
from decido._mcdm_vocabulary import (
    ALL_METHODS,
    ALL_PARAMS,
    CRITERION_FIELDS,
    DEFAULT_GOAL,
    DEFAULT_WEIGHT,
    FIELDS,
    LIMITS,
    METHODS,
    PARAMS,
    PREFERENCE_NEEDS,
    UNIT_PARAMS,
    WEIGHTING_NAMES,
    Param,
)
from decido.goals import goal_name, goal_problem
from decido.metadata import metadata_faults


def parse_request(request: Any, faults: Faults) -> Decision:
    """Check every member that does not depend on the options; faults go to ``faults``."""
    if type(request) is not dict and not isinstance(request, Mapping):
        raise fail((), "invalid_request", f"a decision is an object, not {kind_of(request)}")
    for key in request:
        if key not in FIELDS:
            hint = did_you_mean(key, sorted(FIELDS)) if isinstance(key, str) else ""
            faults.add((str(key),), "invalid_request", f"unknown field {key!r}{hint}")
    get = request.get
    method = get("method")
    if method is None:
        method = "expression" if get("expression") is not None else "wsm"
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
        method or "wsm",
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
    if method == "expression":
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
    ok = known_members(item, here, CRITERION_FIELDS, "a criterion", faults)
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
    own = METHODS[method].params
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
    if method == "promethee2":
        out.update(_promethee(value, names, faults))
    elif method == "spotis":
        out["bounds"] = _bounds(value.get("bounds"), names, faults)
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


def _per_criterion(value: Any, names: list[str], where: Where, faults: Faults) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        faults.add(
            where,
            "invalid_params",
            f"expected an object {{attribute: value}}, not {kind_of(value)}",
        )
        return {}
    for key in value:
        if key not in names:
            hint = did_you_mean(key, names) if isinstance(key, str) else ""
            faults.add((*where, str(key)), "invalid_params", f"{key!r} is not a criterion{hint}")
    return dict(value)


def _promethee(value: Mapping[str, Any], names: list[str], faults: Faults) -> dict[str, Any]:
    try:
        pref = choice(value.get("preference", PARAMS["preference"].default),
                      PARAMS["preference"].choices, "params.preference")
    except Bad as bad:
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
                x = number(table[name])
            except Bad as bad:
                faults.add(here, "invalid_params", bad.message)
                x = 1.0
            low, strict = PARAMS[key].low, PARAMS[key].open_low
            if x < low or (strict and x == low):
                sign = ">" if strict else ">="
                faults.add(here, "invalid_params", f"{key} must be {sign} {low:g}")
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
            lo, hi = number(pair[0]), number(pair[1])
        except Bad as bad:
            faults.add(here, "invalid_params", bad.message)
            continue
        if not lo < hi:
            faults.add(here, "invalid_params", f"low must be < high, got [{lo}, {hi}]")
            continue
        out[name] = (lo, hi)
    return out
