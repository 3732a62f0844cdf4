#!/usr/bin/env python3
"""Sample-efficient engines (issue 41): decido's ``auto`` against nevergrad ``NGOpt``, Optuna's
``TPESampler`` and random search on BBOB at small budgets, and the suggestion overhead of
``bo`` and ``tpe``.

BBOB: the COCO ``bbob`` suite (``cocoex``, package coco-experiment), functions f1-f24,
dimensions 5 and 10, instances 1-3. Every solver sees the same black box (a Python callable
on the problem's box [-5, 5]^d) and is held to its budget by a counter that records the best
value of the first ``budget`` evaluations and stops the run at the next one:

* ``auto``: ``decido.minimize(f, engine="auto", max_evaluations=100, seed=instance)`` (at
  this budget and dimension it runs ``bo``; the result says so in ``engine_chosen``);
* ``ngopt``: nevergrad ``NGOpt`` (parametrization ``ng.p.Array(shape=(d,), lower=-5,
  upper=5)``, budget 100, num_workers 1, ask/tell; seeded by the instance; with
  ``compare_engines``'s patch for NumPy >= 2.4);
* ``tpe50``: Optuna ``TPESampler(seed=instance)`` (its defaults: 10 startup trials,
  univariate), 50 trials, one float suggestion per coordinate;
* ``random``: decido's ``random`` engine, 100 evaluations.

Reported per function and dimension: the median over the 3 instances of the precision
f_best - f_opt (f_opt read from the headers COCO's ``bbob`` logger writes:
``compare_engines.bbob_fopt``), and the counts the issue's goals name: functions where
``auto``'s median is at or below NGOpt's, within 10x of it, and at or below TPE's (at 50).

Overhead (``--overhead``): CPU milliseconds per suggestion of ``bo`` once it models 200
points in 10 dimensions (the iterations from 190 to 200 evaluations of a run on a cheap
callable: the time between callbacks minus nothing, as the objective costs microseconds),
and of ``tpe`` at 1,000 trials in 10 dimensions (iterations 990 to 1,000); medians over 3
seeds, measured with ``time.process_time``.

Usage::

    python benchmarks/sample_efficient.py --dims 5            # one dimension (~5 min)
    python benchmarks/sample_efficient.py --functions 1-6     # a subset
    python benchmarks/sample_efficient.py --overhead          # suggestion overhead only
    python benchmarks/sample_efficient.py --budget 200 --solvers auto   # bo past 100 points
    python benchmarks/sample_efficient.py --markdown          # tables for README.md

Needs the ``bench`` extra (coco-experiment, optuna, nevergrad).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import decido  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_engines import _patch_nevergrad, bbob_fopt  # noqa: E402

BUDGET = 100
TPE_BUDGET = 50
INSTANCES = (1, 2, 3)
SOLVERS = ("auto", "ngopt", "tpe50", "random")


class Budget(Exception):
    """Raised by the counter at the first evaluation beyond the budget."""


class Counter:
    """The black box with a budget: the best value of the first ``budget`` evaluations."""

    def __init__(self, problem: Any, budget: int) -> None:
        self.problem, self.budget, self.count, self.best = problem, budget, 0, math.inf

    def __call__(self, x: Any) -> float:
        if self.count >= self.budget:
            raise Budget
        self.count += 1
        v = float(self.problem(np.asarray(x, dtype=np.float64)))
        self.best = min(self.best, v)
        return v


def run_auto(f: Counter, dim: int, seed: int, engine: str = "auto") -> str:
    r = decido.minimize(f, [(-5.0, 5.0)] * dim, engine=engine, max_evaluations=f.budget,
                        seed=seed)
    return r.engine_chosen


def run_ngopt(f: Counter, dim: int, seed: int) -> str:
    import nevergrad as ng

    _patch_nevergrad()
    param = ng.p.Array(shape=(dim,), lower=-5.0, upper=5.0)
    param.random_state = np.random.RandomState(seed)
    opt = ng.optimizers.NGOpt(parametrization=param, budget=f.budget, num_workers=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            for _ in range(f.budget):
                cand = opt.ask()
                opt.tell(cand, f(cand.value))
        except Budget:
            pass
    return "NGOpt"


def run_tpe(f: Counter, dim: int, seed: int) -> str:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))

    def objective(trial: Any) -> float:
        return f([trial.suggest_float(f"x{j}", -5.0, 5.0) for j in range(dim)])

    with contextlib.suppress(Budget):
        study.optimize(objective, n_trials=f.budget, catch=())
    return "TPESampler"


RUNNERS: dict[str, tuple[Callable[[Counter, int, int], str], int]] = {
    "auto": (run_auto, BUDGET),
    "ngopt": (run_ngopt, BUDGET),
    "tpe50": (run_tpe, TPE_BUDGET),
    "random": (lambda f, d, s: run_auto(f, d, s, "random"), BUDGET),
}


def bbob(dims: list[int], functions: list[int], solvers: list[str], log: Callable[[str], None]
         ) -> dict[tuple[str, int, int], float]:
    """Median precision over the instances, by (solver, dim, function)."""
    import cocoex

    cocoex.log_level("error")
    out: dict[tuple[str, int, int], float] = {}
    for dim in dims:
        fopt = bbob_fopt(dim, functions, INSTANCES)
        suite = cocoex.Suite("bbob", f"instances:{','.join(map(str, INSTANCES))}",
                             f"dimensions:{dim} function_indices:"
                             f"{','.join(map(str, functions))}")
        prec: dict[tuple[str, int], list[float]] = {}
        for prob in suite:
            fid, inst = prob.id_function, prob.id_instance
            for name in solvers:
                runner, budget = RUNNERS[name]
                counter = Counter(prob, budget)
                t0 = time.process_time()
                try:
                    runner(counter, dim, inst)
                except Budget:
                    pass
                p = counter.best - fopt[(fid, inst)]
                prec.setdefault((name, fid), []).append(p)
                log(f"d={dim} f{fid} i{inst} {name}: {p:.3e} "
                    f"({time.process_time() - t0:.2f} s CPU)")
            prob.free()
        for (name, fid), values in prec.items():
            out[(name, dim, fid)] = statistics.median(values)
    return out


def overhead(log: Callable[[str], None]) -> dict[str, float]:
    """CPU ms per suggestion: bo at 190-200 points in 10-D, tpe at 990-1000 trials."""
    res: dict[str, float] = {}
    for engine, budget, lo in (("bo", 200, 190), ("tpe", 1000, 990)):
        per: list[float] = []
        for seed in (1, 2, 3):
            stamps: list[tuple[int, float]] = []

            def cb(p: dict[str, Any], stamps: list[tuple[int, float]] = stamps) -> bool:
                stamps.append((int(p["evaluations"]), time.process_time()))
                return False

            decido.minimize(lambda x: float(np.sum((x - 0.3) ** 2)), [(-5.0, 5.0)] * 10,
                            engine=engine, max_evaluations=budget, seed=seed, callback=cb)
            window = [(e, t) for e, t in stamps if e >= lo]
            (e0, t0), (e1, t1) = window[0], window[-1]
            per.append(1e3 * (t1 - t0) / (e1 - e0))
        res[engine] = statistics.median(per)
        log(f"{engine}: {res[engine]:.3f} ms per suggestion (seeds: "
            + ", ".join(f"{v:.3f}" for v in per) + ")")
    return res


def table(results: dict[tuple[str, int, int], float], dims: list[int], functions: list[int],
          solvers: list[str], budget: int = BUDGET) -> str:
    lines = []
    for dim in dims:
        lines.append(f"\nd = {dim}: median f_best - f_opt over instances 1-3 "
                     f"({budget} evaluations; tpe50: {TPE_BUDGET})\n")
        lines.append("| f | " + " | ".join(solvers) + " |")
        lines.append("|---" * (len(solvers) + 1) + "|")
        le_ng = within10 = le_tpe = 0
        for fid in functions:
            row = [results[(s, dim, fid)] for s in solvers]
            best = min(row)
            cells = [f"**{v:.3g}**" if v == best else f"{v:.3g}" for v in row]
            lines.append(f"| f{fid} | " + " | ".join(cells) + " |")
            a = results.get(("auto", dim, fid))
            ng = results.get(("ngopt", dim, fid))
            tp = results.get(("tpe50", dim, fid))
            if a is not None and ng is not None:
                le_ng += a <= ng
                within10 += a <= 10 * max(ng, 1e-12)
            if a is not None and tp is not None:
                le_tpe += a <= tp
        lines.append(f"\nd = {dim}: auto at or below NGOpt on {le_ng} of {len(functions)}, "
                     f"within 10x of it on {within10}; at or below TPE (50) on {le_tpe}.")
    return "\n".join(lines)


def parse_range(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += list(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dims", default="5,10")
    ap.add_argument("--functions", default="1-24")
    ap.add_argument("--solvers", default=",".join(SOLVERS))
    ap.add_argument("--budget", type=int, default=BUDGET,
                    help="evaluations of auto and random (100; 200 exercises bo's model "
                         "beyond 100 points)")
    ap.add_argument("--overhead", action="store_true", help="suggestion overhead only")
    ap.add_argument("--markdown", action="store_true", help="print the tables at the end")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()

    def log(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    if args.overhead:
        overhead(log)
        return
    dims, functions = parse_range(args.dims), parse_range(args.functions)
    solvers = args.solvers.split(",")
    for name in ("auto", "random"):
        RUNNERS[name] = (RUNNERS[name][0], args.budget)
    results = bbob(dims, functions, solvers, log)
    print(table(results, dims, functions, solvers, args.budget))


if __name__ == "__main__":
    main()
