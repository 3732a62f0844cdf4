"""Decisions: choose among a finite set of options under constraints.

``decide(request)`` takes the JSON body of ``POST /v1/decide`` as a mapping and
returns the JSON-ready response; ``decide_batch`` does the same for ``POST
/v1/batch``.  Constraints and the ``expression`` method are compiled once with
the language of ``decido.Expression`` and evaluated over all options in one VM
call each; the multi-criteria methods are vectorized NumPy over the feasible
options (``decido._mcdm_methods``), and competition ranks are computed in C
(``dc_rank_competition`` in ``csrc/decide/rank.c``, bound by ``decido._mcdm``).
The request is validated before anything is computed (``decido._mcdm_request``);
a bad request raises ``DecisionError`` naming the field.  See
``docs/decisions.md`` for the fields and conventions.

Small requests are the service's common case, so the fixed cost per call is
kept low: a request without constraints or expression never touches the
expression machinery, validation takes fast paths for plain ``dict``/``list``
JSON, and the kernels avoid NumPy calls that do not change a result
(``benchmarks/decide_small.py`` times it).
"""

from __future__ import annotations

import array
import itertools
import numbers
import operator
from collections.abc import Mapping
from math import fsum, isfinite
from typing import Any

import numpy as np
from numpy.typing import NDArray

from decido._mcdm import (
    FAST_MAX_OPTIONS,
    RANK_MOORA,
    RANK_TOPSIS_VECTOR,
    RANK_WSM_MINMAX,
    competition_ranks,
    rank_values,
)
from decido._mcdm_methods import (
    METHODS,
    POSITIVE_METHODS,
    POSITIVE_NORMALIZATIONS,
    Mask,
    Scored,
    auto_weights,
)
from decido._mcdm_request import (
    LIMITS,
    RESERVED,
    DecisionError,
    Plan,
    _did_you_mean,
    _kind,
    attr_path,
    attribute_names,
    expression_error,
    expression_names,
    locate_attribute,
    parse_options,
    parse_plan,
)
from decido.errors import ExpressionError
from decido.expression import Expression

__all__ = ["LIMITS", "RANK_TOLERANCE", "DecisionError", "decide", "decide_batch"]

#: scores within this fraction of the largest score magnitude share a rank
RANK_TOLERANCE = 1e-12
#: matrices of at most this many values are checked with Python's builtins (finiteness,
#: constant columns), which cost less than NumPy's calls there and give the same answers
SMALL_MATRIX = 64

#: the direct path (``_decide_direct``) takes requests of 2 to this many options
DIRECT_MAX_OPTIONS = FAST_MAX_OPTIONS
#: (method, normalization) -> kernel of the direct path
_DIRECT_KERNELS = {
    ("topsis", "vector"): RANK_TOPSIS_VECTOR,
    ("wsm", "minmax"): RANK_WSM_MINMAX,
    ("moora", None): RANK_MOORA,
}
#: weightings that do not depend on the options
_SET_WEIGHTS = ("given", "equal")
#: whether ``decide`` first tries the plain path (:func:`_decide_plain`)
PLAIN_PATH = True
_PLAIN_FIELDS = frozenset(
    {"options", "method", "criteria", "normalization", "weighting", "top_k", "id", "explain"}
)
_PLAIN_CRITERION = frozenset({"attribute", "goal", "weight"})
#: method -> (its normalization in the answer, kernel) on the plain path
_PLAIN_METHODS = {
    "topsis": ("vector", RANK_TOPSIS_VECTOR),
    "wsm": ("minmax", RANK_WSM_MINMAX),
    "moora": (None, RANK_MOORA),
}
_ID_TYPES = frozenset({str, int})
_NUMBER_TYPES = frozenset({int, float})

Array = NDArray[np.float64]


