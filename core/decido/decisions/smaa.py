"""Decisions under uncertainty: SMAA-2 over sampled values and weights.

Each sample draws every uncertain value and the weights (``decido.decisions.uncertain``),
evaluates the constraints, and scores and ranks the options feasible in it with the
request's method.  Samples are processed in chunks of at most :data:`CHUNK_VALUES`
sampled values: the C-kernel methods loop over a chunk's samples in C
(``decido.decisions._kernels.scores_batch``), the NumPy methods take the chunk as one (samples x
options x criteria) array, and the ranks are computed in C per sample
(``ranks_batch``).  Samples whose feasible options differ are grouped by their pattern.

From the ranks: the rank acceptabilities b_i^r (the share of samples in which option i
has rank r), the central weights (the mean weights of the samples in which i ranks
first) and the confidence factors (the share of the value samples, drawn again from the
same seed, in which i ranks first under its central weights).  See docs/decisions.md,
"Uncertain values and weights".
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from decido.decisions import _kernels
from decido.decisions.decision import Decision
from decido.decisions.faults import Faults
from decido.decisions.methods import RANK_TOLERANCE
from decido.decisions.uncertain import Values, Weights, check_shares, uncertain_values
from decido.decisions.vocabulary import LIMITS, METHODS, POSITIVE_NORMALIZATIONS
from decido.expression import Expression

Array = NDArray[np.float64]
Ranks = NDArray[np.int64]
#: sampled values per chunk (8 MiB of doubles)
CHUNK_VALUES = 1 << 20
#: the samples of a run with at most this many sampled values (32 MiB) are kept for the
#: confidence factors; a larger run draws them again from the seed
KEEP_VALUES = 1 << 22


def decide_uncertain(plan: Decision, out: dict[str, Any],
                     attrs: list[Mapping[str, Any]], columns: list[str],
                     programs: list[Expression], variables: list[str],
                     faults: Faults) -> dict[str, Any]:
    """Fill ``out`` (the answer's header) with the SMAA answer; ``columns`` are the
    criteria then the expressions' variables, ``programs`` the constraints then the
    expression."""
    values = uncertain_values(attrs, columns, faults)
    ids = plan.ids
    k, m = len(plan.criteria), len(ids)
    assert plan.uncertainty is not None
    samples = plan.uncertainty.samples
    if m > LIMITS["max_smaa_options"]:
        faults.add(("options",), "too_many",
                   f"{m} options under uncertainty (limit {LIMITS['max_smaa_options']})")
    if samples * m * max(len(columns), 1) > LIMITS["max_smaa_values"]:
        faults.add(("uncertainty", "samples"), "too_many",
                   f"{samples} samples x {m} options x {len(columns)} values exceed "
                   f"{LIMITS['max_smaa_values']} sampled values")
    if len({str(i) for i in ids}) != m:  # the answer's keys are the ids as strings
        faults.add(("options",), "invalid_request", "under uncertainty the answer is keyed "
                   "by the option ids as strings: two ids (such as 1 and \"1\") read the same")
    weights = None
    if values is not None and not METHODS[plan.method].by_expression:
        _check_support(plan, values, k, faults)
        weights = _weights(plan, faults)
    faults.check()
    assert values is not None
    run = _Run(plan, values, weights, programs, variables, columns, m)
    counts, central, violated = run.acceptability()
    confidence = run.confidence(counts, central)
    _answer(plan, out, ids, counts, central, confidence, violated, run)
    return out


class _Run:
    """One SMAA run: the sampling and the scoring of its chunks."""

    def __init__(self, plan: Decision, values: Values, weights: Weights | None,
                 programs: list[Expression], variables: list[str], columns: list[str],
                 m: int) -> None:
        self.plan, self.values, self.weights, self.m = plan, values, weights, m
        self.k = len(plan.criteria)
        self.n_constraints = len(plan.constraints)
        self.programs = programs
        self.var_cols = [columns.index(v) for v in variables]
        self.samples = plan.uncertainty.samples if plan.uncertainty else 1
        self.seed = plan.uncertainty.seed if plan.uncertainty else 0
        self.benefit = np.array([c.benefit for c in plan.criteria], dtype=bool)
        self.mean_weights = np.zeros(self.k)
        self.chunk = max(1, CHUNK_VALUES // (m * max(len(columns), 1)))
        self.kept: list[tuple[Array, NDArray[np.bool_]]] = []

    def _chunks(self, total: int) -> list[int]:
        return [min(self.chunk, total - start) for start in range(0, total, self.chunk)]

    def _feasible(self, X: Array) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        """(n, m) feasibility and (constraints, n, m) violations of the sampled ``X``."""
        n = X.shape[0]
        violated = np.zeros((self.n_constraints, n, self.m), dtype=bool)
        if not self.n_constraints:
            return np.ones((n, self.m), dtype=bool), violated
        rows = self._variables(X)
        for j in range(self.n_constraints):
            value = self.programs[j].evaluate_many(rows).reshape(n, self.m)
            violated[j] = (value == 0) | np.isnan(value)
        feasible: NDArray[np.bool_] = np.logical_not(violated.any(axis=0))
        return feasible, violated

    def _variables(self, X: Array) -> Array:
        """The expressions' variables of every (sample, option), one row each."""
        n = X.shape[0]
        return np.ascontiguousarray(
            X[:, self.var_cols, :].transpose(0, 2, 1)).reshape(n * self.m, len(self.var_cols))

    def _ranks(self, X: Array, W: Array | None, feasible: NDArray[np.bool_]) -> Ranks:
        """(n, m) ranks among each sample's feasible options (0: infeasible).  The
        expression and the C kernels take the feasibility mask; the NumPy methods score
        the samples of each pattern of feasible options together."""
        plan = self.plan
        mask = None if feasible.all() else feasible.view(np.uint8)
        higher = plan.higher_is_better
        row = METHODS[plan.method]
        if row.by_expression:
            scores = self.programs[-1].evaluate_many(self._variables(X)).reshape(
                X.shape[0], self.m)
            return _kernels.ranks_batch(scores, higher, RANK_TOLERANCE, mask)
        assert W is not None
        Xk = np.ascontiguousarray(X[:, : self.k, :])
        W = np.ascontiguousarray(W)
        params = plan.params
        if row.kernel == "C":
            scores = _kernels.scores_batch(
                plan.method, Xk, self.benefit.tobytes(), W, plan.normalization,
                params.get("v", 0.5), RANK_TOLERANCE, params.get("bounds"), mask)
            return _kernels.ranks_batch(scores, higher, RANK_TOLERANCE, mask)
        method = row.score
        assert method is not None
        if mask is None:
            scores = np.ascontiguousarray(
                method(Xk.transpose(0, 2, 1), self.benefit, W, params).score)
            return _kernels.ranks_batch(scores, higher, RANK_TOLERANCE, None)
        ranks = np.zeros((X.shape[0], self.m), dtype=np.int64)
        patterns, group = np.unique(np.packbits(feasible, axis=1), axis=0, return_inverse=True)
        group = group.reshape(-1)
        for g in range(patterns.shape[0]):
            sel = np.flatnonzero(group == g)
            cols = np.flatnonzero(feasible[sel[0]])
            if cols.size:
                part = np.ascontiguousarray(Xk[sel][:, :, cols]).transpose(0, 2, 1)
                scores = np.ascontiguousarray(method(part, self.benefit, W[sel], params).score)
                ranks[np.ix_(sel, cols)] = _kernels.ranks_batch(scores, higher, RANK_TOLERANCE,
                                                             None)
        return ranks

    def acceptability(self) -> tuple[NDArray[np.int64], Array, NDArray[np.bool_]]:
        """Rank counts (m x m: option, rank - 1), the summed weights of the samples where
        each option ranks first (m x k) and the constraints each option violates in some
        sample (constraints x m)."""
        m, k = self.m, self.k
        values_rng = np.random.default_rng([self.seed, 0])
        weights_rng = np.random.default_rng([self.seed, 1])
        counts = np.zeros(m * m, dtype=np.int64)
        central = np.zeros((m, k))
        violated_any = np.zeros((self.n_constraints, m), dtype=bool)
        keep = self.samples * self.values.fixed.size <= KEEP_VALUES
        for n in self._chunks(self.samples):
            X = self.values.sample(values_rng, n)
            W = self.weights.sample(weights_rng, n) if self.weights is not None else None
            feasible, violated = self._feasible(X)
            if keep:
                self.kept.append((X, feasible))
            violated_any |= violated.any(axis=1)
            ranks = self._ranks(X, W, feasible)
            ranked = ranks > 0
            counts += np.bincount((np.arange(m) * m + ranks - 1)[ranked], minlength=m * m)
            if W is not None:
                central += (ranks == 1).T.astype(np.float64) @ W
                self.mean_weights += W.sum(axis=0)
        self.mean_weights /= self.samples
        return counts.reshape(m, m), central, violated_any

    def _value_chunks(self, total: int) -> Iterator[tuple[Array, NDArray[np.bool_]]]:
        """The value samples again (kept, or drawn again from the seed) and their
        feasibility."""
        if self.kept:
            yield from self.kept
            return
        values_rng = np.random.default_rng([self.seed, 0])
        for n in self._chunks(total):
            X = self.values.sample(values_rng, n)
            yield X, self._feasible(X)[0]

    def confidence(self, counts: NDArray[np.int64], central: Array) -> Array | None:
        """The share of the value samples in which each option that ranks first somewhere
        ranks first under its central weights (NaN for the others); None without
        weights."""
        if self.weights is None:
            return None
        first = counts[:, 0]
        candidates = np.flatnonzero(first > 0).tolist()
        wins = np.zeros(self.m)
        total = self.samples if self.values.uncertain else 1
        if total == 1:
            self.kept = [(X[:1], f[:1]) for X, f in self.kept[:1]]
        plan, row = self.plan, METHODS[self.plan.method]
        for X, feasible in self._value_chunks(total):
            n = X.shape[0]
            mask = None if feasible.all() else feasible.view(np.uint8)
            Xk = np.ascontiguousarray(X[:, : self.k, :])
            for i in candidates:
                W = np.ascontiguousarray(np.broadcast_to(central[i] / first[i], (n, self.k)))
                if row.kernel == "C":
                    scores = _kernels.scores_batch(
                        plan.method, Xk, self.benefit.tobytes(), W, plan.normalization,
                        plan.params.get("v", 0.5), RANK_TOLERANCE, plan.params.get("bounds"),
                        mask)
                    wins[i] += _kernels.first_count(scores, plan.higher_is_better,
                                                 RANK_TOLERANCE, mask, i)
                else:
                    wins[i] += np.count_nonzero(self._ranks(X, W, feasible)[:, i] == 1)
        out = np.full(self.m, np.nan)
        out[candidates] = wins[candidates] / total
        return out


def _check_support(plan: Decision, values: Values, k: int, faults: Faults) -> None:
    """Positivity, the PROMETHEE II size limit and SPOTIS bounds over every value's
    support (every option: which are feasible depends on the sample)."""
    method, norm = plan.method, plan.normalization
    row = METHODS[method]
    lows, highs = values.low[:k], values.high[:k]
    if (row.positive and norm != "minmax") or norm in POSITIVE_NORMALIZATIONS:
        for j, i in np.argwhere(lows <= 0).tolist():
            faults.add(("options", i, "attributes", plan.criteria[j].attribute),
                       "non_positive_value",
                       f"method {method!r} needs values > 0: this value can be "
                       f"{lows[j, i]} (bound a normal value with low > 0)")
    if row.max_options is not None and lows.shape[1] > LIMITS[row.max_options]:
        faults.add(("options",), "too_many", f"{method} {row.max_options_reason}: "
                   f"{lows.shape[1]} options (limit {LIMITS[row.max_options]})")
    if row.check_support is not None:
        row.check_support(plan, lows, highs, faults)


def _weights(plan: Decision, faults: Faults) -> Weights:
    k = len(plan.criteria)
    if plan.weighting == "unknown":
        low, high = np.zeros(k), np.ones(k)
        for j, c in enumerate(plan.criteria):
            if c.interval is not None:
                low[j], high[j] = c.interval
        check_shares(low, high, faults)
        return Weights(None, low, high, simplex=True)
    if plan.weighting == "given" and any(c.interval is not None for c in plan.criteria) \
            and plan.fixed_weights is None:
        low = np.array([c.interval[0] if c.interval else c.weight for c in plan.criteria],
                       dtype=np.float64)
        high = np.array([c.interval[1] if c.interval else c.weight for c in plan.criteria],
                        dtype=np.float64)
        return Weights(None, low, high, simplex=False)
    fixed = np.array(plan.weights_now())
    return Weights(fixed, fixed, fixed, simplex=False)


def _answer(plan: Decision, out: dict[str, Any], ids: list[Any], counts: NDArray[np.int64],
            central: Array, confidence: Array | None, violated: NDArray[np.bool_],
            run: _Run) -> None:
    m = len(ids)
    present = np.flatnonzero(counts.sum(axis=1) > 0)
    length = present.size
    first = counts[:, 0]
    names = [c.attribute for c in plan.criteria]
    fixed = run.weights.fixed if run.weights is not None else None
    mean = fixed if fixed is not None else run.mean_weights
    out["weights"] = dict(zip(names, mean.tolist(), strict=True)) if run.weights else {}
    out["higher_is_better"] = True
    out["n_feasible"] = int(length)
    total = run.samples
    keys = [np.arange(m)[present]] + [-counts[present, r] for r in reversed(range(length))]
    order = present[np.lexsort(keys)] if length else present
    ranking: list[dict[str, Any]] = []
    for p, i in enumerate(order.tolist()):  # equal acceptability vectors share a rank
        same = p > 0 and bool((counts[i, :length] == counts[order[p - 1], :length]).all())
        rank = ranking[-1]["rank"] if same else p + 1
        ranking.append({"id": ids[i], "rank": rank, "score": float(first[i] / total)})
    groups: dict[int, list[Any]] = {}
    for entry in ranking:
        groups.setdefault(entry["rank"], []).append(entry["id"])
    ties = [g for g in groups.values() if len(g) > 1]
    out["best_is_tied"] = len(groups.get(1, [])) > 1
    infeasible = [{"id": ids[i], "violated": [plan.constraints[j]
                                               for j in np.flatnonzero(violated[:, i]).tolist()]}
                  for i in range(m) if counts[i].sum() == 0]
    if not length:
        out.update(status="infeasible", best=None, ties=[], ranking=[], infeasible=infeasible)
    else:
        cut = ranking if plan.top_k is None else ranking[: plan.top_k]
        out.update(status="ok", best=ranking[0]["id"], ties=ties, ranking=cut,
                   infeasible=infeasible)
    key = [str(ids[i]) for i in range(m)]
    out["smaa"] = {
        "samples": total,
        "seed": run.seed,
        "acceptability": {key[i]: (counts[i, :length] / total).tolist() for i in present},
        "central_weights": {
            key[i]: (dict(zip(names, (central[i] / first[i]).tolist(), strict=True))
                     if first[i] and run.weights is not None else None)
            for i in present},
        "confidence": {
            key[i]: (float(confidence[i]) if confidence is not None and first[i] else None)
            for i in present},
    }
    out["warnings"] = plan.warnings

