"""Uncertain values and weights of a decision (SMAA-2): what the request says, and the
samples drawn from it.

An attribute value is a number, ``{"low", "high"}`` (uniform) or ``{"mean", "sd"}``
(normal; with ``low`` and/or ``high`` values beyond a bound become the bound).  Weights
are fixed, drawn uniformly from each criterion's interval and rescaled to sum 1
(weighting ``given``), or uniform on the simplex and kept where every weight is inside its
criterion's interval (weighting ``unknown``).  Every draw comes from one NumPy
``Generator`` (PCG64) seeded by the request: the same seed gives the same samples.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from decido.decisions.faults import (
    Bad,
    DecisionError,
    Faults,
    Where,
    kind_of,
    known_members,
    number,
)
from decido.decisions.types import NORMAL_MEMBERS, UNCERTAINTY_MEMBERS, UNIFORM_MEMBERS
from decido.decisions.vocabulary import DEFAULT_SAMPLES, DEFAULT_SEED, LIMITS

Array = NDArray[np.float64]
Index = NDArray[np.intp]
#: the largest seed (a seed is an integer in [0, 2**63))
SEED_END = 2**63
#: weighting ``unknown``: draws of the simplex tried per accepted sample before the
#: weight intervals are deemed too narrow
MAX_REJECTION = 1_000


@dataclass
class Uncertainty:
    """``samples`` and ``seed`` of a decision under uncertainty."""

    samples: int
    seed: int


def parse_uncertainty(value: Any, faults: Faults) -> Uncertainty | None:
    """The ``uncertainty`` member; None after a fault."""
    where: Where = ("uncertainty",)
    ok = known_members(value, where, UNCERTAINTY_MEMBERS, "uncertainty", faults)
    if not isinstance(value, Mapping):
        return None
    samples, seed = value.get("samples", DEFAULT_SAMPLES), value.get("seed", DEFAULT_SEED)
    cap = LIMITS["max_samples"]
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        faults.add((*where, "samples"), "invalid_request",
                   f"samples is an integer >= 1, got {samples!r}")
        ok = False
    elif samples > cap:
        faults.add((*where, "samples"), "too_many", f"{samples} samples (limit {cap})")
        ok = False
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_END:
        faults.add((*where, "seed"), "invalid_request",
                   f"seed is an integer in [0, 2**63), got {seed!r}")
        ok = False
    return Uncertainty(samples, seed) if ok else None


def interval(value: Mapping[str, Any], where: Where, faults: Faults,
             share: bool) -> tuple[float, float] | None:
    """A weight interval ``{"low", "high"}``, 0 <= low <= high (and high > 0; with
    ``share``, high <= 1: a bound of the weight's share)."""
    for key in value:
        if key not in UNIFORM_MEMBERS:
            faults.add((*where, str(key)), "invalid_request",
                       f"unknown field {key!r} (a weight interval is {{low, high}})")
            return None
    try:
        lo, hi = number(value.get("low")), number(value.get("high"))
    except Bad as bad:
        faults.add(where, bad.code, f"a weight interval is {{low, high}}: {bad.message}")
        return None
    top = 1.0 if share else float("inf")
    if not 0.0 <= lo <= hi <= top or hi == 0.0:
        limit = "<= 1" if share else "> 0"
        faults.add(where, "invalid_request",
                   f"a weight interval needs 0 <= low <= high, high {limit}; got [{lo}, {hi}]")
        return None
    return lo, hi


@dataclass
class Values:
    """The values of ``c`` columns (criteria first, then the expressions' variables) of
    ``m`` options: ``fixed`` (c x m) holds the numbers, and where a value is uncertain,
    its low or mean; ``uniform``, ``normal``: flat indices (column * m + option) of the
    uncertain values with their parameters; ``low``/``high`` (c x m): each value's
    support (-inf/inf for an unclipped normal)."""

    fixed: Array
    low: Array
    high: Array
    uniform: Index
    u_span: Array
    normal: Index
    sd: Array

    @property
    def uncertain(self) -> bool:
        """Whether some value is uncertain."""
        return bool(self.uniform.size or self.normal.size)

    def sample(self, rng: np.random.Generator, n: int) -> Array:
        """``n`` samples of every value: (n, c, m), C-ordered."""
        c, m = self.fixed.shape
        flat = self.fixed.reshape(-1)
        if self.uniform.size == flat.size:  # every value uniform: no indexing
            X = rng.random((n, flat.size))
            X *= self.u_span
            X += flat
        else:
            X = np.empty((n, c * m))
            X[:] = flat
            if self.uniform.size:
                draw = rng.random((n, self.uniform.size))
                draw *= self.u_span
                X[:, self.uniform] += draw
        if self.normal.size:
            draw = rng.standard_normal((n, self.normal.size)) * self.sd
            draw += X[:, self.normal]
            flat_low, flat_high = self.low.reshape(-1), self.high.reshape(-1)
            X[:, self.normal] = np.clip(draw, flat_low[self.normal], flat_high[self.normal])
        return X.reshape(n, c, m)


def uncertain_values(attrs: list[Mapping[str, Any]], columns: list[str],
                     faults: Faults) -> Values | None:
    """The :class:`Values` of ``columns`` over the options, each value walked once; None
    after a fault (every value refused is one)."""
    c, m = len(columns), len(attrs)
    fixed, low, high = np.zeros((c, m)), np.zeros((c, m)), np.zeros((c, m))
    sd = np.zeros((c, m))
    kind = np.zeros((c, m), dtype=np.int8)  # 0 number, 1 uniform, 2 normal
    ok = True
    for i, a in enumerate(attrs):
        for j, name in enumerate(columns):
            if faults.full():
                return None
            where: Where = ("options", i, "attributes", name)
            if name not in a:
                faults.add(where, "missing_attribute", f"option has no attribute {name!r} "
                           "(every option needs the attributes that criteria, constraints "
                           "and expressions use)")
                ok = False
                continue
            found = _value(a[name], where, faults)
            if found is None:
                ok = False
                continue
            kind[j, i], fixed[j, i], low[j, i], high[j, i], sd[j, i] = found
    if not ok:
        return None
    uniform, normal = np.flatnonzero(kind == 1), np.flatnonzero(kind == 2)
    span = (high - fixed).reshape(-1)
    return Values(fixed, low, high, uniform, span[uniform], normal, sd.reshape(-1)[normal])


def _value(v: Any, where: Where, faults: Faults
           ) -> tuple[int, float, float, float, float] | None:
    """(kind, low or mean or the number, support low, support high, sd) of one value."""
    if not isinstance(v, Mapping):
        if not isinstance(v, numbers.Real):
            faults.add(where, "invalid_request", "attribute values are numbers, "
                       f"{{low, high}} or {{mean, sd}}, got {kind_of(v)}")
            return None
        try:
            x = number(float(v))
        except (Bad, OverflowError):
            faults.add(where, "non_finite_value", f"value must be a finite number, got {v}")
            return None
        return 0, x, x, x, 0.0
    fields = NORMAL_MEMBERS if "mean" in v or "sd" in v else UNIFORM_MEMBERS
    for key in v:
        if key not in fields:
            faults.add((*where, str(key)), "invalid_request",
                       f"unknown field {key!r} (an uncertain value is {{low, high}} or "
                       "{mean, sd} with an optional low and high)")
            return None
    try:
        parts = {key: number(v[key]) for key in fields if v.get(key) is not None}
    except Bad as bad:
        faults.add(where, bad.code, bad.message)
        return None
    lo, hi = parts.get("low", -np.inf), parts.get("high", np.inf)
    if fields is UNIFORM_MEMBERS:
        if "low" not in parts or "high" not in parts or not lo <= hi:
            faults.add(where, "invalid_request", "a uniform value is {low, high}, low <= high")
            return None
        return 1, lo, lo, hi, 0.0
    if "mean" not in parts or "sd" not in parts or parts["sd"] < 0 or not lo <= hi:
        faults.add(where, "invalid_request",
                   "a normal value is {mean, sd}, sd >= 0, clipped by low <= high if given")
        return None
    return 2, parts["mean"], lo, hi, parts["sd"]


@dataclass
class Weights:
    """How each sample's weights are drawn: ``fixed`` (k, summing to 1) or, per
    criterion, ``low``/``high`` (weighting ``given``: the relative weight's interval,
    rescaled per sample; ``unknown``: the share's interval on the simplex)."""

    fixed: Array | None
    low: Array
    high: Array
    simplex: bool

    def sample(self, rng: np.random.Generator, n: int) -> Array:
        """(n, k) weights, each row summing to 1."""
        k = self.low.size
        if self.fixed is not None:
            return np.broadcast_to(self.fixed, (n, k)).copy()
        if not self.simplex:
            W = self.low + rng.random((n, k)) * (self.high - self.low)
            out: Array = W / W.sum(axis=1, keepdims=True)
            return out
        return self._simplex(rng, n, k)

    def _simplex(self, rng: np.random.Generator, n: int, k: int) -> Array:
        """Uniform on the simplex (normalized exponentials), kept where inside the box."""
        kept: list[Array] = []
        have, tried = 0, 0
        while have < n:
            if tried > MAX_REJECTION * n:
                raise DecisionError(
                    "invalid_request", "the weight intervals keep less than 1 in "
                    f"{MAX_REJECTION} of the weights uniform on the simplex: widen them",
                    ("criteria",))
            E = rng.standard_exponential((n, k))
            W = E / E.sum(axis=1, keepdims=True)
            W = W[((W >= self.low) & (W <= self.high)).all(axis=1)]
            kept.append(W)
            have += W.shape[0]
            tried += n
        return np.concatenate(kept)[:n]


def check_shares(low: Array, high: Array, faults: Faults) -> None:
    """Weight intervals of weighting ``unknown`` must leave weights summing to 1."""
    if low.sum() > 1.0 or high.sum() < 1.0:
        faults.add(("criteria",), "invalid_request",
                   f"the weight intervals leave no weights summing to 1 (lows sum to "
                   f"{low.sum():.6g}, highs to {high.sum():.6g})")

