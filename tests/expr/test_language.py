"""Semantics of the expression language through the public API (DESIGN §2)."""

import math

import numpy as np
import pytest

import decido

X3 = np.array([1.0, 2.0, 3.0])


def ev(text, x=X3, n=None):
    n = len(x) if n is None else n
    return decido.Expression(text, n=n).evaluate(x)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 + 2 * 3", 7.0),
        ("(1 + 2) * 3", 9.0),
        ("-2**2", -4.0),
        ("(-2)**2", 4.0),
        ("2**-1", 0.5),
        ("2**3**2", 512.0),
        ("-x[0]**2", -1.0),
        ("2*-x[1]", -4.0),
        ("10 - 4 - 3", 3.0),
        ("64 / 4 / 2", 8.0),
        ("7 % 3", 1.0),
        ("-7 % 3", 2.0),
        ("7 % -3", -2.0),
        ("7.5 % 2", 1.5),
        ("1 < 2 < 3", 1.0),
        ("1 < 3 < 2", 0.0),
        ("2 == 2 != 3", 1.0),
        ("not 1 < 0", 1.0),
        ("not 0 and 0", 0.0),
        ("0 or not 0", 1.0),
        ("1 and 2", 1.0),
        ("0.0 or 3", 1.0),
        ("1 + (2 < 3)", 2.0),
        (".5 + 1e-3 + 2.", 2.501),
        ("1e3", 1000.0),
        ("pi", math.pi),
        ("e", math.e),
        ("n", 3.0),
        ("sum(i)", 6.0),
        ("sum(i*x**2)", 36.0),
        ("x[0] + x[-1]", 4.0),
        ("x[n-1]", 3.0),
        ("x[-n]", 1.0),
        ("sum(x[1:])", 5.0),
        ("sum(x[:-1])", 3.0),
        ("sum(x[::2])", 4.0),
        ("sum(x[1::2])", 2.0),
        ("x[::-1][0]", 3.0),
        ("sum(x[::-2])", 4.0),
        ("x[1:][1]", 3.0),
        ("x[-100:100][0]", 1.0),
        ("sum(x[5:-100:-1])", 6.0),
        ("cumsum(x)[-1]", 6.0),
        ("sum(cumsum(x))", 10.0),
        ("prod(x)", 6.0),
        ("mean(x)", 2.0),
        ("norm(x)", math.sqrt(14.0)),
        ("min(x)", 1.0),
        ("max(x)", 3.0),
        ("min(x[0], x[1])", 1.0),
        ("max(4, x[1], -1)", 4.0),
        ("sum(min(x, 2))", 5.0),
        ("sum(max(x, 2, x - 1))", 7.0),
        ("sum(where(x >= 2, 10, x))", 21.0),
        ("sum(clip(x, 1.5, 2.5))", 6.0),
        ("sum(x > 1 and x < 3)", 1.0),
        ("sum(x < 2 or x > 2)", 2.0),
        ("sum(not x - 2)", 1.0),
        ("sum(1 <= x <= 2)", 2.0),
        ("abs(-3)", 3.0),
        ("sqrt(16)", 4.0),
        ("exp(0) + log(1)", 1.0),
        ("log2(8) + log10(1000)", 6.0),
        ("log1p(0) + expm1(0)", 0.0),
        ("sin(0) + cos(0) + tan(0)", 1.0),
        ("asin(1) * 2", math.pi),
        ("acos(1) + atan(0)", 0.0),
        ("sinh(0) + cosh(0) + tanh(0)", 1.0),
        ("floor(-1.5) + ceil(-1.5)", -3.0),
        ("round(2.5) + round(-0.5) + round(0.4)", 2.0),
        ("sign(-2) + sign(0) + sign(5)", 0.0),
        ("atan2(1, -1)", 3 * math.pi / 4),
        ("hypot(3, 4)", 5.0),
        ("sum(x) / n", 2.0),
        ("sum(x)\n + 1", 7.0),
    ],
)
def test_values(text, expected):
    assert ev(text) == pytest.approx(expected, rel=1e-14, abs=1e-15)


