"""Normalizations, automatic weights and the multi-criteria scoring methods.

One implementation per method over a feasible-options x criteria matrix ``X``
(m x k, float64, finite, column-major), with ``benefit`` (k bools: True = maximize)
and weights ``w`` (k, summing to 1).  The normalizations, TOPSIS, WSM, MOORA, VIKOR
and SPOTIS are C kernels (``decido.decisions._kernels``, csrc/decide/kernels.c): on the service's
small requests they cost a third to a half of the NumPy code they replaced
(docs/decisions.md, "Limits and cost"); the other methods and the weights are
vectorized NumPy.  Nothing here loops over options in Python; requests, validation
and output live in ``decido.decide``.  Every method returns a ``Scored``: one score
per option (NaN where the method cannot give one) and the named intermediate arrays
that the explanations show.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from decido.decisions import _kernels
from decido.decisions._kernels import NORMALIZATIONS as NORMALIZATIONS  # the names, in C's order

Array = NDArray[np.float64]
Mask = NDArray[np.bool_]

#: scores within this fraction of the largest score magnitude share a rank; VIKOR's S
#: and R within it of theirs do not spread (their term is 0, docs/decisions.md rule 5)
RANK_TOLERANCE = 1e-9

#: ``critic``: criteria whose correlation is within this of 1 do not conflict (rounding
#: keeps the correlation of two criteria that move together from being exactly 1, and
#: their weights would be ratios of rounding errors)
COLLINEAR = 1e-9

#: memory bound for PROMETHEE II blocks: elements of one (block x m x k) array
PROMETHEE_BLOCK_ELEMENTS = 1 << 21


@dataclass
class Scored:
    """A method's result over the feasible options.

    ``per_criterion`` arrays are (m, k), ``per_option`` arrays are (m,); both keep
    the order in which the explanation shows them.  ``compromise`` lists option
    indices (VIKOR only).
    """

    score: Array
    per_criterion: dict[str, Array] = field(default_factory=dict)
    per_option: dict[str, Array] = field(default_factory=dict)
    compromise: list[int] | None = None


def _constant(X: Array) -> Mask:
    """The constant columns of ``X``: where a formula's rounding (a mean, 1/m) must not
    stand in for the exact value a constant criterion has."""
    constant: Mask = X.max(axis=-2) == X.min(axis=-2)
    return constant


#: columns whose largest magnitude is outside [1/UNIT_RANGE, UNIT_RANGE] are scaled
#: first (:func:`unit_columns`): squares, sums, spans and norms of such values can
#: overflow or lose their precision in subnormals
UNIT_RANGE = 2.0**500
_UNIT_LOW = 1.0 / UNIT_RANGE
#: the method parameters in the units of the attributes (thresholds, bounds), scaled with
#: their criterion's column
_PARAMS_IN_UNITS = ("q", "p", "bounds")


def out_of_unit_range(tops: Iterable[float]) -> bool:
    """Whether some criterion's largest magnitude is beyond :data:`UNIT_RANGE`, or not 0
    and below its reciprocal: then :func:`unit_columns` scales."""
    for t in tops:  # a loop, not any() over a generator: this runs on every decision
        if t > UNIT_RANGE or 0.0 < t < _UNIT_LOW:
            return True
    return False


def unit_columns(X: Array, top: Array, params: Mapping[str, Any], *, flush: bool = False
                 ) -> tuple[Array, dict[str, Any]] | None:
    """``X`` and ``params`` with each criterion divided by the power of two that puts its
    largest magnitude (``top``: of its values, and of its thresholds and bounds) in
    [0.5, 1), or ``None`` when no column needs it (every ``top`` within
    :data:`UNIT_RANGE`). Dividing by a power of two is exact, and every method and
    weighting gives the same answer for a criterion measured in other units, so the
    scores are those of ``X``, without the overflow of its squares or spans."""
    if not out_of_unit_range(top.tolist()):
        return None
    down = -np.frexp(top)[1]  # top = f 2**-down, f in [0.5, 1) (2**-down may overflow)
    if not flush:  # (``flush``: zeros are fine, as for the automatic weights)
        down = _keep_positive(X, top, down)
    scaled = dict(params)
    for key in _PARAMS_IN_UNITS:
        if isinstance(params.get(key), np.ndarray):
            value = params[key]
            scaled[key] = np.ascontiguousarray(
                np.ldexp(value, down[:, None] if value.ndim == 2 else down))
    out: Array = np.ldexp(X, down)
    return out, scaled


def _keep_positive(X: Array, top: Array, down: NDArray[np.intc]) -> NDArray[np.intc]:
    """``down`` with 0 for each criterion that also holds values more than 2**1074 below
    its largest: dividing would turn those into 0, which a method needing values > 0
    cannot take (such a criterion is scored as it is)."""
    magnitudes = np.abs(X)
    low = np.where(magnitudes > 0, magnitudes, np.inf).min(axis=0) if X.shape[0] else top
    kept: NDArray[np.intc] = np.where(
        np.frexp(np.where(np.isfinite(low), low, 1.0))[1] + down < -1073, 0, down)
    return kept


def column_top(top: Array, params: Mapping[str, Any]) -> Array:
    """The largest magnitude of each criterion: ``top``, its values', and its method
    parameters' in its units (:func:`unit_columns`)."""
    for key in _PARAMS_IN_UNITS:
        value = params.get(key)
        if isinstance(value, np.ndarray):
            top = np.maximum(top, np.abs(value).max(axis=1) if value.ndim == 2
                             else np.abs(value))
    return top