def decide(request: Mapping[str, Any]) -> dict[str, Any]:
    """Rank the options of one decision request.

    ``request`` is the JSON body of ``POST /v1/decide`` (see
    ``docs/decisions.md``): ``options``, ``method``, ``criteria``,
    ``normalization``, ``weighting``, ``params``, ``constraints``, ``top_k``,
    ``explain``, and for ``method="expression"`` an ``expression`` and a
    ``goal``.  Returns a JSON-ready dict (``status`` ``"ok"`` or
    ``"infeasible"``, ``ranking``, ``infeasible``, ``weights``, ``warnings``...).

    Raises ``DecisionError`` (a ``ValueError``) with ``code`` and ``path`` for an
    invalid request, before computing anything.
    """
    if PLAIN_PATH:
        done = _decide_plain(request)
        if done is not None:
            return done
    plan = parse_plan(request)
    ids, attrs = parse_options(request.get("options"))
    criteria = [c.attribute for c in plan.criteria]
    if plan.constraints or plan.expression is not None:
        return _decide_expressions(plan, ids, attrs, criteria)
    # no expressions: every option is feasible, the criteria are the matrix
    _check_criteria(attrs, criteria)
    out = _header(plan, len(ids), len(ids))
    values = _values(attrs, criteria)
    kernel = _direct_kernel(plan, len(ids))
    if kernel is not None:
        done = _decide_direct(plan, out, values, kernel, ids, criteria)
        if done is not None:
            return done
    X = np.frombuffer(values, dtype=np.float64).reshape(len(ids), len(criteria))
    return _decide_mcdm(plan, out, np.asfortranarray(X), None, ids, criteria, [])


def _decide_plain(request: Any) -> dict[str, Any] | None:
    """The whole of ``decide`` for the service's commonest request, or None.

    A plain request is a ``dict`` with only ``options``, ``method`` (topsis, wsm or moora),
    ``criteria``, ``normalization`` (the method's own, or absent), ``weighting`` (given
    or equal), ``top_k``, ``id`` and ``explain`` (false), every value of the JSON type
    the general path wants, 2 to :data:`DIRECT_MAX_OPTIONS` options and finite numbers:
    a request that is valid and draws no warning but ``constant_criterion``. It is
    recognised, not validated: anything else returns None and the general path (parse,
    validate, then compute) answers, errors and warnings included. The answer is the
    general path's, byte for byte (tests/decide/test_decide_fast.py), without a
    ``Plan``, a NumPy array or a helper per field: in the service, between other
    requests, every extra piece of code run costs a cache refill."""
    if type(request) is not dict or not _PLAIN_FIELDS.issuperset(request):
        return None
    get = request.get
    method = get("method")
    if method is None:
        method = "wsm"
    elif type(method) is not str:
        return None
    own = _PLAIN_METHODS.get(method)
    if own is None:
        return None
    normalization, kernel = own
    given_norm = get("normalization")
    if given_norm is not None and (normalization is None or given_norm != normalization
                                   or type(given_norm) is not str):
        return None
    weighting = get("weighting")
    if weighting is None:
        weighting = "given"
    elif type(weighting) is not str or weighting not in _SET_WEIGHTS:
        return None
    top_k, rid, explain = get("top_k"), get("id"), get("explain")
    if (top_k is not None and (type(top_k) is not int or top_k < 1)) or (
            rid is not None and type(rid) is not str and type(rid) is not int) or (
            explain is not None and explain is not False):
        return None
    criteria, options = get("criteria"), get("options")
    if type(criteria) is not list or type(options) is not list:
        return None
    k, m = len(criteria), len(options)
    if not 1 <= k <= LIMITS["max_criteria"] or not 2 <= m <= DIRECT_MAX_OPTIONS or \
            m > LIMITS["max_options"]:
        return None
    names: list[str] = []
    benefit = bytearray(k)
    weights: list[float] = []
    for j, c in enumerate(criteria):
        if type(c) is not dict or not _PLAIN_CRITERION.issuperset(c):
            return None
        name, goal, weight = c.get("attribute"), c.get("goal", "maximize"), c.get("weight")
        if type(name) is not str or not name or name in names or type(goal) is not str:
            return None
        if goal == "maximize":
            benefit[j] = 1
        elif goal != "minimize":
            return None
        if weighting == "given":
            if type(weight) is not float and type(weight) is not int:
                return None
            try:
                weight = float(weight)
            except OverflowError:  # an int beyond the doubles
                return None
            if not (isfinite(weight) and weight > 0):
                return None
            weights.append(weight)
        elif weight is not None:  # ignored_field: the general path warns
            return None
        names.append(name)
    get_values = operator.itemgetter(*names)
    rows = []
    try:
        for o in options:
            if type(o) is not dict:
                return None
            attrs = o.get("attributes")
            if type(attrs) is not dict:
                return None
            rows.append(get_values(attrs))
        ids = [o.get("id") for o in options]
        flat = array.array("d")
        flat.fromlist(list(itertools.chain.from_iterable(rows)) if k > 1 else rows)
    except (KeyError, TypeError, OverflowError):
        return None
    if not isfinite(sum(flat)) or not set(map(type, ids)) <= _ID_TYPES or \
            len(set(ids)) != m or not _plain_numbers(rows, k):
        return None
    weights = [1.0 / k] * k if weighting == "equal" else _over_sum(weights)
    ranked = rank_values(flat, m, k, kernel, bytes(benefit), weights, True, RANK_TOLERANCE)
    if ranked is None:
        return None
    constant, order, ranks, scores = ranked
    ranking = _entries(ids, order, ranks, scores, top_k)
    out: dict[str, Any] = {} if rid is None else {"id": rid}
    out.update(
        status="ok",
        method=method,
        normalization=normalization,
        weighting=weighting,
        weights=dict(zip(names, weights, strict=True)),
        higher_is_better=True,
        best=ranking[0]["id"],
        n_options=m,
        n_feasible=m,
    )
    out["ranking"] = ranking
    out["infeasible"] = []
    out["warnings"] = [
        _constant_warning(names[j], j) for j in range(k) if constant[j]
    ] if 1 in constant else []
    return out


