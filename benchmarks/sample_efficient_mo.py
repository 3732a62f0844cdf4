"""Several objectives at small budgets: decido's ``bo`` (ParEGO scalarizations) beside
``moea``, pymoo's NSGA-II and Optuna's multi-objective TPE at the same budget and seeds.

Each run's final front is measured by its hypervolume at a fixed reference point
(``decido.hypervolume``, feasible points only); the table gives the median over the seeds,
the median wall time of a run and each solver's median hypervolume relative to pymoo's.
Rounds are interleaved (seed by seed, every solver in turn) so the shared machine's load
falls on all alike.

    python benchmarks/sample_efficient_mo.py                         # 11 seeds, 100 evaluations
    python benchmarks/sample_efficient_mo.py --problems zdt1 --seeds 3 --solvers "decido bo"
    python benchmarks/sample_efficient_mo.py --budget 200

Problems: ZDT1, ZDT2 (5 variables), DTLZ2 (3 objectives, 5 variables), BNH (2 variables,
2 constraints); reference points (1.1, 1.1[, 1.1]) and (140, 55).  decido sees the
expressions below, pymoo its own implementation of the same (``get_problem``), Optuna a
Python function.  Solvers: ``decido bo`` and ``decido moea`` (its default population of
100, one generation at 100 evaluations) and ``decido moea-20`` (population 20), ``decido
auto`` (what ``auto`` chooses), pymoo NSGA-II with a population of 20, and Optuna's
``TPESampler`` with several objectives (MOTPE; its constraints_func for BNH).  Every
solver's front is that of all the points it evaluated (pymoo: the initial population and
each generation's offspring).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import decido

N = 5
G = "(1 + 9 * sum(x[1:]) / (n - 1))"
DG = "sum((x[2:] - 0.5)**2)"


def _zdt_g(x: list[float]) -> float:
    return 1 + 9 * sum(x[1:]) / (len(x) - 1)


def _zdt1(x: list[float]) -> list[float]:
    g = _zdt_g(x)
    return [x[0], g * (1 - math.sqrt(x[0] / g))]


def _zdt2(x: list[float]) -> list[float]:
    g = _zdt_g(x)
    return [x[0], g * (1 - (x[0] / g) ** 2)]


def _dtlz2(x: list[float]) -> list[float]:
    g = 1 + sum((v - 0.5) ** 2 for v in x[2:])
    a, b = x[0] * math.pi / 2, x[1] * math.pi / 2
    return [g * math.cos(a) * math.cos(b), g * math.cos(a) * math.sin(b), g * math.sin(a)]


def _bnh(x: list[float]) -> list[float]:
    return [4 * x[0] ** 2 + 4 * x[1] ** 2, (x[0] - 5) ** 2 + (x[1] - 5) ** 2]


def _bnh_g(x: list[float]) -> list[float]:
    """BNH's constraints as pymoo writes them (G <= 0 feasible)."""
    return [((x[0] - 5) ** 2 + x[1] ** 2 - 25) / 25,
            -((x[0] - 8) ** 2 + (x[1] + 3) ** 2 - 7.7) / 7.7]


PROBLEMS: dict[str, dict[str, Any]] = {
    "zdt1": {"objectives": ["x[0]", f"{G} * (1 - sqrt(x[0] / {G}))"], "bounds": [[0, 1]] * N,
             "ref": [1.1, 1.1], "py": _zdt1},
    "zdt2": {"objectives": ["x[0]", f"{G} * (1 - (x[0] / {G})**2)"], "bounds": [[0, 1]] * N,
             "ref": [1.1, 1.1], "py": _zdt2},
    "dtlz2": {"objectives": [f"(1 + {DG}) * cos(x[0] * pi / 2) * cos(x[1] * pi / 2)",
                             f"(1 + {DG}) * cos(x[0] * pi / 2) * sin(x[1] * pi / 2)",
                             f"(1 + {DG}) * sin(x[0] * pi / 2)"],
              "bounds": [[0, 1]] * N, "ref": [1.1, 1.1, 1.1], "py": _dtlz2},
    "bnh": {"objectives": ["4 * x[0]**2 + 4 * x[1]**2", "(x[0] - 5)**2 + (x[1] - 5)**2"],
            "bounds": [[0, 5], [0, 3]], "ref": [140.0, 55.0], "py": _bnh, "g": _bnh_g,
            "constraints": ["((x[0] - 5)**2 + x[1]**2 - 25) / 25 <= 0",
                            "-((x[0] - 8)**2 + (x[1] + 3)**2 - 7.7) / 7.7 <= 0"]},
}


