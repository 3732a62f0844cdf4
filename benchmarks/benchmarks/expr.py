"""asv benchmarks of decido.Expression: compile, evaluate, evaluate_many, gradient.

The expressions and their inputs are built once, at import, and each one is
called once there (the first call on a fresh Expression allocates, and for
gradients grows, its workspace).  The classes deliberately have no ``setup``
method when decido is importable: asv runners that re-run setup before every
timed call then fall back to timing single microsecond calls, which mostly
measures the timer and a cold cache.  The timed functions pay one dict lookup.

When decido is not importable every benchmark is skipped (a ``setup`` that
raises NotImplementedError), so the suite still loads while the package is
being built.
"""

from __future__ import annotations

import numpy as np

from .problems import PROBLEMS

try:
    import decido
except ImportError:  # pragma: no cover - depends on the environment
    decido = None

ALL_PROBLEMS = list(PROBLEMS)
COMPILE_PROBLEMS = ["rastrigin", "rosenbrock"]
DIMS = [10, 1000]
POPULATION = 64
SEED = 12345

# (problem, n) -> (expression, one point of shape (n,), population of shape (P, n))
CASES: dict[tuple[str, int], tuple[object, np.ndarray, np.ndarray]] = {}


def _build_cases() -> None:
    for name in ALL_PROBLEMS:
        problem = PROBLEMS[name]
        for n in DIMS:
            expr = decido.Expression(problem.expression, n=n)
            X = problem.population(n, POPULATION, seed=SEED)
            x = np.ascontiguousarray(X[0])
            expr.evaluate(x)
            expr.evaluate_many(X)
            expr.gradient(x)
            CASES[name, n] = (expr, x, X)


if decido is not None:
    _build_cases()


class _Skip:
    """Base class: skip every benchmark when decido is not importable."""

    if decido is None:

        def setup(self, *params):
            raise NotImplementedError("decido is not importable")


class Compile(_Skip):
    """Parse + resolve + compile + verify one expression."""

    params = (COMPILE_PROBLEMS, DIMS)
    param_names = ["problem", "n"]

    def time_compile(self, problem, n):
        decido.Expression(PROBLEMS[problem].expression, n=n)


class Evaluate(_Skip):
    """One point through Expression.evaluate (includes the Python call)."""

    params = (ALL_PROBLEMS, DIMS)
    param_names = ["problem", "n"]

    def time_evaluate(self, problem, n):
        expr, x, _ = CASES[problem, n]
        expr.evaluate(x)


class EvaluateMany(_Skip):
    """A population of 64 points through Expression.evaluate_many."""

    params = (ALL_PROBLEMS, DIMS)
    param_names = ["problem", "n"]

    def time_evaluate_many(self, problem, n):
        expr, _, X = CASES[problem, n]
        expr.evaluate_many(X)


class Gradient(_Skip):
    """Value and reverse-mode gradient at one point."""

    params = (ALL_PROBLEMS, DIMS)
    param_names = ["problem", "n"]

    def time_gradient(self, problem, n):
        expr, x, _ = CASES[problem, n]
        expr.gradient(x)
