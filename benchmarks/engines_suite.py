"""The problem suite of ``compare_engines.py``: decido expressions and NumPy twins.

Eleven standard test functions, each written once in the decido expression language (for
the decido engines) and once in NumPy (for the peers; vectorized over the last axis, so it
takes one point of shape ``(n,)`` or a population of shape ``(P, n)``), with box bounds and
the known minimum ``fstar(n)``.  Every value is shifted so that ``fstar(n) == 0``: the error of
a run is simply its best value.

Eight of them also come shifted: ``x`` is replaced by ``x - 1.234`` inside the expression (the
constant is part of the objective, not of the bounds), which moves the minimizer off the
centre of the box.  Rosenbrock (minimum at x = 1), Schwefel (420.97) and Styblinski-Tang
(-2.9035) are off-centre already.

``separable`` marks the problems whose expression is ``c + sum_j g_j(x_j)`` (decido's
structure analysis must agree; ``check()`` verifies it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["SHIFT", "SUITE", "SuiteProblem", "check", "select"]

SHIFT = 1.234
SCHWEFEL_C = 418.9828872724338  # -min_t t*sin(sqrt(|t|)) on [-500, 500]
STYBLINSKI_C = 39.16616570377142  # -min_t (t^4 - 16 t^2 + 5 t) / 2 on [-5, 5]


@dataclass(frozen=True)
class SuiteProblem:
    """One objective on [lower, upper]^n with known minimum value fstar (always 0 here)."""

    name: str
    expression: str
    lower: float
    upper: float
    numpy: Callable[[np.ndarray], np.ndarray]
    separable: bool
    shifted: bool = False
    xstar: float = 0.0  # one minimizer, the same in every coordinate

    def bounds(self, n: int) -> list[tuple[float, float]]:
        return [(self.lower, self.upper)] * n

    def fstar(self, n: int) -> float:  # noqa: ARG002 - the same for every n by construction
        return 0.0


def _shift(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    def shifted(x: np.ndarray) -> np.ndarray:
        return fn(np.asarray(x, dtype=np.float64) - SHIFT)

    return shifted


def _index(n: int) -> np.ndarray:
    return np.arange(1, n + 1, dtype=np.float64)


def _sphere(x: np.ndarray) -> np.ndarray:
    return np.sum(x * x, axis=-1)


def _ellipsoid(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    w = 10.0 ** (6 * (_index(n) - 1) / (n - 1))
    return np.sum(w * x * x, axis=-1)


def _rastrigin(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    return 10 * n + np.sum(x * x - 10 * np.cos(2 * np.pi * x), axis=-1)


def _ackley(x: np.ndarray) -> np.ndarray:
    a = np.mean(x * x, axis=-1)
    b = np.mean(np.cos(2 * np.pi * x), axis=-1)
    return -20 * np.exp(-0.2 * np.sqrt(a)) - np.exp(b) + 20 + np.e


def _rosenbrock(x: np.ndarray) -> np.ndarray:
    head = x[..., :-1]
    return np.sum(100 * (x[..., 1:] - head * head) ** 2 + (1 - head) ** 2, axis=-1)


def _griewank(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    return 1 + np.sum(x * x, axis=-1) / 4000 - np.prod(np.cos(x / np.sqrt(_index(n))), axis=-1)


def _schwefel(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    return SCHWEFEL_C * n - np.sum(x * np.sin(np.sqrt(np.abs(x))), axis=-1)


def _styblinski(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    x2 = x * x
    return np.sum(x2 * x2 - 16 * x2 + 5 * x, axis=-1) / 2 + STYBLINSKI_C * n


def _zakharov(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    s = np.sum(0.5 * _index(n) * x, axis=-1)
    return np.sum(x * x, axis=-1) + s**2 + s**4


def _alpine(x: np.ndarray) -> np.ndarray:
    return np.sum(np.abs(x * np.sin(x) + 0.1 * x), axis=-1)


def _bent_cigar(x: np.ndarray) -> np.ndarray:
    return x[..., 0] ** 2 + 1e6 * np.sum(x[..., 1:] ** 2, axis=-1)


# name: (expression with {z} for the variable and {z0}/{zt} for x[0]/x[1:], bounds, numpy,
#        separable, shifted variant wanted)
_BASE: list[tuple[str, str, float, float, Callable, bool, bool, float]] = [
    ("sphere", "sum({z}**2)", -100.0, 100.0, _sphere, True, True, 0.0),
    ("ellipsoid", "sum(10**(6*(i-1)/(n-1))*{z}**2)", -100.0, 100.0, _ellipsoid, True, True, 0.0),
    (
        "rastrigin",
        "10*n + sum({z}**2 - 10*cos(2*pi*{z}))",
        -5.12,
        5.12,
        _rastrigin,
        True,
        True,
        0.0,
    ),
    (
        "ackley",
        "-20*exp(-0.2*sqrt(mean({z}**2))) - exp(mean(cos(2*pi*{z}))) + 20 + e",
        -32.768,
        32.768,
        _ackley,
        False,
        True,
        0.0,
    ),
    (
        "rosenbrock",
        "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)",
        -5.0,
        10.0,
        _rosenbrock,
        False,
        False,
        1.0,
    ),
    (
        "griewank",
        "1 + sum({z}**2)/4000 - prod(cos({z}/sqrt(i)))",
        -600.0,
        600.0,
        _griewank,
        False,
        True,
        0.0,
    ),
    (
        "schwefel",
        f"{SCHWEFEL_C}*n - sum(x*sin(sqrt(abs(x))))",
        -500.0,
        500.0,
        _schwefel,
        True,
        False,
        420.968746359982,
    ),
    (
        "styblinski",
        f"sum(x**4 - 16*x**2 + 5*x)/2 + {STYBLINSKI_C}*n",
        -5.0,
        5.0,
        _styblinski,
        True,
        False,
        -2.903534027771177,
    ),
    (
        "zakharov",
        "sum({z}**2) + sum(0.5*i*{z})**2 + sum(0.5*i*{z})**4",
        -5.0,
        10.0,
        _zakharov,
        False,
        True,
        0.0,
    ),
    ("alpine", "sum(abs({z}*sin({z}) + 0.1*{z}))", -10.0, 10.0, _alpine, True, True, 0.0),
    (
        "bent_cigar",
        "{z0}**2 + 1e6*sum({zt}**2)",
        -100.0,
        100.0,
        _bent_cigar,
        True,
        True,
        0.0,
    ),
]


def _build() -> dict[str, SuiteProblem]:
    out: dict[str, SuiteProblem] = {}
    for name, template, lo, hi, fn, separable, want_shift, xstar in _BASE:
        plain = template.format(z="x", z0="x[0]", zt="x[1:]")
        out[name] = SuiteProblem(name, plain, lo, hi, fn, separable, False, xstar)
        if want_shift:
            s = f"{SHIFT}"
            expr = template.format(z=f"(x - {s})", z0=f"(x[0] - {s})", zt=f"(x[1:] - {s})")
            out[f"{name}_shifted"] = SuiteProblem(
                f"{name}_shifted", expr, lo, hi, _shift(fn), separable, True, xstar + SHIFT
            )
    return out


SUITE: dict[str, SuiteProblem] = _build()


def select(names: str | None) -> list[SuiteProblem]:
    """Problems by comma-separated names ('rastrigin,sphere_shifted'); None: all.

    A base name followed by '*' (``rastrigin*``) selects it and its shifted variant.
    """
    if not names:
        return list(SUITE.values())
    picked: list[SuiteProblem] = []
    for raw in names.split(","):
        key = raw.strip().lower().replace("-", "_")
        if not key:
            continue
        if key == "styblinski_tang":
            key = "styblinski"
        if key.endswith("*"):
            keys = [k for k in SUITE if k in (key[:-1], key[:-1] + "_shifted")]
        else:
            keys = [key] if key in SUITE else []
        if not keys:
            raise KeyError(f"unknown problem {raw!r} (known: {', '.join(SUITE)})")
        picked.extend(SUITE[k] for k in keys if SUITE[k] not in picked)
    return picked


def check(n: int = 7, tol: float = 1e-9) -> None:
    """Self-test: expression == NumPy at random points, f(xstar) == fstar, and decido's
    structure analysis agrees with ``separable``.  Raises AssertionError."""
    import decido

    rng = np.random.default_rng(0)
    for p in SUITE.values():
        expr = decido.Expression(p.expression, n=n)
        pts = rng.uniform(p.lower, p.upper, size=(16, n))
        a = np.asarray(expr.evaluate_many(pts))
        b = p.numpy(pts)
        rel = np.max(np.abs(a - b) / np.maximum(np.abs(b), 1.0))
        assert rel < tol, f"{p.name}: expression and NumPy differ by {rel:.2e}"
        xs = np.full(n, p.xstar)
        assert abs(float(p.numpy(xs)) - p.fstar(n)) < 1e-9, f"{p.name}: f(xstar) != fstar"
        assert abs(float(expr.evaluate(xs)) - p.fstar(n)) < 1e-9, f"{p.name}: expr(xstar)"
        kind = expr.structure.kind
        assert (kind == "separable") == p.separable, f"{p.name}: structure {kind!r}"