def _safe(div: Array) -> Array:
    """A divisor with zeros replaced by 1 (the caller fixes those columns)."""
    out: Array = div + (div == 0)  # adds 1.0 to zeros, 0.0 (exactly nothing) elsewhere
    return out


def _flags(benefit: Mask) -> bytes:
    """The k bytes (1 = maximize) the kernels read: a bool array's own bytes."""
    return benefit.tobytes()


def _row(w: Array) -> Array:
    """Weights ``w`` (k, or samples x k) shaped to multiply a matrix (m x k, or samples x
    m x k) column by column."""
    return w[..., None, :]


def _weigh(P: Array, w: Array) -> Array:
    """The weighted row sums P @ w of a matrix (or of one matrix per sample)."""
    if w.ndim == 1:
        out: Array = P @ w
        return out
    batch: Array = np.einsum("s...k,sk->s...", P, w)
    return batch


# ---------------------------------------------------------------- normalizations
def normalize(X: Array, benefit: Mask, name: str) -> Array:
    """Column-wise normalization (``decido.decisions._kernels.normalize``); cost criteria use the
    usual cost variant so that larger is better in every column.  A zero divisor
    (the min-max span, the vector norm) makes the column 1 for every option.

    ========  ====================  ======================
    name      benefit               cost
    ========  ====================  ======================
    minmax    (x - min)/(max - min) (max - x)/(max - min)
    vector    x/||x||               1 - x/||x||
    sum       x/sum(x)              (1/x)/sum(1/x)
    max       x/max                 1 - x/max
    linear    x/max                 min/x
    ========  ====================  ======================
    """
    if X.ndim == 2:
        return _kernels.normalize(X, _flags(benefit), name)
    # samples x m x k, each sample's matrix column-major: one m x (samples k) matrix
    n, m, k = X.shape
    flat = np.asfortranarray(X.transpose(0, 2, 1).reshape(n * k, m).T)
    R = _kernels.normalize(flat, _flags(benefit) * n, name)
    out: Array = R.T.reshape(n, k, m).transpose(0, 2, 1)
    return out


def minmax_for_weights(X: Array, benefit: Mask) -> Array:
    """Goal-aware min-max scaling for CRITIC weights (constant columns 0)."""
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = hi - lo
    R: Array = np.where(benefit, X - lo, hi - X) / _safe(span)
    R[:, span == 0] = 0.0
    return R


