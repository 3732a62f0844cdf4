"""Property tests: the compiled VM against the independent NumPy reference."""

import math
import re

import numpy as np
import pytest
from grammar_strategies import (
    Ctx,
    constant_case,
    decision_case,
    expr,
    optimization_case,
    point,
    population,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import Reference, RefError, agrees

import decido

RELAXED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def _show(row):
    row = np.asarray(row)
    if row.size <= 16:
        return repr(row.tolist())
    special = {int(j): float(row[j]) for j in np.flatnonzero(~np.isfinite(row) | (row == 0))}
    return f"<length {row.size}; head {row[:6].tolist()}; zeros/non-finite at {special}>"


def check_against_reference(text, got, X, **context):
    """Assert VM values (one per row of X) agree with the reference bound."""
    vals, err = Reference(text, **context).evaluate_bound(X)
    ok = agrees(got, vals, err)
    if not ok.all():
        k = int(np.argmin(ok))
        pytest.fail(
            f"VM disagrees with the reference\n  expression: {text!r}\n  context: {context}\n"
            f"  input: {_show(X[k])}\n  vm: {float(got[k])!r}\n  reference: {float(vals[k])!r}"
            f" (bound {float(err[k])!r})"
        )


def same_or_close(a, b, rel):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    with np.errstate(invalid="ignore"):
        return same | (np.abs(a - b) <= rel * np.abs(b))


def bit_identical(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return (a.view(np.int64) == b.view(np.int64)) | (np.isnan(a) & np.isnan(b))


# ---------------------------------------------------------------------------- optimization
@settings(max_examples=200, deadline=None, suppress_health_check=RELAXED)
@given(case=optimization_case(ns=(1, 2, 7)), data=st.data())
def test_evaluate_small_n(case, data):
    n, text = case
    x = data.draw(point(n))
    e = decido.Expression(text, n=n)
    got = e.evaluate(x)
    assert isinstance(got, float)
    check_against_reference(text, np.array([got]), x[None], n=n)
    listing = e.disassemble()
    assert isinstance(listing, str) and listing


@settings(max_examples=80, deadline=None, suppress_health_check=RELAXED)
@given(case=optimization_case(ns=(1, 7, 64)), data=st.data())
def test_limits_fail_cleanly(case, data):
    # tight limits either leave the program unchanged or give a clean limit error
    n, text = case
    x = data.draw(point(n))
    want = decido.Expression(text, n=n).evaluate(x)
    max_depth = data.draw(st.integers(1, 12))
    max_instructions = data.draw(st.integers(1, 48))
    max_length = data.draw(st.integers(max(1, len(text) - 3), len(text) + 3))
    try:
        e = decido.Expression(text, n=n, max_depth=max_depth, max_instructions=max_instructions,
                              max_length=max_length)
    except decido.ExpressionError as err:
        assert err.code in ("too_deep", "program_too_large", "too_long"), (text, err.code)
        if err.code == "too_long":
            assert len(text) > max_length
        return
    assert len(text) <= max_length
    assert bit_identical(e.evaluate(x), want), (text, e.evaluate(x), want)


@settings(max_examples=60, deadline=None, suppress_health_check=RELAXED)
@given(case=optimization_case(ns=(64, 1000)), data=st.data())
def test_evaluate_large_n(case, data):
    n, text = case
    x = data.draw(point(n))
    got = decido.Expression(text, n=n).evaluate(x)
    check_against_reference(text, np.array([got]), x[None], n=n)


@settings(max_examples=80, deadline=None, suppress_health_check=RELAXED)
@given(case=optimization_case(), data=st.data())
def test_evaluate_many(case, data):
    n, text = case
    X = data.draw(population(n))
    e = decido.Expression(text, n=n)
    many = e.evaluate_many(X)
    assert isinstance(many, np.ndarray) and many.shape == (X.shape[0],)
    check_against_reference(text, many, X, n=n)
    rows = np.array([e.evaluate(row) for row in X])
    assert same_or_close(many, rows, 1e-15).all(), (text, many, rows)


@settings(max_examples=60, deadline=None, suppress_health_check=RELAXED)
@given(case=optimization_case(ns=(1, 7, 64)), data=st.data())
def test_evaluate_many_rows_bit_identical_to_evaluate(case, data):
    n, text = case
    X = data.draw(population(n, max_rows=9))
    e = decido.Expression(text, n=n)
    many = e.evaluate_many(X)
    rows = np.array([e.evaluate(row) for row in X])
    bad = ~bit_identical(many, rows)
    assert not bad.any(), (text, _show(X[np.argmax(bad)]), many[bad], rows[bad])


@settings(max_examples=40, deadline=None, suppress_health_check=RELAXED)
@given(case=optimization_case(ns=(1, 2, 7, 64)),
       rows=st.sampled_from([0, 1, 2, 3, 31, 63, 64, 65, 127, 255, 256, 257, 1000, 4097]),
       seed=st.integers(0, 2**32 - 1))
def test_evaluate_many_large_batches(case, rows, seed):
    # batch sizes around likely block boundaries: every row as evaluate() gives it
    n, text = case
    rng = np.random.default_rng(seed)
    X = rng.uniform(-5, 5, (rows, n))
    X[rng.random((rows, n)) < 0.05] = 0.0
    e = decido.Expression(text, n=n)
    many = e.evaluate_many(X)
    assert many.shape == (rows,)
    rows_one = np.array([e.evaluate(r) for r in X])
    bad = ~bit_identical(many, rows_one)
    assert not bad.any(), (text, rows, np.flatnonzero(bad)[:5], many[bad][:5], rows_one[bad][:5])
    check_against_reference(text, many, X, n=n)


@settings(max_examples=40, deadline=None, suppress_health_check=RELAXED)
@given(case=optimization_case(ns=(2, 7)), data=st.data())
def test_evaluate_many_non_contiguous_input(case, data):
    n, text = case
    X = data.draw(population(n, max_rows=5))
    e = decido.Expression(text, n=n)
    wide = np.zeros((X.shape[0], 2 * n))
    wide[:, ::2] = X
    strided = wide[:, ::2]
    assert bit_identical(e.evaluate_many(strided), e.evaluate_many(np.ascontiguousarray(X))).all()
    assert bit_identical(e.evaluate_many(np.asfortranarray(X)), e.evaluate_many(X)).all()


@settings(max_examples=60, deadline=None, suppress_health_check=RELAXED)
@given(data=st.data())
def test_vector_valued_expressions_are_rejected(data):
    n = data.draw(st.sampled_from((1, 2, 7, 64)))
    ctx = Ctx(n=n)
    length = data.draw(st.sampled_from(ctx.lengths))
    text, _ = data.draw(expr(ctx, length, data.draw(st.integers(0, 3))))
    with pytest.raises(RefError) as ref:
        Reference(text, n=n)
    assert ref.value.code == "not_scalar"
    with pytest.raises(decido.ExpressionError) as info:
        decido.Expression(text, n=n)
    assert info.value.code == "not_scalar", text


# ---------------------------------------------------------------------------- decision
@settings(max_examples=120, deadline=None, suppress_health_check=RELAXED)
@given(case=decision_case(), data=st.data())
def test_decision_context(case, data):
    names, text = case
    X = data.draw(population(len(names), max_rows=4))
    e = decido.Expression(text, variables=names)
    assert e.n_inputs == len(names)
    many = e.evaluate_many(X)
    check_against_reference(text, many, X, variables=names)
    one = np.array([e.evaluate(row) for row in X])
    check_against_reference(text, one, X, variables=names)
    assert same_or_close(many, one, 1e-15).all(), (text, many, one)


def _literal(v):
    if math.isnan(v):
        return "(0/0)"
    if math.isinf(v):
        return "(1/0)" if v > 0 else "(-1/0)"
    return f"({v!r})"


@settings(max_examples=100, deadline=None, suppress_health_check=RELAXED)
@given(case=decision_case(), data=st.data())
def test_constant_folding_matches_runtime(case, data):
    # the same expression with the variables' values written in as literals: whatever the
    # compiler folds at compile time must give exactly what the VM computes at run time
    names, text = case
    x = data.draw(point(len(names)))
    values = dict(zip(names, x.tolist(), strict=True))
    inlined = re.sub(r"\b[A-Za-z_][A-Za-z0-9_]*\b",
                     lambda m: _literal(values[m.group()]) if m.group() in values else m.group(),
                     text)
    runtime = decido.Expression(text, variables=names).evaluate(x)
    folded = decido.Expression(inlined).evaluate()
    assert bit_identical(folded, runtime), (text, inlined, folded, runtime)


@settings(max_examples=80, deadline=None, suppress_health_check=RELAXED)
@given(text=constant_case())
def test_constant_context(text):
    e = decido.Expression(text)
    assert e.n_inputs == 0
    got = e.evaluate()
    check_against_reference(text, np.array([got]), np.zeros((1, 0)))
    assert bit_identical(e.evaluate(None), got)


# ---------------------------------------------------------------------------- fixed cases
RASTRIGIN = "10*n + sum(x**2 - 10*cos(2*pi*x))"
ROSENBROCK = "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)"


@pytest.mark.parametrize("n", [1, 2, 7, 64, 1000])
@pytest.mark.parametrize("text", [RASTRIGIN, ROSENBROCK, "sum(i*x**2)", "prod(cos(x/i))",
                                  "norm(x) + mean(x) - max(x) * min(x)", "sum(cumsum(x)**2)",
                                  "x[0] + x[-1] + x[n-1] + sum(x[::-1] * i)"])
def test_known_functions(text, n):
    if text == ROSENBROCK and n == 1:
        pytest.skip("x[1:] is empty for n=1")
    rng = np.random.default_rng(n)
    X = rng.uniform(-5, 5, (5, n))
    e = decido.Expression(text, n=n)
    check_against_reference(text, e.evaluate_many(X), X, n=n)
    check_against_reference(text, np.array([e.evaluate(r) for r in X]), X, n=n)


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
        ("(1", None, "syntax_error"), ("1 2", None, "syntax_error"),
        ("x[0] $ 1", 3, "unexpected_character"), ("1 == not 2", None, "syntax_error"),
        ("x + 1", None, "unknown_name"), ("sum(x[::2] + x[1::2])", 3, "shape_mismatch"),
    ],
)
def test_error_codes_match_reference(text, n, code):
    with pytest.raises(RefError) as ref:
        Reference(text, n=n)
    assert ref.value.code == code
    with pytest.raises(decido.ExpressionError) as info:
        decido.Expression(text, n=n)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.code == code, (text, err.code, str(err))
    assert 0 <= err.position <= len(text)


