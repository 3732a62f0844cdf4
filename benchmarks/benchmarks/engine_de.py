"""asv benchmarks of the ``de`` engine (L-SHADE) on Rastrigin, d = 30 and 1000.

``time_minimize`` runs a fixed budget of 60,000 evaluations through
``decido.minimize(..., engine="de", seed=1)`` on a compiled expression (compiled
once, in ``setup``): the whole generation goes to the VM as one batch.  The
``track_`` methods report the throughput of one such run in evaluations per
second -- around the whole call, and by the driver's clock (``r.elapsed``) -- and
the final value, so a speed-up that costs accuracy shows up too.

``ScipyReference`` tracks SciPy's ``differential_evolution`` (vectorized=True,
updating="deferred", no polishing) on the same problem at d = 30, counting the
evaluations it really makes (SciPy's ``nfev`` counts one per vectorized call), so
the two throughputs can be compared; it is skipped when SciPy is missing.

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
    from scipy.optimize import differential_evolution
except ImportError:  # pragma: no cover - depends on the environment
    differential_evolution = None

ENGINE = "de"
RASTRIGIN = "10*n + sum(x**2 - 10*cos(2*pi*x))"
BUDGET = 60_000
SEED = 1


class RastriginDE:
    """A fixed budget of L-SHADE on Rastrigin over [-5.12, 5.12]^n."""

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


class ScipyReference:
    """SciPy's differential_evolution on the same problem (d = 30), for the ratio."""

    timeout = 180

    def setup(self):
        if differential_evolution is None:
            raise NotImplementedError("scipy is not importable")
        self.n = 30
        self.bounds = [(-5.12, 5.12)] * self.n

    def _run(self):
        count = [0]

        def rastrigin(X):  # vectorized: X has shape (n, S)
            count[0] += X.shape[1]
            return 10 * X.shape[0] + np.sum(X**2 - 10 * np.cos(2 * np.pi * X), axis=0)

        differential_evolution(
            rastrigin,
            self.bounds,
            vectorized=True,
            updating="deferred",
            maxiter=100,
            tol=0,
            atol=0,
            polish=False,
            rng=SEED,
        )
        return count[0]

    def track_scipy_evaluations_per_second(self):
        t0 = time.perf_counter()
        evaluations = self._run()
        return evaluations / (time.perf_counter() - t0)

    track_scipy_evaluations_per_second.unit = "evaluations/s"
