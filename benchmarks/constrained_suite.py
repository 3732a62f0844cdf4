"""The constrained suite of ``constrained.py``: classic problems with known optima.

Each problem is written once, in the decido expression language, over named variables (real,
integer or a discrete set); the peers evaluate the same compiled expressions (so no problem
has two definitions that could disagree).  Sources of the definitions and best known values:

* G01, G04, G06, G08, G09, G11, G13: J. J. Liang et al., Problem definitions and evaluation
  criteria for the CEC 2006 special session on constrained real-parameter optimization
  (2006); equalities hold within 1e-4 there, and so here (``tol``).
* Pressure vessel with thicknesses in steps of 1/16 inch (best known 6059.714335),
  tension/compression spring (0.012665233), welded beam (1.724852309): C. A. C. Coello,
  Use of a self-adaptive penalty approach for engineering optimization problems, Computers
  in Industry 41 (2000) 113-127; best known values as collected by L. C. Cagnina, S. C.
  Esquivel, C. A. Coello, Solving engineering optimization problems with the simple
  constrained PSO, Informatica 32 (2008) 319-326.
* Speed reducer (Golinski) with an integer number of teeth (2994.424466): Cagnina et al.
  (2008).
* An integer quadratic with a linear constraint and a 0-1 knapsack of 15 items: generated
  here; their optima are found by brute force (``brute_force``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["SUITE", "CProblem", "brute_force"]


@dataclass(frozen=True)
class CProblem:
    """A constrained problem: minimize ``objective`` over ``variables`` s.t. ``constraints``."""

    name: str
    objective: str
    variables: list[dict[str, Any]]
    constraints: list[str]
    fstar: float
    tol: float = 1e-6
    notes: str = ""
    kind: str = "real"  # real, mixed (integers or discrete sets), integer
    extra: dict[str, Any] = field(default_factory=dict)


def _reals(names: str, lo: list[float], hi: list[float]) -> list[dict[str, Any]]:
    return [{"name": n, "lower": a, "upper": b}
            for n, a, b in zip(names.split(), lo, hi, strict=True)]


G01 = CProblem(
    "G01",
    "5*(x1+x2+x3+x4) - 5*(x1**2+x2**2+x3**2+x4**2) - (x5+x6+x7+x8+x9+x10+x11+x12+x13)",
    _reals("x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13", [0] * 13, [1] * 9 + [100] * 3 + [1]),
    ["2*x1+2*x2+x10+x11 <= 10", "2*x1+2*x3+x10+x12 <= 10", "2*x2+2*x3+x11+x12 <= 10",
     "-8*x1+x10 <= 0", "-8*x2+x11 <= 0", "-8*x3+x12 <= 0", "-2*x4-x5+x10 <= 0",
     "-2*x6-x7+x11 <= 0", "-2*x8-x9+x12 <= 0"],
    -15.0)

_U4 = "85.334407 + 0.0056858*x2*x5 + 0.0006262*x1*x4 - 0.0022053*x3*x5"
_V4 = "80.51249 + 0.0071317*x2*x5 + 0.0029955*x1*x2 + 0.0021813*x3**2"
_W4 = "9.300961 + 0.0047026*x3*x5 + 0.0012547*x1*x3 + 0.0019085*x3*x4"
G04 = CProblem(
    "G04", "5.3578547*x3**2 + 0.8356891*x1*x5 + 37.293239*x1 - 40792.141",
    _reals("x1 x2 x3 x4 x5", [78, 33, 27, 27, 27], [102, 45, 45, 45, 45]),
    [f"{_U4} <= 92", f"{_U4} >= 0", f"{_V4} <= 110", f"{_V4} >= 90", f"{_W4} <= 25",
     f"{_W4} >= 20"],
    -30665.538671783317)

G06 = CProblem(
    "G06", "(x1-10)**3 + (x2-20)**3", _reals("x1 x2", [13, 0], [100, 100]),
    ["(x1-5)**2 + (x2-5)**2 >= 100", "(x1-6)**2 + (x2-5)**2 <= 82.81"],
    -6961.8138755801664)

G08 = CProblem(
    "G08", "-sin(2*pi*x1)**3 * sin(2*pi*x2) / (x1**3 * (x1+x2))",
    _reals("x1 x2", [0, 0], [10, 10]),
    ["x1**2 - x2 + 1 <= 0", "1 - x1 + (x2-4)**2 <= 0"], -0.0958250414180359)

G09 = CProblem(
    "G09",
    "(x1-10)**2 + 5*(x2-12)**2 + x3**4 + 3*(x4-11)**2 + 10*x5**6 + 7*x6**2 + x7**4"
    " - 4*x6*x7 - 10*x6 - 8*x7",
    _reals("x1 x2 x3 x4 x5 x6 x7", [-10] * 7, [10] * 7),
    ["2*x1**2 + 3*x2**4 + x3 + 4*x4**2 + 5*x5 <= 127",
     "7*x1 + 3*x2 + 10*x3**2 + x4 - x5 <= 282",
     "23*x1 + x2**2 + 6*x6**2 - 8*x7 <= 196",
     "4*x1**2 + x2**2 - 3*x1*x2 + 2*x3**2 + 5*x6 - 11*x7 <= 0"],
    680.630057374402)

G11 = CProblem("G11", "x1**2 + (x2-1)**2", _reals("x1 x2", [-1, -1], [1, 1]),
               ["x2 - x1**2 == 0"], 0.7499, tol=1e-4)

G13 = CProblem(
    "G13", "exp(x1*x2*x3*x4*x5)",
    _reals("x1 x2 x3 x4 x5", [-2.3, -2.3, -3.2, -3.2, -3.2], [2.3, 2.3, 3.2, 3.2, 3.2]),
    ["x1**2 + x2**2 + x3**2 + x4**2 + x5**2 == 10", "x2*x3 - 5*x4*x5 == 0",
     "x1**3 + x2**3 == -1"],
    0.053941514041898, tol=1e-4)

_SIXTEENTHS = [0.0625 * k for k in range(1, 100)]
VESSEL = CProblem(
    "pressure vessel",
    "0.6224*ts*r*l + 1.7781*th*r**2 + 3.1661*ts**2*l + 19.84*ts**2*r",
    [{"name": "ts", "values": _SIXTEENTHS}, {"name": "th", "values": _SIXTEENTHS},
     {"name": "r", "lower": 10, "upper": 200}, {"name": "l", "lower": 10, "upper": 200}],
    ["shell: ts >= 0.0193*r", "head: th >= 0.00954*r",
     "volume: pi*r**2*l + 4/3*pi*r**3 >= 1296000", "length: l <= 240"],
    6059.714335, kind="mixed", notes="thicknesses in 1/16 inch steps")

SPRING = CProblem(
    "spring", "(N + 2)*D*d**2",
    _reals("d D N", [0.05, 0.25, 2.0], [2.0, 1.3, 15.0]),
    ["1 - D**3*N/(71785*d**4) <= 0",
     "(4*D**2 - d*D)/(12566*(D*d**3 - d**4)) + 1/(5108*d**2) - 1 <= 0",
     "1 - 140.45*d/(D**2*N) <= 0", "(d + D)/1.5 - 1 <= 0"],
    0.012665232788)

_TAU1 = "(6000/(sqrt(2)*h*l))"
_R = "sqrt(l**2/4 + ((h+t)/2)**2)"
_TAU2 = f"(6000*(14 + l/2)*{_R}/(2*(sqrt(2)*h*l*(l**2/12 + ((h+t)/2)**2))))"
WELDED = CProblem(
    "welded beam", "1.10471*h**2*l + 0.04811*t*b*(14 + l)",
    _reals("h l t b", [0.1, 0.1, 0.1, 0.1], [2, 10, 10, 2]),
    [f"shear: sqrt({_TAU1}**2 + 2*{_TAU1}*{_TAU2}*l/(2*{_R}) + {_TAU2}**2) <= 13600",
     "bending: 504000/(t**2*b) <= 30000", "h - b <= 0",
     "0.10471*h**2 + 0.04811*t*b*(14 + l) <= 5", "h >= 0.125",
     "deflection: 2.1952/(t**3*b) <= 0.25",
     "buckling: 102372.449*(1 - 0.0282346*t)*t*b**3 >= 6000"],
    1.724852308597366)

REDUCER = CProblem(
    "speed reducer",
    "0.7854*x1*x2**2*(3.3333*z**2 + 14.9334*z - 43.0934) - 1.508*x1*(x6**2 + x7**2)"
    " + 7.4777*(x6**3 + x7**3) + 0.7854*(x4*x6**2 + x5*x7**2)",
    [{"name": "x1", "lower": 2.6, "upper": 3.6}, {"name": "x2", "lower": 0.7, "upper": 0.8},
     {"name": "z", "lower": 17, "upper": 28, "type": "integer"},
     {"name": "x4", "lower": 7.3, "upper": 8.3}, {"name": "x5", "lower": 7.3, "upper": 8.3},
     {"name": "x6", "lower": 2.9, "upper": 3.9}, {"name": "x7", "lower": 5.0, "upper": 5.5}],
    ["27/(x1*x2**2*z) <= 1", "397.5/(x1*x2**2*z**2) <= 1",
     "1.93*x4**3/(x2*z*x6**4) <= 1", "1.93*x5**3/(x2*z*x7**4) <= 1",
     "sqrt((745*x4/(x2*z))**2 + 16.9e6)/(110*x6**3) <= 1",
     "sqrt((745*x5/(x2*z))**2 + 157.5e6)/(85*x7**3) <= 1",
     "x2*z/40 <= 1", "5*x2/x1 <= 1", "x1/(12*x2) <= 1",
     "(1.5*x6 + 1.9)/x4 <= 1", "(1.1*x7 + 1.9)/x5 <= 1"],
    2994.424465758, kind="mixed", notes="teeth z integer")

_C = [1.7, -2.4, 3.3, 0.6, -1.5]
INTQUAD = CProblem(
    "integer quadratic",
    " + ".join(f"(k{j} - ({c}))**2" for j, c in enumerate(_C)) + " + 0.5*(k0 + k1 + k2 - 4.3)**2",
    [{"name": f"k{j}", "lower": -5.5, "upper": 5.5, "type": "integer"} for j in range(5)],
    ["k0 + k3 <= 1", "k2 - k4 >= 3.5"], float("nan"), kind="integer",
    notes="integers in [-5, 5]^5, optimum by brute force")

_rng = np.random.default_rng(2006)
_VALUES = _rng.integers(10, 100, 15).tolist()
_WEIGHTS = _rng.integers(5, 60, 15).tolist()
_CAP = int(sum(_WEIGHTS) * 0.4)
KNAPSACK = CProblem(
    "knapsack 0-1",
    "-(" + " + ".join(f"{v}*b{j}" for j, v in enumerate(_VALUES)) + ")",
    [{"name": f"b{j}", "lower": 0, "upper": 1, "type": "integer"} for j in range(15)],
    ["capacity: " + " + ".join(f"{w}*b{j}" for j, w in enumerate(_WEIGHTS)) + f" <= {_CAP}"],
    float("nan"), kind="integer", notes="15 items, optimum by brute force (32,768 subsets)")


def brute_force(p: CProblem) -> float:
    """The optimum of an all-integer problem by enumeration (small problems only)."""
    import decido
    from decido.design import compile_constraints, design_problems

    _, design = design_problems(None, variables=p.variables)
    assert design is not None
    cons = compile_constraints(p.constraints, design)
    f = decido.Expression(p.objective, variables=[v["name"] for v in p.variables])
    axes = [range(int(np.ceil(v["lower"])), int(np.floor(v["upper"])) + 1)
            for v in p.variables]
    X = np.array(list(itertools.product(*axes)), dtype=np.float64)
    vals = f.evaluate_many(X)
    ok = np.ones(len(X), dtype=bool)
    for c in cons:
        g = c.program.evaluate_many(X)
        ok &= np.array([c.violation(v) <= p.tol for v in g])
    return float(vals[ok].min())


SUITE = [G01, G04, G06, G08, G09, G11, G13, VESSEL, SPRING, WELDED, REDUCER, INTQUAD, KNAPSACK]
