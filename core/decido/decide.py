"""Decisions: choose among a finite set of options under constraints.

``decide(request)`` takes the JSON body of ``POST /v1/decide`` as a mapping and
returns the JSON-ready response; ``decide_batch`` does the same for ``POST
/v1/batch``.  Every request takes one path: the request is validated first
(``decido._mcdm_request``: every fault found is reported together, as one
``DecisionError``), constraints and the ``expression`` method are compiled with the
language of ``decido.Expression`` (the attributes they use are found by the compiler: each
unknown name that an option has becomes a variable, and the text is compiled again) and
evaluated over all options in one VM call each, the multi-criteria methods score the
feasible options (``decido._mcdm_methods``), and competition ranks are computed in C
(``dc_rank_competition`` in ``csrc/decide/rank.c``).  See ``docs/decisions.md``.
"""

from __future__ import annotations

import array
import numbers
from collections.abc import Mapping
from math import fsum, isfinite
from typing import Any

import numpy as np
from numpy.typing import NDArray

from decido._mcdm import competition_ranks
from decido._mcdm_methods import (
    METHODS,
    NON_NEGATIVE_WEIGHTINGS,
    POSITIVE_METHODS,
    POSITIVE_NORMALIZATIONS,
    RANK_TOLERANCE,
    Scored,
    auto_weights,
    column_top,
    out_of_unit_range,
    unit_columns,
)
from decido._mcdm_request import (
    LIMITS,
    DecisionError,
    Faults,
    Plan,
    _did_you_mean,
    _kind,
    attribute_names,
    expression_fault,
    locate_attribute,
    parse_options,
    parse_plan,
)
from decido._mcdm_schema import decision_schemas
from decido._mcdm_sensitivity import sensitivity
from decido.errors import ExpressionError
from decido.expression import Expression

__all__ = [
    "LIMITS", "RANK_TOLERANCE", "DecisionError", "decide", "decide_batch", "decision_schemas",
]

#: matrices of at most this many values are checked with Python's builtins (finiteness,
#: constant columns), which cost less than NumPy's calls there and give the same answers
SMALL_MATRIX = 64
#: weightings that do not depend on the options
_SET_WEIGHTS = ("given", "equal")
#: the language's named constants (csrc/expr/resolve.c): an attribute of that name
#: shadows the constant in the expressions that use the name
_CONSTANTS = ("pi", "e")

Array = NDArray[np.float64]


def decide(request: Mapping[str, Any]) -> dict[str, Any]:
    """Rank the options of one decision request.

    ``request`` is the JSON body of ``POST /v1/decide`` (see
    ``docs/decisions.md``): ``options``, ``method``, ``criteria``,
    ``normalization``, ``weighting``, ``params``, ``constraints``, ``top_k``,
    ``explain``, ``sensitivity``, ``log``, and for ``method="expression"`` an
    ``expression`` and a ``goal``.  Returns a JSON-ready dict (``status`` ``"ok"`` or
    ``"infeasible"``, ``best``, ``best_is_tied``, ``ties``, ``ranking``,
    ``infeasible``, ``weights``, ``warnings``...).

    Raises ``DecisionError`` (a ``ValueError``) for an invalid request, before
    computing anything: ``code``, ``path`` and ``position`` of the first fault, and
    ``errors``, every fault found.
    """
    faults = Faults()
    plan = parse_plan(request, faults)
    parsed = parse_options(request.get("options"), faults)
    if parsed is None:
        faults.check()
        raise AssertionError("unreachable: faulty options are a fault")  # pragma: no cover
    ids, attrs = parsed
    criteria = [c.attribute for c in plan.criteria]
    located = _check_criteria(attrs, criteria, faults)
    texts: list[tuple[tuple[Any, ...], str]] = [
        (("constraints", j), text) for j, text in enumerate(plan.constraints)
    ]
    if plan.expression is not None:
        texts.append((("expression",), plan.expression))
    programs, variables, uses = (
        _compile_all(texts, attrs, faults) if texts else ([], [], [])
    )
    columns = list(dict.fromkeys(located + variables))
    X = _matrix(attrs, columns, faults)
    faults.check()
    assert X is not None and programs is not None
    k = len(criteria)
    if not texts:  # every option is feasible; the criteria are the matrix
        out = _header(plan, len(ids), len(ids))
        return _decide_mcdm(plan, out, X, None, ids, criteria, [], faults)
    col = {name: j for j, name in enumerate(columns)}
    Xv = X[:, [col[v] for v in variables]] if variables else np.empty((len(ids), 0))

    # constraints, then everything else on the feasible options only
    n_constraints = len(plan.constraints)
    holds = np.ones((n_constraints, len(ids)), dtype=bool)
    for j in range(n_constraints):
        value = programs[j].evaluate_many(Xv)
        holds[j] = (value != 0) & ~np.isnan(value)
    feasible_mask: NDArray[np.bool_] = np.logical_and.reduce(holds, axis=0)
    feasible = np.flatnonzero(feasible_mask)
    infeasible = _infeasible(plan.constraints, holds, feasible_mask, ids)
    # the criteria are the first columns; column-major, since every method
    # reduces over the options, down the columns (X is)
    all_feasible = feasible.size == len(ids)
    Xc = X[:, :k] if all_feasible else np.asfortranarray(X[feasible_mask, :k])
    out = _header(plan, len(ids), feasible.size)
    if feasible.size == 0:
        out["weights"] = _given_weights(plan)
        out.update(
            status="infeasible", best=None, best_is_tied=False, ties=[], ranking=[],
            infeasible=infeasible,
        )
        out["warnings"] = plan.warnings
        return out
    index = None if all_feasible else feasible
    if plan.method != "expression":
        return _decide_mcdm(plan, out, Xc, index, ids, criteria, infeasible, faults)

    used = [variables.index(v) for v in uses[-1]]
    scored = _score_expression(programs[-1], Xv[feasible], used, plan)
    out["weights"] = {}
    _answer(plan, out, scored, index, ids, uses[-1])
    out["infeasible"] = infeasible
    out["warnings"] = plan.warnings
    return out