def _plain_numbers(rows: list[Any], k: int) -> bool:
    """Whether every value is an int or a float (JSON true and false, which the general
    path takes as 1 and 0, are left to it)."""
    if k == 1:
        return set(map(type, rows)) <= _NUMBER_TYPES
    return all(set(map(type, row)) <= _NUMBER_TYPES for row in rows)


def _direct_kernel(plan: Plan, m: int) -> int | None:
    """The ``decido._mcdm.rank_values`` kernel of the request, or None when it takes the
    general path (explanations, automatic weights, another method or normalization, one
    option or more than :data:`DIRECT_MAX_OPTIONS`)."""
    if plan.explain or not 2 <= m <= DIRECT_MAX_OPTIONS or plan.weighting not in _SET_WEIGHTS:
        return None
    return _DIRECT_KERNELS.get((plan.method, plan.normalization))


def _decide_direct(
    plan: Plan,
    out: dict[str, Any],
    values: array.array,
    kernel: int,
    ids: list[Any],
    criteria: list[str],
) -> dict[str, Any] | None:
    """Score and rank in one C call (``rank_values``) and fill ``out``; None when the
    kernel declines (the general path then answers). No value needs checking here:
    these methods take any finite values."""
    w = _weights(plan)
    benefit = bytes([c.benefit for c in plan.criteria])
    ranked = rank_values(
        values, len(ids), len(criteria), kernel, benefit, w, plan.higher_is_better,
        RANK_TOLERANCE,
    )
    if ranked is None:
        return None
    constant, order, ranks, scores = ranked
    if 1 in constant:
        _warn_constant(plan, constant)
    out["weights"] = dict(zip(criteria, w, strict=True))
    ranking = _entries(ids, order, ranks, scores, plan.top_k)
    out.update(status="ok", best=ranking[0]["id"], ranking=ranking)
    out["infeasible"] = []
    out["warnings"] = plan.warnings
    return out


def _entries(ids: list[Any], order: list[int], ranks: list[int], scores: list[float],
             top_k: int | None) -> list[dict[str, Any]]:
    """The ranking entries of ``rank_values``' answer (best first, cut to ``top_k``)."""
    if top_k is not None:
        order, ranks, scores = order[:top_k], ranks[:top_k], scores[:top_k]
    return [
        {"id": ids[i], "rank": r, "score": s}
        for i, r, s in zip(order, ranks, _floats(scores), strict=True)
    ]


