"""decido.RunMonitor: progress read and stops requested from any thread, through
the driver's atomics (no GIL, no callback); it works with every engine and next
to a callback."""

import threading
import time

import numpy as np
import pytest
from engine_budgets import capped

import decido
from decido import EngineError, RunMonitor

ENGINES = [e["id"] for e in decido.engines()]
SPHERE = "sum((x - 0.3)**2)"
RASTRIGIN = "10*n + sum(x**2 - 10*cos(2*pi*x))"
LONG = {"max_evaluations": 10**9, "time_limit": 20.0}  # stopped long before either


def _wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.005)


def _run_in_thread(**kwargs):
    out = {}

    def target():
        try:
            out["result"] = decido.minimize(**kwargs)
        except BaseException as exc:  # re-raised by the test
            out["error"] = exc

    t = threading.Thread(target=target)
    t.start()
    return t, out


def test_a_fresh_monitor():
    m = RunMonitor()
    assert m.progress() == {
        "evaluations": 0, "iterations": 0, "best": None, "elapsed": 0.0, "running": False,
        "hypervolume": None, "front_size": 0,
    }
    assert m.stopped is False
    m.stop()
    m.stop()  # idempotent
    assert m.stopped is True
    assert "RunMonitor" in repr(m)


def test_progress_grows_while_a_run_executes_and_stop_ends_it():
    m = RunMonitor()
    t, out = _run_in_thread(objective=RASTRIGIN, bounds=[[-5.12, 5.12]] * 30, engine="cmaes",
                            seed=1, monitor=m, **LONG)
    _wait_for(lambda: m.progress()["evaluations"] > 0)
    samples = []
    for _ in range(4):
        time.sleep(0.03)
        samples.append(m.progress())
    assert all(s["running"] for s in samples)
    evals = [s["evaluations"] for s in samples]
    assert evals == sorted(evals) and evals[-1] > evals[0]
    assert all(s["best"] is not None and s["elapsed"] > 0 for s in samples)
    m.stop()
    t.join(10)
    assert not t.is_alive() and "error" not in out
    r = out["result"]
    assert r.status == "stopped" and "monitor" in r.message
    assert evals[-1] <= r.evaluations < 10**7 and r.elapsed < 10
    after = m.progress()
    assert after["running"] is False and after["evaluations"] == r.evaluations
    assert after["best"] == r.fun and m.stopped


def test_stop_from_another_thread_with_a_python_objective():
    m = RunMonitor()

    def f(x):
        return float(np.sum((x - 0.3) ** 2))

    t, out = _run_in_thread(objective=f, bounds=[[-1, 1]] * 3, engine="random", seed=2,
                            monitor=m, **LONG)
    _wait_for(lambda: m.progress()["iterations"] >= 2)
    m.stop()
    t.join(10)
    r = out["result"]
    assert r.status == "stopped" and r.evaluations < 10**6 and np.isfinite(r.fun)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_stopped_monitor_stops_a_run_at_once(engine):
    m = RunMonitor()
    m.stop()
    calls = []

    def f(x):
        calls.append(1)
        return float(np.sum((x - 0.3) ** 2))

    for _ in range(2):  # a stop is permanent: the monitor stops the next run too
        r = decido.minimize(f, [[-2, 2], [0, 1]], engine=engine, max_evaluations=1000, seed=3,
                            monitor=m)
        assert r.status == "stopped" and r.message == "stopped by its monitor"
        assert r.evaluations == 1 and r.iterations == 0  # the centre of the box only
        assert np.array_equal(r.x, [0.0, 0.5])
        assert m.progress()["evaluations"] == 1 and not m.progress()["running"]
    assert len(calls) == 2


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("goal", ["minimize", "maximize"])
def test_progress_after_the_run_equals_the_result(engine, goal):
    m = RunMonitor()
    objective = SPHERE if goal == "minimize" else "-" + SPHERE
    r = decido.optimize(objective, [[-1, 1]] * 3, goal=goal, engine=engine,
                        max_evaluations=capped(engine, 400), seed=4, monitor=m)
    p = m.progress()
    assert p["evaluations"] == r.evaluations and p["iterations"] == r.iterations
    assert p["best"] == r.fun and p["running"] is False and p["elapsed"] >= 0
    assert r.status != "stopped" and not m.stopped
    # the same monitor watches the next run from zero
    r2 = decido.optimize(objective, [[-1, 1]] * 2, goal=goal, engine=engine,
                         max_evaluations=60, seed=5, monitor=m)
    p2 = m.progress()
    assert p2["evaluations"] == r2.evaluations <= 60 and p2["best"] == r2.fun


@pytest.mark.parametrize("engine", ENGINES)
def test_stop_from_the_callback_and_the_callback_still_works(engine):
    m = RunMonitor()
    seen = []

    def cb(progress):  # called once a point has a value (dss may start with terms)
        seen.append((progress["iterations"], m.progress()))
        if progress["iterations"] >= 3 and not m.stopped:
            m.stop()
        return False

    budget = capped(engine, 200000)
    r = decido.minimize(RASTRIGIN, [[-5.12, 5.12]] * 4, engine=engine,
                        max_evaluations=budget, seed=6, callback=cb, monitor=m)
    if r.status != "converged":  # lbfgsb: the centre is a stationary point
        assert r.status == "stopped" and r.message == "stopped by its monitor"
        assert r.iterations == seen[-1][0] >= 3 and r.evaluations < budget
    for iterations, p in seen:  # the monitor holds the previous iteration's progress
        assert p["running"] and p["iterations"] == iterations - 1
    # a truthy callback still stops the run as before
    r2 = decido.minimize(SPHERE, [[-1, 1]] * 2, engine=engine,
                         max_evaluations=capped(engine, 5000), seed=6,
                         callback=lambda p: True, monitor=RunMonitor())
    assert r2.status in ("stopped", "converged")
    if r2.status == "stopped":
        assert r2.message == "stopped by the callback"


@pytest.mark.parametrize("bad", [3, "monitor", object(), lambda: None, threading.Event()])
def test_a_wrong_monitor_type_is_rejected_before_any_work(bad):
    calls = []

    def f(x):
        calls.append(1)
        return 0.0

    with pytest.raises(EngineError) as info:
        decido.minimize(f, [[0, 1]], monitor=bad)
    assert info.value.code == "invalid_argument" and info.value.field == "monitor"
    assert not calls


def test_a_monitor_watches_one_run_at_a_time():
    m = RunMonitor()
    t, out = _run_in_thread(objective=SPHERE, bounds=[[-1, 1]] * 2, engine="random", seed=7,
                            monitor=m, **LONG)
    try:
        _wait_for(lambda: m.progress()["running"])
        with pytest.raises(EngineError) as info:
            decido.minimize(SPHERE, [[-1, 1]] * 2, engine="random", max_evaluations=10,
                            monitor=m)
        assert info.value.code == "invalid_argument" and info.value.field == "monitor"
    finally:
        m.stop()
        t.join(10)
    assert out["result"].status == "stopped"
