"""The answer of a decision: its header, the ranking with ties, and the infeasible
options, as JSON-ready values (no NaN or infinity)."""

from __future__ import annotations

from math import isfinite
from typing import Any

import numpy as np
from numpy.typing import NDArray

from decido.decisions._kernels import competition_ranks
from decido.decisions.decision import Decision
from decido.decisions.methods import RANK_TOLERANCE, Scored
from decido.decisions.options import SMALL_MATRIX


def infeasible_list(
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


def _json_floats(values: list[Any]) -> list[Any]:
    """Non-finite floats become None (JSON has no NaN or infinity)."""
    return [v if v == v and v not in (float("inf"), float("-inf")) else None for v in values]


def _floats(values: list[float]) -> list[Any]:
    """``values`` with non-finite floats as None."""
    # a finite sum means finite values (an overflowing sum only takes the slow path)
    return values if isfinite(sum(values)) else _json_floats(values)


def fill_ranking(plan: Decision, out: dict[str, Any], scored: Scored, names: list[str]
                 ) -> None:
    """Fill ``best``, ``best_is_tied``, ``ties`` and ``ranking`` (best first, cut to
    ``top_k``); ``names`` label the per-criterion explanations.  Ties are the groups of
    options that share a rank (scores within ``RANK_TOLERANCE`` of the largest score
    magnitude), each in rank then input order; ``best`` is the first of its group."""
    order, ranks = competition_ranks(scored.score, plan.higher_is_better, RANK_TOLERANCE)
    feasible, ids = plan.feasible, plan.ids
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


def header(plan: Decision, n_options: int, n_feasible: int) -> dict[str, Any]:
    """The members every answer starts with (the request's ``id`` first when it has one;
    ``consistency`` and ``group`` of AHP and group weights)."""
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
    if plan.extra is not None:
        out.update(plan.extra)
    return out if plan.request_id is None else {"id": plan.request_id, **out}