def _decide_expressions(
    plan: Plan, ids: list[Any], attrs: list[Mapping[str, Any]], criteria: list[str]
) -> dict[str, Any]:
    """``decide`` with constraints or method ``expression``: compile the texts,
    evaluate the constraints, then score the feasible options."""
    texts = plan.constraints + ([plan.expression] if plan.expression is not None else [])
    variables = _expression_variables(texts, attrs)
    programs = [
        _compile(
            text,
            variables,
            attrs,
            f"constraints[{j}]" if j < len(plan.constraints) else "expression",
        )
        for j, text in enumerate(texts)
    ]
    _check_criteria(attrs, criteria)
    columns = list(dict.fromkeys(criteria + variables))
    X = _matrix(attrs, columns)
    col = {name: j for j, name in enumerate(columns)}
    Xv = X[:, [col[v] for v in variables]] if variables else np.empty((len(ids), 0))

    # constraints, then everything else on the feasible options only
    holds = np.ones((len(plan.constraints), len(ids)), dtype=bool)
    for j in range(len(plan.constraints)):
        value = programs[j].evaluate_many(Xv)
        holds[j] = (value != 0) & ~np.isnan(value)
    feasible_mask = holds.all(axis=0)
    feasible = np.flatnonzero(feasible_mask)
    infeasible = _infeasible(plan.constraints, holds, feasible_mask, ids)
    # the criteria are the first columns; column-major, since every method
    # reduces over the options, down the columns
    k = len(criteria)
    all_feasible = feasible.size == len(ids)
    Xc = np.asfortranarray(X[:, :k] if all_feasible else X[feasible_mask, :k])
    out = _header(plan, len(ids), feasible.size)
    if feasible.size == 0:
        out["weights"] = _given_weights(plan)
        out.update(status="infeasible", best=None, ranking=[], infeasible=infeasible)
        out["warnings"] = plan.warnings
        return out
    index = None if all_feasible else feasible
    if plan.method != "expression":
        return _decide_mcdm(plan, out, Xc, index, ids, criteria, infeasible)

    used = [j for j, v in enumerate(variables) if v in expression_names(plan.expression)]
    scored = _score_expression(programs[-1], Xv[feasible], used, plan)
    out["weights"] = {}
    names = [v for v in variables if v in set(expression_names(plan.expression))]
    ranking, best = _ranking(plan, scored, index, ids, names)
    out.update(status="ok", best=best, ranking=ranking)
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
) -> dict[str, Any]:
    """Score the feasible options (``Xc``: feasible options x criteria, column-major;
    ``feasible``: their option indices, None when every option is feasible) by a
    multi-criteria method and fill ``out``."""
    _check_values(plan, Xc, feasible, criteria)
    scored, w = _score_mcdm(plan, Xc, feasible)
    out["weights"] = dict(zip(criteria, w.tolist(), strict=True))
    ranking, best = _ranking(plan, scored, feasible, ids, criteria)
    out.update(status="ok", best=best, ranking=ranking)
    if scored.compromise is not None:
        out["compromise"] = [ids[_option(feasible, i)] for i in scored.compromise]
    out["infeasible"] = infeasible
    out["warnings"] = plan.warnings
    return out


def _check_criteria(attrs: list[Mapping[str, Any]], criteria: list[str]) -> None:
    for j, name in enumerate(criteria):
        if not locate_attribute(attrs, name):
            raise DecisionError(
                "unknown_attribute",
                f"no option has attribute {name!r}{_did_you_mean(name, attribute_names(attrs))}",
                f"criteria[{j}].attribute",
            )


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
    (paths are relative to the merged item).  Only a malformed envelope raises.
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
    patterns, inverse = np.unique(~holds[:, bad].T, axis=0, return_inverse=True)
    texts = [[constraints[j] for j in np.flatnonzero(p)] for p in patterns]
    return [
        {"id": ids[i], "violated": list(texts[g])}
        for i, g in zip(bad.tolist(), inverse.reshape(-1).tolist(), strict=True)
    ]


# ---------------------------------------------------------------- expressions
def _expression_variables(texts: list[str], attrs: list[Mapping[str, Any]]) -> list[str]:
    """Attribute names the expressions may use: names in the texts that some
    option has (``pi`` and ``e`` only when an attribute shadows them)."""
    names: list[str] = []
    for text in texts:
        for name in expression_names(text):
            if name not in names and locate_attribute(attrs, name):
                names.append(name)
    return names


def _compile(
    text: str, variables: list[str], attrs: list[Mapping[str, Any]], path: str
) -> Expression:
    try:
        return Expression(text, variables=variables)
    except ExpressionError as exc:
        if exc.code == "unknown_name":  # retry for suggestions among all attributes
            known = [n for n in attribute_names(attrs) if n.isidentifier() and n not in RESERVED]
            try:
                Expression(text, variables=known)
            except ExpressionError as better:
                if better.code == "unknown_name":
                    exc = better
        raise expression_error(exc, path) from exc


def _score_expression(program: Expression, Xv: Array, used: list[int], plan: Plan) -> Scored:
    """Scores of the feasible options; the explanation shows the attributes used."""
    score = program.evaluate_many(Xv)
    if np.isnan(score).any():
        plan.warn(
            "nan_score", "the expression is NaN for some options: they rank last", "expression"
        )
    return Scored(score, {"values": Xv[:, used]})


