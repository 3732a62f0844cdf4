"""One map from C statuses to exceptions (decido.errors.status_error), used by the three
extension modules: the map itself, and _expr and _engine raising through it for real."""

from __future__ import annotations

import numpy as np
import pytest

import decido
from decido import _engine
from decido.errors import status_error


@pytest.mark.parametrize("part", ["expression", "engine", "decision"])
def test_out_of_memory_is_a_memory_error_in_every_part(part: str) -> None:
    err = status_error("out_of_memory", "Out of memory", part)
    assert isinstance(err, MemoryError) and part in str(err)


def test_each_part_has_its_exception() -> None:
    expr = status_error("invalid_index", "index 9 is out of range", "expression",
                        source=("x[9]", b"x[9]", 2, 1))
    assert isinstance(expr, decido.ExpressionError)
    assert (expr.code, expr.position, expr.length) == ("invalid_index", 2, 1)
    bad = status_error("invalid_argument", "bounds are missing", "engine", field="bounds")
    failed = status_error("internal_error", "engine 'x' failed", "engine")
    assert isinstance(bad, decido.EngineError) and (bad.code, bad.field) == (
        "invalid_argument", "bounds")
    assert isinstance(failed, decido.EngineError) and failed.code == "engine_failure"
    kernel = status_error("invalid_argument", "Invalid argument", "decision")
    assert type(kernel) is ValueError and str(kernel).startswith("decido: decision kernel:")


def test_the_modules_raise_through_the_map() -> None:
    with pytest.raises(decido.ExpressionError) as compiled:
        decido.Expression("x[9]", n=3)
    assert compiled.value.code == "invalid_index"
    with pytest.raises(decido.ExpressionError) as terms:
        decido.Expression("x[0] * x[1]", n=2)._program.separable_terms(np.zeros((1, 2)))
    assert terms.value.code == "not_separable"
    lower, upper = np.zeros(2), np.ones(2)
    with pytest.raises(decido.EngineError) as engine:  # the C driver's own check
        _engine.run("no_such_engine", lower, upper, decido.Expression("x[0]", n=2)._program,
                    False, False, 10, 0.0, None, 1, {}, None, 16)
    assert engine.value.code == "invalid_argument" and "no_such_engine" in str(engine.value)
    # decisions._kernels checks shapes before its kernels, which then cannot fail: its part of
    # the map is covered by test_each_part_has_its_exception
