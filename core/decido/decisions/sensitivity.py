"""Sensitivity of a decision's top choice to each criterion's weight.

For criterion j with weight w_j, the weights move along w(t) = t e_j + (1 - t) u, where
u holds the other weights in their proportions (u_j = 0, sum 1): t = w_j is the
decision made.  The interval is the largest [lower, upper] around w_j over which the
top choice (the first option of the ranking, ties going to input order, as in
``decido.decide``) stays the same; ``lower_changes_to`` / ``upper_changes_to`` are the
options on top just below ``lower`` and just above ``upper`` (None where that bound is
0 or 1).

For methods whose score is linear in the weights (``Method.linear_in_weights``) the scores
along the path are s(t) = (1 - t) s(u) + t s(e_j): the crossings with the top choice's
line are solved exactly.  For the others the path is scanned in steps of
``1/SCAN_STEPS`` from w_j outwards, and the first change found is narrowed by bisection
to ``TOLERANCE``; a change of top choice and back within one step can be missed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from decido.decisions._kernels import competition_ranks

Array = NDArray[np.float64]
#: width to which bisection narrows a bound
TOLERANCE = 1e-6
#: steps over [0, 1] in which the non-linear methods scan for a change of top choice
SCAN_STEPS = 32

#: (lower, upper, option below lower or None, option above upper or None), indices of
#: the feasible options
Interval = tuple[float, float, int | None, int | None]


@dataclass
class Sensitivity:
    """``margin``: the score difference between the first and the second option (None
    with one option); ``intervals``: one :data:`Interval` per criterion."""

    margin: float | None
    intervals: list[Interval]


def sensitivity(
    linear: bool,
    score: Callable[[Array], Array],
    scores: Array,
    w: Array,
    higher_is_better: bool,
    rel_tol: float,
) -> Sensitivity:
    """The intervals of every criterion's weight; ``score(weights)`` scores the feasible
    options, ``scores`` are the decision's own scores at weights ``w``; ``linear``: the
    method's score is linear in the weights (its ``Method.linear_in_weights``)."""
    m, k = scores.shape[0], w.shape[0]
    order, _ = competition_ranks(scores, higher_is_better, rel_tol)
    margin = None
    if m > 1:
        gap = abs(float(scores[order[0]]) - float(scores[order[1]]))
        margin = gap if np.isfinite(gap) else None
    whole: Interval = (0.0, 1.0, None, None)
    if m == 1:
        return Sensitivity(margin, [whole] * k)

    def top(s: Array) -> int:
        return int(competition_ranks(s, higher_is_better, rel_tol)[0][0])

    best = int(order[0])
    out: list[Interval] = []
    for j in range(k):
        rest = float(w.sum() - w[j])
        if not rest > 0:  # no other weight to keep in proportion
            out.append(whole)
            continue
        u = w / rest
        u[j] = 0.0
        e = np.zeros(k)
        e[j] = 1.0
        t0 = float(w[j])
        if linear:
            out.append(_linear(score(u), score(e), t0, best, higher_is_better, rel_tol))
        else:
            def at(t: float, u: Array = u, e: Array = e) -> int:
                return top(score((1.0 - t) * u + t * e))

            out.append(_scanned(at, t0, best))
    return Sensitivity(margin, out)


def _linear(s0: Array, s1: Array, t0: float, best: int, higher: bool, rel_tol: float) -> Interval:
    """Exact bounds for scores s(t) = s0 + t (s1 - s0)."""
    sign = 1.0 if higher else -1.0
    g0, g1 = sign * s0, sign * s1  # higher is better from here on
    a = g0 - g0[best]  # how far each option is ahead of the top one at t = 0
    c = (g1 - g0) - (g1[best] - g0[best])  # and how fast it gains with t
    with np.errstate(divide="ignore", invalid="ignore"):
        exact = np.where(c != 0, -a / c, np.nan)
    # the ranking's tolerance, rel_tol times the largest |score| at the crossing: an
    # option before the top one in input order takes the top as soon as it is within
    # it, one after only once it is ahead by more than it
    before = np.arange(a.shape[0]) < best
    rising = (c > 0) & (exact >= t0)
    falling = (c < 0) & (exact <= t0)
    upper, above = 1.0, None
    if rising.any():
        cross = _shifted(exact, rising, np.min, s0, s1, c, a, before, rel_tol)
        t = max(float(np.nanmin(cross)), t0)
        if t < 1.0:
            upper, above = t, _first(rising & (cross <= t), c)
    lower, below = 0.0, None
    if falling.any():
        cross = _shifted(exact, falling, np.max, s0, s1, c, a, before, rel_tol)
        t = min(float(np.nanmax(cross)), t0)
        if t > 0.0:
            lower, below = t, _first(falling & (cross >= t), -c)
    return lower, upper, below, above


def _shifted(
    exact: Array,
    mask: NDArray[np.bool_],
    pick: Callable[[Array], float],
    s0: Array,
    s1: Array,
    c: Array,
    a: Array,
    before: NDArray[np.bool_],
    rel_tol: float,
) -> Array:
    """The crossings in ``mask`` moved by the ranking's tolerance (NaN elsewhere), the
    largest |score| taken at the nearest exact crossing (``pick``: min going up, max
    going down), so that this costs O(m)."""
    out = np.full(exact.shape, np.nan)
    if not mask.any():
        return out
    t = float(pick(exact[mask]))
    tol = rel_tol * float(np.abs(s0 + t * (s1 - s0)).max())
    with np.errstate(over="ignore"):  # a slope of 1e-300: a crossing far outside [0, 1]
        out[mask] = (np.where(before, -tol, tol)[mask] - a[mask]) / c[mask]
    return out


def _first(crossing: NDArray[np.bool_], gain: Array) -> int:
    """The option on top just past a crossing: of those crossing there, the one gaining
    fastest that way (the first in input order of those)."""
    candidates = np.flatnonzero(crossing)
    return int(candidates[int(np.argmax(gain[candidates]))])


def _scanned(at: Callable[[float], int], t0: float, best: int) -> Interval:
    """Bounds by scanning from ``t0`` in steps of ``1/SCAN_STEPS`` and bisecting."""
    upper, above = 1.0, None
    inside = t0
    for t in _grid(t0, 1.0):
        other = at(t)
        if other != best:
            upper, above = _bisect(at, inside, t, best)
            break
        inside = t
    lower, below = 0.0, None
    inside = t0
    for t in _grid(t0, 0.0):
        other = at(t)
        if other != best:
            lower, below = _bisect(at, inside, t, best)
            break
        inside = t
    return lower, upper, below, above


def _grid(t0: float, end: float) -> list[float]:
    """Points from ``t0`` (excluded) to ``end`` (included) at multiples of 1/SCAN_STEPS."""
    if end > t0:
        first = int(np.floor(t0 * SCAN_STEPS)) + 1
        return [i / SCAN_STEPS for i in range(first, SCAN_STEPS)] + [1.0]
    first = int(np.ceil(t0 * SCAN_STEPS)) - 1
    return [i / SCAN_STEPS for i in range(first, 0, -1)] + [0.0]


def _bisect(
    at: Callable[[float], int], inside: float, outside: float, best: int
) -> tuple[float, int]:
    """Narrow [inside, outside] (top ``best`` at ``inside``, another at ``outside``) to
    ``TOLERANCE``: the bound (the last point where ``best`` is on top) and the option on
    top just past it."""
    other = at(outside)
    while abs(outside - inside) > TOLERANCE:
        mid = 0.5 * (inside + outside)
        found = at(mid)
        if found == best:
            inside = mid
        else:
            outside, other = mid, found
    return inside, other
