"""decido.Client and decido.AsyncClient against a real server (``decido serve``, one SQLite
file): every method, the library's own result types, typed errors, retries, idempotent
submissions. Only the retry timing uses httpx's MockTransport (a real 429 waits for the
minute to roll over)."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import math
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import LiveServer, auth, running

import decido
from decido.client import (
    AsyncClient,
    Client,
    ConnectionFailed,
    InvalidRequest,
    NotFound,
    Overloaded,
    QuotaExceeded,
    RateLimited,
    RetryPolicy,
    RunFailed,
    Timeout,
    Unauthorized,
)

httpx = pytest.importorskip("httpx")

SPHERE = "sum((x - 1)**2)"
#: random search that only stops when cancelled or at its time limit
SLOW = {"objective": "sum(sin(x)**2 + cos(3*x))", "bounds": [[-5, 5]] * 500,
        "engine": "random", "max_evaluations": 5_000_000, "time_limit": 30}
DECISION = {"options": [{"id": "a", "attributes": {"price": 10, "quality": 5}},
                        {"id": "b", "attributes": {"price": 12, "quality": 9}},
                        {"id": "c", "attributes": {"price": 30, "quality": 9.5}}],
            "method": "topsis",
            "criteria": [{"attribute": "price", "goal": "minimize", "weight": 2},
                         {"attribute": "quality", "goal": "maximize", "weight": 1}]}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server of its own (run caps of the default tiers, 2 run threads)."""
    with running(tmp_path_factory.mktemp("client"), {"DECIDO_RUN_THREADS": "2"},
                 workers=1) as srv:
        yield srv


@pytest.fixture
def client(live: LiveServer) -> Iterator[Client]:
    with Client(f"http://127.0.0.1:{live.port}", live.create_key(tier="team")["key"],
                timeout=60) as c:
        yield c


def url(live: LiveServer) -> str:
    return f"http://127.0.0.1:{live.port}"


def test_optimize_returns_the_library_result_type(client: Client) -> None:
    local = decido.minimize(SPHERE, [[-5, 5]] * 3, seed=3, engine="de")
    remote = client.minimize(SPHERE, [[-5, 5]] * 3, seed=3, engine="de")
    assert isinstance(remote, decido.OptimizeResult)
    assert type(remote.x) is np.ndarray and remote.x.shape == (3,)
    # the same seed replays the same run, here and there
    assert remote.fun == local.fun and remote.evaluations == local.evaluations
    assert remote.status == local.status and remote.engine == "de" and remote.seed == 3
    assert remote.history and remote.history[-1][1] == pytest.approx(remote.fun)
    assert all(isinstance(e, int) for e, _ in remote.history)
    best = client.maximize("-sum(x**2)", [[-1, 2]] * 2, seed=1)
    assert best.goal == "maximize" and best.fun <= 0 and best.fun > -1e-6


def test_submit_wait_refresh_runs_and_run(client: Client) -> None:
    run = client.submit(decido.Expression(SPHERE, n=4), [[-5, 5]] * 4, seed=5,
                        max_evaluations=3000, engine="cmaes")
    assert run.id.startswith("run_") and run.state in ("queued", "running", "succeeded")
    seen: list[dict[str, Any]] = []
    result = run.wait(timeout=60, progress=seen.append)
    assert run.state == "succeeded" and run.result is result
    assert result is not None and result.evaluations <= 3000
    again = client.run(run.id).refresh()
    assert again.result is not None and again.result.fun == result.fun
    ids = [r.id for r in client.runs()]
    assert run.id in ids
    assert [r.id for r in client.runs(state="succeeded", engine="cmaes")] == [run.id]
    assert list(client.runs(engine="pso")) == []


def test_runs_iterates_every_page(client: Client) -> None:
    made = [client.submit(SPHERE, [[-1, 1]], seed=i, max_evaluations=50) for i in range(23)]
    for run in made:
        run.wait(timeout=60)
    listed = [r.id for r in client.runs()]  # the server's pages hold 20
    assert set(r.id for r in made) <= set(listed) and len(listed) == len(set(listed))


