"""decido.Study: ask/tell optimization through the public library surface (docs/studies.md).

Every engine improves a sphere through ask/tell; the same seed and ordered tells give the
same trials; results of a generation arrive in any order; failed trials, partial
generations, warm starts, categorical and log variables, constraints on metrics, two
objectives' front, misuse, and the replayable state."""

from __future__ import annotations

import contextlib
import io
import json
import math
import random
import subprocess
import sys
import threading
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import decido
from decido import EngineError, Study, StudyError


def sphere(x: np.ndarray) -> float:
    return float(np.sum((np.asarray(x) - 0.3) ** 2))


def drive(study: Study, trials: int, batch: int, shuffle: int | None = None) -> None:
    rng = random.Random(shuffle)
    done = 0
    while done < trials:
        asked = study.ask(batch)
        if shuffle is not None:
            rng.shuffle(asked)
        for t in asked:
            study.tell(t, sphere(t.x))
        done += len(asked)


SINGLE = [e["id"] for e in decido.engines()]


#: the engines held to a target on the sphere; any other (a model-based engine, costly per
#: trial) runs a short study that must improve on its first batch
KNOWN = {"dss": 0.05, "de": 0.05, "cmaes": 0.05, "pso": 0.05, "nelder_mead": 0.05,
         "lbfgsb": 0.05, "random": 1.0, "moea": 0.5}


@pytest.mark.parametrize("engine", SINGLE)
def test_every_engine_improves_a_sphere_through_ask_and_tell(engine: str) -> None:
    trials = 500 if engine in KNOWN else 60
    study = Study(bounds=[(-2, 3)] * 4, engine=engine, seed=3, max_trials=trials)
    info = next(e for e in decido.engines() if e["id"] == engine)
    batch = 1 if info["kind"] == "local" or engine == "dss" else 4
    drive(study, trials, batch, shuffle=1)
    first = min(t.value for t in study.trials[:batch] if t.value is not None)
    best = study.best
    assert best is not None and best.state == "completed"
    assert best.value < KNOWN.get(engine, math.inf) and best.value < first, (engine, best.value)
    assert len(study.trials) == trials
    with pytest.raises(StudyError) as info_:
        study.ask()
    assert info_.value.code == "study_finished"


def test_the_same_seed_and_tells_give_the_same_trials_bit_for_bit() -> None:
    def run() -> list[bytes]:
        study = Study(bounds=[(-1, 1)] * 3, engine="cmaes", seed=11)
        seen = []
        for _ in range(30):
            asked = study.ask(3)
            seen += [t.x.tobytes() for t in asked]
            for t in reversed(asked):
                study.tell(t, sphere(t.x))
        return seen
    assert run() == run()
    other = Study(bounds=[(-1, 1)] * 3, engine="cmaes", seed=12).ask(3)
    assert other[0].x.tobytes() != run()[0]


_SCRIPT = """
import decido
study = decido.Study(bounds=[(-1, 1)] * 3, engine={engine!r}, seed=21)
out = []
for _ in range(25):
    asked = study.ask(4)
    out += [float(v).hex() for t in asked for v in t.x]
    for t in reversed(asked):
        study.tell(t, float(sum((t.x - 0.2) ** 2)))
print(" ".join(out))
"""


@pytest.mark.parametrize("engine", ["cmaes", "dss"])
def test_another_process_gives_the_same_trials(engine: str) -> None:
    script = _SCRIPT.format(engine=engine)
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True, timeout=120).stdout for _ in range(2)]
    namespace: dict[str, Any] = {}
    with contextlib.redirect_stdout(io.StringIO()) as here:
        exec(script, namespace)  # noqa: S102 -- the same script in this process
    assert runs[0] == runs[1] == here.getvalue() and len(runs[0].split()) == 300


