"""asv benchmarks of decido.Expression: compile, evaluate, evaluate_many, gradient.

Every benchmark is skipped (setup raises NotImplementedError) when decido is not
importable, so the suite still loads while the package is being built.
"""

from __future__ import annotations

import numpy as np

from .problems import PROBLEMS

try:
    import decido
except ImportError:  # pragma: no cover - depends on the environment
    decido = None

ALL_PROBLEMS = list(PROBLEMS)
DIMS = [10, 1000]
POPULATION = 64
SEED = 12345


def _require_decido() -> None:
    if decido is None:
        raise NotImplementedError("decido is not importable")


def _expression(problem: str, n: int):
    _require_decido()
    return decido.Expression(PROBLEMS[problem].expression, n=n)


class Compile:
    """Parse + resolve + compile + verify one expression."""

    params = (["rastrigin", "rosenbrock"], DIMS)
    param_names = ["problem", "n"]

    def setup(self, problem, n):
        _require_decido()
        self.text = PROBLEMS[problem].expression

    def time_compile(self, problem, n):
        decido.Expression(self.text, n=n)


class Evaluate:
    """One point through Expression.evaluate (includes the Python call)."""

    params = (ALL_PROBLEMS, DIMS)
    param_names = ["problem", "n"]

    def setup(self, problem, n):
        self.expr = _expression(problem, n)
        self.x = np.ascontiguousarray(PROBLEMS[problem].population(n, 1, seed=SEED)[0])

    def time_evaluate(self, problem, n):
        self.expr.evaluate(self.x)


class EvaluateMany:
    """A population of 64 points through Expression.evaluate_many."""

    params = (ALL_PROBLEMS, DIMS)
    param_names = ["problem", "n"]

    def setup(self, problem, n):
        self.expr = _expression(problem, n)
        self.X = PROBLEMS[problem].population(n, POPULATION, seed=SEED)

    def time_evaluate_many(self, problem, n):
        self.expr.evaluate_many(self.X)


class Gradient:
    """Value and reverse-mode gradient of one point."""

    params = (ALL_PROBLEMS, DIMS)
    param_names = ["problem", "n"]

    def setup(self, problem, n):
        self.expr = _expression(problem, n)
        self.x = np.ascontiguousarray(PROBLEMS[problem].population(n, 1, seed=SEED)[0])

    def time_gradient(self, problem, n):
        self.expr.gradient(self.x)
