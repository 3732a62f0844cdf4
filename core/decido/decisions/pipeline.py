"""The path of one decision request, from the request to the answer.

``decide(request)`` takes the JSON body of ``POST /v1/decide`` as a mapping and
returns the JSON-ready response; ``decide_batch`` does the same for ``POST
/v1/batch``.  Every request takes one path: the request is validated first
(``decido.decisions.request``: every fault found is reported together, as one
``DecisionError``), constraints and the ``expression`` method are compiled with the
language of ``decido.Expression`` (the attributes they use are found by the compiler: each
unknown name that an option has becomes a variable, and the text is compiled again) and
evaluated over all options in one VM call each, the multi-criteria methods score the
feasible options (``decido.decisions.methods``), and competition ranks are computed in C
(``dc_rank_competition`` in ``csrc/decide/rank.c``).  See ``docs/decisions.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from decido.decisions.answer import fill_ranking, header, infeasible_list
from decido.decisions.decision import Decision
from decido.decisions.expressions import compile_all, score_expression
from decido.decisions.faults import DecisionError, Faults, did_you_mean, kind_of
from decido.decisions.methods import (
    RANK_TOLERANCE,
    Scored,
    auto_weights,
    column_top,
    out_of_unit_range,
    unit_columns,
)
from decido.decisions.options import (
    SMALL_MATRIX,
    attribute_names,
    locate_attribute,
    parse_options,
    value_matrix,
)
from decido.decisions.request import parse_request
from decido.decisions.sensitivity import sensitivity
from decido.decisions.vocabulary import (
    LIMITS,
    METHODS,
    NON_NEGATIVE_WEIGHTINGS,
    POSITIVE_NORMALIZATIONS,
)

__all__ = ["decide", "decide_batch"]

#: weightings that do not depend on the options
_SET_WEIGHTS = ("given", "equal", "ahp")

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
    d = parse_request(request, faults)
    parsed = parse_options(request.get("options"), faults)
    if parsed is None:
        faults.check()
        raise AssertionError("unreachable: faulty options are a fault")  # pragma: no cover
    d.ids, attrs = parsed
    d.names = criteria = [c.attribute for c in d.criteria]
    located = _check_criteria(attrs, criteria, faults)
    texts: list[tuple[tuple[Any, ...], str]] = [
        (("constraints", j), text) for j, text in enumerate(d.constraints)
    ]
    if d.expression is not None:
        texts.append((("expression",), d.expression))
    programs, variables, uses = (
        compile_all(texts, attrs, faults) if texts else ([], [], [])
    )
    columns = list(dict.fromkeys(located + variables))
    m = len(d.ids)
    if d.uncertainty is not None:
        from decido.decisions.smaa import decide_uncertain  # noqa: PLC0415 - not on every call

        return decide_uncertain(d, header(d, m, m), attrs, columns, programs or [], variables,
                                faults)
    X = value_matrix(attrs, columns, faults)
    faults.check()
    assert X is not None and programs is not None
    k = len(criteria)
    if not texts:  # every option is feasible; the criteria are the matrix
        return _decide_mcdm(d, header(d, m, m), X, faults)
    col = {name: j for j, name in enumerate(columns)}
    Xv = X[:, [col[v] for v in variables]] if variables else np.empty((m, 0))

    # constraints, then everything else on the feasible options only
    n_constraints = len(d.constraints)
    holds = np.ones((n_constraints, m), dtype=bool)
    for j in range(n_constraints):
        value = programs[j].evaluate_many(Xv)
        holds[j] = (value != 0) & ~np.isnan(value)
    feasible_mask: NDArray[np.bool_] = np.logical_and.reduce(holds, axis=0)
    feasible = np.flatnonzero(feasible_mask)
    d.infeasible = infeasible_list(d.constraints, holds, feasible_mask, d.ids)
    # the criteria are the first columns; column-major, since every method
    # reduces over the options, down the columns (X is)
    all_feasible = feasible.size == m
    Xc = X[:, :k] if all_feasible else np.asfortranarray(X[feasible_mask, :k])
    out = header(d, m, feasible.size)
    if feasible.size == 0:
        out["weights"] = _given_weights(d)
        out.update(
            status="infeasible", best=None, best_is_tied=False, ties=[], ranking=[],
            infeasible=d.infeasible,
        )
        out["warnings"] = d.warnings
        return out
    d.feasible = None if all_feasible else feasible
    if not METHODS[d.method].by_expression:
        return _decide_mcdm(d, out, Xc, faults)

    used = [variables.index(v) for v in uses[-1]]
    scored = score_expression(programs[-1], Xv[feasible], used, d)
    out["weights"] = {}
    fill_ranking(d, out, scored, uses[-1])
    out["infeasible"] = d.infeasible
    out["warnings"] = d.warnings
    return out


def _decide_mcdm(d: Decision, out: dict[str, Any], Xc: Array, faults: Faults
                 ) -> dict[str, Any]:
    """Score the feasible options (``Xc``: feasible options x criteria, column-major) by
    a multi-criteria method and fill ``out``; ``faults`` are the request's (none yet)."""
    _check_values(d, Xc, faults)
    faults.check()
    scored, w, X, params = _score_mcdm(d, Xc)
    criteria, ids = d.names, d.ids
    out["weights"] = dict(zip(criteria, w.tolist(), strict=True))
    fill_ranking(d, out, scored, criteria)
    if scored.compromise is not None:
        out["compromise"] = [ids[d.option(i)] for i in scored.compromise]
    out["infeasible"] = d.infeasible
    out["warnings"] = d.warnings
    if d.sensitivity:
        out["sensitivity"] = _sensitivity(d, scored, w, X, params)
    return out


