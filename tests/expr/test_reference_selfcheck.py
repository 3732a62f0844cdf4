"""The oracle checked on its own against hand-computed values (no decido needed)."""

import math

import numpy as np
import pytest
from reference import Reference, RefError, agrees, c_round, parse

RASTRIGIN = "10*n + sum(x**2 - 10*cos(2*pi*x))"
ROSENBROCK = "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)"


def ev(text, x=(), n=None, variables=None):
    if n is None and variables is None and len(x):
        n = len(x)
    return Reference(text, n=n, variables=variables).evaluate(x)


@pytest.mark.parametrize(
    "x, want",
    [([0.0, 0.0], 0.0), ([1.0, -1.0], 2.0), ([0.5, 0.5], 40.5), ([0.5, 0.0], 20.25)],
)
def test_rastrigin(x, want):
    assert ev(RASTRIGIN, x) == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize(
    "x, want",
    [([1.0, 1.0, 1.0], 0.0), ([0.0, 0.0, 0.0], 2.0), ([1.0, 2.0, 3.0], 201.0),
     ([-1.0, 1.0], 4.0)],
)
def test_rosenbrock(x, want):
    assert ev(ROSENBROCK, x) == want


def test_rastrigin_population_and_bound():
    r = Reference(RASTRIGIN, n=3)
    X = np.array([[0.0, 0.0, 0.0], [1.0, -1.0, 0.0], [0.5, 0.5, 0.5]])
    vals, err = r.evaluate_bound(X)
    assert np.allclose(vals, [0.0, 2.0, 60.75], atol=1e-12, rtol=0)
    assert np.all(err < 1e-12) and np.all(err >= 0)
    assert np.array_equal(r.evaluate_many(X), [r.evaluate(row) for row in X])


@pytest.mark.parametrize(
    "text, want",
    [
        # chained comparisons
        ("1 < 2 < 3", 1.0), ("1 < 3 < 2", 0.0), ("3 > 2 > 1 == 1", 1.0), ("(1 < 2) < 3", 1.0),
        ("1 < 2 > 3", 0.0), ("2 <= 2 >= 2 != 3", 1.0), ("1 == 1 == 1", 1.0),
        ("3 == 1 + 2", 1.0), ("not 1 == 2", 1.0), ("0/0 == 0/0", 0.0), ("0/0 != 0/0", 1.0),
        # precedence and associativity
        ("-2**2", -4.0), ("(-2)**2", 4.0), ("2**-1", 0.5), ("2**3**2", 512.0),
        ("2**2**-1", math.sqrt(2.0)), ("-2**-2", -0.25), ("1 + 2*3", 7.0), ("10 - 2 - 3", 5.0),
        ("2*3 % 4", 2.0), ("8 / 4 / 2", 1.0), ("-7 % 3", 2.0), ("7 % -3", -2.0),
        ("-3**2 + 1", -8.0), ("- -3", 3.0), ("+-+3", -3.0), ("2 * -3", -6.0), ("1 - -1", 2.0),
        ("2 + 3 < 4 + 2", 1.0), ("1 + (2 < 3)", 2.0), ("not 0 and 0", 0.0),
        ("1 or 0 and 0", 1.0), ("0 and 1 or 1", 1.0), ("not not 2", 1.0),
        ("0 or 0", 0.0), ("3 and 4", 1.0), ("not 0 < 1", 0.0),
        # numbers
        (".5 + 2.5 + 1e-3 + 3E2", 303.001), ("1.5e+1", 15.0), ("e", math.e), ("2*pi", 2 * math.pi),
        # NaN is true
        ("0/0 and 1", 1.0), ("not (0/0)", 0.0), ("where(0/0, 1, 2)", 1.0), ("where(0, 1, 2)", 2.0),
        # remainder / power corner cases
        ("5 % 0", math.nan), ("-1 % 3", 2.0), ("5.5 % 2", 1.5), ("(-8) ** (1/3)", math.nan),
        ("0 ** 0", 1.0), ("1/0", math.inf), ("-1/0", -math.inf),
        # functions
        ("round(2.5)", 3.0), ("round(-2.5)", -3.0), ("round(0.5)", 1.0), ("round(1.5)", 2.0),
        ("round(0.49999999999999994)", 0.0), ("round(-0.4)", 0.0), ("sign(0)", 0.0),
        ("sign(-3)", -1.0), ("sign(0/0)", math.nan), ("abs(-2)", 2.0), ("floor(-1.5)", -2.0),
        ("ceil(-1.5)", -1.0), ("clip(5, 0, 3)", 3.0), ("clip(-1, 0, 3)", 0.0),
        ("clip(2, 0, 3)", 2.0), ("min(3, 1, 2)", 1.0), ("max(3, 1, 2, 7)", 7.0),
        ("min(1, 0/0)", math.nan), ("max(0/0, 1)", math.nan), ("atan2(1, 1)", math.pi / 4),
        ("hypot(3, 4)", 5.0), ("log2(8) + log10(1000)", 6.0), ("sqrt(16)", 4.0),
        ("sum(3)", 3.0), ("prod(3)", 3.0), ("mean(3)", 3.0), ("norm(-3)", 3.0),
        ("min(-3)", -3.0), ("max(-3)", -3.0), ("exp(log(2))", 2.0),
        # IEEE 754-2019 minimum/maximum: -0 < +0 whatever the order
        ("1/min(-0, 0)", -math.inf), ("1/min(0, -0)", -math.inf), ("1/max(-0, 0)", math.inf),
        ("1/max(0, -0)", math.inf), ("1/clip(-0, 0, 1)", math.inf),
        ("1/clip(0, -0, 1)", math.inf), ("1/clip(0, 0, -0)", -math.inf),
        ("min(0/0, 1, 2)", math.nan), ("max(1, 2, 0/0)", math.nan),
    ],
)
def test_constant_expressions(text, want):
    got = ev(text)
    if math.isnan(want):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(want, rel=1e-15, abs=0)