def _decide_mcdm(
    plan: Plan,
    out: dict[str, Any],
    Xc: Array,
    feasible: NDArray[np.intp] | None,
    ids: list[Any],
    criteria: list[str],
    infeasible: list[dict[str, Any]],
    faults: Faults,
) -> dict[str, Any]:
    """Score the feasible options (``Xc``: feasible options x criteria, column-major;
    ``feasible``: their option indices, None when every option is feasible) by a
    multi-criteria method and fill ``out``; ``faults`` are the request's (none yet)."""
    _check_values(plan, Xc, feasible, criteria, faults)
    faults.check()
    scored, w, X, params = _score_mcdm(plan, Xc)
    out["weights"] = dict(zip(criteria, w.tolist(), strict=True))
    _answer(plan, out, scored, feasible, ids, criteria)
    if scored.compromise is not None:
        out["compromise"] = [ids[_option(feasible, i)] for i in scored.compromise]
    out["infeasible"] = infeasible
    out["warnings"] = plan.warnings
    if plan.sensitivity:
        def score(weights: Array) -> Array:
            return METHODS[plan.method](X, benefit, weights, params).score

        benefit = np.array([c.benefit for c in plan.criteria])
        found = sensitivity(
            plan.method, score, scored.score, w, plan.higher_is_better, RANK_TOLERANCE
        )
        out["sensitivity"] = {
            "margin": found.margin,
            "criteria": [
                {
                    "attribute": name,
                    "weight": float(w[j]),
                    "lower": lo,
                    "upper": hi,
                    "lower_changes_to": None if below is None else ids[_option(feasible, below)],
                    "upper_changes_to": None if above is None else ids[_option(feasible, above)],
                }
                for j, (name, (lo, hi, below, above)) in enumerate(
                    zip(criteria, found.intervals, strict=True)
                )
            ],
        }
    return out


def _check_criteria(
    attrs: list[Mapping[str, Any]], criteria: list[str], faults: Faults
) -> list[str]:
    """The criteria some option has; an ``unknown_attribute`` fault for each other."""
    located = []
    for j, name in enumerate(criteria):
        if locate_attribute(attrs, name):
            located.append(name)
            continue
        names = attribute_names(attrs, faults)
        if names is not None:
            faults.add(
                ("criteria", j, "attribute"),
                "unknown_attribute",
                f"no option has attribute {name!r}{_did_you_mean(name, names)}",
            )
    return located


def _option(feasible: NDArray[np.intp] | None, i: int) -> int:
    """The option index of the i-th feasible option."""
    return i if feasible is None else int(feasible[i])


