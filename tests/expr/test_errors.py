"""Every bad text gets a typed ExpressionError with a stable code and position."""

import pickle

import numpy as np
import pytest

import decido
from decido import ExpressionError


def compile_error(text, **ctx):
    ctx = ctx or {"n": 3}
    with pytest.raises(ExpressionError) as info:
        decido.Expression(text, **ctx)
    return info.value


@pytest.mark.parametrize(
    ("text", "code", "position"),
    [
        ("", "empty_expression", 0),
        ("  \n ", "empty_expression", 0),
        ("1 +", "syntax_error", 3),
        ("(1 + 2", "syntax_error", 6),
        ("1 + 2)", "syntax_error", 5),
        ("sum(x]", "syntax_error", 5),
        ("x[0", "syntax_error", 3),
        ("* 2", "syntax_error", 0),
        ("1 2", "syntax_error", 2),
        ("x[0] & x[1]", "bitwise_operator", 5),
        ("x[0] | x[1]", "bitwise_operator", 5),
        ("x[0] && x[1]", "bitwise_operator", 5),
        ("x[0] = 1", "syntax_error", 5),
        ("2 ^ 3", "syntax_error", 2),
        ("!x[0]", "syntax_error", 0),
        ("1.2.3", "invalid_number", 0),
        ("1e+", "invalid_number", 0),
        ("3abc", "invalid_number", 0),
        ("sum(y)", "unknown_name", 4),
        ("cosh2(x[0])", "unknown_function", 0),
        ("x(2)", "not_callable", 0),
        ("n(2)", "not_callable", 0),
        ("sum + 1", "function_as_value", 0),
        ("atan2(x[0])", "wrong_arguments", 0),
        ("sum(x, x)", "wrong_arguments", 0),
        ("sin()", "wrong_arguments", 0),
        ("sum(x[1:] * x)", "shape_mismatch", 10),
        ("sum(where(x[:2] > 0, x, 1))", "shape_mismatch", 4),
        ("n[0]", "not_indexable", 1),
        ("sum(x)[0]", "not_indexable", 6),
        ("x[3]", "invalid_index", 2),
        ("x[-4]", "invalid_index", 2),
        ("x[1.5]", "invalid_index", 2),
        ("x[x[0]]", "invalid_index", 2),
        ("x[1e300]", "invalid_index", 2),
        ("x[-1e300]", "invalid_index", 2),
        ("x[0/0]", "invalid_index", 2),
        ("sum(x[::0])", "invalid_slice", 8),
        ("sum(x[2:1])", "invalid_slice", 5),
        ("sum(x[5:])", "invalid_slice", 5),
        ("sum(x[:x[0]])", "invalid_slice", 7),
        ("x", "not_scalar", 0),
        ("x + 1", "not_scalar", 0),
        ("cumsum(x)", "not_scalar", 0),
        ("1 $ 2", "unexpected_character", 2),
        ("x[0] + ü", "unexpected_character", 7),
        ("x[0]\x00", "unexpected_character", 4),
        ("x[0] @ 2", "unexpected_character", 5),
    ],
)
def test_error_codes_and_positions(text, code, position):
    err = compile_error(text)
    assert err.code == code, str(err)
    assert err.position == position, str(err)
    assert isinstance(err, ValueError) and isinstance(err, decido.DecidoError)


def test_message_draws_a_caret_under_the_fault():
    err = compile_error("sum(x**2) + yy")
    lines = str(err).splitlines()
    assert lines[0].startswith("unknown name 'yy'")
    assert lines[1].strip() == "sum(x**2) + yy"
    caret = lines[2]
    assert caret.index("^") - lines[1].index("s") == 12
    assert caret.count("^") == 2


def test_unknown_names_suggest_the_nearest():
    assert "did you mean 'cos'" in str(compile_error("sum(cso(x))"))
    assert "'x'" in compile_error("sum(xx)").message
    assert "'price'" in compile_error("prise * 2", variables=["price", "quality"]).message
    far = compile_error("sum(zzzzzz)")
    assert "x, n, i, pi, e" in far.message


def test_hints():
    assert "and" in compile_error("x[0] & x[1]").message
    assert "or" in compile_error("x[0] | x[1]").message
    assert "**" in compile_error("x[0] ^ 2").message
    assert "==" in compile_error("x[0] = 2").message