def test_cancel_keeps_the_best_so_far(client: Client) -> None:
    slow = dict(SLOW)
    run = client.submit(slow.pop("objective"), slow.pop("bounds"), **slow)
    with pytest.raises(Timeout):
        run.wait(timeout=0.3)
    run.cancel()
    result = run.wait(timeout=60)
    assert run.state == "cancelled"
    assert result is None or (result.status == "stopped" and math.isfinite(result.fun))


def test_decisions_usage_engines_and_keys(live: LiveServer, client: Client) -> None:
    answer = client.decide(DECISION)
    local = decido.decide(DECISION)
    assert answer["ranking"] == local["ranking"] and answer["best"] == local["best"]
    batch = client.batch({"defaults": {k: v for k, v in DECISION.items() if k != "options"},
                          "decisions": [{"id": "one", "options": DECISION["options"]}]})
    assert batch["results"][0]["best"] == answer["best"]
    logged = list(client.decisions())
    assert len(logged) == 2 and logged[0]["kind"] == "batch"
    assert client.decision(logged[1]["id"])["request"]["method"] == "topsis"
    assert client.usage()["optimization"]["tier"] == "team"
    assert [e["id"] for e in client.engines()] == [e["id"] for e in decido.engines()]
    assert client.health()["status"] == "ok"
    with Client(url(live)) as anonymous:
        created = anonymous.create_key(label="from the client")
        assert created["key"].startswith("dk_") and created["label"] == "from the client"
        with pytest.raises(Unauthorized) as err:
            anonymous.usage()
        assert err.value.status == 401 and err.value.code == "missing_credentials"


def test_labels_are_sent_and_lists_filter_by_them(live: LiveServer, client: Client) -> None:
    labelled = client.submit(SPHERE, [[-5, 5]] * 2, max_evaluations=200,
                             metadata={"project": "bridge-A"})
    assert labelled.metadata == {"project": "bridge-A"}
    result = client.minimize(SPHERE, [[-5, 5]] * 2, max_evaluations=200,
                             metadata={"project": "bridge-A", "step": "2"})
    assert isinstance(result, decido.OptimizeResult)
    client.submit(SPHERE, [[-5, 5]] * 2, max_evaluations=200)
    found = [r.metadata for r in client.runs(metadata={"project": "bridge-A"})]
    assert found == [{"project": "bridge-A", "step": "2"}, {"project": "bridge-A"}]
    assert [r.id for r in client.runs(metadata={"step": "2", "project": "bridge-A"})] != []
    client.decide(DECISION, metadata={"project": "bridge-A"})
    client.batch({"defaults": DECISION, "decisions": [{"id": 1}]},
                 metadata={"project": "bridge-B"})
    assert [d["kind"] for d in client.decisions(metadata={"project": "bridge-B"})] == ["batch"]
    assert [d["metadata"] for d in client.decisions(metadata={"project": "bridge-A"})] == [
        {"project": "bridge-A"}]
    with pytest.raises(InvalidRequest) as bad:
        client.submit(SPHERE, [[-5, 5]] * 2, metadata={"k" * 41: "v"})
    assert bad.value.errors[0].pointer == "/metadata/" + "k" * 41

    async def main() -> list[dict[str, str]]:
        async with AsyncClient(url(live), live.create_key()["key"]) as aio:
            await aio.decide(DECISION, metadata={"project": "async"})
            return [d["metadata"] async for d in aio.decisions(metadata={"project": "async"})]

    assert asyncio.run(main()) == [{"project": "async"}]


def test_problems_become_typed_exceptions(live: LiveServer, client: Client) -> None:
    with pytest.raises(InvalidRequest) as err:
        client.submit("sum(x**2)", [[1, -1], [0, 1], [3, 2]], engine="de",
                      options={"popsize": -1, "nothing": 1})
    pointers = [e.pointer for e in err.value.errors]
    assert err.value.status == 422 and set(pointers) >= {"/bounds/0", "/bounds/2"}
    assert all(e.message for e in err.value.errors)
    assert all(p in str(err.value) for p in pointers)
    with pytest.raises(InvalidRequest) as err:
        client.submit("sum(x**2) + y", [[0, 1]] * 3)
    assert [(e.pointer, e.position) for e in err.value.errors] == [
        ("/objective_expression", 12)]
    with pytest.raises(NotFound):
        client.run("run_" + "0" * 24)
    with pytest.raises(decido.EngineError):  # a callable cannot run on a server
        client.submit(lambda x: 0.0, [[0, 1]])  # type: ignore[arg-type]
    with Client(url(live), "dk_" + "x" * 43) as wrong, pytest.raises(Unauthorized):
        wrong.usage()