# ---------------------------------------------------------------- options matrix
def _matrix(attrs: list[Mapping[str, Any]], columns: list[str]) -> Array:
    """Options x columns as float64 (see :func:`_values`)."""
    if not columns:
        return np.empty((len(attrs), 0))
    return np.frombuffer(_values(attrs, columns), dtype=np.float64).reshape(
        len(attrs), len(columns)
    )


def _values(attrs: list[Mapping[str, Any]], columns: list[str]) -> array.array:
    """Options x columns, row-major, as an ``array('d')`` of finite values; JSON
    booleans count as 1 and 0.

    One pass in C over the values (``array('d').fromlist`` accepts exactly the
    real numbers); anything else is found and named by the slow path.
    """
    get = operator.itemgetter(*columns)
    try:
        rows = list(map(get, attrs))
    except KeyError:
        _missing_attribute(attrs, columns)
        raise
    except TypeError:  # an attributes value that is not an object
        _find_bad_option_attrs(attrs)
        raise
    flat = array.array("d")
    try:
        flat.fromlist(list(itertools.chain.from_iterable(rows)) if len(columns) > 1 else rows)
    except (TypeError, OverflowError):
        flat = array.array("d", _checked_matrix(attrs, columns).ravel().tolist())
    # a finite sum means finite values (an overflowing sum only takes the exact check);
    # for a few values Python's sum costs less than NumPy's two calls
    if len(flat) <= SMALL_MATRIX and isfinite(sum(flat)):
        return flat
    X = np.frombuffer(flat, dtype=np.float64).reshape(len(attrs), len(columns))
    if not np.isfinite(X).all():
        i, j = np.argwhere(~np.isfinite(X))[0]
        raise DecisionError(
            "non_finite_value",
            f"value must be finite, got {X[i, j]}",
            attr_path(f"options[{i}].attributes", columns[j]),
        )
    return flat


def _find_bad_option_attrs(attrs: list[Any]) -> None:
    for i, a in enumerate(attrs):
        if not isinstance(a, Mapping):
            raise DecisionError(
                "invalid_request",
                f"attributes is an object, not {_kind(a)}",
                f"options[{i}].attributes",
            )


def _missing_attribute(attrs: list[Mapping[str, Any]], columns: list[str]) -> None:
    for i, a in enumerate(attrs):
        for name in columns:
            if name not in a:
                raise DecisionError(
                    "missing_attribute",
                    f"option has no attribute {name!r} (every option needs the attributes "
                    "that criteria, constraints and expressions use)",
                    attr_path(f"options[{i}].attributes", name),
                )


def _checked_matrix(attrs: list[Mapping[str, Any]], columns: list[str]) -> Array:
    X = np.empty((len(attrs), len(columns)))
    for i, a in enumerate(attrs):
        for j, name in enumerate(columns):
            v = a[name]
            if not isinstance(v, numbers.Real):
                raise DecisionError(
                    "invalid_request",
                    f"attribute values are numbers, got {_kind(v)}",
                    attr_path(f"options[{i}].attributes", name),
                )
            try:
                X[i, j] = float(v)
            except OverflowError:
                raise DecisionError(
                    "non_finite_value",
                    "value is too large for a double",
                    attr_path(f"options[{i}].attributes", name),
                ) from None
    return X


# ---------------------------------------------------------------- multi-criteria
def _check_values(
    plan: Plan, Xc: Array, feasible: NDArray[np.intp] | None, criteria: list[str]
) -> None:
    """Positivity, bounds and size rules that depend on the feasible values."""
    method, norm = plan.method, plan.normalization
    need = None
    if method in POSITIVE_METHODS:
        need = f"method {method!r} needs values > 0"
    elif norm in POSITIVE_NORMALIZATIONS:
        need = f"normalization {norm!r} needs values > 0"
    elif method in ("wpm", "waspas") and norm != "minmax":
        need = f"method {method!r} with normalization {norm!r} needs values > 0"
    bad = None
    if need is not None:
        bad = Xc <= 0
    elif plan.weighting == "entropy":
        benefit = np.array([c.benefit for c in plan.criteria])
        bad = np.where(benefit, Xc < 0, Xc <= 0)
        need = "weighting 'entropy' needs values >= 0 (> 0 for minimized criteria)"
    if bad is not None and bad.any():
        i, j = np.argwhere(bad)[0]
        raise DecisionError(
            "non_positive_value",
            f"{need}; got {Xc[i, j]}",
            attr_path(f"options[{_option(feasible, i)}].attributes", criteria[j]),
        )
    m = Xc.shape[0]
    if method == "promethee2" and m > LIMITS["max_promethee_options"]:
        raise DecisionError(
            "too_many",
            f"promethee2 compares every pair: {m} feasible options "
            f"(limit {LIMITS['max_promethee_options']})",
            "options",
        )
    if method == "spotis":
        _spotis_bounds(plan, Xc, feasible, criteria)


