"""Constrained fronts: decido's ``moea`` beside pymoo's NSGA-II at the same budgets and seeds
(issue 43 item 9).

Each run's final front is measured by its hypervolume at a fixed reference point
(``decido.hypervolume``, feasible points only: decido's ``r.pareto`` where ``feasible``,
pymoo's ``res.F``, which holds feasible points only once one was found); the table gives the
median over the seeds, the median wall time of a run and decido's median relative to
pymoo's.  Rounds are interleaved (seed by seed, every solver in turn) so the shared
machine's load falls on all alike.

    python benchmarks/compare_mo_constrained.py                      # everything, 11 seeds
    python benchmarks/compare_mo_constrained.py --problems osy --seeds 3
    python benchmarks/compare_mo_constrained.py --solvers "decido moea" --options '{"popsize": 200}'

Problems (pymoo's definitions, ``pymoo.problems.get_problem``; decido sees the same in its
expression language, each constraint written as pymoo's ``G <= 0`` with its scaling, so both
measure a violation alike; objectives and feasibility are checked against pymoo's on random
points before the runs):
BNH, TNK, SRN (2 variables, 2 constraints, 10,000 evaluations), OSY (6 variables,
6 constraints, 20,000 evaluations) and C2-DTLZ2 (12 variables, 3 objectives, 1 constraint,
20,000 evaluations).  pymoo: NSGA-II, population 100, its defaults otherwise.
``moea-crowding`` is decido's engine with ``selection=1``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import decido

_DG = "sum((x[2:] - 0.5)**2)"
_C2 = [f"(1 + {_DG}) * cos(x[0] * pi / 2) * cos(x[1] * pi / 2)",
       f"(1 + {_DG}) * cos(x[0] * pi / 2) * sin(x[1] * pi / 2)",
       f"(1 + {_DG}) * sin(x[0] * pi / 2)"]


def _c2_constraint(f: list[str], r: float) -> str:
    """C2-DTLZ2's constraint (Jain & Deb 2014) over the objectives' expressions."""
    sq = [f"({e})**2" for e in f]
    v1 = [f"(({f[i]}) - 1)**2 + " + " + ".join(sq[j] for j in range(3) if j != i)
          + f" - {r * r!r}" for i in range(3)]
    a = float(1 / np.sqrt(3))
    v2 = " + ".join(f"(({e}) - {a!r})**2" for e in f) + f" - {r * r!r}"
    return f"min({', '.join(v1)}, {v2}) <= 0"


PROBLEMS: dict[str, dict[str, Any]] = {
    "bnh": {"objectives": ["4 * x[0]**2 + 4 * x[1]**2", "(x[0] - 5)**2 + (x[1] - 5)**2"],
            "bounds": [[0, 5], [0, 3]], "budget": 10_000, "ref": [140.0, 55.0],
            "constraints": ["((x[0] - 5)**2 + x[1]**2 - 25) / 25 <= 0",
                            "-((x[0] - 8)**2 + (x[1] + 3)**2 - 7.7) / 7.7 <= 0"]},
    "tnk": {"objectives": ["x[0]", "x[1]"], "bounds": [[0, np.pi], [1e-30, np.pi]],
            "budget": 10_000, "ref": [1.2, 1.2],
            "constraints": ["x[0]**2 + x[1]**2 - 1 - 0.1 * cos(16 * atan(x[0] / x[1])) >= 0",
                            "2 * ((x[0] - 0.5)**2 + (x[1] - 0.5)**2) - 1 <= 0"]},
    "srn": {"objectives": ["2 + (x[0] - 2)**2 + (x[1] - 1)**2", "9 * x[0] - (x[1] - 1)**2"],
            "bounds": [[-20, 20], [-20, 20]], "budget": 10_000, "ref": [230.0, 0.0],
            "constraints": ["x[0]**2 + x[1]**2 <= 225", "x[0] - 3 * x[1] + 10 <= 0"]},
    "osy": {"objectives": ["-(25 * (x[0] - 2)**2 + (x[1] - 2)**2 + (x[2] - 1)**2 "
                           "+ (x[3] - 4)**2 + (x[4] - 1)**2)", "sum(x**2)"],
            "bounds": [[0, 10], [0, 10], [1, 5], [0, 6], [1, 5], [0, 10]], "budget": 20_000,
            "ref": [0.0, 80.0],
            "constraints": ["(x[0] + x[1] - 2) / 2 >= 0", "(6 - x[0] - x[1]) / 6 >= 0",
                            "(2 - x[1] + x[0]) / 2 >= 0", "(2 - x[0] + 3 * x[1]) / 2 >= 0",
                            "(4 - (x[2] - 3)**2 - x[3]) / 4 >= 0",
                            "((x[4] - 3)**2 + x[5] - 4) / 4 >= 0"]},
    "c2dtlz2": {"objectives": _C2, "bounds": [[0, 1]] * 12, "budget": 20_000,
                "ref": [1.1, 1.1, 1.1], "constraints": [_c2_constraint(_C2, 0.4)]},
}


def _pymoo_problem(name: str) -> Any:
    from pymoo.problems import get_problem

    if name == "c2dtlz2":
        return get_problem("c2dtlz2", n_var=12, n_obj=3)
    return get_problem(name)


def check_definitions(name: str, points: int = 200) -> None:
    """decido's expressions give pymoo's objectives and feasibility on random points."""
    p = PROBLEMS[name]
    prob = _pymoo_problem(name)
    rng = np.random.default_rng(0)
    lo = np.array([b[0] for b in p["bounds"]], dtype=float)
    hi = np.array([b[1] for b in p["bounds"]], dtype=float)
    X = lo + (hi - lo) * rng.random((points, len(lo)))
    F, G = prob.evaluate(X, return_values_of=["F", "G"])
    n = len(lo)
    ours = np.array([[decido.Expression(e, n=n)(x) for e in p["objectives"]] for x in X])
    if not np.allclose(ours, F, rtol=1e-9, atol=1e-9):
        raise SystemExit(f"{name}: the objectives differ from pymoo's")
    feasible = np.all(np.asarray(G) <= 0, axis=1)
    ok = np.array([all(_holds(c, x, n) for c in p["constraints"]) for x in X])
    if not np.array_equal(ok, feasible):
        raise SystemExit(f"{name}: feasibility differs from pymoo's on "
                         f"{int(np.sum(ok != feasible))} of {points} points")


def _holds(constraint: str, x: Any, n: int) -> bool:
    op = "<=" if "<=" in constraint else ">="
    left, right = constraint.rsplit(op, 1)
    a, b = decido.Expression(left, n=n)(x), float(right)
    return bool(a <= b if op == "<=" else a >= b)


def _feasible_hv(front: Any, ref: list[float]) -> float:
    F = np.asarray(front, dtype=float).reshape(-1, len(ref))
    return decido.hypervolume(F, ref) if len(F) else 0.0


def run_decido(name: str, seed: int, selection: int = 0,
               options: dict[str, float] | None = None) -> tuple[float, float]:
    p = PROBLEMS[name]
    t = time.perf_counter()
    r = decido.minimize(p["objectives"], p["bounds"], max_evaluations=p["budget"], seed=seed,
                        options={**(options or {}), "selection": selection},
                        constraints=p["constraints"])
    wall = time.perf_counter() - t
    return _feasible_hv([q["f"] for q in r.pareto if q["feasible"]], p["ref"]), wall


def run_pymoo(name: str, seed: int) -> tuple[float, float]:
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.optimize import minimize

    p = PROBLEMS[name]
    t = time.perf_counter()
    res = minimize(_pymoo_problem(name), NSGA2(pop_size=100), ("n_eval", p["budget"]),
                   seed=seed, verbose=False)
    wall = time.perf_counter() - t
    if res.F is None or res.CV is None:
        return 0.0, wall
    F = np.atleast_2d(res.F)[np.asarray(res.CV).ravel() <= 0]
    return _feasible_hv(F, p["ref"]), wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", default=",".join(PROBLEMS))
    ap.add_argument("--seeds", type=int, default=11)
    ap.add_argument("--options", type=json.loads, default={},
                    help='more options of decido\'s runs, JSON (e.g. \'{"popsize": 200}\')')
    ap.add_argument("--solvers", default="decido moea,decido moea-crowding,pymoo NSGA-II")
    ap.add_argument("--save", help="write every run's (hypervolume, wall) to this JSON file")
    ap.add_argument("--load", action="append", default=[],
                    help="runs of a --save (repeatable): shown, not run again")
    args = ap.parse_args()
    solvers: dict[str, Callable[[str, int], tuple[float, float]]] = {
        "decido moea": lambda name, seed: run_decido(name, seed, options=args.options),
        "decido moea-crowding": lambda name, seed: run_decido(name, seed, selection=1,
                                                              options=args.options),
        "pymoo NSGA-II": run_pymoo,
    }
    wanted = args.solvers.split(",")
    saved: dict[str, dict[str, list[list[float]]]] = {}
    for path in args.load:
        with open(path) as fh:
            for name, by_solver in json.load(fh).items():
                saved.setdefault(name, {}).update(by_solver)
    rows, runs = [], {}
    for name in args.problems.split(","):
        check_definitions(name)
        results: dict[str, list[tuple[float, float]]] = {
            s: [] for s in solvers if s in wanted and s not in saved.get(name, {})}
        for seed in range(args.seeds):
            for solver in results:
                results[solver].append(solvers[solver](name, seed))
        runs[name] = {s: [list(v) for v in got] for s, got in results.items()}
        for solver, got_saved in saved.get(name, {}).items():
            results[solver] = [(h, w) for h, w in got_saved]
        peer = statistics.median(h for h, _ in results["pymoo NSGA-II"]) \
            if "pymoo NSGA-II" in results else float("nan")
        for solver, got in sorted(results.items()):
            hv = statistics.median(h for h, _ in got)
            wall = statistics.median(w for _, w in got)
            rows.append((name, PROBLEMS[name]["budget"], solver, hv, hv / peer, wall))
    if args.save:
        with open(args.save, "w") as fh:
            json.dump(runs, fh)
    print("| problem | evaluations | solver | median hypervolume | / pymoo's | "
          "median wall, s |")
    print("|---|---:|---|---:|---:|---:|")
    for name, budget, solver, hv, ratio, wall in rows:
        print(f"| {name} | {budget:,} | {solver} | {hv:.4f} | {ratio:.4f} | {wall:.3f} |")


if __name__ == "__main__":
    main()