def _sensitivity(d: Decision, scored: Scored, w: Array, X: Array, params: dict[str, Any]
                 ) -> dict[str, Any]:
    """The answer's ``sensitivity``: the weight intervals that keep the top choice."""
    row = METHODS[d.method]
    method = row.score
    assert method is not None
    benefit = np.array([c.benefit for c in d.criteria])

    def score(weights: Array) -> Array:
        return method(X, benefit, weights, params).score

    found = sensitivity(row.linear_in_weights, score, scored.score, w, d.higher_is_better,
                        RANK_TOLERANCE)
    ids = d.ids
    return {
        "margin": found.margin,
        "criteria": [
            {
                "attribute": name,
                "weight": float(w[j]),
                "lower": lo,
                "upper": hi,
                "lower_changes_to": None if below is None else ids[d.option(below)],
                "upper_changes_to": None if above is None else ids[d.option(above)],
            }
            for j, (name, (lo, hi, below, above)) in enumerate(
                zip(d.names, found.intervals, strict=True)
            )
        ],
    }


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
                f"no option has attribute {name!r}{did_you_mean(name, names)}",
            )
    return located


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
        raise DecisionError("invalid_request", f"a batch is an object, not {kind_of(request)}", "")
    for key in request:
        if key not in ("defaults", "decisions"):
            raise DecisionError("invalid_request", f"unknown field {key!r}", str(key))
    defaults = request.get("defaults") or {}
    if not isinstance(defaults, Mapping):
        raise DecisionError(
            "invalid_request", f"defaults is an object, not {kind_of(defaults)}", "defaults"
        )
    items = request.get("decisions")
    if isinstance(items, (str, bytes)) or not isinstance(items, (list, tuple)):
        raise DecisionError("invalid_request", "decisions must be a list", "decisions")
    if len(items) > LIMITS["max_batch"]:
        raise DecisionError(
            "too_many", f"{len(items)} decisions (limit {LIMITS['max_batch']})", "decisions"
        )
    not_objects = [{"pointer": f"/decisions/{i}", "code": "invalid_request",
                    "message": f"a decision is an object, not {kind_of(item)}"}
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
                "invalid_request", f"a decision is an object, not {kind_of(item)}", ""
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


# ---------------------------------------------------------------- multi-criteria
def _check_values(d: Decision, Xc: Array, faults: Faults) -> None:
    """Positivity, bounds and size rules that depend on the feasible values; every
    value refused is a fault."""
    method, norm = d.method, d.normalization
    row = METHODS[method]
    need = None
    if row.positive and row.normalization is None:
        need = f"method {method!r} needs values > 0"
    elif norm in POSITIVE_NORMALIZATIONS:
        need = f"normalization {norm!r} needs values > 0"
    elif row.positive and norm != "minmax":
        need = f"method {method!r} with normalization {norm!r} needs values > 0"
    if need is not None:
        _refuse(d, Xc <= 0, need, Xc, faults)
    if d.weighting in NON_NEGATIVE_WEIGHTINGS:
        _refuse(d, Xc < 0, f"weighting {d.weighting!r} needs values >= 0", Xc, faults)
    m = Xc.shape[0]
    if row.max_options is not None and m > LIMITS[row.max_options]:
        faults.add(
            ("options",),
            "too_many",
            f"{method} {row.max_options_reason}: {m} feasible options "
            f"(limit {LIMITS[row.max_options]})",
        )
    if row.check_values is not None:
        row.check_values(d, Xc, faults)


def _refuse(d: Decision, bad: NDArray[np.bool_], need: str, Xc: Array, faults: Faults
            ) -> None:
    """A ``non_positive_value`` fault for each value flagged in ``bad``."""
    if not bad.any():
        return
    criteria = d.names
    for i, j in np.argwhere(bad).tolist():
        if faults.full():
            return
        faults.add(
            ("options", d.option(i), "attributes", criteria[j]),
            "non_positive_value",
            f"{need}; attribute {criteria[j]!r} is {Xc[i, j]}",
        )


def _given_weights(d: Decision) -> dict[str, float]:
    """Weights that do not depend on the options (given, equal, AHP), else {}."""
    if d.weighting in _SET_WEIGHTS:
        return dict(zip(d.names, d.weights_now(), strict=True))
    return {}


def _warn_constant(plan: Decision, flags: Any) -> None:
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


def _score_mcdm(plan: Decision, Xc: Array) -> tuple[Scored, Array, Array, dict[str, Any]]:
    """The method's scores and the weights; also the matrix and parameters it scored
    (each criterion scaled by a power of two where its magnitudes need it:
    :func:`~decido.decisions.methods.unit_columns`)."""
    m, k = Xc.shape
    benefit = np.array([c.benefit for c in plan.criteria])
    row = METHODS[plan.method]
    if row.params_in_units or m * k > SMALL_MATRIX:
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
        w = np.array(plan.weights_now())  # Python floats: float64
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
    method = row.score
    assert method is not None  # a multi-criteria method
    return method(X, benefit, w, params), w, X, params