def test_rate_limited_has_retry_after_and_is_not_retried_beyond_max_wait(
        live: LiveServer) -> None:
    key = live.create_key(plan="free", tier="free")["key"]
    no_wait = RetryPolicy(max_retries=3, max_wait=0.01)
    with Client(url(live), key, retry=no_wait) as c:
        with pytest.raises(RateLimited) as err:
            for _ in range(12):  # the free plan's 10 decisions a minute
                c.decide(DECISION)
    assert err.value.code == "rate_limited" and err.value.retry_after is not None
    assert 0 < err.value.retry_after <= 60


def test_submit_sends_an_idempotency_key(live: LiveServer, client: Client) -> None:
    seen: list[str | None] = []

    def hook(request: Any) -> None:
        seen.append(request.headers.get("idempotency-key"))

    client._http.event_hooks["request"].append(hook)
    a = client.submit(SPHERE, [[-1, 1]], seed=1, max_evaluations=50)
    b = client.submit(SPHERE, [[-1, 1]], seed=1, max_evaluations=50)
    assert seen[0] and seen[1] and seen[0] != seen[1] and a.id != b.id


def test_run_failed_is_raised_for_a_failed_run(live: LiveServer) -> None:
    # a run that fails after admission: the process running a /v1/optimize run dies (its
    # client with it); on restart it is marked failed (interrupted)
    (live.workdir / "restart").mkdir()
    with running(live.workdir / "restart", workers=1) as srv:
        key = srv.create_key(tier="team")["key"]
        slow = dict(SLOW)
        body = {"objective_expression": slow.pop("objective"), **slow}

        def optimize() -> None:  # its connection dies with the server
            with contextlib.suppress(OSError, http.client.HTTPException):
                srv.request("POST", "/v1/optimize", body, headers=auth(key))

        threading.Thread(target=optimize, daemon=True).start()
        with Client(url(srv), key) as c:
            deadline = time.monotonic() + 30
            while not (running_now := list(c.runs(state="running"))):
                assert time.monotonic() < deadline
                time.sleep(0.05)
            (run,) = running_now
        srv.kill9()
        srv.start()
        with Client(url(srv), key) as c, pytest.raises(RunFailed) as err:
            c.run(run.id).wait(timeout=30)
        assert err.value.code == "interrupted"


# ---------------------------------------------------------------- retries (mock transport)

def _answers(*statuses: tuple[int, dict[str, str], dict[str, Any]]) -> tuple[Any, list[Any]]:
    calls: list[Any] = []
    replies = list(statuses)

    def handler(request: Any) -> Any:
        calls.append(request)
        status, headers, body = replies.pop(0)
        return httpx.Response(status, headers=headers, json=body)

    return httpx.MockTransport(handler), calls


def _problem(status: int, code: str) -> dict[str, Any]:
    return {"type": "x", "title": code, "status": status, "detail": code, "code": code,
            "instance": "/", "request_id": "r"}


#: a client method called without arguments, by a client of one kind: what it answers
Caller = Callable[[Any, RetryPolicy, str], Any]


@pytest.fixture(params=["sync", "async"])
def mocked(request: pytest.FixtureRequest,
           monkeypatch: pytest.MonkeyPatch) -> tuple[Caller, list[float]]:
    """Each driver in turn (the blocking and the asyncio one) over a mock transport, and
    the seconds it slept."""
    slept: list[float] = []
    if request.param == "sync":
        monkeypatch.setattr("decido.client.sync.time.sleep", slept.append)

        def call(transport: Any, retry: RetryPolicy, method: str) -> Any:
            with Client("http://x", "k", transport=transport, retry=retry) as c:
                return getattr(c, method)()
    else:
        async def sleep(seconds: float) -> None:
            slept.append(seconds)

        monkeypatch.setattr("decido.client.aio.asyncio.sleep", sleep)

        def call(transport: Any, retry: RetryPolicy, method: str) -> Any:
            async def main() -> Any:
                async with AsyncClient("http://x", "k", transport=transport,
                                       retry=retry) as c:
                    return await getattr(c, method)()
            return asyncio.run(main())
    return call, slept