@pytest.mark.parametrize(
    "text, x, want",
    [
        ("x[0] + 10*x[-1]", [1, 2, 3], 31.0), ("x[n-1]", [1, 2, 3], 3.0), ("x[-n]", [1, 2, 3], 1.0),
        ("sum(x[1:])", [1, 2, 3], 5.0), ("sum(x[:-1])", [1, 2, 3], 3.0),
        ("sum(x[::2])", [1, 2, 3, 4], 4.0), ("sum(x[1::2])", [1, 2, 3, 4], 6.0),
        ("x[::-1][0]", [1, 2, 3], 3.0), ("x[1:][0]", [1, 2, 3], 2.0),
        ("sum(x[-2:])", [1, 2, 3], 5.0),
        ("sum(x[0:10])", [1, 2, 3], 6.0), ("x[2:0:-1][1]", [1, 2, 3], 2.0),
        ("sum(i*x**2)", [1, 1, 2], 1.0 + 2.0 + 12.0), ("n", [0, 0], 2.0),
        ("norm(x)", [3, 4], 5.0), ("prod(x)", [2, 3, 4], 24.0), ("mean(x)", [1, 2, 6], 3.0),
        ("min(x) + 10*max(x)", [2, -1, 4], 39.0), ("cumsum(x)[1]", [1, 2, 3], 3.0),
        ("sum(cumsum(x))", [1, 2, 3], 10.0), ("sum(0 < x < 1)", [0.5, 2, 0.1], 2.0),
        ("sum(x > 1 and x < 3)", [0.5, 2, 2.5], 2.0), ("sum(not x)", [0, 1, 0], 2.0),
        ("sum(x < 1 or x > 2)", [0.5, 1.5, 2.5], 2.0), ("sum(where(x > 0, x, -2*x))", [1, -1], 3.0),
        ("sum(min(x, 1, 2))", [0, 5], 1.0), ("sum(max(x, i))", [0, 5], 6.0),
        ("sum(clip(x, -1, 1))", [-5, 0.5, 5], 0.5), ("-x[0]**2", [3], -9.0),
        ("sum(abs(x))", [-1, 2], 3.0), ("(x*2)[1]", [1, 2], 4.0),
        ("sum(x[::2] - x[1::2])", [5, 1, 7, 2], 9.0),
        ("min(x)", [1, math.nan, 0], math.nan), ("max(x)", [math.nan, 1], math.nan),
        ("x[0]*x[2]", [2, 100, 3], 6.0), ("1/min(x)", [0.0, -0.0], -math.inf),
        ("1/max(x)", [-0.0, 0.0], math.inf), ("1/min(x)", [1.0, -0.0, 0.0], -math.inf),
        ("sum(atan2(x, 1) * 0)", [1, 2], 0.0), ("1/sum(x)", [-0.0, -0.0], math.inf),
        ("1/cumsum(x)[0]", [-0.0, -0.0], math.inf), ("1/prod(x)", [-0.0, -0.0], math.inf),
    ],
)
def test_vector_expressions(text, x, want):
    got = ev(text, [float(v) for v in x])
    if math.isnan(want):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(want, rel=1e-15, abs=1e-300)