def decide_batch(request: Mapping[str, Any]) -> dict[str, Any]:
    """Run many decisions; each item succeeds or fails on its own.

    ``request`` is ``{"defaults": {...}, "decisions": [{"id": ..., ...}, ...]}``;
    ``defaults`` are merged shallowly into each item (the item wins).  Returns
    ``{"results": [...], "n_decisions", "n_ok", "n_error"}`` with one result per
    item in input order: the ``decide`` response with the item's ``id`` first, or
    ``{"id", "status": "error", "error": {"code", "message", "path", "position"?}}``
    (paths are relative to the merged item).  Only a malformed envelope raises (an item
    that is not an object is one: the batch is refused whole).
    """
    if not isinstance(request, Mapping):
        raise DecisionError("invalid_request", f"a batch is an object, not {_kind(request)}", "")
    for key in request:
        if key not in ("defaults", "decisions"):
            raise DecisionError("invalid_request", f"unknown field {key!r}", str(key))
    defaults = request.get("defaults") or {}
    if not isinstance(defaults, Mapping):
        raise DecisionError(
            "invalid_request", f"defaults is an object, not {_kind(defaults)}", "defaults"
        )
    items = request.get("decisions")
    if isinstance(items, (str, bytes)) or not isinstance(items, (list, tuple)):
        raise DecisionError("invalid_request", "decisions must be a list", "decisions")
    if len(items) > LIMITS["max_batch"]:
        raise DecisionError(
            "too_many", f"{len(items)} decisions (limit {LIMITS['max_batch']})", "decisions"
        )
    not_objects = [{"pointer": f"/decisions/{i}", "code": "invalid_request",
                    "message": f"a decision is an object, not {_kind(item)}"}
                   for i, item in enumerate(items) if not isinstance(item, Mapping)]
    if not_objects:  # the envelope is malformed: refused whole, every such item named
        first = not_objects[0]
        raise DecisionError(first["code"], first["message"], first["pointer"][1:].replace(
            "/", "[", 1) + "]", errors=not_objects)
    results = [_batch_item(defaults, item) for item in items]
    n_error = sum(r["status"] == "error" for r in results)
    return {
        "results": results,
        "n_decisions": len(results),
        "n_ok": len(results) - n_error,
        "n_error": n_error,
    }


def _batch_item(defaults: Mapping[str, Any], item: Any) -> dict[str, Any]:
    item_id = item.get("id") if isinstance(item, Mapping) else None
    try:
        if not isinstance(item, Mapping):
            raise DecisionError(
                "invalid_request", f"a decision is an object, not {_kind(item)}", ""
            )
        result = decide({**defaults, **item})
    except DecisionError as exc:
        return {"id": item_id, "status": "error", "error": exc.to_dict()}
    except Exception as exc:  # one bad item never fails the batch
        return {
            "id": item_id,
            "status": "error",
            "error": {"code": "internal_error", "message": type(exc).__name__, "path": ""},
        }
    result.setdefault("id", item_id)
    return {"id": result.pop("id"), **result}


def _infeasible(
    constraints: list[str], holds: NDArray[np.bool_], feasible: NDArray[np.bool_], ids: list[Any]
) -> list[dict[str, Any]]:
    """``{"id", "violated": [texts]}`` per infeasible option, in input order (the
    lists are built once per distinct pattern of violated constraints)."""
    bad = np.flatnonzero(~feasible)
    if bad.size == 0:
        return []
    if len(constraints) == 1:  # one pattern: the one constraint
        return [{"id": ids[i], "violated": [constraints[0]]} for i in bad.tolist()]
    # each option's pattern as bytes (one per constraint): the key of its list of texts
    n = len(constraints)
    rows = np.ascontiguousarray(~holds[:, bad].T).tobytes()
    texts: dict[bytes, list[str]] = {}
    out = []
    for r, i in enumerate(bad.tolist()):
        pattern = rows[r * n : (r + 1) * n]
        violated = texts.get(pattern)
        if violated is None:
            violated = texts[pattern] = [constraints[j] for j in range(n) if pattern[j]]
        out.append({"id": ids[i], "violated": list(violated)})
    return out