def test_expression_error_attributes():
    with pytest.raises(decido.ExpressionError) as info:
        decido.Expression("x[0] + foo", n=2)
    err = info.value
    assert err.code == "unknown_name"
    assert err.position == 7 and err.length == 3
    assert isinstance(err.message, str) and err.message


@pytest.mark.parametrize(
    "text, want",
    [("-2**2", -4.0), ("2**-1", 0.5), ("2**3**2", 512.0), ("1 < 2 < 3", 1.0), ("1 < 3 < 2", 0.0),
     ("-7 % 3", 2.0), ("7 % -3", -2.0), ("5 % 0", math.nan), ("round(2.5)", 3.0),
     ("round(-2.5)", -3.0), ("round(0.49999999999999994)", 0.0), ("sign(0)", 0.0),
     ("sign(0/0)", math.nan), ("0/0 and 1", 1.0), ("not 0/0", 0.0), ("where(0/0, 1, 2)", 1.0),
     ("not 1 == 2", 1.0), ("1 or 0 and 0", 1.0), ("min(1, 0/0)", math.nan),
     ("max(0/0, 1)", math.nan), ("clip(0/0, 0, 1)", math.nan), ("(-8) ** (1/3)", math.nan),
     ("0 ** 0", 1.0), ("-1/0", -math.inf), ("norm(-3)", 3.0), ("sum(-3)", -3.0)],
)
def test_semantics_table(text, want):
    got = decido.Expression(text).evaluate()
    assert (math.isnan(got) and math.isnan(want)) or got == want, (text, got, want)


def test_shadowing_and_decision_names():
    e = decido.Expression("e*2 + pi", variables=["e"])
    assert e.evaluate([3.0]) == 6.0 + math.pi
    e = decido.Expression("quality*100 - price", variables=["quality", "price"])
    assert e.evaluate([0.5, 20.0]) == 30.0
    assert np.array_equal(e.evaluate_many([[0.5, 20.0], [1.0, 0.0]]), [30.0, 100.0])
