"""asv: a subset of COCO's BBOB functions, black box, for every restarting engine.

Six functions of the ``bbob`` suite (f1 sphere, f3 separable Rastrigin, f7 step ellipsoid,
f10 rotated ellipsoid, f15 rotated Rastrigin, f20 Schwefel x sin x) at d = 10, instance 1,
budget 1000 d = 10,000 evaluations, seed 1, the problem given to ``decido.minimize`` as a
plain Python callable, as in ``compare_engines.py --bbob``.  Tracked per run: the error
f_best - f_opt (f_opt from the headers of COCO's logger, ``compare_engines.bbob_fopt``),
the evaluations spent (a run that stops on convergence spends fewer) and evaluations per
second.  Skipped when coco-experiment is not installed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import decido

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

try:
    import cocoex
except ImportError:  # pragma: no cover - depends on the environment
    cocoex = None

FUNCTIONS = [1, 3, 7, 10, 15, 20]
ENGINES = ["dss", "cmaes", "de", "pso", "nelder_mead"]
DIM = 10
INSTANCE = 1
BUDGET = 1000 * DIM
SEED = 1


def _fopt() -> dict[int, float]:
    from compare_engines import bbob_fopt  # noqa: PLC0415 - beside this package

    return {f: v for (f, _), v in bbob_fopt(DIM, FUNCTIONS, [INSTANCE]).items()}


class BBOB:
    """One run of an engine on one BBOB function (d = 10, instance 1)."""

    params = (ENGINES, FUNCTIONS)
    param_names = ["engine", "function"]
    timeout = 300
    number = 1
    repeat = 1

    def setup_cache(self):
        if cocoex is None:
            return None
        cocoex.log_level("error")
        fopt = _fopt()
        suite = cocoex.Suite("bbob", f"instances:{INSTANCE}",
                             f"dimensions:{DIM} function_indices:{','.join(map(str, FUNCTIONS))}")
        results = {}
        for f in FUNCTIONS:
            for engine in ENGINES:
                problem = suite.get_problem_by_function_dimension_instance(f, DIM, INSTANCE)
                bounds = list(zip(problem.lower_bounds, problem.upper_bounds, strict=True))
                t0 = time.process_time()
                r = decido.minimize(problem, bounds, engine=engine, seed=SEED,
                                    max_evaluations=BUDGET)
                cpu = time.process_time() - t0
                results[engine, f] = (float(r.fun) - fopt[f], int(r.evaluations),
                                      r.evaluations / max(cpu, 1e-9))
                problem.free()
        return results

    def setup(self, results, engine, function):
        if results is None:
            raise NotImplementedError("coco-experiment is not importable")

    def track_error(self, results, engine, function):
        return results[engine, function][0]

    track_error.unit = "f - f_opt"

    def track_evaluations(self, results, engine, function):
        return results[engine, function][1]

    track_evaluations.unit = "evaluations"

    def track_evaluations_per_cpu_second(self, results, engine, function):
        return results[engine, function][2]

    track_evaluations_per_cpu_second.unit = "evaluations/s"
