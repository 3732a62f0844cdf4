"""asv benchmarks of the ``lbfgsb`` engine (projected L-BFGS) on Rastrigin, d = 30 and 1000.

L-BFGS is a local method: from the default start (the box's centre, which is
Rastrigin's global minimizer) it would converge after one gradient.  These runs
start at uniform random points and restart after each convergence
(``options={"start": 1, "restarts": 1_000_000}``), so every run spends the
whole fixed budget of 20,000 evaluations.  Each evaluation is one point with its
exact reverse-mode AD gradient (a batch of one), so the figures measure the VM's
gradient sweep, the two-loop recursion (O(m n) per iteration, m = 10) and the
driver's per-batch overhead together.

``time_minimize`` runs the budget through ``decido.minimize(..., engine="lbfgsb",
seed=1)`` on an expression compiled once in ``setup``.  The ``track_`` methods
report evaluations per second -- around the whole call, and by the driver's own
clock (``r.elapsed``) -- and the final value.

When decido is not importable every benchmark is skipped.
"""

from __future__ import annotations

import time

try:
    import decido
except ImportError:  # pragma: no cover - depends on the environment
    decido = None

ENGINE = "lbfgsb"
RASTRIGIN = "10*n + sum(x**2 - 10*cos(2*pi*x))"
BUDGET = 20_000
SEED = 1
OPTIONS = {"start": 1, "restarts": 1_000_000}


class RastriginLBFGSB:
    """A fixed budget of projected L-BFGS with random restarts on Rastrigin, [-5.12, 5.12]^n."""

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
            self.expr,
            self.bounds,
            engine=ENGINE,
            seed=SEED,
            max_evaluations=budget,
            options=OPTIONS,
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
