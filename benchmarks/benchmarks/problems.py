"""Registry of the benchmark objectives.

Six standard global-optimization test functions, each with its decido
expression, box bounds, known global minimum and minimizer, a NumPy
implementation (vectorized over the last axis, so it takes one point of shape
``(n,)`` or a population of shape ``(P, n)``) and a ``success`` test in the
spirit of SciPy's ``go_benchmark`` suite.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["PROBLEMS", "Problem", "get"]

# Minimizers known in closed form only as roots; computed to 30 digits.
SCHWEFEL_XMIN = 420.968746359982  # root of sin(sqrt(t)) + sqrt(t)/2*cos(sqrt(t))
STYBLINSKI_TANG_XMIN = -2.903534027771177  # root of 4x^3 - 32x + 5
STYBLINSKI_TANG_FMIN = -39.16616570377142  # per coordinate


@dataclass(frozen=True)
class Problem:
    """One objective: f(x) for x in [lower, upper]^n."""

    name: str
    expression: str
    lower: float
    upper: float
    numpy: Callable[[np.ndarray], np.ndarray]
    fmin_per_coordinate: float
    xmin_coordinate: float
    fmin_constant: float = 0.0

    def bounds(self, n: int) -> list[tuple[float, float]]:
        return [(self.lower, self.upper)] * n

    def fglob(self, n: int) -> float:
        """The known global minimum value in dimension n."""
        return self.fmin_constant + self.fmin_per_coordinate * n

    def xglob(self, n: int) -> np.ndarray:
        """The known global minimizer in dimension n."""
        return np.full(n, self.xmin_coordinate)

    def fun(self, x: np.ndarray) -> float:
        """f(x) for one point, computed with NumPy."""
        return float(self.numpy(np.asarray(x, dtype=np.float64)))

    def success(self, x: np.ndarray, tol: float = 1e-5) -> bool:
        """Whether x is inside the bounds and f(x) is within tol of the minimum.

        Like SciPy's go_benchmark, a value below the known minimum (by more than
        tol) means the registry is wrong and raises ValueError.
        """
        x = np.asarray(x, dtype=np.float64)
        if np.any(x < self.lower) or np.any(x > self.upper):
            return False
        value = self.fun(x)
        fglob = self.fglob(x.shape[-1])
        if value < fglob - tol:
            raise ValueError(f"{self.name}: f(x) = {value!r} is below the known minimum {fglob!r}")
        return bool(abs(value - fglob) <= tol)

    def population(self, n: int, p: int, seed: int = 0) -> np.ndarray:
        """p points drawn uniformly from the box, shape (p, n), C-contiguous."""
        rng = np.random.default_rng(seed)
        return np.ascontiguousarray(rng.uniform(self.lower, self.upper, size=(p, n)))


def _rastrigin(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    return 10 * n + np.sum(x**2 - 10 * np.cos(2 * np.pi * x), axis=-1)


def _ackley(x: np.ndarray) -> np.ndarray:
    a = np.mean(x**2, axis=-1)
    b = np.mean(np.cos(2 * np.pi * x), axis=-1)
    return -20 * np.exp(-0.2 * np.sqrt(a)) - np.exp(b) + 20 + np.e


def _rosenbrock(x: np.ndarray) -> np.ndarray:
    head = x[..., :-1]
    return np.sum(100 * (x[..., 1:] - head**2) ** 2 + (1 - head) ** 2, axis=-1)


def _griewank(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    i = np.arange(1, n + 1, dtype=np.float64)
    return 1 + np.sum(x**2, axis=-1) / 4000 - np.prod(np.cos(x / np.sqrt(i)), axis=-1)


def _schwefel(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    return 418.9828872724338 * n - np.sum(x * np.sin(np.sqrt(np.abs(x))), axis=-1)


def _styblinski_tang(x: np.ndarray) -> np.ndarray:
    return np.sum(x**4 - 16 * x**2 + 5 * x, axis=-1) / 2


PROBLEMS: dict[str, Problem] = {
    p.name: p
    for p in (
        Problem(
            name="rastrigin",
            expression="10*n + sum(x**2 - 10*cos(2*pi*x))",
            lower=-5.12,
            upper=5.12,
            numpy=_rastrigin,
            fmin_per_coordinate=0.0,
            xmin_coordinate=0.0,
        ),
        Problem(
            name="ackley",
            expression="-20*exp(-0.2*sqrt(mean(x**2))) - exp(mean(cos(2*pi*x))) + 20 + e",
            lower=-32.768,
            upper=32.768,
            numpy=_ackley,
            fmin_per_coordinate=0.0,
            xmin_coordinate=0.0,
        ),
        Problem(
            name="rosenbrock",
            expression="sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)",
            lower=-5.0,
            upper=10.0,
            numpy=_rosenbrock,
            fmin_per_coordinate=0.0,
            xmin_coordinate=1.0,
        ),
        Problem(
            name="griewank",
            expression="1 + sum(x**2)/4000 - prod(cos(x/sqrt(i)))",
            lower=-600.0,
            upper=600.0,
            numpy=_griewank,
            fmin_per_coordinate=0.0,
            xmin_coordinate=0.0,
        ),
        Problem(
            name="schwefel",
            expression="418.9828872724338*n - sum(x*sin(sqrt(abs(x))))",
            lower=-500.0,
            upper=500.0,
            numpy=_schwefel,
            fmin_per_coordinate=0.0,
            xmin_coordinate=SCHWEFEL_XMIN,
        ),
        Problem(
            name="styblinski_tang",
            expression="sum(x**4 - 16*x**2 + 5*x)/2",
            lower=-5.0,
            upper=5.0,
            numpy=_styblinski_tang,
            fmin_per_coordinate=STYBLINSKI_TANG_FMIN,
            xmin_coordinate=STYBLINSKI_TANG_XMIN,
        ),
    )
}


def get(name: str) -> Problem:
    """Look a problem up by name ('styblinski-tang' and 'styblinski_tang' both work)."""
    key = name.strip().lower().replace("-", "_")
    try:
        return PROBLEMS[key]
    except KeyError:
        known = ", ".join(PROBLEMS)
        raise KeyError(f"unknown problem {name!r} (known: {known})") from None