def test_decision_context_and_shadowing():
    assert ev("quality*100 - price", [0.5, 20.0], variables=["quality", "price"]) == 30.0
    assert ev("e*2 + pi", [3.0], variables=["e"]) == 6.0 + math.pi
    assert ev("x + n + i", [1.0, 2.0, 4.0], variables=["x", "n", "i"]) == 7.0
    assert ev("sum(a) + max(a, b) + norm(-b)", [1.0, -2.0], variables=["a", "b"]) == 4.0


@pytest.mark.parametrize(
    "text, n, code",
    [
        ("x", 3, "not_scalar"), ("x[:2] + x", 3, "shape_mismatch"), ("x[1:0]", 3, "invalid_slice"),
        ("x[5]", 3, "invalid_index"), ("x[-4]", 3, "invalid_index"),
        ("x[0.5]", 3, "invalid_index"), ("x[x[0]]", 3, "invalid_index"),
        ("sum(x[::0])", 3, "invalid_slice"), ("1 & 2", None, "bitwise_operator"),
        ("1 | 2", None, "bitwise_operator"), ("foo(1)", None, "unknown_function"),
        ("y + 1", 3, "unknown_name"), ("sin + 1", None, "function_as_value"),
        ("sin(1, 2)", None, "wrong_arguments"), ("atan2(1)", None, "wrong_arguments"),
        ("3[0]", None, "not_indexable"), ("", None, "empty_expression"),
        ("   ", None, "empty_expression"), ("1 +", None, "syntax_error"),
        ("(1", None, "syntax_error"), ("1 2", None, "syntax_error"), ("x[]", 3, "syntax_error"),
        ("n(1)", 3, "not_callable"), ("x[0] $ 1", 3, "unexpected_character"),
        ("1 == not 2", None, "syntax_error"),
    ],
)
def test_errors(text, n, code):
    with pytest.raises(RefError) as info:
        Reference(text, n=n)
    assert info.value.code == code


def test_parse_shapes():
    assert parse("-x**2") == ("unary", "-", ("bin", "**", ("name", "x"), ("num", 2.0)))
    assert parse("a < b < c")[0] == "cmp" and parse("a < b < c")[1] == ["<", "<"]
    assert parse("x[1::2]") == ("slice", ("name", "x"), ("num", 1.0), None, ("num", 2.0))


def test_c_round_matches_math():
    vals = np.array([-2.5, -1.5, -0.5, -0.49999999999999994, 0.5, 1.5, 2.5, 4503599627370497.0,
                     1e300, -0.0, 0.3])
    want = [float(math.floor(v + 0.5)) if v >= 0 else -float(math.floor(-v + 0.5))
            for v in vals]
    want[3] = -0.0  # floor(x + 0.5) rounds 0.49999999999999994 + 0.5 up to 1; C round does not
    want[7] = 4503599627370497.0
    assert np.array_equal(c_round(vals), want)


