#!/usr/bin/env python3
"""What ``auto`` should run for a study without ``max_trials`` (issue 41).

Such a study plans for 1,000 trials (100 per variable, at least 1,000), so ``auto`` runs
``cmaes``.  This compares, through the library's ask/tell (``decido.Study``, one trial per
ask, no ``max_trials``), ``engine="auto"`` against ``engine="bo"`` on the COCO ``bbob``
suite (``cocoex``, package coco-experiment): functions f1-f24, dimensions 5 and 10,
instances 1-3 (the study's seed is the instance), the box [-5, 5]^d.

Reported per dimension and function: the median over the instances of the precision
f_best - f_opt after 50, 100, 200, 500 and 1,000 trials (f_opt: ``compare_engines.bbob_fopt``),
and per checkpoint how many functions ``bo`` is at or below ``auto`` and the geometric
mean of bo/auto (precisions floored at 1e-8).  ``--overhead``: CPU milliseconds per
suggestion (ask + tell, ``time.process_time``) from trial 500 to 1,000 of a 10-D study on a
cheap quadratic, ``auto`` and ``bo``, medians over 3 seeds.

Usage (needs coco-experiment, in the ``bench`` extra)::

    .venv/bin/python benchmarks/study_auto.py --dims 5 10
    .venv/bin/python benchmarks/study_auto.py --overhead
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import decido  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_engines import bbob_fopt  # noqa: E402

CHECKPOINTS = (50, 100, 200, 500, 1000)
INSTANCES = (1, 2, 3)
ENGINES = ("auto", "bo")
FLOOR = 1e-8


def run(problem: Any, dim: int, engine: str, seed: int) -> list[float]:
    """Best value after each checkpoint of a study without max_trials."""
    study = decido.Study([(-5.0, 5.0)] * dim, engine=engine, seed=seed)
    best, out = math.inf, []
    for i in range(1, CHECKPOINTS[-1] + 1):
        trial = study.ask()[0]
        v = float(problem(np.asarray(trial.x, dtype=np.float64)))
        study.tell(trial, v)
        best = min(best, v)
        if i in CHECKPOINTS:
            out.append(best)
    return out


def bbob(dim: int, functions: list[int]) -> dict[tuple[str, int], list[float]]:
    """Median precision at each checkpoint, by (engine, function)."""
    import cocoex

    cocoex.log_level("error")
    fopt = bbob_fopt(dim, functions, INSTANCES)
    suite = cocoex.Suite("bbob", f"instances:{','.join(map(str, INSTANCES))}",
                         f"dimensions:{dim} function_indices:{','.join(map(str, functions))}")
    prec: dict[tuple[str, int], list[list[float]]] = {}
    for prob in suite:
        fid, inst = prob.id_function, prob.id_instance
        for engine in ENGINES:
            t0 = time.process_time()
            p = [b - fopt[(fid, inst)] for b in run(prob, dim, engine, inst)]
            prec.setdefault((engine, fid), []).append(p)
            print(f"d={dim} f{fid} i{inst} {engine}: " + " ".join(f"{v:.2e}" for v in p)
                  + f" ({time.process_time() - t0:.2f} s CPU)", file=sys.stderr, flush=True)
        prob.free()
    return {k: [statistics.median(col) for col in zip(*v, strict=True)]
            for k, v in prec.items()}


def table(res: dict[tuple[str, int], list[float]], dim: int, functions: list[int]) -> str:
    head = " | ".join(f"auto {c} | bo {c}" for c in CHECKPOINTS)
    lines = [f"\nd = {dim}: median f_best - f_opt over instances 1-3, studies without "
             "max_trials\n", f"| f | {head} |", "|---" * (1 + 2 * len(CHECKPOINTS)) + "|"]
    for fid in functions:
        a, b = res[("auto", fid)], res[("bo", fid)]
        cells = " | ".join(f"{x:.2g} | {y:.2g}" for x, y in zip(a, b, strict=True))
        lines.append(f"| f{fid} | {cells} |")
    summary = []
    for k, c in enumerate(CHECKPOINTS):
        ratios = [math.log10(max(res[("bo", f)][k], FLOOR) / max(res[("auto", f)][k], FLOOR))
                  for f in functions]
        wins = sum(res[("bo", f)][k] <= res[("auto", f)][k] for f in functions)
        summary.append(f"{c}: bo <= auto on {wins}/{len(functions)}, geometric mean bo/auto "
                       f"{10 ** statistics.fmean(ratios):.2g}")
    return "\n".join(lines) + "\n\n" + "; ".join(summary)


def overhead() -> None:
    """CPU ms per ask + tell from trial 500 to 1,000 in 10-D."""
    for engine in ENGINES:
        per = []
        for seed in (1, 2, 3):
            study = decido.Study([(-5.0, 5.0)] * 10, engine=engine, seed=seed)
            for i in range(1, 1001):
                if i == 501:
                    t0 = time.process_time()
                trial = study.ask()[0]
                study.tell(trial, float(np.sum((np.asarray(trial.x) - 0.3) ** 2)))
            per.append(1e3 * (time.process_time() - t0) / 500)
        print(f"{engine}: {statistics.median(per):.3f} ms CPU per suggestion, trials 500-1000 "
              "in 10-D (seeds: " + ", ".join(f"{v:.3f}" for v in per) + ")")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dims", type=int, nargs="+", default=[5, 10])
    ap.add_argument("--functions", default="1-24", help="e.g. 1-24 or 1,8,15")
    ap.add_argument("--overhead", action="store_true")
    args = ap.parse_args()
    if args.overhead:
        overhead()
        return
    if "-" in args.functions:
        lo, hi = map(int, args.functions.split("-"))
        functions = list(range(lo, hi + 1))
    else:
        functions = [int(f) for f in args.functions.split(",")]
    for dim in args.dims:
        print(table(bbob(dim, functions), dim, functions), flush=True)


if __name__ == "__main__":
    main()
