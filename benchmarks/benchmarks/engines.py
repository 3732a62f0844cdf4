"""asv benchmarks of every optimization engine on Rastrigin, and of the peers.

``EngineRastrigin`` runs a fixed budget through
``decido.minimize(expr, bounds, engine=<id>, seed=1)`` on an expression compiled
once in ``setup`` (a population goes to the VM as one batch) for every engine at
d = 30 and d = 1000 (nelder_mead: d = 100, its maximum).  The ``track_`` methods
report the throughput of one such run in evaluations per second -- around the
whole call, and by the driver's clock (``r.elapsed``) -- and the final value, so
a speed-up that costs accuracy shows up too.  ``lbfgsb`` runs with random
restarts (``start=1``) so it spends the whole budget; ``dss`` solves Rastrigin
(separable) in a few dozen evaluations, so its throughput is not comparable and
its final value is the point.

``ScipyDE`` and ``Pycma`` track SciPy's ``differential_evolution``
(vectorized, updating="deferred", no polish) and pycma (ask/tell, NumPy
objective over the population) on the same problem at d = 30, counting the
evaluations they really make, for the throughput ratios; each is skipped when
its package is missing (asv skips a benchmark whose setup raises NotImplementedError).
"""

from __future__ import annotations

import time

import numpy as np

import decido

try:
    from scipy.optimize import differential_evolution
except ImportError:  # pragma: no cover - depends on the environment
    differential_evolution = None

try:
    import cma
except ImportError:  # pragma: no cover - depends on the environment
    cma = None

RASTRIGIN = "10*n + sum(x**2 - 10*cos(2*pi*x))"
BUDGET = 60_000
SEED = 1
ENGINES = ["dss", "de", "cmaes", "pso", "nelder_mead", "lbfgsb", "random"]
OPTIONS = {"lbfgsb": {"start": 1, "restarts": 1_000_000}}
DIMS = {"nelder_mead": {1000: 100}}  # nelder_mead handles at most 100 dimensions


def _rastrigin_np(X):
    return 10 * X.shape[-1] + np.sum(X**2 - 10 * np.cos(2 * np.pi * X), axis=-1)


class EngineRastrigin:
    """A fixed budget of each engine on Rastrigin over [-5.12, 5.12]^n."""

    params = (ENGINES, [30, 1000])
    param_names = ["engine", "n"]
    timeout = 300

    def setup(self, engine, n):
        n = DIMS.get(engine, {}).get(n, n)
        self.engine = engine
        self.bounds = [(-5.12, 5.12)] * n
        self.expr = decido.Expression(RASTRIGIN, n=n)
        self._run(100)  # warm-up: workspace, caches

    def _run(self, budget=BUDGET):
        return decido.minimize(
            self.expr,
            self.bounds,
            engine=self.engine,
            seed=SEED,
            max_evaluations=budget,
            options=OPTIONS.get(self.engine),
        )

    def time_minimize(self, engine, n):
        self._run()

    def track_evaluations_per_second(self, engine, n):
        t0 = time.perf_counter()
        r = self._run()
        return r.evaluations / (time.perf_counter() - t0)

    track_evaluations_per_second.unit = "evaluations/s"

    def track_driver_evaluations_per_second(self, engine, n):
        r = self._run()
        return r.evaluations / max(r.elapsed, 1e-9)

    track_driver_evaluations_per_second.unit = "evaluations/s"

    def track_final_value(self, engine, n):
        return self._run().fun

    track_final_value.unit = "f"


class ScipyDE:
    """SciPy's differential_evolution on Rastrigin d = 30, for the ratio with ``de``."""

    timeout = 180

    def setup(self):
        if differential_evolution is None:
            raise NotImplementedError("scipy is not importable")

    def track_evaluations_per_second(self):
        count = [0]

        def rastrigin(X):  # vectorized: X has shape (n, S)
            count[0] += X.shape[1]
            return _rastrigin_np(X.T)

        t0 = time.perf_counter()
        differential_evolution(rastrigin, [(-5.12, 5.12)] * 30, vectorized=True,
                               updating="deferred", maxiter=100, tol=0, atol=0, polish=False,
                               rng=SEED)
        return count[0] / (time.perf_counter() - t0)

    track_evaluations_per_second.unit = "evaluations/s"


class Pycma:
    """pycma on Rastrigin d = 30 (6,000 evaluations), for the ratio with ``cmaes``."""

    timeout = 180

    def setup(self):
        if cma is None:
            raise NotImplementedError("pycma is not importable")

    def track_evaluations_per_second(self):
        es = cma.CMAEvolutionStrategy(
            np.ones(30), 0.3 * 10.24,
            {"bounds": [-5.12, 5.12], "seed": SEED, "verbose": -9, "maxfevals": 6_000},
        )
        count = 0
        t0 = time.perf_counter()
        while not es.stop():
            X = np.array(es.ask())
            es.tell(list(X), _rastrigin_np(X).tolist())
            count += len(X)
        return count / (time.perf_counter() - t0)

    track_evaluations_per_second.unit = "evaluations/s"
