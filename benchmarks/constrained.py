"""Constrained, mixed-integer and integer problems: decido against scipy and pymoo.

    .venv/bin/python benchmarks/constrained.py [--seeds 10] [--budget 5000]
        [--problems G06,spring] [--solvers dss,scipy-de] [--json out.json]

Every solver gets the same number of objective evaluations per run (``--budget``) on every
problem of ``constrained_suite.SUITE``, for each seed.  Peers evaluate the same compiled
decido expressions (objective and constraints), through a counting wrapper that keeps the
best point by Deb's feasibility rules (as decido's driver does) and stops the peer at the
budget (or at PEER_SECONDS of wall time, whichever comes first); constraint evaluations are
not counted for anyone.  Per problem and solver:

* feasible: the fraction of runs whose best point meets every constraint within the
  problem's tolerance;
* gap: the median over runs of (f - f*) / max(1, |f*|) at the best point (infeasible runs
  count as infinite);
* evals: the median number of evaluations until a feasible point within 1e-4 (relative) of
  f* was seen ("-" when fewer than half of the runs got there).

Peers: scipy ``differential_evolution`` (``NonlinearConstraint``, ``integrality``, no
polish), SLSQP, trust-constr and COBYLA from uniform random starts until the budget is spent
(real problems only: they have no integers), pymoo GA and DE (constraints as pymoo's
inequality constraints, equalities as |h| - tol <= 0, integer coordinates rounded).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from constrained_suite import SUITE, CProblem, brute_force  # noqa: E402

import decido  # noqa: E402
from decido.design import compile_constraints, design_problems  # noqa: E402

REACH = 1e-4
#: a peer's run stops at this many seconds even when its budget is not spent (its cell then
#: shows the median evaluations it used): COBYLA is scipy's Python port of PRIMA (about
#: 14 ms an evaluation on G01), and scipy's DE evaluates the objective of feasible trials
#: only, so it may run many generations for few evaluations
PEER_SECONDS = 3.0


class Budget(Exception):
    """The peer used its evaluations."""


class Tracked:
    """A problem as the peers see it: x in R^n (integer and discrete coordinates as indices
    rounded to the nearest allowed one), f(x), g(x) <= 0 and h(x) == 0, with counting."""

    def __init__(self, p: CProblem, fstar: float, budget: int) -> None:
        _, design = design_problems(None, variables=p.variables, constraint_tolerance=p.tol)
        assert design is not None
        self.p, self.fstar, self.budget, self.design = p, fstar, budget, design
        self.names = [v["name"] for v in p.variables]
        self.f = decido.Expression(p.objective, variables=self.names)
        self.cons = compile_constraints(p.constraints, design)
        n = len(p.variables)
        self.lower = np.empty(n)
        self.upper = np.empty(n)
        self.integral = np.zeros(n, dtype=bool)
        self.values: list[np.ndarray | None] = [None] * n
        for j, v in enumerate(p.variables):
            if "values" in v:
                vals = np.array(sorted(v["values"]), dtype=np.float64)
                self.values[j] = vals
                self.lower[j], self.upper[j], self.integral[j] = 0, len(vals) - 1, True
            elif v.get("type") == "integer":
                self.lower[j], self.upper[j] = math.ceil(v["lower"]), math.floor(v["upper"])
                self.integral[j] = True
            else:
                self.lower[j], self.upper[j] = v["lower"], v["upper"]
        self.reset()

    def reset(self, seconds: float = PEER_SECONDS) -> None:
        self.deadline = time.perf_counter() + seconds
        self.evals = 0
        self.best: tuple[float, float] | None = None  # (excess, f)
        self.reached: int | None = None

    def decode(self, z: np.ndarray) -> np.ndarray:
        x = np.clip(np.asarray(z, dtype=np.float64), self.lower, self.upper)
        x[self.integral] = np.round(x[self.integral])
        for j, vals in enumerate(self.values):
            if vals is not None:
                x[j] = vals[int(x[j])]
        return x

    def gvals(self, x: np.ndarray) -> np.ndarray:
        return np.array([c.program.evaluate(x) for c in self.cons])

    def excess(self, g: np.ndarray) -> float:
        return float(sum(max(0.0, c.violation(v) - self.p.tol)
                         for c, v in zip(self.cons, g, strict=True)))

    def gap(self, f: float) -> float:
        return (f - self.fstar) / max(1.0, abs(self.fstar))

    def note(self, evals: int, f: float, excess: float) -> None:
        key = (excess, f if f == f else math.inf)
        if self.best is None or key < self.best:
            self.best = key
        if self.reached is None and excess == 0 and self.gap(f) <= REACH:
            self.reached = evals

    def objective(self, z: np.ndarray) -> float:
        if self.evals >= self.budget or time.perf_counter() > self.deadline:
            raise Budget
        self.evals += 1
        x = self.decode(z)
        f = self.f.evaluate(x)
        self.note(self.evals, f, self.excess(self.gvals(x)))
        return f

    def ineq(self, z: np.ndarray) -> np.ndarray:
        """Every constraint as c(x) <= 0 (equalities as |h| - tol)."""
        g = self.gvals(self.decode(z))
        out = []
        for c, v in zip(self.cons, g, strict=True):
            out.append(v if c.sense == "<=" else -v if c.sense == ">=" else abs(v) - self.p.tol)
        return np.array(out)

    def scipy_constraints(self) -> list[Any]:
        from scipy.optimize import NonlinearConstraint

        lo = [-np.inf if c.sense == "<=" else 0.0 if c.sense == ">=" else -self.p.tol
              for c in self.cons]
        hi = [0.0 if c.sense == "<=" else np.inf if c.sense == ">=" else self.p.tol
              for c in self.cons]
        return [NonlinearConstraint(lambda z: self.gvals(self.decode(z)), lo, hi)]

    def result(self) -> dict[str, Any]:
        if self.best is None:  # the peer evaluated the objective nowhere (scipy's DE
            return {"feasible": False, "gap": math.inf, "reached": None,  # found no
                    "evals": self.evals}  # feasible trial in its time)
        excess, f = self.best
        return {"feasible": excess == 0, "gap": self.gap(f) if excess == 0 else math.inf,
                "reached": self.reached, "evals": self.evals}


# ---------------------------------------------------------------- solvers

def run_decido(engine: str) -> Callable[[Tracked, int], dict[str, Any]]:
    def solve(t: Tracked, seed: int) -> dict[str, Any]:
        t.reset()

        def watch(progress: dict[str, Any]) -> None:
            x = progress["x"]
            t.note(progress["evaluations"], t.f.evaluate(x), t.excess(t.gvals(x)))

        r = decido.minimize(t.p.objective, variables=t.p.variables, constraints=t.p.constraints,
                            constraint_tolerance=t.p.tol, engine=engine, seed=seed,
                            max_evaluations=t.budget, callback=watch)
        t.note(r.evaluations, r.fun, t.excess(t.gvals(r.x)))
        t.evals = r.evaluations
        return t.result()
    return solve


def scipy_de(t: Tracked, seed: int) -> dict[str, Any]:
    from scipy.optimize import differential_evolution

    t.reset()
    n = len(t.lower)
    popsize = 15
    # scipy evaluates the objective of feasible trials only: allow ten times the
    # generations the budget would pay for unconstrained, and stop at the budget
    maxiter = 10 * max(1, t.budget // (popsize * n))
    try:
        differential_evolution(t.objective, list(zip(t.lower, t.upper, strict=True)), seed=seed,
                               popsize=popsize, maxiter=maxiter, polish=False, tol=0,
                               constraints=t.scipy_constraints(), integrality=t.integral)
    except Budget:
        pass
    return t.result()


def scipy_local(method: str) -> Callable[[Tracked, int], dict[str, Any]]:
    def solve(t: Tracked, seed: int) -> dict[str, Any]:
        from scipy.optimize import Bounds, minimize

        t.reset(PEER_SECONDS)
        if t.integral.any():
            return {"feasible": None, "gap": None, "reached": None, "evals": 0}
        rng = np.random.default_rng(seed)
        cons: Any = t.scipy_constraints()
        if method == "COBYLA":
            cons = [{"type": "ineq", "fun": lambda z: -t.ineq(z)}]
        try:
            while True:
                x0 = t.lower + rng.random(len(t.lower)) * (t.upper - t.lower)
                before = t.evals
                try:
                    minimize(t.objective, x0, method=method, bounds=Bounds(t.lower, t.upper),
                             constraints=cons, options={"maxiter": 1000})
                except (ValueError, ArithmeticError, np.linalg.LinAlgError):
                    pass  # e.g. trust-constr on a NaN: the next start
                if t.evals == before:
                    break
        except Budget:
            pass
        return t.result()
    return solve


def pymoo_solver(which: str) -> Callable[[Tracked, int], dict[str, Any]]:
    def solve(t: Tracked, seed: int) -> dict[str, Any]:
        from pymoo.algorithms.soo.nonconvex.de import DE
        from pymoo.algorithms.soo.nonconvex.ga import GA
        from pymoo.core.problem import ElementwiseProblem
        from pymoo.optimize import minimize as pminimize

        t.reset()
        m = len(t.cons)

        class P(ElementwiseProblem):  # type: ignore[misc]
            def __init__(self) -> None:
                super().__init__(n_var=len(t.lower), n_obj=1, n_ieq_constr=m, xl=t.lower,
                                 xu=t.upper)

            def _evaluate(self, z: np.ndarray, out: dict[str, Any], *a: Any, **k: Any
                          ) -> None:
                out["F"] = t.objective(z)
                out["G"] = t.ineq(z)

        algo = GA(pop_size=50) if which == "ga" else DE(pop_size=50)
        try:
            pminimize(P(), algo, ("n_eval", t.budget), seed=seed, verbose=False)
        except Budget:
            pass
        return t.result()
    return solve


SOLVERS: dict[str, Callable[[Tracked, int], dict[str, Any]]] = {
    "dss": run_decido("dss"), "decido-de": run_decido("de"),
    "decido-cmaes": run_decido("cmaes"), "scipy-de": scipy_de,
    "slsqp": scipy_local("SLSQP"), "trust-constr": scipy_local("trust-constr"),
    "cobyla": scipy_local("COBYLA"), "pymoo-ga": pymoo_solver("ga"),
    "pymoo-de": pymoo_solver("de"),
}


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    if runs[0]["feasible"] is None:
        return {"feasible": None, "gap": None, "evals": None, "used": 0}
    reached = sorted(r["reached"] for r in runs if r["reached"] is not None)
    med_evals = reached[len(runs) // 2] if len(reached) > len(runs) // 2 else None
    return {"feasible": sum(r["feasible"] for r in runs) / len(runs),
            "gap": statistics.median(r["gap"] for r in runs), "evals": med_evals,
            "used": int(statistics.median(r["evals"] for r in runs))}


def cell(s: dict[str, Any], budget: int) -> str:
    if s["feasible"] is None:
        return "n/a"
    gap = "inf" if s["gap"] == math.inf else f"{max(s['gap'], 0.0):.1e}"
    out = f"{s['feasible']:.0%} / {gap} / {s['evals'] if s['evals'] is not None else '-'}"
    used = s["used"]
    return out + (f" ({used} used)" if used < budget else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--budget", type=int, default=5000)
    ap.add_argument("--problems", default="")
    ap.add_argument("--solvers", default=",".join(SOLVERS))
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    chosen = [p for p in SUITE if not args.problems or p.name in args.problems.split(",")]
    solvers = args.solvers.split(",")
    table: dict[str, dict[str, Any]] = {}
    print(f"budget {args.budget} evaluations, {args.seeds} seeds; cells: feasible runs / "
          f"median gap / median evaluations to 1e-4")
    print("| problem | f* | " + " | ".join(solvers) + " |")
    print("|---|---|" + "---|" * len(solvers))
    for p in chosen:
        fstar = brute_force(p) if math.isnan(p.fstar) else p.fstar
        t = Tracked(p, fstar, args.budget)
        row = {}
        for name in solvers:
            t0 = time.perf_counter()
            runs = [SOLVERS[name](t, seed) for seed in range(args.seeds)]
            row[name] = {**summarize(runs), "seconds": time.perf_counter() - t0}
        table[p.name] = {"fstar": fstar, "solvers": row}
        print(f"| {p.name} | {fstar:.10g} | "
              + " | ".join(cell(row[s], args.budget) for s in solvers) + " |", flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(table, indent=1, default=str))


if __name__ == "__main__":
    main()