def test_rastrigin_and_rosenbrock():
    r = decido.Expression("10*n + sum(x**2 - 10*cos(2*pi*x))", n=50)
    assert r.evaluate(np.zeros(50)) == 0.0
    x = np.linspace(-5, 5, 50)
    assert r.evaluate(x) == pytest.approx(10 * 50 + np.sum(x**2 - 10 * np.cos(2 * np.pi * x)))
    rb = decido.Expression("sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)", n=10)
    assert rb.evaluate(np.ones(10)) == 0.0
    y = np.linspace(-2, 2, 10)
    ref = np.sum(100 * (y[1:] - y[:-1] ** 2) ** 2 + (1 - y[:-1]) ** 2)
    assert rb.evaluate(y) == pytest.approx(ref, rel=1e-14)


def test_ieee_special_values():
    assert math.isnan(ev("0 % 0"))
    assert math.isnan(ev("sqrt(-1)"))
    assert ev("1/0") == math.inf
    assert ev("-1/0") == -math.inf
    assert ev("1e308 * 10") == math.inf
    assert ev("1e999") == math.inf
    assert math.isnan(ev("log(-1)"))
    assert ev("log(0)") == -math.inf
    nan = float("nan")
    e = decido.Expression("sum(x)", n=3)
    assert math.isnan(e.evaluate([1.0, nan, 2.0]))
    assert math.copysign(1.0, ev("-0.0")) == -1.0
    # where/and/or treat NaN as true (NaN != 0), like Python's bool(nan)
    assert decido.Expression("where(x[0], 1, 2)", n=1).evaluate([nan]) == 1.0
    assert decido.Expression("x[0] and 1", n=1).evaluate([nan]) == 1.0
    # min/max propagate NaN
    assert math.isnan(decido.Expression("min(x)", n=3).evaluate([1.0, nan, 0.0]))
    assert math.isnan(decido.Expression("max(x[0], 1)", n=1).evaluate([nan]))


def cpow(a, b):
    """C pow (IEEE / Annex F), via Python's float ** (numpy's power takes a
    sqrt fast path for 0.5 and differs at -0.0)."""
    try:
        r = float(a) ** float(b)
        return math.nan if isinstance(r, complex) else r
    except OverflowError:
        return math.copysign(math.inf, a) if b == int(b) and int(b) % 2 else math.inf
    except ZeroDivisionError:
        odd = b == int(b) and int(b) % 2
        return math.copysign(math.inf, a) if odd else math.inf


def test_power_rewrites_match_pow():
    x = np.array([-3.5, -1.0, -0.0, 0.0, 0.25, 1.5, 7.0, 1e-200, 1e200, np.inf, -np.inf, np.nan])
    n = len(x)
    for k in ["2", "3", "4", "5", "8", "16", "0.5", "-1", "0", "1", "2.5", "-2"]:
        e = decido.Expression(f"x[0]**{k}", n=n)
        for v in x:
            row = x.copy()
            row[0] = v
            expected = cpow(v, float(k)) if not math.isnan(v) else (1.0 if k == "0" else v)
            got = e.evaluate(row)
            if math.isnan(expected):
                assert math.isnan(got), (k, v)
            else:
                assert got == pytest.approx(expected, rel=4e-16 * 16), (k, v, got, expected)
                if expected == 0:
                    assert math.copysign(1, got) == math.copysign(1, expected), (k, v)


def test_n_equals_one_and_constant_context():
    e = decido.Expression("sum(x**2) + x[0] + x[-1] + n", n=1)
    assert e.evaluate([2.0]) == 9.0
    c = decido.Expression("2*pi + e")
    assert c.n_inputs == 0
    assert c.evaluate() == pytest.approx(2 * math.pi + math.e)
    assert c.evaluate_many(np.zeros((3, 0))).tolist() == [c.evaluate()] * 3
    assert c.structure.kind == "constant"