def test_positions_are_characters_not_bytes():
    err = compile_error("'é' + yy".replace("'é'", "x[0]") + " + ü")
    assert err.position == len("x[0] + yy + ")  or err.code == "unknown_name"
    err = compile_error("x[0] + ü + yy")
    assert err.code == "unexpected_character" and err.position == 7
    assert "U+00FC" in err.message


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("(" * 100_000 + "1" + ")" * 100_000, "too_deep"),
        ("-" * 100_000 + "1", "too_deep"),
        ("not " * 100_000 + "1", "too_deep"),
        ("2" + "**2" * 100_000, "too_deep"),
        ("x[0]" + "+x[0]" * 70_000, "program_too_large"),
    ],
)
def test_pathological_inputs_fail_cleanly(text, code):
    limits = {"max_length": 2_000_000}
    err = compile_error(text, n=3, **limits)
    assert err.code == code
    # and with the default limits, the length check comes first
    assert compile_error(text, n=3).code == "too_long"


def test_limits_are_configurable():
    assert compile_error("x[0] + 1", n=3, max_length=4).code == "too_long"
    # levels: the expression, each bracket, each subscript or argument list
    assert compile_error("((x[0]))", n=3, max_depth=3).code == "too_deep"
    assert decido.Expression("((x[0]))", n=3, max_depth=4).evaluate([1, 2, 3]) == 1.0
    assert compile_error("sin(cos(x[0]))", n=3, max_instructions=1).code == "program_too_large"
    one_mb = "x[0]+" * 200_000 + "1"
    assert compile_error(one_mb, n=3).code == "too_long"
    with pytest.raises(ValueError):
        decido.Expression("1", max_depth=0)


def test_garbage_bytes_never_crash():
    rng = np.random.default_rng(7)
    alphabet = list("x[]():,.+-*/%<>=!&|^ 0123456789eaornt_sumpi\x00é\n")
    for _ in range(3000):
        text = "".join(rng.choice(alphabet, size=rng.integers(0, 40)))
        try:
            e = decido.Expression(text, n=4)
        except ExpressionError as err:
            assert err.code and 0 <= err.position <= len(text)
            continue
        e.evaluate(np.array([0.5, -1.0, np.nan, 1e308]))


def test_bad_arguments_are_type_or_value_errors():
    with pytest.raises(TypeError):
        decido.Expression(b"x[0]", n=1)
    with pytest.raises(TypeError):
        decido.Expression("x[0]", n=1.5)
    with pytest.raises(ValueError):
        decido.Expression("x[0]", n=0)
    with pytest.raises(ValueError):
        decido.Expression("a", n=2, variables=["a"])
    with pytest.raises(TypeError):
        decido.Expression("a", variables="a")
    for bad in (["a", "a"], ["1a"], ["and"], ["sum"], [""], ["a b"]):
        err = compile_error("1", variables=bad)
        assert err.code == "invalid_variable"
    e = decido.Expression("sum(x)", n=3)
    with pytest.raises(ValueError):
        e.evaluate([1.0, 2.0])
    with pytest.raises(ValueError):
        e.evaluate_many(np.zeros((2, 4)))
    with pytest.raises(ValueError):
        e.evaluate_many(np.zeros(3))
    with pytest.raises(ValueError):
        e.gradient(np.zeros((3, 1)))
    with pytest.raises(TypeError):
        e.evaluate({"a": 1})
    v = decido.Expression("a + b", variables=["a", "b"])
    with pytest.raises(ValueError, match="missing values for variables: b"):
        v.evaluate({"a": 1})
    with pytest.raises(ValueError):
        decido.Expression("1").evaluate([1.0])


def test_separable_terms_refuses_coupled_expressions():
    e = decido.Expression("sum(x)**2", n=3)
    with pytest.raises(ExpressionError) as info:
        e.separable_terms(np.zeros((2, 3)))
    assert info.value.code == "not_separable"


def test_errors_pickle():
    err = compile_error("sum(y)")
    again = pickle.loads(pickle.dumps(err))
    assert (again.code, again.position, str(again)) == (err.code, err.position, str(err))
