"""asv benchmarks of the ``cmaes`` engine (IPOP-CMA-ES) on Rastrigin, d = 30 and 1000.

``time_minimize`` runs a fixed budget of 60,000 evaluations through
``decido.minimize(..., engine="cmaes", seed=1)`` on a compiled expression (compiled
once, in ``setup``); each generation goes to the VM as one batch.  At d = 30 the
covariance is full (an O(n^3) eigendecomposition every generation or two), at
d = 1000 it is diagonal (sep-CMA-ES, O(n) per sample).  The ``track_`` methods
report the throughput of one such run in evaluations per second -- around the whole
call, and by the driver's clock (``r.elapsed``) -- and the final value, so a
speed-up that costs accuracy shows up too.

``PycmaReference`` tracks pycma (``cma.CMAEvolutionStrategy``, ask/tell, NumPy
objective over the population) on the same problem at d = 30 for 6,000
evaluations, so the two throughputs can be compared; it is skipped when pycma is
missing.

When decido is not importable every benchmark is skipped.
"""

from __future__ import annotations

import time

import numpy as np

try:
    import decido
except ImportError:  # pragma: no cover - depends on the environment
    decido = None

try:
    import cma
except ImportError:  # pragma: no cover - depends on the environment
    cma = None

ENGINE = "cmaes"
RASTRIGIN = "10*n + sum(x**2 - 10*cos(2*pi*x))"
BUDGET = 60_000
SEED = 1


class RastriginCMAES:
    """A fixed budget of IPOP-CMA-ES on Rastrigin over [-5.12, 5.12]^n."""

    params = [30, 1000]
    param_names = ["n"]
    timeout = 180

    def setup(self, n):
        if decido is None:
            raise NotImplementedError("decido is not importable")
        self.bounds = [(-5.12, 5.12)] * n
        self.expr = decido.Expression(RASTRIGIN, n=n)
        self._run(100)  # warm-up: workspace, caches

    def _run(self, budget=BUDGET):
        return decido.minimize(
            self.expr, self.bounds, engine=ENGINE, seed=SEED, max_evaluations=budget
        )

    def time_minimize(self, n):
        self._run()

    def track_evaluations_per_second(self, n):
        t0 = time.perf_counter()
        r = self._run()
        return r.evaluations / (time.perf_counter() - t0)

    track_evaluations_per_second.unit = "evaluations/s"

    def track_driver_evaluations_per_second(self, n):
        r = self._run()
        return r.evaluations / max(r.elapsed, 1e-9)

    track_driver_evaluations_per_second.unit = "evaluations/s"

    def track_final_value(self, n):
        return self._run().fun

    track_final_value.unit = "f"


class PycmaReference:
    """pycma on the same problem (d = 30), for the throughput ratio."""

    timeout = 180

    def setup(self):
        if cma is None:
            raise NotImplementedError("pycma is not importable")
        self.n = 30

    def _run(self, budget=6_000):
        es = cma.CMAEvolutionStrategy(
            np.zeros(self.n) + 1.0,
            0.3 * 10.24,
            {"bounds": [-5.12, 5.12], "seed": SEED, "verbose": -9, "maxfevals": budget},
        )
        count = 0
        while not es.stop():
            X = np.array(es.ask())
            f = 10 * self.n + np.sum(X**2 - 10 * np.cos(2 * np.pi * X), axis=1)
            es.tell(list(X), f.tolist())
            count += len(X)
        return count

    def track_pycma_evaluations_per_second(self):
        t0 = time.perf_counter()
        evaluations = self._run()
        return evaluations / (time.perf_counter() - t0)

    track_pycma_evaluations_per_second.unit = "evaluations/s"
