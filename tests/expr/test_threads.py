"""One compiled Expression shared by 8 threads gives exactly the single-thread results."""

import threading

import numpy as np
import pytest

import decido

THREADS = 8
ROUNDS = 25
CASES = {
    "rastrigin": ("10*n + sum(x**2 - 10*cos(2*pi*x))", {"n": 1000}),
    "rosenbrock": ("sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)", {"n": 1000}),
    "decision": ("where(price <= budget, quality*100 - price, -1e9) + 10*(2 <= w <= 6)"
                 " - abs(w - 4)**1.5",
                 {"variables": ["quality", "price", "budget", "w"]}),
}


def _work(e, inputs):
    """Everything one thread does, in order: a list of result arrays."""
    out = []
    for x, X in inputs:
        out.append(np.array([e.evaluate(x)]))
        out.append(e.evaluate_many(X))
        value, g = e.gradient(x)
        out.append(np.array([value]))
        out.append(g.copy())
    return out


def _inputs(seed, n_inputs):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-5, 5, n_inputs), rng.uniform(-5, 5, (int(rng.integers(1, 40)),
                                                                 n_inputs)))
            for _ in range(ROUNDS)]


@pytest.mark.parametrize("case", sorted(CASES))
def test_threads_share_one_expression(case):
    text, context = CASES[case]
    e = decido.Expression(text, **context)
    inputs = [_inputs(seed, e.n_inputs) for seed in range(THREADS)]
    expected = [_work(e, inp) for inp in inputs]  # single-threaded, same object
    fresh = decido.Expression(text, **context)
    assert all(np.array_equal(a, b) for a, b in zip(_work(fresh, inputs[0]), expected[0],
                                                      strict=True))

    results = [None] * THREADS
    errors = []
    barrier = threading.Barrier(THREADS)

    def run(k):
        try:
            barrier.wait()
            # every thread does its own inputs twice, interleaving with the others
            results[k] = (_work(e, inputs[k]), _work(e, inputs[k]))
        except Exception as exc:  # reported below, in the main thread
            errors.append((k, exc))

    threads = [threading.Thread(target=run, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not errors, errors
    for k in range(THREADS):
        for got in results[k]:
            assert len(got) == len(expected[k])
            for a, b in zip(got, expected[k], strict=True):
                np.testing.assert_array_equal(a, b, err_msg=f"{case}: thread {k}")


def test_threads_compile_concurrently():
    # compiling is also thread-safe: each thread compiles and evaluates its own program
    text, context = CASES["rosenbrock"]
    x = np.linspace(-2, 2, 1000)
    want = decido.Expression(text, **context).gradient(x)
    results, errors = [None] * THREADS, []

    def run(k):
        try:
            out = []
            for _ in range(10):
                out.append(decido.Expression(text, **context).gradient(x))
            results[k] = out
        except Exception as exc:
            errors.append((k, exc))

    threads = [threading.Thread(target=run, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    for out in results:
        for value, g in out:
            assert value == want[0] and np.array_equal(g, want[1])