def test_a_generation_told_in_any_order_improves_and_every_trial_is_kept() -> None:
    study = Study(bounds=[(-2, 3)] * 3, engine="cmaes", seed=5, options={"popsize": 12})
    drive(study, 600, 12, shuffle=7)  # one generation an ask, told shuffled
    assert study.best is not None and study.best.value < 1e-3
    assert [t.number for t in study.trials] == list(range(600))
    assert all(t.state == "completed" for t in study.trials)


def test_failed_and_infeasible_trials_rank_worst_and_never_become_best() -> None:
    study = Study(bounds=[(-2, 3)] * 2, engine="cmaes", seed=2)
    for k in range(300):
        t = study.ask()[0]
        if k % 3 == 0:
            study.tell(t, state="failed")
        elif k % 3 == 1:
            study.tell(t.number, state="infeasible")
        else:
            study.tell(t, sphere(t.x))
    states = [t.state for t in study.trials]
    assert states.count("failed") == 100 and states.count("infeasible") == 100
    best = study.best
    assert best is not None and best.state == "completed" and best.value < 0.05
    assert not study.trials[1].feasible


def test_a_nan_value_is_kept_ranked_worst_and_never_best() -> None:
    study = Study(bounds=[(0, 1)], engine="cmaes", seed=1)
    a, b = study.ask(2)
    study.tell(a, float("nan"))
    assert study.best is None and a.state == "completed" and math.isnan(a.value or 0.0)
    study.tell(b, 0.5)
    assert study.best is b
    assert a.to_dict()["value"] is None  # JSON-ready


def test_asking_beyond_the_batch_closes_it_and_late_results_still_count() -> None:
    study = Study(bounds=[(-2, 3)] * 2, engine="de", seed=1)
    early = study.ask(1)[0]
    rest = study.ask(80)  # beyond de's first generation: it closes (the early one untold)
    for t in rest:
        study.tell(t, 10 + sphere(t.x))
    late = study.tell(early, -1.0)  # told after its batch closed: recorded all the same
    assert study.best is late and late.state == "completed"
    assert len(study.trials) == 81


def test_a_warm_start_is_recorded_and_a_local_engine_starts_there() -> None:
    variables = [{"name": "a", "lower": -2, "upper": 3}, {"name": "b", "lower": -2, "upper": 3}]
    study = Study(variables=variables, engine="nelder_mead", seed=4)
    far = study.tell({"a": 2.5, "b": 2.5}, sphere([2.5, 2.5]))
    near = study.tell([0.31, 0.29], sphere([0.31, 0.29]))
    assert (far.number, near.number) == (0, 1) and not near.asked
    assert study.best is near and near.variables == {"a": 0.31, "b": 0.29}
    first = study.ask()[0]
    assert first.number == 2 and abs(first.x[0] - 0.31) < 0.05 and abs(first.x[1] - 0.29) < 0.05
    with pytest.raises(StudyError) as info:
        study.tell({"a": 9.0, "b": 0.0}, 1.0)
    assert info.value.code == "invalid_point"


def test_categorical_integer_and_log_variables_take_their_values() -> None:
    study = Study(variables=[
        {"name": "opt", "values": ["sgd", "adam", "lion"]},
        {"name": "lr", "lower": 1e-5, "upper": 1.0, "log": True},
        {"name": "layers", "lower": 1, "upper": 512, "type": "integer", "log": True},
        {"name": "width", "values": [64, 128, 32]},
    ], engine="de", seed=9)
    trials = study.ask(200)
    for t in trials:
        v = t.variables
        assert v["opt"] in ("sgd", "adam", "lion") and v["width"] in (32.0, 64.0, 128.0)
        assert 1e-5 <= v["lr"] <= 1.0 and isinstance(v["layers"], int)
        assert 1 <= v["layers"] <= 512
    lrs = np.array([t.variables["lr"] for t in trials])
    assert np.mean(lrs < 1e-3) > 0.4  # a log scale: the decades get equal shares
    # the categorical optimum is found: loss depends on the choice and lr
    loss = {"sgd": 1.0, "adam": 0.0, "lion": 0.5}
    for t in trials:
        study.tell(t, loss[t.variables["opt"]] + abs(math.log10(t.variables["lr"]) + 3))
    for _ in range(400):
        t = study.ask()[0]
        study.tell(t, loss[t.variables["opt"]] + abs(math.log10(t.variables["lr"]) + 3))
    best = study.best
    assert best is not None and best.variables["opt"] == "adam"
    assert abs(math.log10(best.variables["lr"]) + 3) < 0.2