def test_error_bound_flags_discontinuities():
    # values far from a jump: only rounding slack
    r = Reference("floor(x[0] - x[1]) + abs(x[2]) + (x[0] < x[1])", n=3)
    vals, err = r.evaluate_bound(np.array([[0.5, 0.25, -3.0]]))
    assert vals[0] == 3.0 and err[0] < 1e-14
    # 0.1 + 0.2 - 0.3 is 5.5e-17, within an ulp of 0: floor may jump from 0 to -1
    r = Reference("floor(x[0] + x[1] - x[2])", n=3)
    vals, err = r.evaluate_bound(np.array([[0.1, 0.2, 0.3]]))
    assert vals[0] == 0.0 and err[0] >= 1.0
    r = Reference("floor(sum(x) * 10)", n=3)
    vals, err = r.evaluate_bound(np.array([[0.1, 0.2, 0.7]]))
    assert err[0] >= 1.0  # 10 * (0.1+0.2+0.7) is within rounding of 10: floor may jump
    # comparisons of nearly equal computed values: unbounded flip of 1
    vals, err = Reference("sum(x) == 1", n=3).evaluate_bound(np.array([[0.1, 0.2, 0.7]]))
    assert err[0] >= 1.0
    # sqrt of a cancellation that may land at -tiny: NaN is possible, so unchecked
    vals, err = Reference("sqrt(sum(x) - 1)", n=3).evaluate_bound(np.array([[0.1, 0.2, 0.7]]))
    assert np.isinf(err[0])



def test_products_whose_order_decides_are_unchecked():
    # a partial product of the finite factors can underflow to 0 or overflow to inf: the
    # value then depends on the order (left to right [1, 1e-300, inf, 1e-300] is inf,
    # (1e-300 * 1e-300) * inf is NaN), so any answer is accepted
    r = Reference("prod(x)", n=4)
    X = np.array([[1.0, 1e-300, math.inf, 1e-300], [1e-200, 1e-200, 1e200, 1e200],
                  [0.0, 1e200, 1e200, 1.0], [2.0, 1e-300, math.inf, 0.5]])
    vals, err = r.evaluate_bound(X)
    assert np.isinf(err[:3]).all()
    # one tiny factor cannot underflow in any order: inf times it is inf, checked exactly
    assert vals[3] == math.inf and err[3] == 0.0
    # a product in the subnormals may be a unit off in another order (5e-324 * 1.5 * 2 is
    # 1.5e-323 left to right, 2e-323 as (5e-324 * 1.5) * 2)
    vals, err = r.evaluate_bound(np.array([[5e-324, 2.0, 1.5, 1.0]]))
    assert vals[0] == 1.5e-323 and err[0] >= 5e-324
    # ordinary products keep their rounding bound
    vals, err = r.evaluate_bound(np.array([[2.0, 0.5, 3.0, -1.0]]))
    assert vals[0] == -3.0 and 0.0 < err[0] < 1e-14
    # unchecked stays unchecked where a NaN would come through: max(inf, NaN) is NaN
    r = Reference("max(1/0, prod(x))", n=4)
    vals, err = r.evaluate_bound(X[2:3])  # 0 left to right, NaN as (1e200 * 1e200) * 0
    assert vals[0] == math.inf and np.isinf(err[0])
    # nor where this order gave NaN and another one a number: abs(NaN) is not the only answer
    vals, err = Reference("abs(prod(x))", n=4).evaluate_bound(np.array([[1e-300, 1e-300, math.inf,
                                                                        1.0]]))
    assert math.isnan(vals[0]) and np.isinf(err[0])
    # but not where it could not: where(0, NaN, 1) is 1 whatever the product is
    vals, err = Reference("where(0, prod(x), 1)", n=4).evaluate_bound(X[2:3])
    assert vals[0] == 1.0 and err[0] == 0.0

def test_agrees():
    assert agrees(1.0, 1.0, 0.0)
    assert agrees(math.nan, math.nan, 0.0)
    assert agrees(math.inf, math.inf, 0.0)
    assert not agrees(-math.inf, math.inf, 0.0)
    assert not agrees(math.nan, 1.0, 0.0)
    assert not agrees(1.0, math.nan, 1.0)
    assert agrees(1.0 + 1e-13, 1.0, 0.0)
    assert not agrees(1.0 + 1e-11, 1.0, 0.0)
    assert agrees(1e-3, 0.0, 1e-3)
    assert agrees(5.0, 1.0, math.inf)
    assert not agrees(-0.0, 0.0, 0.0)  # an exact zero has a sign
    assert agrees(-0.0, 0.0, 1e-300)