# ---------------------------------------------------------------- expressions
def _compile_all(
    texts: list[tuple[tuple[Any, ...], str]], attrs: list[Mapping[str, Any]], faults: Faults
) -> tuple[list[Expression] | None, list[str], list[list[str]]]:
    """Compile the constraints and the expression over the attributes they use.

    Returns the programs (None after a fault), the variables they share (the
    attributes any of them uses, in order of first use) and, per text, the attributes
    it uses."""
    shadow = [name for name in _CONSTANTS if locate_attribute(attrs, name)]
    found: list[tuple[Expression, list[str]] | None] = [
        _names(text, where, attrs, shadow, faults) for where, text in texts
    ]
    uses = [f[1] if f is not None else [] for f in found]
    variables = list(dict.fromkeys(name for names in uses for name in names))
    if faults:
        return None, variables, uses
    programs = []
    for (_, text), f in zip(texts, found, strict=True):
        assert f is not None
        program, names = f
        if names != variables:  # compiled over its own names: again over all of them
            program = Expression(text, variables=variables)
        programs.append(program)
    return programs, variables, uses


def _names(
    text: str,
    where: tuple[Any, ...],
    attrs: list[Mapping[str, Any]],
    shadow: list[str],
    faults: Faults,
) -> tuple[Expression, list[str]] | None:
    """The program of ``text`` and the attributes it uses, as the compiler finds them:
    each name it reports unknown that some option has becomes a variable, and it
    compiles again.  An attribute named like a constant (``pi``, ``e``) shadows it
    where the text uses that name.  Faults go to ``faults`` (None)."""
    names = list(shadow)
    program: Expression | None = None
    while program is None:
        try:
            program = Expression(text, variables=names)
        except ExpressionError as exc:
            name = text[exc.position : exc.position + exc.length]
            if exc.code == "unknown_name" and name not in names and locate_attribute(attrs, name):
                names.append(name)
                continue
            if exc.code == "unknown_name":
                known = attribute_names(attrs, faults)
                if known is None:
                    return None
                faults.add(
                    where,
                    "invalid_expression",
                    f"unknown_name: unknown name {name!r}{_did_you_mean(name, known)}",
                    exc.position,
                    exc,
                )
                return None
            expression_fault(faults, exc, where)
            return None
    if shadow:  # keep a shadowing attribute only where the text uses its name
        used = program.structure.used.tolist()
        kept = [n for n, u in zip(names, used, strict=True) if u or n not in shadow]
        if kept != names:
            names = kept
            program = Expression(text, variables=names)
    return program, names


def _score_expression(program: Expression, Xv: Array, used: list[int], plan: Plan) -> Scored:
    """Scores of the feasible options; the explanation shows the attributes used."""
    score = program.evaluate_many(Xv)
    if np.isnan(score).any():
        plan.warn(
            "nan_score", "the expression is NaN for some options: they rank last", "expression"
        )
    return Scored(score, {"values": Xv[:, used]})


# ---------------------------------------------------------------- options matrix
def _matrix(attrs: list[Mapping[str, Any]], columns: list[str], faults: Faults) -> Array | None:
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
                faults.add(
                    where, "invalid_request", f"attribute values are numbers, got {_kind(v)}"
                )
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


# ---------------------------------------------------------------- multi-criteria
def _check_values(
    plan: Plan,
    Xc: Array,
    feasible: NDArray[np.intp] | None,
    criteria: list[str],
    faults: Faults,
) -> None:
    """Positivity, bounds and size rules that depend on the feasible values; every
    value refused is a fault."""
    method, norm = plan.method, plan.normalization
    need = None
    if method in POSITIVE_METHODS:
        need = f"method {method!r} needs values > 0"
    elif norm in POSITIVE_NORMALIZATIONS:
        need = f"normalization {norm!r} needs values > 0"
    elif method in ("wpm", "waspas") and norm != "minmax":
        need = f"method {method!r} with normalization {norm!r} needs values > 0"
    if need is not None:
        _refuse(Xc <= 0, need, Xc, feasible, criteria, faults)
    if plan.weighting in NON_NEGATIVE_WEIGHTINGS:
        _refuse(
            Xc < 0, f"weighting {plan.weighting!r} needs values >= 0", Xc, feasible, criteria,
            faults,
        )
    m = Xc.shape[0]
    if method == "promethee2" and m > LIMITS["max_promethee_options"]:
        faults.add(
            ("options",),
            "too_many",
            f"promethee2 compares every pair: {m} feasible options "
            f"(limit {LIMITS['max_promethee_options']})",
        )
    if method == "spotis":
        _spotis_bounds(plan, Xc, feasible, criteria, faults)


