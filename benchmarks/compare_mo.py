"""Several objectives: decido's ``moea`` side by side with pymoo (NSGA-II, NSGA-III) and
Optuna's NSGAIISampler at the same budgets and seeds.

Each run's final front is measured by its hypervolume at a fixed reference point
(``decido.hypervolume``; (1.1, 1.1[, 1.1]) for ZDT and DTLZ2, as in issue 29); the table
gives the median over the seeds and the median wall time of a run.  Rounds are interleaved
(seed by seed, every solver in turn) so the shared machine's load falls on all alike.

    python benchmarks/compare_mo.py                       # everything, 11 seeds
    python benchmarks/compare_mo.py --problems zdt1 --seeds 3 --optuna-seeds 0

Problems (decido sees the expressions below; pymoo its own implementation of the same):
ZDT1, ZDT2, ZDT3 (30 variables, 20,000 evaluations, pymoo NSGA-II, population 100), DTLZ2
(3 objectives, 12 variables, 36,800 evaluations, pymoo NSGA-III with 91 Das-Dennis
directions, population 92), BNH (2 constraints, 10,000 evaluations, reference (140, 55),
pymoo NSGA-II), MIXED (5 integer and 5 real variables in [-5, 5], f = mean((x - 1)^2),
mean((x + 1)^2), 10,000 evaluations, reference (4.4, 4.4); pymoo NSGA-II with its integer
coordinates rounded by a repair, the approach pymoo documents), and Optuna's NSGAIISampler on
ZDT1 at 5,000 trials beside decido at 5,000 evaluations.  `moea-crowding` is decido's engine
with ``selection=1`` (the plain NSGA-II rule): the hypervolume selection's gain, measured.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import decido

G = "(1 + 9 * sum(x[1:]) / (n - 1))"
DG = "sum((x[2:] - 0.5)**2)"


def _spec(objectives: list[str], n: int, budget: int, ref: list[float],
          lo: float = 0.0, hi: float = 1.0, **extra: Any) -> dict[str, Any]:
    return {"objectives": objectives, "bounds": [[lo, hi]] * n, "budget": budget, "ref": ref,
            **extra}


PROBLEMS: dict[str, dict[str, Any]] = {
    "zdt1": _spec(["x[0]", f"{G} * (1 - sqrt(x[0] / {G}))"], 30, 20_000, [1.1, 1.1]),
    "zdt2": _spec(["x[0]", f"{G} * (1 - (x[0] / {G})**2)"], 30, 20_000, [1.1, 1.1]),
    "zdt3": _spec(["x[0]", f"{G} * (1 - sqrt(x[0] / {G}) - x[0] / {G} * sin(10 * pi * x[0]))"],
                  30, 20_000, [1.1, 1.1]),
    "dtlz2": _spec([f"(1 + {DG}) * cos(x[0] * pi / 2) * cos(x[1] * pi / 2)",
                    f"(1 + {DG}) * cos(x[0] * pi / 2) * sin(x[1] * pi / 2)",
                    f"(1 + {DG}) * sin(x[0] * pi / 2)"], 12, 36_800, [1.1, 1.1, 1.1]),
    "bnh": {"objectives": ["4 * x[0]**2 + 4 * x[1]**2", "(x[0] - 5)**2 + (x[1] - 5)**2"],
            "bounds": [[0, 5], [0, 3]], "budget": 10_000, "ref": [140.0, 55.0],
            "constraints": ["(x[0] - 5)**2 + x[1]**2 <= 25",
                            "(x[0] - 8)**2 + (x[1] + 3)**2 >= 7.7"]},
    "mixed": {"objectives": ["mean((x - 1)**2)", "mean((x + 1)**2)"], "bounds": [[-5, 5]] * 10,
              "budget": 10_000, "ref": [4.4, 4.4], "integers": [0, 1, 2, 3, 4]},
}


def run_decido(name: str, seed: int, selection: int = 0, budget: int | None = None
               ) -> tuple[float, float]:
    p = PROBLEMS[name]
    t = time.perf_counter()
    r = decido.minimize(p["objectives"], p["bounds"], max_evaluations=budget or p["budget"],
                        seed=seed, options={"selection": selection},
                        constraints=p.get("constraints"), integers=p.get("integers"))
    wall = time.perf_counter() - t
    front = [q["f"] for q in r.pareto if q["feasible"]]
    return decido.hypervolume(np.array(front).reshape(-1, len(p["ref"])), p["ref"]), wall


def _pymoo_problem(name: str) -> Any:
    from pymoo.core.problem import ElementwiseProblem
    from pymoo.problems import get_problem

    if name in ("zdt1", "zdt2", "zdt3"):
        return get_problem(name)
    if name == "dtlz2":
        return get_problem("dtlz2", n_var=12, n_obj=3)
    if name == "bnh":
        return get_problem("bnh")

    class Mixed(ElementwiseProblem):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(n_var=10, n_obj=2, xl=-5.0, xu=5.0)

        def _evaluate(self, x: Any, out: dict[str, Any], *args: Any, **kwargs: Any) -> None:
            out["F"] = [np.mean((x - 1) ** 2), np.mean((x + 1) ** 2)]

    return Mixed()


def run_pymoo(name: str, seed: int) -> tuple[float, float]:
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.algorithms.moo.nsga3 import NSGA3
    from pymoo.core.repair import Repair
    from pymoo.optimize import minimize
    from pymoo.util.ref_dirs import get_reference_directions

    class RoundIntegers(Repair):  # type: ignore[misc]
        def _do(self, problem: Any, X: Any, **kwargs: Any) -> Any:
            X[:, :5] = np.round(X[:, :5])
            return X

    p = PROBLEMS[name]
    if name == "dtlz2":
        algorithm = NSGA3(ref_dirs=get_reference_directions("das-dennis", 3, n_partitions=12),
                          pop_size=92)
    elif name == "mixed":
        algorithm = NSGA2(pop_size=100, repair=RoundIntegers())
    else:
        algorithm = NSGA2(pop_size=100)
    t = time.perf_counter()
    res = minimize(_pymoo_problem(name), algorithm, ("n_eval", p["budget"]), seed=seed,
                   verbose=False)
    wall = time.perf_counter() - t
    F = np.zeros((0, len(p["ref"]))) if res.F is None else np.atleast_2d(res.F)
    return decido.hypervolume(F, p["ref"]), wall


def run_optuna(seed: int, trials: int) -> tuple[float, float]:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)

    def zdt1(trial: Any) -> tuple[float, float]:
        x = [trial.suggest_float(f"x{j}", 0.0, 1.0) for j in range(30)]
        g = 1 + 9 * sum(x[1:]) / 29
        return x[0], g * (1 - (x[0] / g) ** 0.5)

    t = time.perf_counter()
    study = optuna.create_study(directions=["minimize", "minimize"],
                                sampler=optuna.samplers.NSGAIISampler(seed=seed))
    study.optimize(zdt1, n_trials=trials)
    wall = time.perf_counter() - t
    return decido.hypervolume([tr.values for tr in study.best_trials], [1.1, 1.1]), wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", default=",".join(PROBLEMS))
    ap.add_argument("--seeds", type=int, default=11)
    ap.add_argument("--optuna-seeds", type=int, default=3,
                    help="Optuna runs on ZDT1 at 5,000 trials (about 30 s each); 0: none")
    ap.add_argument("--optuna-trials", type=int, default=5000)
    args = ap.parse_args()
    solvers: dict[str, Callable[[str, int], tuple[float, float]]] = {
        "decido moea": run_decido,
        "decido moea-crowding": lambda name, seed: run_decido(name, seed, selection=1),
        "pymoo": run_pymoo,
    }
    rows = []
    for name in args.problems.split(","):
        results: dict[str, list[tuple[float, float]]] = {s: [] for s in solvers}
        for seed in range(args.seeds):
            for solver, fn in solvers.items():
                results[solver].append(fn(name, seed))
        peer_wall = statistics.median(w for _, w in results["pymoo"])
        for solver, got in results.items():
            hv = statistics.median(h for h, _ in got)
            wall = statistics.median(w for _, w in got)
            rows.append((name, PROBLEMS[name]["budget"], solver, hv, wall, wall / peer_wall))
    if args.optuna_seeds:
        got = [run_optuna(s, args.optuna_trials) for s in range(args.optuna_seeds)]
        ours = [run_decido("zdt1", s, budget=args.optuna_trials)
                for s in range(args.optuna_seeds)]
        peer_wall = statistics.median(w for _, w in got)
        for solver, res in (("decido moea", ours), ("optuna NSGAIISampler", got)):
            wall = statistics.median(w for _, w in res)
            rows.append(("zdt1", args.optuna_trials, solver,
                         statistics.median(h for h, _ in res), wall, wall / peer_wall))
    print("| problem | evaluations | solver | median hypervolume | median wall, s | "
          "wall / peer's |")
    print("|---|---:|---|---:|---:|---:|")
    for name, budget, solver, hv, wall, ratio in rows:
        print(f"| {name} | {budget:,} | {solver} | {hv:.4f} | {wall:.3f} | {ratio:.3f} |")


if __name__ == "__main__":
    main()