def test_decision_context():
    e = decido.Expression(
        "quality*100 - price", variables=["quality", "price", "lead_time"]
    )
    assert e.n_inputs == 3
    assert e.evaluate({"quality": 7.2, "price": 18.5, "lead_time": 3}) == pytest.approx(701.5)
    assert e.evaluate([7.2, 18.5, 3]) == pytest.approx(701.5)
    A = np.array([[7.2, 18.5, 3], [9.0, 30.0, 12], [5.0, 10.0, 1]])
    assert e.evaluate_many(A).tolist() == pytest.approx([701.5, 870.0, 490.0])
    c = decido.Expression("price <= 25 and lead_time < 10", variables=["price", "lead_time"])
    assert c.evaluate_many([[18.5, 3], [30, 3], [20, 12]]).tolist() == [1.0, 0.0, 0.0]
    chained = decido.Expression("10 <= w <= 60", variables=["w"])
    assert chained.evaluate_many([[5], [10], [60], [61]]).tolist() == [0, 1, 1, 0]
    # a variable named like a constant shadows it; x/n/i are ordinary names here
    s = decido.Expression("e + x + n + i", variables=["e", "x", "n", "i"])
    assert s.evaluate([1, 2, 3, 4]) == 10.0


def test_evaluate_many_matches_evaluate_bitwise():
    rng = np.random.default_rng(1)
    for text, n in [
        ("10*n + sum(x**2 - 10*cos(2*pi*x))", 10),
        ("sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)", 1000),
        ("-20*exp(-0.2*sqrt(mean(x**2))) - exp(mean(cos(2*pi*x))) + 20 + e", 7),
        ("1 + sum(x**2)/4000 - prod(cos(x/sqrt(i)))", 64),
        ("sum(where(x > 0, x[::-1], cumsum(x)) * i) + x[3]", 130),
    ]:
        e = decido.Expression(text, n=n)
        X = rng.uniform(-5, 5, size=(67, n))
        many = e.evaluate_many(X)
        one = np.array([e.evaluate(row) for row in X])
        assert np.array_equal(many, one), text


def test_evaluate_many_accepts_non_contiguous_and_ints():
    e = decido.Expression("sum(x*i)", n=3)
    X = np.arange(24, dtype=np.int64).reshape(4, 6)[:, ::2]
    expected = [float(np.dot(r, [1, 2, 3])) for r in X]
    assert e.evaluate_many(X).tolist() == expected
    assert e.evaluate_many(np.zeros((0, 3))).shape == (0,)


def test_disassemble_shows_program():
    e = decido.Expression("10*n + sum(x**2 - 10*cos(2*pi*x))", n=4)
    text = e.disassemble()
    assert "cos" in text and "sum_sub" in text and "return" in text
    assert e.n_instructions == len([ln for ln in text.splitlines() if ln[:6].strip().isdigit()])


def test_common_subexpressions_are_shared():
    once = decido.Expression("sum(sin(x) * cos(x))", n=5)
    twice = decido.Expression("sum(sin(x) * cos(x)) + sum(sin(x) * cos(x))", n=5)
    assert twice.n_instructions == once.n_instructions + 1


def test_constant_folding():
    # constants fold; floating-point sums are never reassociated
    e = decido.Expression("sum(x) + (2*pi*3 + sqrt(16) + sum(i) * n)", n=3)
    assert e.n_instructions == 2  # sum, add
    assert e.evaluate([1, 1, 1]) == pytest.approx(3 + 6 * math.pi + 4 + 18)


def test_min_max_order_zeros_like_ieee_754_2019():
    for text, sign in [("min(-0.0, 0.0)", -1), ("min(0.0, -0.0)", -1), ("max(-0.0, 0.0)", 1),
                       ("max(0.0, -0.0)", 1)]:
        assert math.copysign(1.0, ev(text)) == sign, text
    e = decido.Expression("1/min(x[0], x[1]) + 1/max(x)", n=2)
    assert e.evaluate([0.0, -0.0]) == -math.inf + 0 or math.isnan(e.evaluate([0.0, -0.0]))
    assert decido.Expression("1/min(x)", n=2).evaluate([0.0, -0.0]) == -math.inf


def test_folded_powers_round_like_runtime_powers():
    # a constant base takes the same rewrites (x**3 -> x*x*x, ...) as a variable one
    for k in ["2", "3", "5", "7", "16", "0.5", "-1", "2.5"]:
        for v in [0.15993265111365318 * 1.3, 1e-100, 7.123456789, 3.0e150]:
            folded = decido.Expression(f"({v!r})**{k}").evaluate()
            runtime = decido.Expression(f"a**{k}", variables=["a"]).evaluate([v])
            assert folded == runtime or (math.isnan(folded) and math.isnan(runtime)), (v, k)