def test_429_and_503_are_retried_after_retry_after_with_jitter(
        mocked: tuple[Caller, list[float]]) -> None:
    call, slept = mocked
    transport, calls = _answers((429, {"Retry-After": "2"}, _problem(429, "too_many_runs")),
                                (503, {"Retry-After": "1"}, _problem(503, "overloaded")),
                                (200, {}, {"default": "dss", "engines": []}))
    assert call(transport, RetryPolicy(max_retries=2, jitter=0.5), "engines") == []
    assert len(calls) == 3 and 2 <= slept[0] <= 3 and 1 <= slept[1] <= 1.5
    transport, calls = _answers(*[(503, {"Retry-After": "1"}, _problem(503, "overloaded"))] * 3)
    with pytest.raises(Overloaded) as err:
        call(transport, RetryPolicy(max_retries=2), "engines")
    assert len(calls) == 3 and err.value.retry_after == 1
    transport, calls = _answers((429, {"Retry-After": "5"},
                                 _problem(429, "monthly_quota_exceeded")))
    with pytest.raises(QuotaExceeded):
        call(transport, RetryPolicy(), "usage")
    assert len(calls) == 1


def test_a_submission_still_being_answered_is_asked_again(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from decido.client import Conflict, KeyInUse

    slept: list[float] = []
    monkeypatch.setattr("decido.client.sync.time.sleep", slept.append)
    run = {"id": "run_" + "0" * 24, "state": "queued"}
    transport, calls = _answers(
        (409, {"Retry-After": "1"}, _problem(409, "idempotency_key_in_use")), (202, {}, run))
    with caplog.at_level("INFO", logger="decido.client"), \
            Client("http://x", "k", transport=transport) as c:
        assert c.submit("x[0]", [[0, 1]], idempotency_key="same").id == run["id"]
    assert len(calls) == 2 and 1 <= slept[0] <= 1.25
    assert calls[0].headers["idempotency-key"] == calls[1].headers["idempotency-key"] == "same"
    assert "409 idempotency_key_in_use" in caplog.records[0].getMessage()
    transport, calls = _answers((409, {}, _problem(409, "run_finished")))
    with Client("http://x", "k", transport=transport) as c, pytest.raises(Conflict) as err:
        c.batch({})
    assert len(calls) == 1 and not isinstance(err.value, KeyInUse)


def test_a_transport_failure_is_retried_only_when_safe_to_resend(
        mocked: tuple[Caller, list[float]]) -> None:
    call, slept = mocked
    calls: list[str] = []

    def handler(request: Any) -> Any:
        calls.append(request.method)
        if len(calls) <= 2:
            raise httpx.ConnectError("refused", request=request)
        return httpx.Response(200, json={"status": "ok"})

    # a read: sent again after the backoff (0.5 s, then 1 s, no jitter)
    assert call(httpx.MockTransport(handler), RetryPolicy(jitter=0.0), "health") == \
        {"status": "ok"}
    assert calls == ["GET"] * 3 and slept == [0.5, 1.0]
    # a key's creation is not safe to resend: the failure is raised, caused by httpx's
    calls.clear()
    with pytest.raises(ConnectionFailed) as err:
        call(httpx.MockTransport(handler), RetryPolicy(jitter=0.0), "create_key")
    assert calls == ["POST"] and isinstance(err.value.__cause__, httpx.ConnectError)


def test_connection_refused_and_timeouts_are_typed() -> None:
    port = __import__("conftest").free_port()
    with Client(f"http://127.0.0.1:{port}", "k", retry=RetryPolicy(max_retries=0)) as c, \
            pytest.raises(ConnectionFailed):
        c.engines()


def test_import_decido_works_without_httpx(tmp_path: Path) -> None:
    # a meta-path finder that refuses httpx: import decido works, a client says the extra
    code = ("import sys\n"
            "class No:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'httpx': raise ModuleNotFoundError(name=name)\n"
            "sys.meta_path.insert(0, No())\n"
            "import decido\n"
            "assert 'httpx' not in sys.modules and 'decido.client' not in sys.modules\n"
            "try:\n"
            "    decido.Client('http://x')\n"
            "except ImportError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "pip install 'decido[client]'" in out.stdout


# ---------------------------------------------------------------- asyncio

def test_async_client_has_the_same_methods(live: LiveServer) -> None:
    key = live.create_key(tier="team")["key"]

    async def main() -> None:
        async with AsyncClient(url(live), key, timeout=60) as c:
            result = await c.minimize(SPHERE, [[-5, 5]] * 3, seed=3, engine="de")
            assert result.fun == decido.minimize(SPHERE, [[-5, 5]] * 3, seed=3,
                                                 engine="de").fun
            run = await c.submit(SPHERE, [[-5, 5]] * 2, seed=2, max_evaluations=500)
            assert (await run.wait(timeout=60)) is not None and run.state == "succeeded"
            assert (await (await c.run(run.id)).refresh()).result is not None
            assert run.id in [r.id async for r in c.runs()]
            assert (await c.decide(DECISION))["best"] == decido.decide(DECISION)["best"]
            assert len([d async for d in c.decisions()]) == 1
            assert (await c.usage())["optimization"]["tier"] == "team"
            assert len(await c.engines()) == len(decido.engines())
            with pytest.raises(InvalidRequest) as err:
                await c.submit("sum(x**2)", [[2, 1]])
            assert err.value.errors[0].pointer == "/bounds/0"
            with pytest.raises(NotFound):
                await c.run("run_" + "f" * 24)
            slow = dict(SLOW)
            run = await c.submit(slow.pop("objective"), slow.pop("bounds"), **slow)
            await run.cancel()
            await run.wait(timeout=60)
            assert run.state == "cancelled"

    asyncio.run(main())


def test_event_parser_follows_the_text_event_stream_format() -> None:
    from decido.client._protocol import EventParser

    p = EventParser()
    lines = [": heartbeat", "", "id: 3", "event: progress", 'data: {"evaluations": 5}', "",
             "event: state", "data: {\"state\":", "data:  \"running\"}", ""]
    events = [e for e in map(p.feed, lines) if e is not None]
    assert [(e.id, e.event) for e in events] == [("3", "progress"), ("3", "state")]
    assert events[0].data == {"evaluations": 5} and events[1].data == {"state": "running"}
    assert json.dumps(events[1].data)


# ---------------------------------------------------------------- Server-Sent Events

def test_events_follow_the_run_to_its_result(client: Client) -> None:
    run = client.submit(SPHERE, [[-5, 5]] * 3, seed=9, engine="cmaes", max_evaluations=2000)
    events = list(run.events())
    kinds = [e.event for e in events]
    assert kinds[0] == "state" and kinds[-1] == "result" and kinds.count("result") == 1
    assert all(e.id for e in events) and len({e.id for e in events}) == len(events)
    assert run.state == "succeeded" and run.result is not None
    assert run.result.fun == events[-1].data["result"]["value"]
    # resuming after the first event gives everything after it, nothing twice
    again = list(client.run(run.id).events(last_event_id=events[0].id))
    later = [(e.event, e.id) for e in events[1:] if e.event != "progress"]
    assert [(e.event, e.id) for e in again if e.event != "progress"] == later


def test_events_of_a_cancelled_run_end_with_its_result(client: Client) -> None:
    slow = dict(SLOW)
    run = client.submit(slow.pop("objective"), slow.pop("bounds"), **slow)
    seen = []
    for event in run.events():
        seen.append(event.event)
        if event.event == "progress" and seen.count("progress") == 1:
            run.cancel()
    assert seen[-1] == "result" and "progress" in seen and run.state == "cancelled"
    assert run.result is not None and run.result.status == "stopped"


def test_async_events(live: LiveServer) -> None:
    key = live.create_key(tier="team")["key"]

    async def main() -> list[str]:
        async with AsyncClient(url(live), key) as c:
            run = await c.submit(SPHERE, [[-5, 5]] * 2, seed=1, max_evaluations=500)
            return [e.event async for e in run.events()]

    kinds = asyncio.run(main())
    assert kinds[0] == "state" and kinds[-1] == "result"


def test_a_resent_submission_is_the_same_run(client: Client) -> None:
    a = client.submit(SPHERE, [[-1, 1]], seed=2, max_evaluations=50, idempotency_key="k-1")
    b = client.submit(SPHERE, [[-1, 1]], seed=2, max_evaluations=50, idempotency_key="k-1")
    assert a.id == b.id
    with pytest.raises(InvalidRequest) as err:  # the same key with another body
        client.submit(SPHERE, [[-1, 2]], seed=2, max_evaluations=50, idempotency_key="k-1")
    assert err.value.status == 422


def test_the_blocking_client_works_inside_a_running_event_loop(client: Client) -> None:
    """As in a notebook: a blocking call from a coroutine blocks, and answers."""

    async def inside() -> list[str]:
        return [e["id"] for e in client.engines()]

    assert asyncio.run(inside()) == [e["id"] for e in decido.engines()]


def test_the_blocking_client_starts_no_event_loop_and_no_thread(
        live: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its driver blocks in the caller's thread: with asyncio unable to make a loop and
    threads unable to start, a call, a wait (with sleeps), pages and an event stream work."""
    key = live.create_key(tier="team")["key"]

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the blocking client needs no event loop and no thread")

    monkeypatch.setattr(asyncio, "new_event_loop", refused)
    monkeypatch.setattr(asyncio, "get_event_loop", refused)
    monkeypatch.setattr(threading.Thread, "start", refused)
    with Client(url(live), key, timeout=60) as c:
        assert c.decide(DECISION)["best"] == decido.decide(DECISION)["best"]
        run = c.submit(SPHERE, [[-5, 5]] * 3, seed=4, max_evaluations=3000, engine="de")
        assert run.wait(timeout=60) is not None and run.state == "succeeded"
        assert run.id in [r.id for r in c.runs()]
        kinds = [e.event for e in c.run(run.id).events()]
        assert kinds[0] == "state" and kinds[-1] == "result"


def test_webhooks_sync_and_async(tmp_path: Path) -> None:
    """``client.webhooks`` against a server that delivers to loopback, and a receiver
    (tests/service/webhook_receiver.py) that verifies with ``standardwebhooks``."""
    from test_webhooks import ENV, receiver

    with running(tmp_path, ENV, workers=1) as live, receiver(tmp_path / "rcv") as rcv:
        key = live.create_key(tier="pro")["key"]
        with Client(url(live), key, timeout=60) as c:
            hook = c.webhooks.create(rcv.url, ["run.succeeded"], description="ci")
            assert hook["secret"].startswith("whsec_") and hook["description"] == "ci"
            rcv.secrets(hook["secret"])
            assert [h["id"] for h in c.webhooks.list()] == [hook["id"]]
            assert "secret" not in c.webhooks.get(hook["id"])
            sent = c.webhooks.test(hook["id"])
            rcv.wait(lambda got: any(g["id"] == sent["id"] and g["verified"] for g in got))
            deliveries = list(c.webhooks.deliveries(hook["id"]))
            assert [d["id"] for d in deliveries] == [sent["id"]]
            again = c.webhooks.resend(hook["id"], sent["id"])
            assert again["id"] == sent["id"]
            assert c.webhooks.update(hook["id"], enabled=False)["enabled"] is False
            with pytest.raises(InvalidRequest) as refused:
                c.webhooks.update(hook["id"], url="https://10.0.0.1/")
            assert refused.value.errors[0].pointer == "/url"
            rotated = c.webhooks.rotate(hook["id"])
            assert rotated["secret"] != hook["secret"]

        async def main() -> None:
            async with AsyncClient(url(live), key, timeout=60) as a:
                assert (await a.webhooks.get(hook["id"]))["enabled"] is False
                assert [d["id"] async for d in a.webhooks.deliveries(hook["id"])] == \
                    [sent["id"]]
                await a.webhooks.delete(hook["id"])
                with pytest.raises(NotFound):
                    await a.webhooks.get(hook["id"])
                assert await a.webhooks.list() == []

        asyncio.run(main())