# ---------------------------------------------------------------- weights
def auto_weights(X: Array, benefit: Mask, how: str) -> Array | None:
    """Objective weights from the feasible options, or None when degenerate
    (one option, or no criterion discriminates).

    * ``entropy`` (scikit-criteria's convention): p = x/sum(x) over the raw
      values, goals ignored (values >= 0, checked by the caller), 0 ln 0 = 0,
      E = -sum(p ln p)/ln m, w ~ 1 - E; a constant column (zeros included) has
      E = 1 exactly.
    * ``critic``: goal-aware min-max scaling, w ~ sigma_j * sum_k (1 - r_jk);
      correlation with a constant criterion counts as 0, and a conflict 1 - r_jk
      of at most :data:`COLLINEAR` (criteria that move together, up to rounding)
      as 0.
    * ``std``: w ~ the sample standard deviation (ddof = 1) of the raw values
      (pymcdm and scikit-criteria agree).

    Constant columns get weight exactly 0, and rounding noise never becomes a
    weight: when nothing else discriminates, the answer is None.
    """
    m, k = X.shape
    if m < 2:
        return None
    if how == "equal":
        return np.full(k, 1.0 / k)
    top = np.abs(X).max(axis=0)
    unit = unit_columns(X, top, {}, flush=True)
    if unit is not None:  # the formulas on scaled columns; std scales back (below)
        X = unit[0]
    if how == "entropy":
        total = X.sum(axis=0)
        P = X / _safe(total)
        with np.errstate(divide="ignore", invalid="ignore"):
            plogp = np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0)
        E = -plogp.sum(axis=0) / np.log(m)
        E[_constant(X)] = 1.0  # exactly: 1/m rounds
        d = np.clip(1.0 - E, 0.0, None)
    elif how == "critic":
        R = minmax_for_weights(X, benefit)
        sigma = R.std(axis=0)
        Z = (R - R.mean(axis=0)) / _safe(sigma)
        Z[:, sigma == 0] = 0.0
        conflict = 1.0 - (Z.T @ Z) / m
        conflict[conflict <= COLLINEAR] = 0.0
        d = sigma * conflict.sum(axis=0)
        d[sigma == 0] = 0.0
    elif how == "std":
        d = X.std(axis=0, ddof=1)
        d[_constant(X)] = 0.0  # exactly 0, not rounding noise
        if unit is not None:  # in the units of the values again, over the largest scale
            up = np.frexp(top)[1]
            d = np.ldexp(d, up - up.max())
    else:  # pragma: no cover - validated before
        raise ValueError(f"unknown weighting {how!r}")
    total = d.sum()
    if not (total > 0 and np.isfinite(total)):
        return None
    weights: Array = d / total
    return weights


# ---------------------------------------------------------------- methods
def wsm(X: Array, benefit: Mask, w: Array, p: dict[str, Any]) -> Scored:
    """Weighted sum of the normalized values (default normalization minmax), one C
    pass (``decido.decisions._kernels.wsm``)."""
    score, R, C = _kernels.wsm(X, _flags(benefit), w, p["normalization"])
    return Scored(score, {"normalized": R, "contribution": C})


def wpm(X: Array, benefit: Mask, w: Array, p: dict[str, Any]) -> Scored:
    """Weighted product: prod_j r_ij ** w_j (the product, not its log)."""
    R = normalize(X, benefit, p["normalization"])
    F = R ** _row(w)
    return Scored(F.prod(axis=-1), {"normalized": R, "factor": F})


def topsis(X: Array, benefit: Mask, w: Array, p: dict[str, Any]) -> Scored:
    """Closeness d- / (d+ + d-) to the ideal of the weighted normalized matrix, one C
    pass (``decido.decisions._kernels.topsis``).  Every normalization makes larger better, so the
    ideal is the column maximum.  When every option is ideal (d+ + d- = 0) the score
    is 1."""
    score, R, V, d_best, d_worst = _kernels.topsis(X, _flags(benefit), w, p["normalization"])
    return Scored(score, {"normalized": R, "weighted": V}, {"d_best": d_best, "d_worst": d_worst})


def vikor(X: Array, benefit: Mask, w: Array, p: dict[str, Any]) -> Scored:
    """VIKOR: regret w_j (f*_j - f_ij)/(f*_j - f-_j), S = sum, R = max,
    Q = v S~ + (1 - v) R~ (ascending); a term whose S or R spread within
    :data:`RANK_TOLERANCE` (values that would tie) is 0.  One C pass
    (``decido.decisions._kernels.vikor``); the compromise set in Python."""
    Q, T, S, Rr = _kernels.vikor(X, _flags(benefit), w, p["v"], RANK_TOLERANCE)
    return Scored(Q, {"regret": T}, {"S": S, "R": Rr}, _compromise(Q, S, Rr))


def _compromise(Q: Array, S: Array, R: Array) -> list[int]:
    """Opricovic's compromise set (option indices in order of Q).

    C1 acceptable advantage: Q(a2) - Q(a1) >= 1/(m - 1);  C2 acceptable
    stability: a1 is also best by S or by R.  Both: {a1}; only C1: {a1, a2};
    no C1: every option with Q - Q(a1) < 1/(m - 1).  The comparisons allow
    :data:`RANK_TOLERANCE` (of 1 for Q, which spans [0, 1]; of the largest S or R):
    with whole-number data Q(a2) - Q(a1) often is 1/(m - 1) exactly, and rounding
    must not decide the set.
    """
    m = Q.shape[0]
    order = np.argsort(Q, kind="stable")
    if m == 1:
        return [int(order[0])]
    a1 = order[0]
    dq = 1.0 / (m - 1) - RANK_TOLERANCE
    advantage = Q[order[1]] - Q[a1] >= dq
    stable = (S[a1] - S.min() <= RANK_TOLERANCE * np.abs(S).max()
              or R[a1] - R.min() <= RANK_TOLERANCE * np.abs(R).max())
    if advantage and stable:
        return [int(a1)]
    if advantage:
        return [int(a1), int(order[1])]
    return [int(i) for i in order if Q[i] - Q[a1] < dq]