def test_constraints_read_metrics_and_rank_infeasible_trials_last() -> None:
    study = Study(variables=[{"name": "size", "lower": 0, "upper": 10}],
                  constraints=["latency <= 100"], engine="cmaes", seed=3)
    for _ in range(60):
        for t in study.ask(4):
            size = t.variables["size"]
            # bigger is better for the loss, but latency grows with size: size <= 5
            study.tell(t, -size, metrics={"latency": 20 * size})
    best = study.best
    assert best is not None and best.feasible and best.metrics["latency"] <= 100 + 1e-6
    assert abs(best.variables["size"] - 5) < 0.05
    assert any(not t.feasible for t in study.trials)
    assert best.constraints[0]["name"] == "c0"
    t = study.ask()[0]
    with pytest.raises(StudyError) as info:
        study.tell(t, 1.0)
    assert info.value.code == "missing_metric" and "latency" in str(info.value)
    assert t.state == "active"  # nothing was recorded


def test_two_objectives_give_a_front_with_its_hypervolume() -> None:
    study = Study(bounds=[(0, 1), (0, 1)], objectives=["f1", {"name": "f2", "goal": "minimize"}],
                  engine="moea", seed=2, options={"popsize": 20})
    for _ in range(40):
        for t in study.ask(20):
            x, y = t.x
            study.tell(t, values=[x, 1 - math.sqrt(x) + y])
    front = study.pareto
    assert len(front.trials) >= 10 and front.hypervolume > 0
    f = np.array([t.values for t in front.trials])
    assert np.all(np.abs(f[:, 1] - (1 - np.sqrt(f[:, 0]))) < 0.1)
    options = front.options()
    assert options[0]["id"] == str(front.trials[0].number)
    assert set(options[0]["attributes"]) == {"f1", "f2", "x0", "x1"}
    with pytest.raises(StudyError) as info:
        _ = study.best
    assert info.value.code == "several_objectives"
    t = study.ask()[0]
    with pytest.raises(StudyError) as info:
        study.tell(t, 1.0)
    assert info.value.code == "invalid_values"


@pytest.mark.parametrize("m", [2, 3])
def test_the_front_is_every_non_dominated_trial_ties_included(m: int) -> None:
    rng = np.random.default_rng(m)
    study = Study(bounds=[(0, 1)], objectives=[f"f{k}" for k in range(m)], seed=1)
    F = rng.integers(0, 5, size=(60, m)).astype(float)
    for row in F:
        study.tell([0.5], values=list(row))
    expected = [i for i in range(len(F)) if not any(
        np.all(F[j] <= F[i]) and np.any(F[j] < F[i]) for j in range(len(F)))]
    assert [t.number for t in study.pareto.trials] == expected


def test_threads_share_a_study_and_every_trial_is_told_once() -> None:
    study = Study(bounds=[(-2, 3)] * 3, engine="de", seed=6)

    def worker() -> None:
        for _ in range(100):
            (t,) = study.ask()
            study.tell(np.int64(t.number), sphere(t.x))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert [t.number for t in study.trials] == list(range(800))
    assert all(t.state == "completed" for t in study.trials)