def _refuse(
    bad: NDArray[np.bool_],
    need: str,
    Xc: Array,
    feasible: NDArray[np.intp] | None,
    criteria: list[str],
    faults: Faults,
) -> None:
    """A ``non_positive_value`` fault for each value flagged in ``bad``."""
    if not bad.any():
        return
    for i, j in np.argwhere(bad).tolist():
        if faults.full():
            return
        faults.add(
            ("options", _option(feasible, i), "attributes", criteria[j]),
            "non_positive_value",
            f"{need}; attribute {criteria[j]!r} is {Xc[i, j]}",
        )


def _spotis_bounds(
    plan: Plan,
    Xc: Array,
    feasible: NDArray[np.intp] | None,
    criteria: list[str],
    faults: Faults,
) -> None:
    given = plan.params["bounds"]
    bounds = np.column_stack([Xc.min(axis=0), Xc.max(axis=0)])
    for j, name in enumerate(criteria):
        if name in given:
            lo, hi = given[name]
            for i in np.flatnonzero((Xc[:, j] < lo) | (Xc[:, j] > hi)).tolist():
                faults.add(
                    ("options", _option(feasible, i), "attributes", name),
                    "out_of_bounds",
                    f"value {Xc[i, j]} is outside the SPOTIS bounds [{lo}, {hi}]",
                )
            bounds[j] = lo, hi
    taken = [name for name in criteria if name not in given]
    if taken:
        plan.warn(
            "bounds_from_data",
            "SPOTIS bounds taken from the feasible options (scores then depend on the "
            f"option set): {', '.join(taken)}",
            "params.bounds",
        )
    plan.params["bounds"] = np.ascontiguousarray(bounds)


def _given_weights(plan: Plan) -> dict[str, float]:
    """Weights that do not depend on the options (given, equal), else {}."""
    if plan.weighting in _SET_WEIGHTS:
        return dict(zip([c.attribute for c in plan.criteria], _weights(plan), strict=True))
    return {}


def _weights(plan: Plan) -> list[float]:
    """The given weights over their correctly rounded sum (``math.fsum``: the same bits
    in any order), or equal weights. Given weights whose sum is beyond the largest
    double are first divided by the largest of them."""
    k = len(plan.criteria)
    if plan.weighting == "equal":
        return [1.0 / k] * k
    return _over_sum([float(c.weight) for c in plan.criteria])  # type: ignore[arg-type]


def _over_sum(given: list[float]) -> list[float]:
    """Positive finite weights over their ``math.fsum`` (first over their maximum when
    that sum is beyond the largest double)."""
    try:
        total = fsum(given)
    except OverflowError:
        top = max(given)
        given = [x / top for x in given]
        total = fsum(given)
    return [x / total for x in given]


def _warn_constant(plan: Plan, flags: Any) -> None:
    """``constant_criterion`` for each criterion flagged (one value over the feasible
    options)."""
    for j, flag in enumerate(flags):
        if flag:
            plan.warnings.append(_constant_warning(plan.criteria[j].attribute, j))


def _constant_warning(name: str, j: int) -> dict[str, Any]:
    """The ``constant_criterion`` warning of criterion ``j``, attribute ``name``."""
    return {
        "code": "constant_criterion",
        "message": f"{name!r} has one value over the feasible options: it does not tell "
        "them apart",
        "path": f"criteria[{j}]",
    }


