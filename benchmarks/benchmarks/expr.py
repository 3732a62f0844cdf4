"""asv benchmarks of decido.Expression: compile, evaluate, evaluate_many, gradient.

The expressions and their inputs are built once, at import, and each one is
called once there (the first call on a fresh Expression allocates, and for
gradients grows, its workspace).  The classes deliberately have no ``setup``
method: asv runners that re-run setup before every
timed call then fall back to timing single microsecond calls, which mostly
measures the timer and a cold cache.  The timed functions pay one dict lookup.
"""

from __future__ import annotations

import numpy as np

import decido

from .cpu import CpuTimer
from .problems import PROBLEMS

ALL_PROBLEMS = list(PROBLEMS)
COMPILE_PROBLEMS = ["rastrigin", "rosenbrock"]
DIMS = [10, 100, 1000]  # compare_eval.py's dimensions
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


_build_cases()


class Compile(CpuTimer):
    """Parse + resolve + compile + verify one expression."""

    params = (COMPILE_PROBLEMS, [10, 1000])
    param_names = ["problem", "n"]

    def time_compile(self, problem, n):
        decido.Expression(PROBLEMS[problem].expression, n=n)


class Evaluate(CpuTimer):
    """One point through Expression.evaluate (includes the Python call)."""

    params = (ALL_PROBLEMS, DIMS)
    param_names = ["problem", "n"]

    def time_evaluate(self, problem, n):
        expr, x, _ = CASES[problem, n]
        expr.evaluate(x)


class EvaluateMany(CpuTimer):
    """A population of 64 points through Expression.evaluate_many."""

    params = (ALL_PROBLEMS, DIMS)
    param_names = ["problem", "n"]

    def time_evaluate_many(self, problem, n):
        expr, _, X = CASES[problem, n]
        expr.evaluate_many(X)


class Gradient(CpuTimer):
    """Value and reverse-mode gradient at one point."""

    params = (ALL_PROBLEMS, DIMS)
    param_names = ["problem", "n"]

    def time_gradient(self, problem, n):
        expr, x, _ = CASES[problem, n]
        expr.gradient(x)


NAMED_SIZES = [10_000, 40_000]


def _named(count: int) -> tuple[str, list[str]]:
    """A weighted sum of ``count`` named variables (the decision context)."""
    names = [f"v{k}" for k in range(count)]
    return " + ".join(f"{k % 7 + 1}*{name}" for k, name in enumerate(names)), names


NAMED = {count: _named(count) for count in NAMED_SIZES}


class CompileNamed(CpuTimer):
    """Compile a sum over N named variables: near-linear in N (each name in the text is
    found by a hash lookup; it was a scan of the variables, O(N^2))."""

    params = NAMED_SIZES
    param_names = ["names"]
    timeout = 120

    def time_compile_named(self, count):
        text, names = NAMED[count]
        decido.Expression(text, variables=names, max_length=len(text),
                          max_instructions=4 * count)
