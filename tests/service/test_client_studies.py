"""``client.studies`` of decido.Client and decido.AsyncClient against a real server (``decido
serve``, one SQLite file, the real clock): create, suggest, tell every way, report,
heartbeat, abandon, batch tell, warm start, list, stop, delete, the typed 409s; and
``optimize`` with 4 workers (counts right, every trial finished, exceptions failed with
their text), until the study finishes, with heartbeats that outlive a short lease."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import LiveServer, running

from decido.client import (
    AsyncClient,
    AsyncRemoteTrial,
    Client,
    Conflict,
    InvalidRequest,
    NotFound,
    RemoteStudy,
    RemoteTrial,
    StudyFinished,
    TrialFinished,
)
from decido.errors import StudyError
from decido.status import FINISHED_TRIAL_STATES, STUDY_STATES, TRIAL_STATES

pytest.importorskip("httpx")


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server of its own: the real clock (leases run out), 1 worker."""
    with running(tmp_path_factory.mktemp("client_studies"), workers=1) as srv:
        yield srv


@pytest.fixture
def client(live: LiveServer) -> Iterator[Client]:
    with Client(f"http://127.0.0.1:{live.port}", live.create_key(tier="team")["key"]) as c:
        yield c


def sphere(variables: dict[str, Any]) -> float:
    return sum((float(v) - 1.0) ** 2 for v in variables.values())


def test_a_study_round_trip(client: Client) -> None:
    study = client.studies.create(bounds=[[-5, 5]] * 2, engine="cmaes", seed=3, max_trials=8,
                                  early_stopping={"rule": "median", "min_trials": 1},
                                  metadata={"project": "roundtrip"})
    assert isinstance(study, RemoteStudy) and study.id.startswith("st_")
    assert study.state == "active" and study.spec["engine"] == "cmaes"
    assert study.spec["max_trials"] == 8 and study.trial_lease == 600
    trials = study.suggest(4, client_id="w1")
    assert [t.number for t in trials] == [0, 1, 2, 3]
    assert all(isinstance(t, RemoteTrial) and t.state == "active" for t in trials)
    assert trials[0].x.shape == (2,) and set(trials[0].variables) == {"x0", "x1"}
    # the same client_id gets its active trials back
    assert [t.number for t in study.suggest(1, client_id="w1")] == [0, 1, 2, 3]
    assert trials[0].complete(sphere(trials[0].variables)).state == "completed"
    assert trials[0].value == pytest.approx(sphere(trials[0].variables))
    with pytest.raises(TrialFinished) as told_twice:
        trials[0].complete(1.0)
    assert told_twice.value.status == 409 and told_twice.value.code == "trial_finished"
    assert isinstance(told_twice.value, Conflict)
    assert trials[1].fail("crashed").state == "failed" and trials[1].reason == "crashed"
    # report: trial 2 first at step 0 (alone, so it goes on), then 3 worse than it stops
    assert trials[2].report(0, 1.0) is False
    assert trials[3].report(0, 5.0) is True and trials[3].state == "early_stopped"
    assert trials[2].heartbeat().state == "active"
    assert trials[2].abandon().state == "abandoned"
    with pytest.raises(TrialFinished):
        trials[2].heartbeat()
    with pytest.raises(StudyError):  # JSON carries no NaN: refused before it is sent
        trials[2].complete(float("nan"))
    more = study.suggest(3)
    told = study.complete_many([{"number": more[0], "value": sphere(more[0].variables)},
                                {"number": more[1].number, "state": "infeasible",
                                 "reason": "out of range"},
                                {"number": more[2].number, "value": 3.5}])
    assert [t.state for t in told] == ["completed", "infeasible", "completed"]
    with pytest.raises(InvalidRequest) as bad:
        study.complete_many([{"number": more[0].number, "value": 1.0},
                             {"number": 999, "value": 1.0}])
    assert {e.pointer for e in bad.value.errors} >= {"/trials/1/number"}
    warm = study.add_trials([{"variables": {"x0": 1.0, "x1": 1.0}, "value": 0.0},
                             {"x": [0.5, 0.5], "state": "queued"}])
    assert [t.state for t in warm] == ["completed", "queued"]
    study.refresh()
    assert study.best is not None and study.best.value == 0.0
    assert study.best.number == warm[0].number and study.pareto is None
    assert study.counts["completed"] == 4 and study.counts["queued"] == 1
    assert study.n_trials == 9
    # the queued point is suggested first
    queued = study.suggest(1)
    assert queued[0].number == warm[1].number and queued[0].x.tolist() == [0.5, 0.5]
    assert study.tell(queued[0], 0.5).state == "completed"
    assert [t.number for t in study.trials(state="completed")] == [0, 4, 6, 7, 8]
    assert [t.number for t in study.trials()] == list(range(9))
    assert study.trial(1).reason == "crashed"
    assert [s.id for s in client.studies.list(metadata={"project": "roundtrip"})] == [study.id]
    assert client.studies.get(study.id).counts == study.refresh().counts
    with pytest.raises(Conflict) as active:
        study.delete()
    assert active.value.code == "study_not_stopped"
    assert study.stop().state in ("stopped", "completed")
    with pytest.raises(StudyFinished) as finished:
        study.suggest()
    assert finished.value.code == "study_finished"
    study.delete()
    with pytest.raises(NotFound):
        client.studies.get(study.id)


