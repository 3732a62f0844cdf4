"""The order in which sums and products add up (docs/expression-language.md): element j of a
row goes to lane j mod 16, the lanes are combined in a fixed tree; every way a reduction is
reached (a plain sum, a strided view, a fused sum(a op b), a constant folded at compile
time, one point or many) gives those bits."""

from __future__ import annotations

import math

import numpy as np
import pytest

import decido

LANES = 16


def lanes_reduce(values: np.ndarray, prod: bool = False) -> float:
    """The documented order, one IEEE operation at a time."""
    lane = [1.0 if prod else 0.0] * LANES
    for j, v in enumerate(values.tolist()):
        lane[j % LANES] = lane[j % LANES] * v if prod else lane[j % LANES] + v
    # lanes 0-3 with 4-7 and 8-11 with 12-15, those two, then (l0 + l1) + (l2 + l3)
    if prod:
        q = [(lane[k] * lane[4 + k]) * (lane[8 + k] * lane[12 + k]) for k in range(4)]
        return (q[0] * q[1]) * (q[2] * q[3])
    q = [(lane[k] + lane[4 + k]) + (lane[8 + k] + lane[12 + k]) for k in range(4)]
    return (q[0] + q[1]) + (q[2] + q[3])


@pytest.mark.parametrize("n", [1, 3, 15, 16, 17, 100, 129, 1000])
def test_sums_add_up_in_sixteen_lanes(n: int) -> None:
    rng = np.random.default_rng(n)
    X = rng.uniform(-1e3, 1e3, size=(5, n)) * 10.0 ** rng.integers(-8, 8, size=(5, n))
    cases = {
        "sum(x)": lambda x: lanes_reduce(x),
        "sum(x[::-1])": lambda x: lanes_reduce(x[::-1]),
        "sum(x * x)": lambda x: lanes_reduce(x * x),
        "sum(x - 3)": lambda x: lanes_reduce(x - 3.0),
        "mean(x)": lambda x: lanes_reduce(x) / n,
        "norm(x)": lambda x: math.sqrt(lanes_reduce(x * x)),
        "prod(x / 1000)": lambda x: lanes_reduce(x / 1000.0, prod=True),
    }
    for text, expected in cases.items():
        e = decido.Expression(text, n=n)
        want = np.array([expected(row) for row in X])
        assert e.evaluate_many(X).tolist() == want.tolist(), text
        assert [e.evaluate(row) for row in X] == want.tolist(), text


def test_a_folded_constant_sum_has_the_run_time_bits() -> None:
    n = 41
    values = np.array([k**1.5 / 7.0 for k in range(1, n + 1)])  # C pow, like the VM's
    folded = decido.Expression("sum(i ** 1.5 / 7)", n=n)
    assert folded.n_instructions == 0
    assert folded.evaluate(np.zeros(n)) == lanes_reduce(values)
    run_time = decido.Expression("sum(x ** 1.5 / 7)", n=n)
    assert run_time.evaluate(np.arange(1.0, n + 1)) == lanes_reduce(values)


@pytest.mark.parametrize("n", [3, 16, 21])
def test_signed_zeros_and_infinities_keep_their_bits(n: int) -> None:
    rows = np.array([[-0.0] * n, [0.0, -0.0] * (n // 2) + [-0.0] * (n % 2),
                     [1.0] * (n - 1) + [-np.inf], [-2.0] * n])
    for text, prod in [("sum(x)", False), ("prod(x)", True)]:
        e = decido.Expression(text, n=n)
        got = [v.hex() for v in e.evaluate_many(rows).tolist()]
        assert got == [lanes_reduce(r, prod=prod).hex() for r in rows], text