def _score_mcdm(plan: Plan, Xc: Array) -> tuple[Scored, Array, Array, dict[str, Any]]:
    """The method's scores and the weights; also the matrix and parameters it scored
    (each criterion scaled by a power of two where its magnitudes need it:
    :func:`~decido._mcdm_methods.unit_columns`)."""
    m, k = Xc.shape
    benefit = np.array([c.benefit for c in plan.criteria])
    if plan.method in ("spotis", "promethee2") or m * k > SMALL_MATRIX:
        lo, hi = Xc.min(axis=0), Xc.max(axis=0)
        flags = (lo == hi).tolist()
        unit = unit_columns(Xc, column_top(np.maximum(hi, -lo), plan.params), plan.params)
    else:  # a few values: Python's min and max per column
        cols = Xc.T.tolist()
        lows, highs = list(map(min, cols)), list(map(max, cols))
        flags = [a == b for a, b in zip(lows, highs, strict=True)]
        tops = [b if b > -a else -a for a, b in zip(lows, highs, strict=True)]
        unit = (unit_columns(Xc, np.array(tops), plan.params) if out_of_unit_range(tops)
                else None)
    X, params = (Xc, plan.params) if unit is None else unit
    if m == 1:
        plan.warn("single_option", "one feasible option: it ranks first")
        flags = [True] * k
    if m > 1 and True in flags:
        _warn_constant(plan, flags)
    if plan.weighting in _SET_WEIGHTS:
        w = np.array(_weights(plan))  # Python floats: float64
    else:
        assert plan.weighting is not None  # a multi-criteria method has one
        auto = auto_weights(Xc, benefit, plan.weighting)
        if auto is None:
            w = np.full(k, 1.0 / k)
            plan.warn(
                "degenerate_weights",
                f"weighting {plan.weighting!r} finds nothing to weigh (it needs two options "
                "that differ, and critic criteria that do not all move together): equal "
                "weights used",
                "weighting",
            )
        else:
            w = auto
    return METHODS[plan.method](X, benefit, w, params), w, X, params


# ---------------------------------------------------------------- ranking and output
def _json_floats(values: list[Any]) -> list[Any]:
    """Non-finite floats become None (JSON has no NaN or infinity)."""
    return [v if v == v and v not in (float("inf"), float("-inf")) else None for v in values]


def _floats(values: list[float]) -> list[Any]:
    # a finite sum means finite values (an overflowing sum only takes the slow path)
    return values if isfinite(sum(values)) else _json_floats(values)


def _answer(
    plan: Plan,
    out: dict[str, Any],
    scored: Scored,
    feasible: NDArray[np.intp] | None,
    ids: list[Any],
    names: list[str],
) -> None:
    """Fill ``best``, ``best_is_tied``, ``ties`` and ``ranking`` (best first, cut to
    ``top_k``); ``names`` label the per-criterion explanations.  Ties are the groups of
    options that share a rank (scores within ``RANK_TOLERANCE`` of the largest score
    magnitude), each in rank then input order; ``best`` is the first of its group."""
    order, ranks = competition_ranks(scored.score, plan.higher_is_better, RANK_TOLERANCE)
    options = order if feasible is None else feasible[order]
    rank_list = ranks.tolist()
    m = len(rank_list)
    # p + 1 ties with p (for a few options, Python costs less than NumPy's calls)
    if m <= SMALL_MATRIX:
        tied = [p for p in range(m - 1) if rank_list[p] == rank_list[p + 1]]
    else:
        tied = np.flatnonzero(ranks[1:] == ranks[:-1]).tolist()
    ties: list[list[Any]] = []
    for p in tied:
        if p == 0 or rank_list[p] != rank_list[p - 1]:  # a new group
            ties.append([ids[int(options[p])]])
        ties[-1].append(ids[int(options[p + 1])])
    best_is_tied = bool(tied) and tied[0] == 0
    if plan.top_k is not None:
        top = plan.top_k
        order, options, rank_list = order[:top], options[:top], rank_list[:top]
    scores = _floats(scored.score[order].tolist())
    ranking = [
        {"id": ids[i], "rank": r, "score": s}
        for i, r, s in zip(options.tolist(), rank_list, scores, strict=True)
    ]
    if plan.explain:
        parts = {
            key: [dict(zip(names, row, strict=True)) for row in map(_floats, value[order].tolist())]
            for key, value in scored.per_criterion.items()
        }
        parts.update(
            {key: _floats(value[order].tolist()) for key, value in scored.per_option.items()}
        )
        for n, entry in enumerate(ranking):
            entry["explanation"] = {key: value[n] for key, value in parts.items()}
    out["status"] = "ok"
    out["best"] = ranking[0]["id"]
    out["best_is_tied"] = best_is_tied
    out["ties"] = ties
    out["ranking"] = ranking


def _header(plan: Plan, n_options: int, n_feasible: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "status": "ok",
        "method": plan.method,
        "normalization": plan.normalization,
        "weighting": plan.weighting,
        "weights": {},
        "higher_is_better": plan.higher_is_better,
        "best": None,
        "best_is_tied": False,
        "ties": [],
        "n_options": n_options,
        "n_feasible": n_feasible,
    }
    return out if plan.request_id is None else {"id": plan.request_id, **out}