def test_faults_of_a_new_study_are_listed(client: Client) -> None:
    with pytest.raises(InvalidRequest) as bad:
        client.studies.create(variables=[{"name": "a", "lower": 2, "upper": 1}],
                              trial_lease=0.5)
    assert {e.pointer for e in bad.value.errors} >= {"/trial_lease"}


def test_optimize_with_four_workers(client: Client) -> None:
    running_now, most = [0], [0]
    lock = threading.Lock()

    def fn(trial: RemoteTrial) -> float:
        with lock:
            running_now[0] += 1
            most[0] = max(most[0], running_now[0])
        try:
            time.sleep(0.05)
            if trial.number % 5 == 4:
                raise ValueError(f"boom {trial.number}")
            return sphere(trial.variables)
        finally:
            with lock:
                running_now[0] -= 1

    study = client.studies.optimize(fn, bounds=[[-5, 5]] * 3, engine="de", seed=2,
                                    max_trials=200, n_trials=40, n_workers=4)
    assert study.state == "active" and most[0] >= 2
    assert study.counts["completed"] == 32 and study.counts["failed"] == 8
    assert study.n_trials == 40 and not study.counts.get("active")
    trials = list(study.trials())
    assert sorted(t.number for t in trials) == list(range(40))
    assert all(t.finished for t in trials)
    failed = [t for t in trials if t.state == "failed"]
    assert all(t.reason == f"ValueError: boom {t.number}" for t in failed)
    assert len({t.client_id for t in trials}) == 4
    # resumed: ten more on the same study
    again = client.studies.optimize(fn, study=study.id, n_trials=10, n_workers=2)
    assert again.n_trials == 50


def test_optimize_until_the_study_finishes_with_heartbeats(client: Client) -> None:
    """A lease of 1 s and evaluations of 1.6 s: the heartbeats keep every trial."""
    def slow(trial: RemoteTrial) -> dict[str, Any]:
        time.sleep(1.6)
        return {"value": sphere(trial.variables), "metrics": {"t": 1.6}}

    study = client.studies.optimize(slow, bounds=[[-2, 2]], engine="random", seed=1,
                                    max_trials=6, trial_lease=1, n_workers=3)
    assert study.state == "completed" and study.counts["completed"] == 6
    assert all(t.metrics == {"t": 1.6} for t in study.trials())


def test_optimize_of_several_objectives_and_bad_results(client: Client) -> None:
    def fn(trial: RemoteTrial) -> Any:
        x = trial.variables["x0"]
        if trial.number == 0:
            return None
        if trial.number == 1:
            return float("inf")
        return (x * x, (x - 2) ** 2)

    study = client.studies.optimize(fn, bounds=[[-1, 3]], objectives=["a", "b"],
                                    engine="moea", seed=4, max_trials=10, n_workers=2)
    assert study.state == "completed" and study.counts["completed"] == 8
    assert study.pareto and all(len(t.values or []) == 2 for t in study.pareto)
    assert "returned None" in (study.trial(0).reason or "")
    assert "inf" in (study.trial(1).reason or "")
    front = study.decide(method="topsis")
    assert front["best"] in {str(t.number) for t in study.pareto}