def test_misuse_raises_typed_errors() -> None:
    study = Study(bounds=[(0, 1)], seed=1, max_trials=3)
    t = study.ask()[0]
    study.tell(t, 0.5)
    cases = [
        (lambda: study.tell(t, 0.4), "trial_finished"),
        (lambda: study.tell(99, 0.4), "unknown_trial"),
        (lambda: study.tell(Study(bounds=[(0, 1)], seed=1).ask()[0], 0.4), "unknown_trial"),
        (lambda: study.tell(study.ask()[0], values=[1.0, 2.0]), "invalid_values"),
        (lambda: study.tell(1, "slow"), "invalid_values"),
        (lambda: study.tell(1, 1.0, state="failed"), "invalid_values"),
        (lambda: study.tell(1, state="lost"), "invalid_argument"),
        (lambda: study.ask(0), "invalid_argument"),
    ]
    for call, code in cases:
        with pytest.raises(StudyError) as info:
            call()
        assert info.value.code == code
    assert len(study.ask(5)) == 1  # max_trials leaves one
    with pytest.raises(StudyError) as info:
        study.ask()
    assert info.value.code == "study_finished"


def test_bad_arguments_are_listed_together() -> None:
    with pytest.raises(EngineError) as info:
        Study(variables=[{"name": "a", "lower": 2, "upper": 1},
                         {"name": "b", "values": []},
                         {"name": "c", "lower": 0, "upper": 1, "log": True}],
              goal="up", seed=-1)
    pointers = [e["pointer"] for e in info.value.errors]
    assert pointers == ["/variables/0", "/variables/1/values", "/variables/2/lower", "/goal",
                        "/seed"]
    with pytest.raises(EngineError) as info:
        Study(bounds=[(0, 1)], engine="nope")
    assert "unknown engine" in str(info.value)
    with pytest.raises(EngineError) as info:
        Study(bounds=[(0, 1)], objectives=["a", "b"], engine="cmaes")
    assert "one objective" in str(info.value)
    with pytest.raises(decido.ConstraintError):
        Study(bounds=[(0, 1)], constraints=["x0 <"])


def test_the_default_engine_follows_the_registry() -> None:
    auto = next((e for e in decido.engines() if e["id"] == "auto"), None)
    single = Study(bounds=[(0, 1)]).engine
    assert single == ("auto" if auto else decido.default_engine())
    several = Study(bounds=[(0, 1)], objectives=["a", "b"]).engine
    assert several == ("auto" if auto and auto["supports"]["objectives"] else "moea")


def test_a_study_replays_from_its_state_on_a_new_process() -> None:
    study = Study(variables=[{"name": "a", "lower": -1, "upper": 1},
                             {"name": "k", "values": ["p", "q"]}],
                  constraints=["m <= 1"], engine="cmaes", seed=8)
    study.tell({"a": 0.5, "k": "q"}, 0.25, metrics={"m": 0.0})
    for _ in range(10):
        asked = study.ask(3)
        study.tell(asked[2], state="failed")
        for t in asked[:2]:
            study.tell(t, t.variables["a"] ** 2, metrics={"m": 2.0 * t.variables["a"]})
    pending = study.ask(2)  # asked, never told
    state = json.loads(json.dumps(study.to_dict()))
    again = Study.from_dict(state)
    assert [t.to_dict() for t in again.trials] == [t.to_dict() for t in study.trials]
    assert [t.x.tobytes() for t in again.ask(5)] == [t.x.tobytes() for t in study.ask(5)]
    assert again.trials[pending[0].number].state == "active"
    with pytest.raises(StudyError) as info:
        Study.from_dict({"spec": {}, "log": []})
    assert info.value.code == "invalid_state"


_OPS = st.lists(st.tuples(st.sampled_from(["ask", "tell", "fail", "infeasible", "point"]),
                          st.integers(1, 7), st.integers(0, 10**6)), max_size=40)


