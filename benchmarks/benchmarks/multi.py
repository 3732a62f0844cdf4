"""asv benchmarks of runs of several objectives and of the hypervolume.

A ZDT1 run (30 variables, 20,000 evaluations) and a DTLZ2 run (3 objectives, 12 variables,
36,800 evaluations) of ``moea`` end to end, with its hypervolume selection and with the
plain crowding rule (``selection=1``); the hypervolume indicator alone on fronts of 100
points.  The timer is CPU time (the machine is shared); the hypervolume each run reaches at
(1.1, ...) is tracked too.  The comparison with pymoo and Optuna is
``benchmarks/compare_mo.py``.
"""

from __future__ import annotations

import time

import numpy as np

import decido

G = "(1 + 9 * sum(x[1:]) / (n - 1))"
DG = "sum((x[2:] - 0.5)**2)"
ZDT1 = (["x[0]", f"{G} * (1 - sqrt(x[0] / {G}))"], [[0, 1]] * 30, 20_000, [1.1, 1.1])
DTLZ2 = ([f"(1 + {DG}) * cos(x[0] * pi / 2) * cos(x[1] * pi / 2)",
          f"(1 + {DG}) * cos(x[0] * pi / 2) * sin(x[1] * pi / 2)",
          f"(1 + {DG}) * sin(x[0] * pi / 2)"], [[0, 1]] * 12, 36_800, [1.1] * 3)
PROBLEMS = {"zdt1": ZDT1, "dtlz2": DTLZ2}


def _run(problem: str, selection: int) -> float:
    objectives, bounds, budget, ref = PROBLEMS[problem]
    r = decido.minimize(objectives, bounds, max_evaluations=budget, seed=1,
                        options={"selection": selection})
    return decido.hypervolume([p["f"] for p in r.pareto], ref)


class MultiObjective:
    params = (["zdt1", "dtlz2"], [0, 1])
    param_names = ["problem", "selection"]
    timer = time.process_time
    timeout = 300

    def time_run(self, problem: str, selection: int) -> None:
        _run(problem, selection)

    def track_hypervolume(self, problem: str, selection: int) -> float:
        return _run(problem, selection)


class Hypervolume:
    params = [2, 3, 5]
    param_names = ["objectives"]
    timer = time.process_time

    def setup(self, m: int) -> None:
        F = np.abs(np.random.default_rng(m).normal(size=(100, m)))
        self.front = F / np.linalg.norm(F, axis=1, keepdims=True)
        self.ref = [1.1] * m

    def time_hypervolume(self, m: int) -> None:
        decido.hypervolume(self.front, self.ref)
