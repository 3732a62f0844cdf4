"""decido.Client and decido.AsyncClient with several objectives against a real server: the
front as the library's own :class:`decido.ParetoResult`, submitted runs, ``run.decide`` on
a front (``from_run``), faults, and the methods' real keyword arguments."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import LiveServer, running

import decido
from decido.client import AsyncClient, Client, InvalidRequest
from decido.optimize import optimize_front

httpx = pytest.importorskip("httpx")

#: Schaffer's problem N.1 in two variables (the front: x0 = x1 in [0, 2])
COST = "x[0]**2 + x[1]**2"
RISK = "(x[0] - 2)**2 + (x[1] - 2)**2"
BOUNDS = [[-3, 3], [-3, 3]]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with running(tmp_path_factory.mktemp("client-pareto"), {"DECIDO_RUN_THREADS": "2"},
                 workers=1) as srv:
        yield srv


@pytest.fixture
def client(live: LiveServer) -> Iterator[Client]:
    with Client(f"http://127.0.0.1:{live.port}", live.create_key(tier="team")["key"],
                timeout=60) as c:
        yield c


def same_front(remote: decido.ParetoResult, local: decido.ParetoResult) -> None:
    assert isinstance(remote, decido.ParetoResult)
    assert remote.pareto == local.pareto and len(remote.pareto) > 1
    assert remote.hypervolume == local.hypervolume > 0
    assert remote.reference_point == local.reference_point
    assert remote.objectives == local.objectives
    assert (remote.status, remote.evaluations, remote.iterations, remote.seed) == \
        (local.status, local.evaluations, local.iterations, local.seed)
    assert remote.variables == local.variables and remote.feasible == local.feasible
    assert remote.history[-1] == local.history[-1]
    assert remote.options() == local.options()


def test_minimize_a_list_gives_the_librarys_front(client: Client) -> None:
    objectives: list[Any] = [COST, {"name": "risk", "expression": RISK}]
    local = decido.minimize(objectives, BOUNDS, seed=4, max_evaluations=2000)
    remote = client.minimize([decido.Expression(COST, n=2), {"name": "risk",
                                                              "expression": RISK}],
                             BOUNDS, seed=4, max_evaluations=2000)
    same_front(remote, local)
    assert [o["name"] for o in remote.objectives] == ["f1", "risk"]
    assert remote.engine == decido.pareto.default_multi_engine()


def test_maximize_goals_reference_point_and_archive_size(client: Client) -> None:
    objectives: list[Any] = [{"name": "gain", "expression": f"-({COST})"},
                             {"name": "risk", "expression": RISK, "goal": "minimize"}]
    args: dict[str, Any] = dict(seed=2, max_evaluations=3000, reference_point=[-20.0, 20.0],
                                archive_size=7, stop_on_convergence=False)
    local = decido.maximize(objectives, BOUNDS, **args)
    remote = client.maximize(objectives, BOUNDS, **args)
    same_front(remote, local)
    assert remote.reference_point == [-20.0, 20.0] and len(remote.pareto) == 7
    assert [o["goal"] for o in remote.objectives] == ["maximize", "minimize"]
    # a tuple of objectives and variables: the front's options carry their names
    variables = [{"name": "a", "lower": -3, "upper": 3}, {"name": "b", "lower": -3, "upper": 3}]
    named = ("a**2 + b**2", "(a - 2)**2 + (b - 2)**2")
    local = decido.minimize(list(named), variables=variables, seed=5, max_evaluations=1000)
    remote = client.minimize(named, variables=variables, seed=5, max_evaluations=1000)
    same_front(remote, local)
    assert remote.variables == ["a", "b"] and remote.pareto[0]["variables"].keys() == {"a", "b"}
    assert set(remote.options()[0]["attributes"]) == {"f1", "f2", "a", "b"}


def test_submit_wait_decide_on_the_front(client: Client) -> None:
    run = client.submit([COST, {"name": "risk", "expression": RISK}], BOUNDS, seed=6,
                        max_evaluations=2000)
    assert run.several
    front = run.wait(timeout=60)
    assert isinstance(front, decido.ParetoResult) and run.result is front
    assert client.run(run.id).refresh().result == front
    # the default criteria: the objectives with their goals and equal weights
    answer = run.decide(method="topsis")
    criteria = [{"attribute": "f1", "goal": "minimize", "weight": 1.0},
                {"attribute": "risk", "goal": "minimize", "weight": 1.0}]
    expected = decido.decide({"options": front.options(), "method": "topsis",
                              "criteria": criteria})
    assert answer["best"] == expected["best"]
    assert [i["id"] for i in answer["ranking"]] == [i["id"] for i in expected["ranking"]]
    for item in answer["ranking"]:
        point = front.pareto[int(item["id"])]
        assert item["x"] == point["x"] and item["f"] == point["f"]
    # every member a decision takes, and the rest through request
    weighted = [{"attribute": "f1", "goal": "minimize", "weight": 3},
                {"attribute": "risk", "goal": "minimize", "weight": 1}]
    answer = run.decide("vikor", weighted, constraints=["f1 <= 4"], sensitivity=True,
                        top_k=3, request={"explain": False})
    library = decido.decide({"options": front.options(), "method": "vikor",
                             "criteria": weighted, "constraints": ["f1 <= 4"],
                             "sensitivity": True, "top_k": 3})
    assert answer["best"] == library["best"] and len(answer["ranking"]) == 3
    assert answer["sensitivity"] == library["sensitivity"]
    assert answer["infeasible"] == library["infeasible"]
    logged = next(iter(client.decisions()))
    assert client.decision(logged["id"])["request"]["from_run"] == run.id


def test_events_of_a_run_of_several_objectives(client: Client) -> None:
    variables = [{"name": "a", "lower": -3, "upper": 3}, {"name": "b", "lower": -3, "upper": 3}]
    run = client.submit(["a**2 + b**2", "(a - 2)**2 + (b - 2)**2"], variables=variables,
                        seed=9, max_evaluations=3000)
    events = list(run.events())
    assert events[-1].event == "result" and "request" not in events[-1].data
    progress = [e.data for e in events if e.event == "progress"]
    assert all("front_size" in p for p in progress)
    # the handle keeps what the stream sent once (the request): still a front, named
    assert run.several and run.document["request"]["variables"][0]["name"] == "a"
    front = run.wait(timeout=60)
    assert isinstance(front, decido.ParetoResult) and front.variables == ["a", "b"]
    local = decido.minimize(["a**2 + b**2", "(a - 2)**2 + (b - 2)**2"], variables=variables,
                            seed=9, max_evaluations=3000)
    same_front(front, local)


def test_faults_are_typed_with_their_pointers(client: Client) -> None:
    with pytest.raises(InvalidRequest) as info:
        client.minimize([{"name": "a", "expression": "x[0]"}, {"name": "a", "expression":
                         "x[1]"}, {"name": "2b", "expression": "x[0]"}], BOUNDS,
                        reference_point=[1.0], target=0.5)
    pointers = {e.pointer for e in info.value.errors}
    assert pointers == {"/objectives/1/name", "/objectives/2/name", "/reference_point",
                        "/target"}
    with pytest.raises(InvalidRequest) as info:
        client.minimize(COST, BOUNDS, reference_point=[1.0, 1.0], archive_size=5)
    assert {e.pointer for e in info.value.errors} == {"/reference_point", "/archive_size"}
    with pytest.raises(decido.EngineError, match="not a callable"):
        client.minimize([COST, lambda x: x[0]], BOUNDS)
    single = client.submit(COST, BOUNDS, seed=1, max_evaluations=200)
    single.wait(timeout=60)
    assert not single.several
    with pytest.raises(InvalidRequest) as info:
        single.decide(method="topsis")
    assert [e.pointer for e in info.value.errors] == ["/from_run"]
    assert list(client.runs()) and next(iter(client.runs())).id == single.id


def test_async_client_several_objectives(live: LiveServer) -> None:
    key = live.create_key(tier="team")["key"]
    objectives: list[Any] = [COST, RISK]
    local = decido.minimize(objectives, BOUNDS, seed=8, max_evaluations=1500)

    async def main() -> tuple[decido.ParetoResult, decido.ParetoResult | None, dict[str, Any]]:
        async with AsyncClient(f"http://127.0.0.1:{live.port}", key, timeout=60) as c:
            front = await c.minimize(objectives, BOUNDS, seed=8, max_evaluations=1500)
            run = await c.submit(objectives, BOUNDS, seed=8, max_evaluations=1500)
            waited = await run.wait(timeout=60)
            answer = await run.decide("wsm")
            return front, waited, answer

    front, waited, answer = asyncio.run(main())
    same_front(front, local)
    assert waited is not None and waited.pareto == front.pareto
    expected = decido.decide({"options": local.options(), "method": "wsm", "criteria": [
        {"attribute": n, "goal": "minimize", "weight": 1.0} for n in ("f1", "f2")]})
    assert answer["best"] == expected["best"]


#: the library's run arguments that have no meaning on a server
_LOCAL_ONLY = {"callback", "monitor", "vectorized"}


@pytest.mark.parametrize("name", ["minimize", "maximize", "optimize", "submit"])
def test_the_methods_show_their_real_keyword_arguments(name: str) -> None:
    front = set(inspect.signature(optimize_front).parameters)
    wanted = (front | set(inspect.signature(decido.optimize).parameters)) - _LOCAL_ONLY - {
        "objectives", "objective"}
    if name in ("minimize", "maximize"):
        wanted.discard("goal")
    for method in (getattr(Client, name), getattr(AsyncClient, name)):
        params = inspect.signature(method).parameters
        assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        assert wanted <= set(params), wanted - set(params)
        assert params["bounds"].default is None
        assert all(params[k].kind is inspect.Parameter.KEYWORD_ONLY for k in wanted
                   if k != "bounds")



def test_help_shows_every_keyword_and_an_unknown_one_is_a_type_error(
        client: Client, live: LiveServer) -> None:
    shown = ["engine", "max_evaluations", "time_limit", "seed", "options",
             "stop_on_convergence", "constraints", "constraint_tolerance", "integers",
             "variables", "x0", "metadata", "target", "reference_point", "archive_size"]
    for method in (Client.minimize, AsyncClient.minimize, Client.submit, AsyncClient.submit):
        params = inspect.signature(method).parameters
        assert set(shown) <= set(params) and "kwargs" not in params
        assert all(params[k].default is None for k in shown)
    assert "goal" not in inspect.signature(Client.minimize).parameters
    assert "timeout" in inspect.signature(AsyncClient.minimize).parameters
    assert "idempotency_key" in inspect.signature(Client.submit).parameters
    text = str(inspect.signature(Client.minimize))
    assert "x0: 'ArrayLike | None' = None" in text and "**" not in text

    before = [run.id for run in client.runs()]
    typo: dict[str, Any] = {"max_evals": 100}
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_evals'; did you "
                                        "mean 'max_evaluations'"):
        client.minimize(COST, BOUNDS, **typo)
    with pytest.raises(TypeError, match="'goal'"):
        client.maximize([COST, RISK], BOUNDS, **{"goal": "minimize"})

    async def main() -> None:
        async with AsyncClient(client.base_url, live.create_key(tier="team")["key"]) as c:
            with pytest.raises(TypeError, match="'colour'"):
                await c.submit(COST, BOUNDS, **{"colour": "red"})
    asyncio.run(main())
    assert [run.id for run in client.runs()] == before  # no run was made