@settings(max_examples=25, deadline=None)
@given(engine=st.sampled_from(["cmaes", "de", "nelder_mead", "dss", "pso"]), ops=_OPS)
def test_any_sequence_of_calls_replays_bit_for_bit(engine: str,
                                                   ops: list[tuple[str, int, int]]) -> None:
    """Asks of any size, tells of any pending trial in any order and state, warm starts:
    two studies given the same calls agree, and so does the replay of the state."""
    def run() -> Study:
        study = Study(bounds=[(-1, 2)] * 2, engine=engine, seed=4)
        pending: list[decido.Trial] = []
        for op, k, pick in ops:
            if op == "ask":
                pending += study.ask(k)
            elif op == "point":
                study.tell([pick % 3 - 1.0, 0.5], float(pick % 11))
            elif pending:
                t = pending.pop(pick % len(pending))
                if op == "tell":
                    study.tell(t, sphere(t.x))
                else:
                    study.tell(t, state="failed" if op == "fail" else "infeasible")
        return study
    a, b = run(), run()
    assert [t.to_dict() for t in a.trials] == [t.to_dict() for t in b.trials]
    replayed = Study.from_dict(a.to_dict())
    assert [t.to_dict() for t in replayed.trials] == [t.to_dict() for t in a.trials]
    assert [t.x.tobytes() for t in replayed.ask(3)] == [t.x.tobytes() for t in a.ask(3)]


def _min_distance(points: list[np.ndarray]) -> float:
    return min(float(np.linalg.norm(a - b)) for i, a in enumerate(points)
               for b in points[i + 1:])


@pytest.mark.parametrize("engine", ["bo", "tpe", "auto"])
def test_a_batch_of_pending_suggestions_is_diverse(engine: str) -> None:
    # bo takes each pending row in at the model's mean (Kriging believer), tpe into the bad
    # group (a constant liar): five trials asked at once are five distinct points, also
    # after the model has seen trials (auto runs bo for 60 trials in 3 dimensions)
    study = Study(bounds=[(-2, 3)] * 3, engine=engine, seed=4, max_trials=60)
    for round_ in range(4):
        asked = study.ask(5)
        assert len(asked) == 5
        assert _min_distance([t.x for t in asked]) > 1e-3, (engine, round_)
        for t in reversed(asked):
            study.tell(t, sphere(t.x))
    best = study.best
    assert best is not None and best.value < min(t.value for t in study.trials[:5]
                                                 if t.value is not None)


def test_auto_runs_bo_for_a_small_study() -> None:
    def asks(engine: str) -> list[bytes]:
        study = Study(bounds=[(-1, 1)] * 3, engine=engine, seed=9, max_trials=40)
        out = []
        for _ in range(4):
            asked = study.ask(3)
            out += [t.x.tobytes() for t in asked]
            for t in asked:
                study.tell(t, sphere(t.x))
        return out
    assert asks("auto") == asks("bo") != asks("tpe")


def test_a_small_study_of_two_objectives_runs_bo_with_diverse_batches() -> None:
    """auto runs bo for two objectives and 60 trials (ParEGO scalarizations): the asks are
    bo's, a batch of pending trials holds distinct points spread along the front (each
    row its own weights: with one weight vector for the batch, one batch's f1 spanned
    0.008), and the front follows ZDT1's."""
    def zdt1(x: np.ndarray) -> list[float]:
        g = 1 + 9 * float(np.mean(x[1:]))
        return [float(x[0]), g * (1 - math.sqrt(x[0] / g))]

    def run(engine: str) -> tuple[list[bytes], list[float], Study]:
        study = Study(bounds=[(0, 1)] * 4, objectives=["f1", "f2"], engine=engine, seed=3,
                      max_trials=60)
        out, spans = [], []
        for _ in range(15):
            asked = study.ask(4)
            assert len(asked) == 4 and _min_distance([t.x for t in asked]) > 1e-9
            out += [t.x.tobytes() for t in asked]
            spans.append(float(np.ptp([t.x[0] for t in asked])))
            for t in asked:
                study.tell(t, values=zdt1(t.x))
        return out, spans, study

    auto, spans, study = run("auto")
    assert auto == run("bo")[0]
    assert float(np.median(spans)) > 0.2
    front = np.array([t.values for t in study.pareto.trials])
    assert decido.hypervolume(front, [1.1, 1.1]) > 0.7  # of 0.877 (moea's 60: about 0.05)
