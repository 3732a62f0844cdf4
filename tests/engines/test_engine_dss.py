"""dss: separable objectives solved coordinate by coordinate; a global hybrid
otherwise (DESIGN §3).  No function is recognised by name: these problems are
only written in the expression language."""

import numpy as np
import pytest

import decido

SEPARABLE = {
    "rastrigin": ("10*n + sum(x**2 - 10*cos(2*pi*x))", 5.12, 0.0),
    "rastrigin_shifted": ("10*n + sum((x-1.3)**2 - 10*cos(2*pi*(x-1.3)))", 5.12, 0.0),
    "schwefel": ("418.9828872724338*n - sum(x*sin(sqrt(abs(x))))", 500.0, 0.0),
    "styblinski_tang": ("sum(x**4 - 16*x**2 + 5*x)/2 + 39.16616570377142*n", 5.0, 0.0),
    "alpine": ("sum(abs(x*sin(x) + 0.1*x))", 10.0, 0.0),
    "ellipsoid": ("sum(10**(6*(i-1)/(n-1))*x**2)", 5.0, 0.0),
    "ellipsoid_shifted": ("sum(10**(6*(i-1)/(n-1))*(x-0.77)**2)", 5.0, 0.0),
    "bent_cigar": ("x[0]**2 + 1e6*sum(x[1:]**2)", 100.0, 0.0),
    "sphere_per_coordinate_shift": ("sum((x - i/1000)**2)", 10.0, 0.0),
}


@pytest.mark.parametrize("name", sorted(SEPARABLE))
def test_separable_problems_solved_at_d_1000(name):
    text, b, fstar = SEPARABLE[name]
    r = decido.minimize(text, [[-b, b]] * 1000, seed=1)
    assert r.engine == "dss" and r.status == "converged"
    assert abs(r.fun - fstar) < 1e-8, (name, r.fun)
    assert r.evaluations <= 2000 * 1000
    # the answer is confirmed by a full evaluation of the returned point
    assert decido.Expression(text, n=1000).evaluate(r.x) == r.fun


def test_identical_coordinates_are_solved_once():
    r = decido.minimize("10*n + sum(x**2 - 10*cos(2*pi*x))", [[-5.12, 5.12]] * 1000, seed=1)
    # a 4096-point grid costs ceil(4096/1000) rows: the whole run is a few dozen evaluations
    assert r.evaluations < 100


def test_per_coordinate_bounds_and_fixed_coordinates():
    bounds = [[-5.12, 5.12]] * 50 + [[0.5, 3.0]] * 30 + [[2.0, 2.0]] * 20
    r = decido.minimize("10*n + sum(x**2 - 10*cos(2*pi*x))", bounds, seed=1)
    assert np.all(np.abs(r.x[:50]) < 1e-6)
    # on [0.5, 3] the best point is the local minimum near 1: 2x + 20 pi sin(2 pi x) = 0
    assert np.all(np.abs(r.x[50:80] - 0.9949586378) < 1e-6)
    assert np.all(r.x[80:] == 2.0)


def test_maximize_separable():
    r = decido.maximize("-(10*n + sum(x**2 - 10*cos(2*pi*x)))", [[-5.12, 5.12]] * 100, seed=1)
    assert r.fun > -1e-8 and r.status == "converged"


def test_small_budget_still_returns_a_good_point():
    r = decido.minimize("sum((x-0.4)**2)", [[-1, 1]] * 4, max_evaluations=12, seed=1)
    assert r.evaluations <= 12 and r.fun < 1.0


def test_callable_and_coupled_objectives_use_the_hybrid():
    rosen = "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)"
    r = decido.minimize(rosen, [[-5, 5]] * 5, seed=1, max_evaluations=20000)
    assert r.fun < 1e-3
    # coupled through sum(x)**2: the minimum is x_j = 0.04, f = 0.128
    f = decido.minimize(lambda x: float(np.sum((x - 0.2) ** 2) + np.sum(x) ** 2),
                        [[-2, 2]] * 4, seed=1, max_evaluations=5000)
    assert f.fun == pytest.approx(0.128, abs=1e-6)
