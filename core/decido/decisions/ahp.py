"""Weights from pairwise judgments (AHP) and from several decision makers.

``pairwise_matrix`` reads one n x n matrix of judgments (every fault with its path),
``ahp`` turns a matrix into weights and Saaty's consistency, and ``group_weights``
combines several decision makers' judgments (AIJ: the weighted geometric mean of the
judgments; AIP: of the members' priority vectors) or direct weights (their weighted
arithmetic mean), with a consensus measure.  See docs/decisions.md, "Weights from
pairwise judgments" and "Several decision makers".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from decido.decisions.faults import Faults, Where, kind_of, known_members, positive
from decido.decisions.types import DECISION_MAKER_MEMBERS
from decido.decisions.vocabulary import ACCEPTABLE_RATIO, RANDOM_INDEX, RECIPROCAL_TOLERANCE

Array = NDArray[np.float64]


def random_index(n: int) -> float:
    """Saaty's random index RI(n) for n = 3..10; beyond, Alonso and Lamata's (2006) fit
    of the mean largest eigenvalue of random matrices, lambda = 2.7699 n - 4.3513,
    RI = (lambda - n) / (n - 1)."""
    if n in RANDOM_INDEX:
        return RANDOM_INDEX[n]
    return (1.7699 * n - 4.3513) / (n - 1)


def pairwise_matrix(value: Any, n: int, where: Where, faults: Faults) -> Array | None:
    """The n x n judgments of ``value`` with the omitted lower triangle filled in by
    reciprocals, or None after a fault (every fault goes to ``faults``)."""
    if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != n:
        size = f"{len(value)} rows" if isinstance(value, list) else kind_of(value)
        faults.add(where, "invalid_pairwise",
                   f"pairwise is a {n} x {n} matrix, one row per criterion in their order, "
                   f"not {size}")
        return None
    A = np.ones((n, n))
    given = np.zeros((n, n), dtype=bool)
    ok = True
    for i, row in enumerate(value):
        if isinstance(row, str) or not isinstance(row, Sequence) or len(row) != n:
            faults.add((*where, i), "invalid_pairwise",
                       f"a row of the pairwise matrix holds {n} judgments")
            ok = False
            continue
        for j, x in enumerate(row):
            ok = _judgment(x, i, j, (*where, i, j), A, given, faults) and ok
    for i in range(n):
        for j in range(i + 1, n):
            if not given[i, j]:  # faulty (null above the diagonal is a fault)
                continue
            if not given[j, i]:
                A[j, i] = 1.0 / A[i, j]
            elif abs(A[i, j] * A[j, i] - 1.0) > RECIPROCAL_TOLERANCE:
                faults.add((*where, j, i), "invalid_pairwise",
                           f"a[{j}][{i}] must be 1 / a[{i}][{j}] = {1.0 / A[i, j]:.6g} "
                           f"(or null), got {A[j, i]}")
                ok = False
    return A if ok else None


def _judgment(x: Any, i: int, j: int, here: Where, A: Array, given: NDArray[np.bool_],
              faults: Faults) -> bool:
    """Read entry (i, j) into ``A``; whether it is valid."""
    if x is None:
        if i > j:  # the reciprocal of the entry above
            return True
        faults.add(here, "invalid_pairwise", "only entries below the diagonal may be null "
                   "(each is then the reciprocal of the entry above it)")
        return False
    v = positive(x, here, faults, "a judgment")
    if v is None:
        return False
    if i == j and abs(v - 1.0) > RECIPROCAL_TOLERANCE:
        faults.add(here, "invalid_pairwise", f"the diagonal is 1, got {v}")
        return False
    A[i, j] = 1.0 if i == j else v
    given[i, j] = True
    return True


@dataclass
class Judged:
    """Weights from one matrix and its consistency (a JSON-ready dict)."""

    weights: Array
    consistency: dict[str, Any]


def ahp(A: Array, method: str, names: list[str]) -> Judged:
    """Weights of the matrix ``A`` (``eigenvector``: the principal eigenvector;
    ``geometric_mean``: the row geometric means; both over their sum) and its
    consistency: lambda_max (the principal eigenvalue, whatever the method), CI =
    (lambda_max - n)/(n - 1), CR = CI / RI(n), acceptable CR <= 0.1, and the pair
    (i, j) maximizing |ln(a_ij w_j / w_i)| (None when every judgment agrees with the
    weights within 1e-9)."""
    n = A.shape[0]
    values, vectors = np.linalg.eig(A)
    top = int(np.argmax(values.real))
    lam = float(values.real[top])
    if method == "eigenvector":
        v = np.abs(vectors[:, top].real)
    else:
        v = np.exp(np.log(A).mean(axis=1))
    w: Array = v / v.sum()
    index = max(lam - n, 0.0) / (n - 1)  # lambda_max >= n; rounding may dip below
    ratio = 0.0 if n <= 2 else index / random_index(n)
    error = np.abs(np.log(A * w[None, :] / w[:, None]))
    np.fill_diagonal(error, 0.0)
    i, j = divmod(int(np.argmax(np.triu(error))), n)
    pair = None if error[i, j] <= 1e-9 else [names[i], names[j]]
    return Judged(w, {"lambda_max": lam, "index": index, "ratio": ratio,
                      "acceptable": ratio <= ACCEPTABLE_RATIO, "most_inconsistent": pair})


@dataclass
class Member:
    """One decision maker: ``id``, ``weight`` (not yet normalized) and either a
    pairwise matrix or direct weights (k, summing to 1)."""

    id: Any
    weight: float
    pairwise: Array | None
    weights: Array | None


def parse_members(value: Any, names: list[str], faults: Faults) -> list[Member] | None:
    """The decision makers, all with pairwise matrices or all with direct weights
    ({attribute: weight > 0} for every criterion); None after a fault."""
    where: Where = ("decision_makers",)
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        faults.add(where, "invalid_request", "decision_makers is a non-empty list")
        return None
    members: list[Member] = []
    ids: set[Any] = set()
    for d, item in enumerate(value):
        member = _member(item, (*where, d), names, ids, faults)
        if member is not None:
            members.append(member)
    if len(members) != len(value):
        return None
    if len({m.pairwise is None for m in members}) > 1:
        faults.add(where, "invalid_request", "decision makers give all pairwise judgments or "
                   "all weights, not some of each")
        return None
    return members


def _member(item: Any, here: Where, names: list[str], ids: set[Any],
            faults: Faults) -> Member | None:
    ok = known_members(item, here, DECISION_MAKER_MEMBERS, "a decision maker", faults)
    if not isinstance(item, Mapping):
        return None
    mid = item.get("id")
    if isinstance(mid, bool) or not isinstance(mid, (str, int)):
        faults.add((*here, "id"), "invalid_request", "id must be a string or an integer")
        ok = False
    elif mid in ids:
        faults.add((*here, "id"), "invalid_request", f"decision maker {mid!r} is given twice")
        ok = False
    else:
        ids.add(mid)
    weight = positive(item.get("weight", 1.0), (*here, "weight"), faults, "a weight")
    pairwise, direct = item.get("pairwise"), item.get("weights")
    if (pairwise is None) == (direct is None):
        faults.add(here, "invalid_request", "a decision maker gives pairwise or weights")
        return None
    if pairwise is not None:
        A = pairwise_matrix(pairwise, len(names), (*here, "pairwise"), faults)
        ok = ok and A is not None
        return Member(mid, weight, A, None) if ok and weight is not None else None
    w = _direct(direct, names, (*here, "weights"), faults)
    ok = ok and w is not None
    return Member(mid, weight, None, w) if ok and weight is not None else None


def _direct(value: Any, names: list[str], where: Where, faults: Faults) -> Array | None:
    """{attribute: weight > 0} naming every criterion, over its sum."""
    if not isinstance(value, Mapping):
        faults.add(where, "invalid_request",
                   f"weights is an object {{attribute: weight}}, not {kind_of(value)}")
        return None
    ok = True
    for key in value:
        if key not in names:
            faults.add((*where, str(key)), "invalid_request", f"{key!r} is not a criterion")
            ok = False
    out = []
    for name in names:
        if name not in value:
            faults.add((*where, name), "missing_weight", f"no weight for criterion {name!r}")
            ok = False
            continue
        x = positive(value[name], (*where, name), faults, "a weight")
        ok = ok and x is not None
        out.append(x or 1.0)
    if not ok:
        return None
    w = np.array(out)
    return w / math.fsum(out)


@dataclass
class Group:
    """The group's weights, the ``group`` member of the answer and the consistency of
    the aggregated matrix (AIJ) or None."""

    weights: Array
    answer: dict[str, Any]
    consistency: dict[str, Any] | None


def group_weights(members: list[Member], aggregation: str, method: str,
                  names: list[str]) -> Group:
    """Combine the members (see the module's docstring); consensus = 1 - the members'
    weighted mean total variation distance (half the L1 distance) from the group's
    weights: 1 when every member has the group's weights, 0 at most disagreement."""
    share = np.array([m.weight for m in members])
    share = share / share.sum()
    judged = [ahp(m.pairwise, method, names) if m.pairwise is not None else None
              for m in members]
    own = [j.weights if j is not None else m.weights for m, j in zip(members, judged,
                                                                    strict=True)]
    W = np.array(own)  # members x criteria
    consistency = None
    if members[0].pairwise is None:  # direct weights: their weighted arithmetic mean
        w = share @ W
    elif aggregation == "aij":  # the weighted geometric mean of the judgments
        logs = np.array([np.log(m.pairwise) for m in members if m.pairwise is not None])
        found = ahp(np.exp(np.tensordot(share, logs, axes=1)), method, names)
        w, consistency = found.weights, found.consistency
    else:  # aip: the weighted geometric mean of the priority vectors
        g = np.exp(share @ np.log(W))
        w = g / g.sum()
    w = w / w.sum()
    distance = 0.5 * np.abs(W - w[None, :]).sum(axis=1)
    answer = {
        "aggregation": aggregation if members[0].pairwise is not None else "mean",
        "members": [
            {"id": m.id, "weight": float(s), "weights": dict(zip(names, row.tolist(),
                                                                   strict=True)),
             "consistency": j.consistency if j is not None else None}
            for m, s, row, j in zip(members, share, W, judged, strict=True)
        ],
        "consistency": consistency,
        "consensus": float(1.0 - share @ distance),
    }
    return Group(w, answer, consistency)