_PREFERENCES: dict[str, Callable[[Array, Array, Array], Array]] = {
    "usual": lambda d, q, p: (d > 0).astype(np.float64),
    "u_shape": lambda d, q, p: (d > q).astype(np.float64),
    "v_shape": lambda d, q, p: np.clip(d / p, 0.0, 1.0),
    "level": lambda d, q, p: np.where(d > p, 1.0, np.where(d > q, 0.5, 0.0)),
    "linear": lambda d, q, p: np.clip((d - q) / (p - q), 0.0, 1.0),
}
PREFERENCES = tuple(_PREFERENCES)


def promethee2(
    X: Array, benefit: Mask, w: Array, p: dict[str, Any]
) -> Scored:
    """PROMETHEE II net flow phi+ - phi-, O(m^2 k) time, pairwise differences
    built in row blocks of at most ``PROMETHEE_BLOCK_ELEMENTS`` elements (every sample
    of a batch at once)."""
    m, k = X.shape[-2:]
    lead = X.shape[:-2]
    if m < 2:
        nan = np.full((*lead, m), np.nan)
        return Scored(nan, {}, {"phi_plus": nan, "phi_minus": nan})
    Y = np.where(benefit, X, -X)
    pref = _PREFERENCES[p["preference"]]
    q, pp = p["q"], p["p"]
    plus, minus = np.empty((*lead, m)), np.zeros((*lead, m))
    step = max(1, PROMETHEE_BLOCK_ELEMENTS // (int(np.prod(lead)) * m * k))
    for start in range(0, m, step):
        block = Y[..., start : start + step, :]
        d = block[..., :, None, :] - Y[..., None, :, :]  # (b, m, k): a in block over every b
        pi = _weigh(pref(d, q, pp), w)  # (b, m): pi(a, b)
        plus[..., start : start + step] = pi.sum(axis=-1)
        minus += pi.sum(axis=-2)
    plus /= m - 1
    minus /= m - 1
    return Scored(plus - minus, {}, {"phi_plus": plus, "phi_minus": minus})


def waspas(X: Array, benefit: Mask, w: Array, p: dict[str, Any]) -> Scored:
    """lambda * WSM + (1 - lambda) * WPM on one normalized matrix (default linear)."""
    R = normalize(X, benefit, p["normalization"])
    q_sum, q_prod = (R * _row(w)).sum(axis=-1), (R ** _row(w)).prod(axis=-1)
    lam = p["lambda"]
    return Scored(
        lam * q_sum + (1.0 - lam) * q_prod, {"normalized": R}, {"wsm": q_sum, "wpm": q_prod}
    )


def copras(X: Array, benefit: Mask, w: Array, p: dict[str, Any]) -> Scored:
    """Classical COPRAS (Zavadskas et al. 1994): d = w x/sum(x);
    Q_i = S+_i + sum(S-) / (S-_i * sum(1/S-)); the score is the utility
    degree Q_i / max Q (1 for the best).  Needs values > 0."""
    V = X / X.sum(axis=-2, keepdims=True) * _row(w)
    s_plus = V[..., benefit].sum(axis=-1)
    s_minus = V[..., ~benefit].sum(axis=-1)
    total = s_minus.sum(axis=-1, keepdims=True)
    regular = s_minus.min(axis=-1, keepdims=True) > 0
    if regular.all():
        Q = s_plus + total / (s_minus * (1.0 / s_minus).sum(axis=-1, keepdims=True))
    else:  # per matrix: regular, some S- underflowed (costs 1e308 times apart), no cost
        with np.errstate(divide="ignore", invalid="ignore"):
            Q = np.where(regular, s_plus + total / (
                s_minus * (1.0 / s_minus).sum(axis=-1, keepdims=True)), s_plus)
        under = ~regular & (s_minus.max(axis=-1, keepdims=True) > 0)
        if under.any():  # values > 0
            spread = _copras_spread(X[..., ~benefit], w[..., ~benefit])
            Q = np.where(under, s_plus + total / spread, Q)
    return Scored(Q / Q.max(axis=-1, keepdims=True), {"weighted": V},
                  {"S_plus": s_plus, "S_minus": s_minus, "Q": Q})


def _copras_spread(C: Array, w: Array) -> Array:
    """S-_i * sum_j 1/S-_j of COPRAS for the cost columns ``C`` (values > 0) and their
    weights, from the logarithms of S- = sum_c w_c x_c / sum(x_c): finite (or +inf, whose
    term is 0) where S- itself underflows to 0."""
    with np.errstate(divide="ignore"):  # a weight of 0: log -inf, a term of 0
        L = np.log(C) - np.log(C.sum(axis=-2, keepdims=True)) + _row(np.log(w))
    top = L.max(axis=-1, keepdims=True)  # finite where some cost weight is > 0
    log_s = top[..., 0] + np.log(np.exp(L - top).sum(axis=-1))  # log S-_i
    low = log_s.min(axis=-1, keepdims=True)
    with np.errstate(over="ignore"):  # S-_i 1e308 times the smallest: inf, a term of 0
        spread: Array = np.exp(log_s - low) * np.exp(low - log_s).sum(axis=-1, keepdims=True)
    return spread


def moora(X: Array, benefit: Mask, w: Array, p: dict[str, Any]) -> Scored:
    """MOORA ratio system: sum of w x/||x|| over benefit criteria minus cost ones, one
    C pass (``decido.decisions._kernels.moora``)."""
    score, R, C = _kernels.moora(X, _flags(benefit), w)
    return Scored(score, {"normalized": R, "contribution": C})


def edas(X: Array, benefit: Mask, w: Array, p: dict[str, Any]) -> Scored:
    """EDAS: distances from the average solution; score (NSP + NSN)/2.
    Needs values > 0 (it divides by the average).  A constant criterion is at distance 0
    (its mean, rounded, can miss its value by an ulp, which would decide the score)."""
    av = X.mean(axis=-2, keepdims=True)
    dist = np.where(benefit, X - av, av - X) / av
    dist = np.where(_constant(X)[..., None, :], 0.0, dist)
    pda, nda = np.maximum(dist, 0.0), np.maximum(-dist, 0.0)
    sp, sn = _weigh(pda, w), _weigh(nda, w)
    sp_top, sn_top = sp.max(axis=-1, keepdims=True), sn.max(axis=-1, keepdims=True)
    nsp = np.where(sp_top > 0, sp / np.where(sp_top > 0, sp_top, 1.0), 1.0)
    nsn = np.where(sn_top > 0, 1.0 - sn / np.where(sn_top > 0, sn_top, 1.0), 1.0)
    return Scored((nsp + nsn) / 2.0, {"pda": pda, "nda": nda}, {"SP": sp, "SN": sn})


def aras(X: Array, benefit: Mask, w: Array, p: dict[str, Any]) -> Scored:
    """ARAS: the ideal row (best value per criterion) joins the matrix before sum
    normalization (cost criteria by reciprocals); the score is S_i / S_ideal."""
    ideal = np.where(benefit, X.max(axis=-2), X.min(axis=-2))
    E = np.concatenate([_row(ideal), X], axis=-2)
    # a cost enters by its reciprocal, taken relative to the smallest (the ideal's), which
    # the sum normalization below cancels: x_min / x <= 1, where 1 / 5e-324 overflows
    E[..., ~benefit] = _row(ideal[..., ~benefit]) / E[..., ~benefit]
    N = E / E.sum(axis=-2, keepdims=True)
    C = N * _row(w)
    S = C.sum(axis=-1)
    return Scored(
        S[..., 1:] / S[..., :1],
        {"normalized": N[..., 1:, :], "contribution": C[..., 1:, :]},
        {"S": S[..., 1:], "S_ideal": np.broadcast_to(S[..., :1], S[..., 1:].shape).copy()},
    )


def spotis(X: Array, benefit: Mask, w: Array, p: dict[str, Any]) -> Scored:
    """SPOTIS: weighted distance to the ideal point of the bounds (ascending), one C
    pass (``decido.decisions._kernels.spotis``).  ``p["bounds"]`` is (k, 2), C-ordered; a
    zero-width bound gives distance 0."""
    score, D, C = _kernels.spotis(X, _flags(benefit), w, p["bounds"])
    return Scored(score, {"distance": D, "contribution": C})
