"""asv benchmarks of the ``pso`` engine (SPSO-2011) on Rastrigin, d = 30 and 1000.

``time_minimize`` runs a fixed budget of 20,000 evaluations through
``decido.minimize(..., engine="pso", seed=1)`` on a compiled expression (the
expression is compiled once, in ``setup``).  The ``track_`` methods report the
throughput of one such run in evaluations per second -- measured around the whole
call, and by the driver's own clock (``r.elapsed``) -- and the final value, so a
speed-up that costs accuracy shows up too.

When decido is not importable every benchmark is skipped.
"""

from __future__ import annotations

import time

try:
    import decido
except ImportError:  # pragma: no cover - depends on the environment
    decido = None

ENGINE = "pso"
RASTRIGIN = "10*n + sum(x**2 - 10*cos(2*pi*x))"
BUDGET = 20_000
SEED = 1


class RastriginPSO:
    """A fixed budget of SPSO-2011 on Rastrigin over [-5.12, 5.12]^n."""

    params = [30, 1000]
    param_names = ["n"]
    timeout = 120

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