def test_async_client_round_trip_and_optimize(live: LiveServer) -> None:
    key = live.create_key(tier="team")["key"]

    async def main() -> None:
        async with AsyncClient(f"http://127.0.0.1:{live.port}", key) as client:
            study = await client.studies.create(bounds=[[-5, 5]] * 2, engine="cmaes",
                                                seed=3, max_trials=30,
                                                metadata={"kind": "async"})
            trials = await study.suggest(2)
            assert isinstance(trials[0], AsyncRemoteTrial)
            assert (await trials[0].complete(sphere(trials[0].variables))).state == \
                "completed"
            with pytest.raises(TrialFinished):
                await trials[0].fail("again")
            assert await trials[1].report(0, 1.0) is False
            assert (await trials[1].heartbeat()).state == "active"
            assert (await trials[1].abandon()).state == "abandoned"
            listed = [s.id async for s in client.studies.list(metadata={"kind": "async"})]
            assert listed == [study.id]

            async def coro(trial: AsyncRemoteTrial) -> float:
                await asyncio.sleep(0.02)
                if trial.number == 5:
                    raise RuntimeError("async boom")
                return sphere(trial.variables)

            done = await client.studies.optimize(coro, study=study, n_trials=12,
                                                 n_workers=4)
            assert done.counts["completed"] == 12 and done.counts["failed"] == 1
            assert (await done.trial(5)).reason == "RuntimeError: async boom"

            def plain(trial: AsyncRemoteTrial) -> float:
                time.sleep(0.02)
                return sphere(trial.variables)

            finished = await client.studies.optimize(plain, study=study.id, n_workers=4)
            assert finished.state == "completed" and finished.n_trials == 30
            assert not finished.counts.get("active")
            numbers = [t.number async for t in finished.trials()]
            assert numbers == list(range(30))
            with pytest.raises(StudyFinished):
                await finished.suggest()
            await study.delete()
            with pytest.raises(NotFound):
                await client.studies.get(study.id)

    asyncio.run(main())


def test_list_reads_every_page(client: Client) -> None:
    made = [client.studies.create(bounds=[[0, 1]], max_trials=2,
                                  metadata={"batch": "pages"}).id for _ in range(23)]
    listed = [s.id for s in client.studies.list(metadata={"batch": "pages"})]
    assert listed == made[::-1]  # newest first, over two pages of 20
    assert [s.id for s in client.studies.list(state="active",
                                              metadata={"batch": "pages"})][:1] == [made[-1]]
    client.studies.get(made[0]).stop()
    assert [s.id for s in client.studies.list(state="stopped")] == [made[0]]


def test_the_states_are_the_services() -> None:
    """The client and the command line read the states from decido.status; the service
    writes them as its own types: held equal here."""
    from typing import get_args

    from decido_service.studies.api import FINISHED
    from decido_service.types import studies as types

    assert types.TRIAL_STATES == TRIAL_STATES == get_args(types.TrialState)
    assert FINISHED == FINISHED_TRIAL_STATES
    assert get_args(types.StudyState) == STUDY_STATES


def test_optimize_leaves_early_stopped_trials_and_raises_the_services_errors(
        client: Client) -> None:
    def fn(trial: RemoteTrial) -> float | None:
        if trial.report(0, float(trial.number)):
            return None  # stopped early: nothing to tell
        return float(trial.number)

    study = client.studies.optimize(fn, bounds=[[0, 1]], engine="random", seed=1,
                                    max_trials=5,
                                    early_stopping={"rule": "median", "min_trials": 1})
    assert study.counts["completed"] == 1 and study.counts["early_stopped"] == 4
    assert study.trial(3).reason == "median rule at step 0"

    other = client.studies.create(bounds=[[0, 1]], engine="random", seed=1, max_trials=50)

    def deleting(trial: RemoteTrial) -> float:
        if trial.number == 2:
            client.studies.get(other.id).stop().delete()
        time.sleep(0.05)
        return 1.0

    with pytest.raises(NotFound):
        client.studies.optimize(deleting, study=other, n_workers=2)
    with pytest.raises(TypeError, match="not both"):
        client.studies.optimize(fn, study=other.id, max_trials=3)
    with pytest.raises(ValueError, match="n_workers"):
        client.studies.optimize(fn, study=study, n_workers=0)