def _spotis_bounds(
    plan: Plan, Xc: Array, feasible: NDArray[np.intp] | None, criteria: list[str]
) -> None:
    given = plan.params["bounds"]
    bounds = np.column_stack([Xc.min(axis=0), Xc.max(axis=0)])
    for j, name in enumerate(criteria):
        if name in given:
            lo, hi = given[name]
            outside = np.flatnonzero((Xc[:, j] < lo) | (Xc[:, j] > hi))
            if outside.size:
                i = outside[0]
                raise DecisionError(
                    "out_of_bounds",
                    f"value {Xc[i, j]} is outside the SPOTIS bounds [{lo}, {hi}]",
                    attr_path(f"options[{_option(feasible, i)}].attributes", name),
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
    plan.params["bounds"] = bounds


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
        "message": f"{name!r} has one value over the feasible options: every option is "
        "ideal on it",
        "path": f"criteria[{j}]",
    }


def _score_mcdm(plan: Plan, Xc: Array, feasible: NDArray[np.intp] | None) -> tuple[Scored, Array]:
    m, k = Xc.shape
    benefit = np.array([c.benefit for c in plan.criteria])
    constant: Mask | None
    if m == 1:
        constant = np.ones(k, dtype=bool)
        plan.warn("single_option", "one feasible option: it ranks first")
    else:
        if m * k <= SMALL_MATRIX:  # a few values: Python's min and max per column
            flags = [min(col) == max(col) for col in Xc.T.tolist()]
        else:
            flags = (Xc.max(axis=0) == Xc.min(axis=0)).tolist()
        if True in flags:
            constant = np.array(flags)
            _warn_constant(plan, flags)
        else:
            constant = None
    if plan.weighting in _SET_WEIGHTS:
        w = np.array(_weights(plan), dtype=np.float64)
    else:
        auto = auto_weights(Xc, benefit, plan.weighting)
        if auto is None:
            w = np.full(k, 1.0 / k)
            plan.warn(
                "degenerate_weights",
                f"weighting {plan.weighting!r} needs two options that differ: equal weights used",
                "weighting",
            )
        else:
            w = auto
    return METHODS[plan.method](Xc, benefit, w, constant, plan.params), w


# ---------------------------------------------------------------- ranking and output
def _json_floats(values: list[Any]) -> list[Any]:
    """Non-finite floats become None (JSON has no NaN or infinity)."""
    return [v if v == v and v not in (float("inf"), float("-inf")) else None for v in values]


def _floats(values: list[float]) -> list[Any]:
    # a finite sum means finite values (an overflowing sum only takes the slow path)
    return values if isfinite(sum(values)) else _json_floats(values)


def _ranking(
    plan: Plan,
    scored: Scored,
    feasible: NDArray[np.intp] | None,
    ids: list[Any],
    names: list[str],
) -> tuple[list[dict[str, Any]], Any]:
    """Ranking entries (best first, cut to ``top_k``) and the best option's id;
    ``names`` label the per-criterion explanations."""
    order, ranks = competition_ranks(scored.score, plan.higher_is_better, RANK_TOLERANCE)
    if plan.top_k is not None:
        order, ranks = order[: plan.top_k], ranks[: plan.top_k]
    if feasible is None:
        entry_ids = [ids[i] for i in order.tolist()]
    else:
        entry_ids = [ids[i] for i in feasible[order].tolist()]
    scores = _floats(scored.score[order].tolist())
    ranking = [
        {"id": oid, "rank": r, "score": s}
        for oid, r, s in zip(entry_ids, ranks.tolist(), scores, strict=True)
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
    return ranking, entry_ids[0]


def _header(plan: Plan, n_options: int, n_feasible: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if plan.request_id is not None:
        out["id"] = plan.request_id
    out.update(
        status="ok",
        method=plan.method,
        normalization=plan.normalization,
        weighting=plan.weighting,
        weights={},
        higher_is_better=plan.higher_is_better,
        best=None,
        n_options=n_options,
        n_feasible=n_feasible,
    )
    return out
