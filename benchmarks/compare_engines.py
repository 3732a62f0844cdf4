#!/usr/bin/env python3
"""Compare decido's optimization engines with the optimizers a user would otherwise pick.

One script, one run.  The suite (``engines_suite.py``: sphere, ellipsoid, rastrigin, ackley,
rosenbrock, griewank, schwefel, styblinski-tang, zakharov, alpine, bent-cigar, and eight of
them shifted off-centre inside the expression; every minimum is 0) is solved in dimensions
d in {10, 30, 100} with a budget of 2000*d evaluations and 3 seeds by

* every decido engine (``decido.engines()``; nelder_mead only up to its ``max_dims``), given the
  compiled expression;
* the peers, given the NumPy twin of the expression:
  ``scipy_de`` (``scipy.optimize.differential_evolution``, vectorized=True,
  updating='deferred', polish=False, maxiter sized to the budget, other options default),
  ``dual_annealing`` (scipy, maxfun = budget), ``cma_ipop`` and ``cma_bipop`` (pycma
  ``cma.fmin2``, restarts=9, incpopsize=2, resp. bipop=True, maxfevals = budget, x0 uniform
  in the box at every restart, sigma0 = 0.3 of the box, bounds handled by pycma, the
  population evaluated through ``parallel_objective``), ``ngopt`` (nevergrad ``NGOpt``,
  ask/tell, num_workers=1) and ``uniform`` (uniform random sampling in the box).

Peers are counted honestly: their objective is wrapped by a counter that records the best
value of the first ``budget`` evaluations and stops the run (by raising) at the first
evaluation beyond it, whatever the peer's own bookkeeping says.  A peer run that exceeds the
per-run time cap (``--time-cap``, 120 s) is stopped and recorded as ``timeout``.

Reported: the median over seeds of the final error f_best - f* and of the wall time per run,
as markdown tables (rows: problem x d; the best median of each row in bold), then the floors:

(a) dss's median error <= the best peer's on every problem and dimension (or both < 1e-8);
(b) every separable problem of the suite (shifted or not) solved to < 1e-8 by dss at
    d = 1000 within 2000*d evaluations (every seed);
(c) dss solves rastrigin d = 1000 to < 1e-8 in under 1 s of CPU (``time.process_time``,
    around ``decido.minimize`` called with the expression string: compile included);
(d) ``de`` evaluations per CPU second >= 20x scipy's vectorized differential_evolution on
    rastrigin d = 30 (medians over the seeds of the same run).

``--bbob``: the COCO ``bbob`` suite (``cocoex``, package coco-experiment), f1-f24, d = 10,
instances 1-3, budget 1000*d, every engine and peer black-box through a Python callable (the
decido engines too: never an expression).  Reported: the fraction of (function, instance)
pairs solved to 1e-8, 1e-2 and 1e0 (f_best - f_opt; f_opt read from the header COCO's
``bbob`` logger writes, cross-checked with ``problem.final_target_hit`` at 1e-8); floor: dss
solves at least as many pairs to 1e-2 as the best peer.

Usage::

    python benchmarks/compare_engines.py                  # the full suite (~40 min, 2 cores)
    python benchmarks/compare_engines.py --quick          # d = 10, 1 seed, 3 peers
    python benchmarks/compare_engines.py --problems 'rastrigin*,rosenbrock' --dims 30
    python benchmarks/compare_engines.py --bbob           # the BBOB comparison
    python benchmarks/compare_engines.py --markdown       # tables for benchmarks/README.md
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import glob
import json
import math
import os
import platform
import re
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass

# Single-threaded BLAS/OpenMP for every solver (decido is single-threaded; pycma's eigh on a
# 30x30 matrix took 33 ms instead of 0.1 ms with OpenBLAS threads on a loaded 2-core machine).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from engines_suite import SuiteProblem, select  # noqa: E402

import decido  # noqa: E402

DIMS = (10, 30, 100)
SEEDS = (1, 2, 3)
EVALS_PER_DIM = 2000
BBOB_EVALS_PER_DIM = 1000
TIME_CAP = 120.0
SOLVED = 1e-8
PEERS = ("scipy_de", "dual_annealing", "cma_ipop", "cma_bipop", "ngopt", "uniform")
QUICK_PEERS = ("scipy_de", "cma_ipop", "uniform")
# The default schedule (see Skipper; --all-runs disables it): pure-Python overhead makes these
# peers take 10-60 s per run at d >= 30 on the 2-core machine of the README.
SLOW_PEERS = ("dual_annealing", "cma_ipop", "cma_bipop", "ngopt")
SLOW_DIM = 30
PEER_MAX_DIM = {"cma_bipop": 30}
TIMEOUTS_TO_SKIP = 2
BBOB_TARGETS = (1e-8, 1e-2, 1e0)

clock = time.perf_counter
cpu_clock = time.process_time


# --------------------------------------------------------------------------
# Honest evaluation counting for the peers
# --------------------------------------------------------------------------


class BudgetExhausted(Exception):
    """Raised by Counter at the first evaluation beyond the budget."""


class TimeCapExceeded(Exception):
    """Raised by Counter once the run has taken longer than the time cap."""


class Counter:
    """Wraps an objective: counts evaluations, keeps the best of the first ``budget``."""

    def __init__(self, one: Callable, many: Callable | None, budget: int, cap: float | None):
        self._one = one
        self._many = many
        self.budget = budget
        self.cap = cap
        self.evaluations = 0
        self.best = math.inf
        self.t0 = clock()

    def _check(self) -> None:
        if self.evaluations >= self.budget:
            raise BudgetExhausted
        if self.cap is not None and clock() - self.t0 > self.cap:
            raise TimeCapExceeded

    def _record(self, v: float) -> None:
        if v < self.best:  # NaN never improves
            self.best = v

    def one(self, x) -> float:
        self._check()
        v = float(self._one(np.asarray(x, dtype=np.float64)))
        self.evaluations += 1
        self._record(v)
        return v

    def many(self, xs: np.ndarray) -> np.ndarray:
        """Rows of xs (P, n); evaluates only what the budget allows, then raises."""
        self._check()
        xs = np.asarray(xs, dtype=np.float64)
        room = self.budget - self.evaluations
        truncated = xs.shape[0] > room
        rows = xs[:room] if truncated else xs
        if self._many is not None:
            vals = np.asarray(self._many(rows), dtype=np.float64).reshape(-1)
        else:
            vals = np.array([float(self._one(r)) for r in rows])
        self.evaluations += rows.shape[0]
        if vals.size:
            finite = vals[~np.isnan(vals)]
            if finite.size:
                self._record(float(finite.min()))
        if truncated:
            raise BudgetExhausted
        return vals


@dataclass
class Run:
    solver: str
    problem: str
    d: int
    seed: int
    error: float | None  # f_best - f*; None on timeout
    evaluations: int
    wall: float
    cpu: float
    status: str  # decido's status, or 'ok' / 'budget' / 'timeout' for peers


# --------------------------------------------------------------------------
# Solvers
# --------------------------------------------------------------------------


# decido engines run with non-default options, chosen by name with --engines (not run by
# default): name -> (engine id, options)
VARIANTS: dict[str, tuple[str, dict[str, float]]] = {"cmaes_ipop": ("cmaes", {"schedule": 1})}


def decido_solvers(variants: bool = False) -> dict[str, int | None]:
    """Engine id (and, with ``variants``, the names of VARIANTS) -> max_dims (None: no
    limit)."""
    dims = {e["id"]: e["max_dims"] for e in decido.engines()}
    if variants:
        dims.update({v: dims[eng] for v, (eng, _) in VARIANTS.items()})
    return dims


def run_decido(engine: str, objective, bounds, budget: int, seed: int, vectorized=False):
    """decido.minimize (``engine`` may name one of VARIANTS); returns (best value,
    evaluations, status)."""
    engine, options = VARIANTS.get(engine, (engine, {}))
    r = decido.minimize(
        objective,
        bounds,
        engine=engine,
        max_evaluations=budget,
        seed=seed,
        vectorized=vectorized,
        options=options,
    )
    return float(r.fun), int(r.evaluations), str(r.status)


def _scipy_de(c: Counter, lo, hi, d, budget, seed):
    from scipy.optimize import differential_evolution

    popsize = 15
    maxiter = max(1, budget // (popsize * d) - 1)  # (maxiter + 1) generations of popsize*d

    def f(xt):  # vectorized: xt has shape (d, S)
        return c.many(np.asarray(xt).T)

    differential_evolution(
        f,
        list(zip(lo, hi, strict=True)),
        maxiter=maxiter,
        popsize=popsize,
        vectorized=True,
        updating="deferred",
        polish=False,
        rng=seed,
    )


def _dual_annealing(c: Counter, lo, hi, d, budget, seed):
    from scipy.optimize import dual_annealing

    dual_annealing(c.one, list(zip(lo, hi, strict=True)), maxfun=budget, rng=seed)


def _cma(c: Counter, lo, hi, d, budget, seed, bipop: bool):
    import cma

    width = hi - lo
    rng = np.random.default_rng(seed)

    def one(u):
        return c.one(lo + np.asarray(u) * width)

    def many(us):
        return list(c.many(lo + np.asarray(us) * width))

    opts = {
        "bounds": [0.0, 1.0],
        "maxfevals": budget,
        "seed": 1000 + seed,  # cma: seed 0 means "random"
        "verbose": -9,
    }
    cma.fmin2(
        one,
        lambda: rng.uniform(0.0, 1.0, d),
        0.3,
        opts,
        restarts=9,
        incpopsize=2,
        bipop=bipop,
        parallel_objective=many,
    )


def _patch_nevergrad() -> None:
    """nevergrad 1.0.12's metamodel calls ``float()`` on the length-1 array a scikit-learn
    model predicts, which NumPy >= 2.4 rejects (TypeError), so NGOpt crashes as soon as it
    picks a metamodel-assisted optimizer.  Shadow ``float`` in that module only."""
    import builtins

    from nevergrad.optimization import metamodel

    def _float(v):
        return builtins.float(np.asarray(v).reshape(-1)[0]) if np.ndim(v) else builtins.float(v)

    metamodel.float = _float


def _ngopt(c: Counter, lo, hi, d, budget, seed):
    import nevergrad as ng

    _patch_nevergrad()

    param = ng.p.Array(shape=(d,), lower=lo, upper=hi)
    param.random_state = np.random.RandomState(seed)
    opt = ng.optimizers.NGOpt(parametrization=param, budget=budget, num_workers=1)
    for _ in range(budget):
        cand = opt.ask()
        opt.tell(cand, c.one(cand.value))


def _uniform(c: Counter, lo, hi, d, budget, seed):
    rng = np.random.default_rng(seed)
    chunk = max(1, min(budget, 2_000_000 // max(d, 1)))
    while True:
        c.many(rng.uniform(lo, hi, size=(chunk, d)))


PEER_RUNNERS: dict[str, Callable] = {
    "scipy_de": _scipy_de,
    "dual_annealing": _dual_annealing,
    "cma_ipop": lambda *a: _cma(*a, bipop=False),
    "cma_bipop": lambda *a: _cma(*a, bipop=True),
    "ngopt": _ngopt,
    "uniform": _uniform,
}


def run_peer(name, one, many, lo, hi, budget, seed, cap):
    """Runs a peer under a Counter; returns (best, evaluations, status)."""
    c = Counter(one, many, budget, cap)
    status = "ok"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            PEER_RUNNERS[name](
                c, np.asarray(lo, float), np.asarray(hi, float), len(lo), budget, seed
            )
        except BudgetExhausted:
            status = "budget"
        except TimeCapExceeded:
            status = "timeout"
    return c.best, c.evaluations, status


def timed(fn, *args):
    """fn(*args), its wall and CPU seconds."""
    w0, c0 = clock(), cpu_clock()
    out = fn(*args)
    return out, clock() - w0, cpu_clock() - c0


# --------------------------------------------------------------------------
# The suite
# --------------------------------------------------------------------------


class Skipper:
    """Which peer runs the default (non ``--all-runs``) schedule leaves out.

    * slow peers (SLOW_PEERS) at d >= SLOW_DIM: ``slow_seeds`` seeds, and only the
      off-centre problems (a centred problem is skipped when its shifted twin is in the run:
      the peers start from random points, so the twin is as hard for them);
    * ngopt: ``slow_seeds`` seeds at every d;
    * PEER_MAX_DIM: a peer is not run above its limit;
    * a peer that timed out TIMEOUTS_TO_SKIP times at a dimension is not run again at that
      dimension or above (status 'skipped').
    """

    def __init__(self, problems, seeds, slow_seeds: int, enabled: bool):
        self.names = {p.name for p in problems}
        self.seeds = list(seeds)
        self.slow_seeds = slow_seeds
        self.enabled = enabled
        self.timeouts: dict[tuple[str, int], int] = {}

    def reason(self, peer: str, p: SuiteProblem, d: int, seed: int) -> str | None:
        if not self.enabled:
            return None
        if d > PEER_MAX_DIM.get(peer, 10**9):
            return "not run"
        slow = peer in SLOW_PEERS and d >= SLOW_DIM
        if (slow or peer == "ngopt") and seed not in self.seeds[: self.slow_seeds]:
            return "not run"
        if slow and p.name + "_shifted" in self.names:
            return "not run"
        for (name, d0), k in self.timeouts.items():
            if name == peer and d >= d0 and k >= TIMEOUTS_TO_SKIP:
                return "skipped"
        return None

    def record(self, peer: str, d: int, status: str) -> None:
        if status == "timeout":
            self.timeouts[(peer, d)] = self.timeouts.get((peer, d), 0) + 1


def run_suite(
    problems: list[SuiteProblem],
    dims,
    seeds,
    engines,
    peers,
    cap,
    skipper: Skipper,
    log,
    verbose=False,
):
    runs: list[Run] = []
    for d in dims:
        for p in problems:
            budget = EVALS_PER_DIM * d
            bounds = p.bounds(d)
            lo = np.array([b[0] for b in bounds])
            hi = np.array([b[1] for b in bounds])
            expr = decido.Expression(p.expression, n=d)
            fstar = p.fstar(d)
            t_row = clock()
            for seed in seeds:
                for e, max_dims in engines.items():
                    if max_dims is not None and d > max_dims:
                        continue
                    (best, evals, status), wall, cpu = timed(
                        run_decido, e, expr, bounds, budget, seed
                    )
                    runs.append(Run(e, p.name, d, seed, best - fstar, evals, wall, cpu, status))
                for name in peers:
                    why = skipper.reason(name, p, d, seed)
                    if why == "not run":
                        continue
                    if why == "skipped":
                        runs.append(Run(name, p.name, d, seed, None, 0, 0.0, 0.0, "skipped"))
                        continue
                    (best, evals, status), wall, cpu = timed(
                        run_peer, name, p.numpy, p.numpy, lo, hi, budget, seed, cap
                    )
                    skipper.record(name, d, status)
                    err = None if status == "timeout" else best - fstar
                    runs.append(Run(name, p.name, d, seed, err, evals, wall, cpu, status))
                    if verbose:
                        log(
                            f"    {name:15s} seed {seed} {fmt_err(err):>8s} {evals:7d} evals "
                            f"{wall:7.2f} s wall {status}"
                        )
            log(f"  {p.name:20s} d={d:<4d} {clock() - t_row:7.1f} s")
    return runs


def _median(values):
    return statistics.median(values) if values else None


def summarize(runs: list[Run]):
    """(problem, d, solver) -> dict(error, wall, cpu, evals, n, timeout)."""
    groups: dict[tuple[str, int, str], list[Run]] = {}
    for r in runs:
        groups.setdefault((r.problem, r.d, r.solver), []).append(r)
    out = {}
    for key, rs in groups.items():
        timeouts = sum(r.status in ("timeout", "skipped") for r in rs)
        skipped = all(r.status == "skipped" for r in rs)
        errs = [max(r.error, 0.0) for r in rs if r.error is not None]
        out[key] = {
            "error": None if timeouts else _median(errs),
            "wall": _median([r.wall for r in rs]),
            "cpu": _median([r.cpu for r in rs]),
            "evals": _median([r.evaluations for r in rs]),
            "eps": _median([r.evaluations / r.cpu for r in rs if r.cpu > 0]),
            "n": len(rs),
            "timeout": timeouts,
            "skipped": skipped,
        }
    return out


def fmt_err(v: float | None) -> str:
    if v is None:
        return "timeout"
    if v == 0.0:
        return "0"
    return f"{v:.1e}"


def fmt_time(v: float | None) -> str:
    if v is None:
        return "-"
    if v < 0.01:
        return f"{v * 1000:.1f}ms"
    if v < 10:
        return f"{v:.2f}"
    return f"{v:.0f}"


def is_best(v, best) -> bool:
    if v is None or best is None:
        return False
    return v <= best or (v < SOLVED and best < SOLVED)


def tables(summary, problems, dims, solvers) -> str:
    lines = []
    head = "| problem | d | " + " | ".join(solvers) + " |"
    sep = "|---|---:|" + "---:|" * len(solvers)
    err_rows, time_rows = [], []
    for p in problems:
        for d in dims:
            cells = [summary.get((p.name, d, s)) for s in solvers]
            if not any(cells):
                continue
            errs = [c["error"] if c else None for c in cells]
            best = min((e for e in errs if e is not None), default=None)
            row = []
            for c, e in zip(cells, errs, strict=True):
                if c is None:
                    row.append("")
                    continue
                txt = "skipped" if c["skipped"] else fmt_err(e)
                if c["n"] == 1 and len({c2["n"] for c2 in cells if c2}) > 1:
                    txt += "¹"
                row.append(f"**{txt}**" if is_best(e, best) else txt)
            err_rows.append(f"| {p.name} | {d} | " + " | ".join(row) + " |")
            walls = [("-" if c["skipped"] else fmt_time(c["wall"])) if c else "" for c in cells]
            time_rows.append(f"| {p.name} | {d} | " + " | ".join(walls) + " |")
    lines.append("Median final error f - f* (best of each row in bold; < 1e-8 counts as a tie):")
    lines.append("")
    lines += [head, sep, *err_rows]
    lines.append("")
    lines.append("Median wall time per run, seconds:")
    lines.append("")
    lines += [head, sep, *time_rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Floors
# --------------------------------------------------------------------------


def floor_a(summary, problems, dims, peers):
    """dss median error <= best peer median (or both < 1e-8) on every row."""
    misses, checked = [], 0
    for p in problems:
        for d in dims:
            dss = summary.get((p.name, d, "dss"))
            cand = [
                (summary[(p.name, d, s)]["error"], s)
                for s in peers
                if (p.name, d, s) in summary and summary[(p.name, d, s)]["error"] is not None
            ]
            if dss is None or not cand:
                continue
            checked += 1
            best, who = min(cand)
            e = dss["error"]
            if not is_best(e, best):
                misses.append((p.name, d, e, best, who))
    return checked, misses


def floor_b(seeds, log):
    """Separable problems at d = 1000, dss, budget 2000*d, every seed < 1e-8."""
    d = 1000
    rows = []
    for p in select(None):
        if not p.separable:
            continue
        expr = decido.Expression(p.expression, n=d)
        for seed in seeds:
            (best, evals, status), wall, cpu = timed(
                run_decido, "dss", expr, p.bounds(d), EVALS_PER_DIM * d, seed
            )
            rows.append((p.name, seed, best - p.fstar(d), evals, status, cpu))
    worst: dict[str, tuple] = {}
    for name, _seed, err, evals, status, cpu in rows:
        w = worst.get(name)
        if w is None or err > w[0]:
            worst[name] = (err, evals, status, cpu)
    for name, (err, evals, status, cpu) in worst.items():
        log(
            f"  dss d=1000 {name:20s} worst error {err:.1e}  evals {evals}  {status}  "
            f"cpu {cpu:.3f} s"
        )
    fails = [(k, v[0]) for k, v in worst.items() if not v[0] < SOLVED]
    return worst, fails


def floor_c(seeds):
    """dss on rastrigin d = 1000 from the string: error < 1e-8 and CPU < 1 s (every seed)."""
    p = select("rastrigin")[0]
    d = 1000
    out = []
    for seed in seeds:
        (best, evals, status), wall, cpu = timed(
            run_decido, "dss", p.expression, p.bounds(d), EVALS_PER_DIM * d, seed
        )
        out.append((best - p.fstar(d), evals, cpu, wall))
    return out


def floor_d(summary, runs_needed: Callable[[], list[Run]]):
    """de vs scipy_de evaluations per CPU second on rastrigin d = 30."""
    de = summary.get(("rastrigin", 30, "de"))
    sp = summary.get(("rastrigin", 30, "scipy_de"))
    if de is None or sp is None:
        s2 = summarize(runs_needed())
        de, sp = s2[("rastrigin", 30, "de")], s2[("rastrigin", 30, "scipy_de")]
    return de, sp


# --------------------------------------------------------------------------
# BBOB
# --------------------------------------------------------------------------


def bbob_fopt(dim: int, functions, instances) -> dict[tuple[int, int], float]:
    """f_opt of every (function, instance), read from the headers of the data files the
    ``bbob`` logger writes (``... - Fopt (<value>) ...``), one evaluation per problem in a
    temporary directory.  The installed cocoex does not expose f_opt directly."""
    import cocoex

    cocoex.log_level("error")
    fopt: dict[tuple[int, int], float] = {}
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            suite = cocoex.Suite(
                "bbob",
                f"instances:{','.join(map(str, instances))}",
                f"dimensions:{dim} function_indices:{','.join(map(str, functions))}",
            )
            obs = cocoex.Observer("bbob", "result_folder: fopt")
            order: dict[int, list[int]] = {}
            for prob in suite:
                prob.observe_with(obs)
                prob(np.zeros(dim))
                order.setdefault(prob.id_function, []).append(prob.id_instance)
                prob.free()
            del obs
            for path in glob.glob(os.path.join(tmp, "**", "*.dat"), recursive=True):
                m = re.search(r"_f(\d+)_DIM(\d+)\.dat$", path)
                if not m or int(m.group(2)) != dim:
                    continue
                fid = int(m.group(1))
                with open(path) as fh:
                    heads = [float(h) for h in re.findall(r"Fopt \(([-+0-9.eE]+)\)", fh.read())]
                for inst, value in zip(order[fid], heads, strict=True):
                    fopt[(fid, inst)] = value
        finally:
            os.chdir(cwd)
    missing = [(f, i) for f in functions for i in instances if (f, i) not in fopt]
    if missing:
        raise RuntimeError(f"no f_opt for {missing}")
    return fopt


def run_bbob(engines, peers, functions, instances, dim, cap, log, reduced=True, slow_seeds=1):
    """Every solver on every (function, instance); with ``reduced``, ngopt runs only the first
    ``slow_seeds`` instances and a peer is skipped after TIMEOUTS_TO_SKIP timeouts."""
    import cocoex

    cocoex.log_level("error")
    fopt = bbob_fopt(dim, functions, instances)
    suite = cocoex.Suite(
        "bbob",
        f"instances:{','.join(map(str, instances))}",
        f"dimensions:{dim} function_indices:{','.join(map(str, functions))}",
    )
    budget = BBOB_EVALS_PER_DIM * dim
    rows = []
    mismatches = []
    timeouts: dict[str, int] = {}
    for f in functions:
        t_row = clock()
        for inst in instances:
            solvers = [(e, True) for e, md in engines.items() if md is None or dim <= md]
            solvers += [(s, False) for s in peers]
            for name, is_decido in solvers:
                if name == "ngopt" and reduced and inst not in instances[:slow_seeds]:
                    continue
                if reduced and timeouts.get(name, 0) >= TIMEOUTS_TO_SKIP:
                    rows.append(Run(name, f"f{f}", dim, inst, None, 0, 0.0, 0.0, "skipped"))
                    continue
                prob = suite.get_problem_by_function_dimension_instance(f, dim, inst)
                lo, hi = np.asarray(prob.lower_bounds), np.asarray(prob.upper_bounds)
                if is_decido:
                    c = Counter(prob, None, budget, None)
                    (_, evals, status), wall, cpu = timed(
                        run_decido, name, c.one, np.column_stack([lo, hi]), budget, inst
                    )
                    best = c.best
                else:
                    (best, evals, status), wall, cpu = timed(
                        run_peer, name, prob, None, lo, hi, budget, inst, cap
                    )
                if status == "timeout":
                    timeouts[name] = timeouts.get(name, 0) + 1
                err = best - fopt[(f, inst)]
                hit = bool(prob.final_target_hit)
                if status != "timeout" and hit != (err < 1e-8):
                    mismatches.append((name, f, inst, err, hit))
                rows.append(
                    Run(
                        name,
                        f"f{f}",
                        dim,
                        inst,
                        None if status == "timeout" else err,
                        evals,
                        wall,
                        cpu,
                        status,
                    )
                )
                prob.free()
        log(f"  bbob f{f:<3d} {clock() - t_row:7.1f} s")
    return rows, mismatches


def bbob_table(rows: list[Run], solvers) -> tuple[str, dict[str, dict[float, float]]]:
    """Pairs solved per target as 'solved/attempted' (bold: the best fraction); returns the
    fractions."""
    frac: dict[str, dict[float, float]] = {}
    counts: dict[str, dict[float, int]] = {}
    total: dict[str, int] = {}
    walls: dict[str, float] = {}
    timeouts: dict[str, int] = {}
    for s in solvers:
        rs = [r for r in rows if r.solver == s]
        total[s] = len(rs)
        counts[s] = {t: sum(r.error is not None and r.error < t for r in rs) for t in BBOB_TARGETS}
        frac[s] = {t: counts[s][t] / max(total[s], 1) for t in BBOB_TARGETS}
        walls[s] = sum(r.wall for r in rs)
        timeouts[s] = sum(r.status in ("timeout", "skipped") for r in rs)
    head = "| target | " + " | ".join(solvers) + " |"
    sep = "|---|" + "---:|" * len(solvers)
    lines = [head, sep]
    for t in BBOB_TARGETS:
        best = max(frac[s][t] for s in solvers)
        cells = []
        for s in solvers:
            txt = f"{counts[s][t]}/{total[s]}"
            cells.append(f"**{txt}**" if frac[s][t] == best else txt)
        lines.append(f"| f - f_opt < {t:g} | " + " | ".join(cells) + " |")
    lines.append("| total wall, s | " + " | ".join(f"{walls[s]:.0f}" for s in solvers) + " |")
    if any(timeouts.values()):
        lines.append(
            "| timeouts + skipped | " + " | ".join(str(timeouts[s]) for s in solvers) + " |"
        )
    return "\n".join(lines), frac


def bbob_per_function(rows: list[Run], solvers, functions) -> str:
    head = "| f | " + " | ".join(solvers) + " |"
    sep = "|---|" + "---:|" * len(solvers)
    lines = [
        "Median error f - f_opt over the instances, per function:",
        "",
        head,
        sep,
    ]
    for f in functions:
        cells = []
        errs = {}
        for s in solvers:
            rs = [r for r in rows if r.solver == s and r.problem == f"f{f}"]
            if any(r.error is None for r in rs):
                errs[s] = None
            else:
                errs[s] = _median([max(r.error, 0.0) for r in rs])
        best = min((e for e in errs.values() if e is not None), default=None)
        for s in solvers:
            txt = fmt_err(errs[s])
            cells.append(f"**{txt}**" if is_best(errs[s], best) else txt)
        lines.append(f"| f{f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    versions = [f"Python {platform.python_version()}", f"NumPy {np.__version__}"]
    for mod in ("decido", "scipy", "cma", "nevergrad", "cocoex"):
        try:
            m = __import__(mod)
            versions.append(f"{mod} {getattr(m, '__version__', '?')}")
        except ImportError:
            versions.append(f"{mod} missing")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"CPU: {cpu} x {os.cpu_count()}; load average {load:.1f} at the start; " + "; ".join(
        versions
    )


def parse_list(text: str | None, cast=str):
    if text is None:
        return None
    return [cast(t.strip()) for t in text.split(",") if t.strip()]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="d = 10, 1 seed, 3 peers")
    ap.add_argument("--problems", help="comma-separated; 'name*' adds the shifted variant")
    ap.add_argument("--dims", help="comma-separated dimensions (default 10,30,100)")
    ap.add_argument("--seeds", help="comma-separated seeds (default 1,2,3)")
    ap.add_argument(
        "--engines",
        help=f"decido engines (default: all), or a variant: {', '.join(VARIANTS)}",
    )
    ap.add_argument("--peers", help=f"comma-separated, from {','.join(PEERS)}; 'none' for none")
    ap.add_argument(
        "--slow-seeds",
        type=int,
        default=1,
        help=f"seeds for {','.join(SLOW_PEERS)} at d >= {SLOW_DIM}, and for ngopt",
    )
    ap.add_argument(
        "--all-runs",
        action="store_true",
        help="no reduced schedule for the slow peers (every seed, problem, d)",
    )
    ap.add_argument("--time-cap", type=float, default=TIME_CAP, help="seconds per peer run")
    ap.add_argument("--no-floors", action="store_true", help="skip the d = 1000 floors")
    ap.add_argument("--bbob", action="store_true", help="the COCO bbob comparison instead")
    ap.add_argument("--functions", help="bbob functions (default 1-24)")
    ap.add_argument("--instances", help="bbob instances (default 1,2,3)")
    ap.add_argument("--markdown", action="store_true", help="only the markdown (no progress)")
    ap.add_argument("--verbose", action="store_true", help="log every peer run")
    ap.add_argument("--save", help="write every run as JSON to this file")
    ap.add_argument(
        "--load",
        help="render the tables of a --save'd suite run (no new runs "
        "but the d = 1000 floors, unless --no-floors)",
    )
    args = ap.parse_args(argv)

    quick = args.quick
    dims = parse_list(args.dims, int) or ([10] if quick else list(DIMS))
    seeds = parse_list(args.seeds, int) or ([SEEDS[0]] if quick else list(SEEDS))
    all_engines = decido_solvers(variants=True)
    names = parse_list(args.engines) or list(decido_solvers())
    unknown = [e for e in names if e not in all_engines]
    if unknown:
        ap.error(f"unknown engines {unknown}; known: {list(all_engines)}")
    engines = {e: all_engines[e] for e in names}
    if args.peers == "none":
        peers: list[str] = []
    else:
        peers = parse_list(args.peers) or list(QUICK_PEERS if quick else PEERS)
    bad = [p for p in peers if p not in PEER_RUNNERS]
    if bad:
        ap.error(f"unknown peers {bad}; known: {list(PEER_RUNNERS)}")

    def log(msg: str) -> None:
        if not args.markdown:
            print(msg, file=sys.stderr, flush=True)

    started = clock()
    when = datetime.date.today().isoformat()
    cmd = "python benchmarks/compare_engines.py " + " ".join(sys.argv[1:] if argv is None else argv)
    print(f"Command: `{cmd.strip()}` ({when})  ")
    print(machine() + "  ")

    if args.bbob:
        functions = parse_list(args.functions, int) or list(range(1, 25))
        instances = parse_list(args.instances, int) or [1, 2, 3]
        dim = 10
        rows, mismatches = run_bbob(
            engines,
            peers,
            functions,
            instances,
            dim,
            args.time_cap,
            log,
            not args.all_runs,
            args.slow_seeds,
        )
        solvers = [e for e in engines if engines[e] is None or dim <= engines[e]] + peers
        fl = ",".join(f"f{f}" for f in functions) if len(functions) < 24 else "f1-f24"
        print(
            f"BBOB: {fl}, d = {dim}, instances {','.join(map(str, instances))}, budget "
            f"{BBOB_EVALS_PER_DIM * dim} evaluations, every solver through a Python callable; "
            f"peer time cap {args.time_cap:g} s; wall time {clock() - started:.0f} s."
        )
        if not args.all_runs and "ngopt" in peers:
            print(
                f"ngopt ran instance(s) {instances[: args.slow_seeds]} only; a peer is skipped "
                f"after {TIMEOUTS_TO_SKIP} timeouts."
            )
        print()
        table, frac = bbob_table(rows, solvers)
        print(table)
        print()
        print(bbob_per_function(rows, solvers, functions))
        print()
        if mismatches:
            print(
                f"final_target_hit disagrees with f - f_opt < 1e-8 on {len(mismatches)} runs: "
                f"{mismatches[:5]}"
            )
        else:
            print("final_target_hit agrees with f - f_opt < 1e-8 on every run.")
        if "dss" in frac and peers:
            best_peer = max(peers, key=lambda s: frac[s][1e-2])
            ok = frac["dss"][1e-2] >= frac[best_peer][1e-2]
            print(
                f"\nFloor: dss's share of pairs solved to 1e-2 >= the best peer's: dss "
                f"{frac['dss'][1e-2]:.1%}, {best_peer} {frac[best_peer][1e-2]:.1%} -> "
                f"{'MET' if ok else 'MISSED'}"
            )
        if args.save:
            with open(args.save, "w") as fh:
                json.dump([asdict(r) for r in rows], fh)
        return 0

    problems = select(args.problems)
    skipper = Skipper(problems, seeds, args.slow_seeds, not args.all_runs)
    if args.load:
        # Re-render a saved run.  Runs saved before the Skipper checked "not run" before
        # "skipped" carry spurious 'skipped' rows for seeds that were never scheduled: drop them.
        by_name = {p.name: p for p in problems}
        with open(args.load) as fh:
            runs = [Run(**r) for r in json.load(fh)]
        runs = [
            r
            for r in runs
            if r.problem in by_name
            and r.d in dims
            and r.seed in seeds
            and not (
                r.status == "skipped"
                and skipper.reason(r.solver, by_name[r.problem], r.d, r.seed) == "not run"
            )
        ]
    else:
        runs = run_suite(
            problems, dims, seeds, engines, peers, args.time_cap, skipper, log, args.verbose
        )
    suite_wall = clock() - started
    summary = summarize(runs)
    solvers = list(engines) + peers
    budget_txt = f"{EVALS_PER_DIM}*d"
    note = ""
    if not args.all_runs and any(p in SLOW_PEERS for p in peers):
        note = (
            f" Reduced schedule for the slow peers: {', '.join(SLOW_PEERS)} at d >= "
            f"{SLOW_DIM} and ngopt at every d with {args.slow_seeds} seed(s) (¹); at "
            f"d >= {SLOW_DIM} the slow peers run only the off-centre problems (blank cells: "
            f"the centred twin of a shifted problem); "
            + ", ".join(f"{k} only up to d = {v}" for k, v in PEER_MAX_DIM.items())
            + f"; 'skipped': not run after {TIMEOUTS_TO_SKIP} timeouts at this or a lower "
            f"d."
        )
    print(
        f"Suite: {len(problems)} problems, d in {dims}, budget {budget_txt} evaluations, seeds "
        f"{seeds}; decido engines get the compiled expression, peers the NumPy function; "
        f"peer time cap {args.time_cap:g} s; suite wall time {suite_wall:.0f} s.{note}"
    )
    print()
    print(tables(summary, problems, dims, solvers))
    print()

    results = {}
    if "dss" in engines and peers:
        checked, misses = floor_a(summary, problems, dims, peers)
        results["a"] = not misses
        print(
            f"(a) dss median error <= best peer's (or both < 1e-8) on {checked - len(misses)}"
            f"/{checked} rows -> {'MET' if not misses else 'MISSED'}"
        )
        for name, d, e, best, who in misses:
            ratio = "" if best <= 0 else f", {e / best:.3g}x"
            print(f"    {name} d={d}: dss {fmt_err(e)} vs {who} {fmt_err(best)}{ratio}")
    if not args.no_floors:
        worst, fails = floor_b(seeds, log)
        results["b"] = not fails
        print(
            f"(b) separable problems at d = 1000 solved to < 1e-8 by dss (worst of seeds "
            f"{seeds}): {len(worst) - len(fails)}/{len(worst)} -> "
            f"{'MET' if not fails else 'MISSED'}"
        )
        for name, (err, evals, _status, cpu) in worst.items():
            print(f"    {name}: error {fmt_err(err)}, {evals} evaluations, {cpu:.3f} s CPU")
        cres = floor_c(seeds)
        ok_c = all(e < SOLVED and cpu < 1.0 for e, _, cpu, _ in cres)
        results["c"] = ok_c
        print(
            f"(c) dss rastrigin d = 1000 from the string: errors "
            f"{', '.join(fmt_err(e) for e, *_ in cres)}; CPU "
            f"{', '.join(f'{c:.3f}' for _, _, c, _ in cres)} s; evaluations "
            f"{', '.join(str(n) for _, n, _, _ in cres)} -> {'MET' if ok_c else 'MISSED'}"
        )
    if "de" in engines:

        def extra():
            p = select("rastrigin")
            sk = Skipper(p, seeds, len(seeds), False)
            return run_suite(p, [30], seeds, {"de": None}, ["scipy_de"], args.time_cap, sk, log)

        de, sp = floor_d(summary, extra)
        ratio = de["eps"] / sp["eps"]
        wall_ratio = (de["evals"] / de["wall"]) / (sp["evals"] / sp["wall"])
        results["d"] = ratio >= 20
        print(
            f"(d) rastrigin d = 30: de {de['eps']:,.0f} evaluations per CPU second "
            f"({de['evals']:.0f} evals), scipy_de {sp['eps']:,.0f} ({sp['evals']:.0f} evals): "
            f"{ratio:.1f}x (by wall time {wall_ratio:.1f}x) -> "
            f"{'MET' if ratio >= 20 else 'MISSED'} (>= 20x)"
        )
    print(f"\nTotal wall time {clock() - started:.0f} s.")
    if args.save:
        with open(args.save, "w") as fh:
            json.dump([asdict(r) for r in runs], fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
