"""The Python API under hostile use: limits and budgets beyond 64 bits, complex numbers,
strings and unknown names are refused with decido's own typed errors (never an
OverflowError, never a silent truncation), and many named variables compile."""

import numpy as np
import pytest

import decido
from decido import DecidoError, EngineError, ExpressionError


@pytest.mark.parametrize("limit", ["max_length", "max_depth", "max_instructions"])
@pytest.mark.parametrize("value", [2**64, 2**48 + 1, 0, -1, 1.5, True])
def test_a_limit_out_of_range_is_an_expression_error(limit, value):
    with pytest.raises(ExpressionError) as info:
        decido.Expression("1", **{limit: value})
    assert info.value.code == "invalid_limit" and limit in info.value.message


def test_the_largest_limit_is_accepted():
    assert decido.Expression("1 + 1", max_length=2**48, max_instructions=2**48).evaluate() == 2


@pytest.mark.parametrize("budget", [2**64, 2**63, 10**400])
def test_a_budget_beyond_64_bits_is_an_engine_error(budget):
    with pytest.raises(EngineError) as info:
        decido.minimize("sum(x**2)", [[0, 1]], max_evaluations=budget)
    assert (info.value.code, info.value.field) == ("invalid_argument", "max_evaluations")


def test_the_largest_budget_runs():
    r = decido.minimize("sum(x**2)", [[0, 1]], engine="lbfgsb", max_evaluations=2**63 - 1)
    assert r.status == "converged"


@pytest.mark.parametrize("argument", [{"time_limit": 10**400}, {"target": 10**400},
                                      {"options": {"popsize": 10**400}}])
def test_huge_integers_elsewhere_are_engine_errors(argument):
    engine = "de" if "options" in argument else None
    with pytest.raises(EngineError):
        decido.minimize("sum(x**2)", [[0, 1]], engine=engine, **argument)


NAMED = decido.Expression("a + 2*b", variables=["a", "b"])
VECTOR = decido.Expression("sum(x)", n=2)


@pytest.mark.parametrize("call", [
    lambda: NAMED.evaluate([1, 2j]),
    lambda: NAMED.evaluate(np.array([1, 2], dtype=complex)),
    lambda: NAMED.evaluate({"a": 1, "b": 1 + 0j}),
    lambda: VECTOR.evaluate_many([[1, 2], [3, 4j]]),
    lambda: VECTOR.gradient([1j, 0]),
    lambda: VECTOR.separable_terms(np.zeros((2, 2), dtype=np.complex64)),
])
def test_complex_input_is_refused_not_truncated(call):
    with pytest.raises(ExpressionError) as info:
        call()
    assert info.value.code == "invalid_input" and "complex" in info.value.message


@pytest.mark.parametrize("values", [{"a": 1, "b": "2"}, {"a": b"1", "b": 2}, {"a": None, "b": 2},
                                    {"a": [1], "b": 2}])
def test_values_that_are_not_numbers_are_refused(values):
    with pytest.raises(ExpressionError) as info:
        NAMED.evaluate(values)
    assert info.value.code == "invalid_input" and "not real numbers" in info.value.message


@pytest.mark.parametrize("values", [["1", "2"], np.array(["1", "2"]), [1, "2"], [None, 1],
                                    np.array([1.0, None])])
def test_strings_in_a_row_are_refused(values):
    with pytest.raises(ExpressionError) as info:
        NAMED.evaluate(values)
    assert info.value.code == "invalid_input"


@pytest.mark.parametrize("values", [[10**400, 1], {"a": 1, "b": -(10**400)}])
def test_integers_beyond_a_float_are_refused(values):
    with pytest.raises(ExpressionError) as info:
        NAMED.evaluate(values)
    assert info.value.code == "invalid_input" and "range of a float" in info.value.message


def test_extra_names_are_refused():
    with pytest.raises(ExpressionError) as info:
        NAMED.evaluate({"a": 1, "b": 2, "c": 3, "price": 4})
    assert info.value.code == "invalid_input"
    assert "'c', 'price'" in info.value.message and "the variables are a, b" in info.value.message


def test_good_inputs_still_work():
    assert NAMED.evaluate({"a": 1, "b": np.float32(2)}) == 5
    assert NAMED.evaluate({"a": True, "b": np.int64(2)}) == 5
    assert NAMED.evaluate(np.array([1, 2], dtype=np.int32)) == 5
    assert NAMED.evaluate(np.array([1.0, 2.0], dtype=object)) == 5
    assert list(VECTOR.evaluate_many([[1, 2], [3, 4]])) == [3, 7]


def test_missing_names_are_typed_and_still_value_errors():
    with pytest.raises(ExpressionError, match="missing values for variables: b") as info:
        NAMED.evaluate({"a": 1})
    assert isinstance(info.value, ValueError) and isinstance(info.value, DecidoError)


def test_many_named_variables_compile_and_evaluate():
    # resolving a name was a scan of every variable (O(N^2) in all); the speed is measured
    # by benchmarks/benchmarks/expr.py (CompileNamed), correctness here
    count = 60_000
    names = [f"v{k}" for k in range(count)]
    text = " + ".join(f"{k % 7 + 1}*{name}" for k, name in enumerate(names))
    e = decido.Expression(text, variables=names, max_length=len(text), max_instructions=4 * count)
    x = np.arange(count, dtype=np.float64)
    assert e.evaluate(x) == float(np.sum((np.arange(count) % 7 + 1) * x))
    assert e.evaluate(dict(zip(names, x.tolist(), strict=True))) == e.evaluate(x)
    with pytest.raises(ExpressionError) as info:
        decido.Expression("v1", variables=names + ["v59999"])
    assert info.value.code == "invalid_variable" and "listed twice" in info.value.message
    with pytest.raises(ExpressionError) as info:
        decido.Expression("v1 + v", variables=names)
    assert info.value.code == "unknown_name"