def run_decido(name: str, seed: int, budget: int, engine: str,
               options: dict[str, Any] | None = None) -> tuple[float, float]:
    p = PROBLEMS[name]
    t = time.perf_counter()
    r = decido.minimize(p["objectives"], p["bounds"], max_evaluations=budget, seed=seed,
                        engine=engine, options=options, constraints=p.get("constraints"))
    wall = time.perf_counter() - t
    front = [q["f"] for q in r.pareto if q["feasible"]]
    return decido.hypervolume(np.array(front).reshape(-1, len(p["ref"])), p["ref"]), wall


def run_pymoo(name: str, seed: int, budget: int) -> tuple[float, float]:
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.core.callback import Callback
    from pymoo.optimize import minimize
    from pymoo.problems import get_problem

    class Evaluated(Callback):  # type: ignore[misc]
        """Every evaluated point (the initial population, then each generation's
        offspring): the front of all of them, as decido's archive and Optuna's trials."""

        def __init__(self) -> None:
            super().__init__()
            self.F: list[Any] = []
            self.G: list[Any] = []

        def notify(self, algorithm: Any) -> None:
            got = algorithm.off if algorithm.off is not None else algorithm.pop
            self.F.append(got.get("F"))
            self.G.append(got.get("G"))

    p = PROBLEMS[name]
    problem = (get_problem("bnh") if name == "bnh" else
               get_problem(name, n_var=N, n_obj=3) if name == "dtlz2" else
               get_problem(name, n_var=N))
    seen = Evaluated()
    t = time.perf_counter()
    minimize(problem, NSGA2(pop_size=20), ("n_eval", budget), seed=seed, verbose=False,
             callback=seen)
    wall = time.perf_counter() - t
    F = np.vstack(seen.F)
    if name == "bnh":
        F = F[np.all(np.vstack(seen.G) <= 0, axis=1)]
    return decido.hypervolume(F, p["ref"]), wall


def run_optuna(name: str, seed: int, budget: int) -> tuple[float, float]:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    p = PROBLEMS[name]
    bounds, fn, gfn = p["bounds"], p["py"], p.get("g")

    def objective(trial: Any) -> list[float]:
        x = [trial.suggest_float(f"x{j}", lo, hi) for j, (lo, hi) in enumerate(bounds)]
        if gfn is not None:
            trial.set_user_attr("g", gfn(x))
        return fn(x)  # type: ignore[no-any-return]

    with warnings.catch_warnings():  # constraints_func: deprecated in Optuna 5, still used
        warnings.simplefilter("ignore", FutureWarning)
        sampler = optuna.samplers.TPESampler(
            seed=seed, constraints_func=(lambda tr: tr.user_attrs["g"]) if gfn else None)
    t = time.perf_counter()
    study = optuna.create_study(directions=["minimize"] * len(p["ref"]), sampler=sampler)
    study.optimize(objective, n_trials=budget)
    wall = time.perf_counter() - t
    F = [tr.values for tr in study.trials
         if gfn is None or all(v <= 0 for v in tr.user_attrs["g"])]
    return decido.hypervolume(np.array(F).reshape(-1, len(p["ref"])), p["ref"]), wall


SOLVERS: dict[str, Callable[[str, int, int], tuple[float, float]]] = {
    "decido bo": lambda name, seed, budget: run_decido(name, seed, budget, "bo"),
    "decido auto": lambda name, seed, budget: run_decido(name, seed, budget, "auto"),
    "decido moea": lambda name, seed, budget: run_decido(name, seed, budget, "moea"),
    "decido moea-20": lambda name, seed, budget: run_decido(name, seed, budget, "moea",
                                                            {"popsize": 20}),
    "pymoo NSGA-II": run_pymoo,
    "optuna MOTPE": run_optuna,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", default=",".join(PROBLEMS))
    ap.add_argument("--solvers", default="decido bo,decido moea,decido moea-20,pymoo NSGA-II,"
                    "optuna MOTPE")
    ap.add_argument("--seeds", type=int, default=11)
    ap.add_argument("--budget", type=int, default=100)
    args = ap.parse_args()
    solvers = args.solvers.split(",")
    print("| problem | solver | median hypervolume | / pymoo's | median wall, s |")
    print("|---|---|---:|---:|---:|")
    for name in args.problems.split(","):
        got: dict[str, list[tuple[float, float]]] = {s: [] for s in solvers}
        for seed in range(args.seeds):
            for solver in solvers:
                got[solver].append(SOLVERS[solver](name, seed, args.budget))
        med = {s: statistics.median(h for h, _ in r) for s, r in got.items()}
        peer = med.get("pymoo NSGA-II")
        for solver, res in got.items():
            ratio = f"{med[solver] / peer:.3f}" if peer else "-"
            wall = statistics.median(w for _, w in res)
            print(f"| {name} | {solver} | {med[solver]:.4f} | {ratio} | {wall:.3f} |",
                  flush=True)


if __name__ == "__main__":
    main()
