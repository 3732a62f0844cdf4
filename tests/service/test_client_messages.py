"""What the client and the ``decido`` command say to their users, against a real server: a
missing key in each one's words (``key=``/``DECIDO_KEY``, ``--key``/``DECIDO_KEY``), an
unreachable server by the address tried, and the client's waits on 429 and 503 logged
(logger ``decido.client``, INFO) so a long wait does not look like a hang."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import threading
from collections.abc import Iterator

import pytest
from conftest import LiveServer, decido_command, free_port, running

from decido.client import (
    Client,
    Conflict,
    ConnectionFailed,
    MissingKey,
    RetryPolicy,
    Unauthorized,
)

pytest.importorskip("httpx")
pytest.importorskip("click")

#: a run that lasts (until cancelled) on a team key
LASTING = dict(engine="random", max_evaluations=5_000_000, time_limit=30,
               options={"stop_on_convergence": 0})
LASTING_RUN = ("sum(sin(x)**2 + cos(3*x))", [[-5, 5]] * 300)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server where a team key has one run at a time."""
    env = {"DECIDO_TIERS": json.dumps({"team": {"max_runs": 1}})}
    with running(tmp_path_factory.mktemp("messages"), env, workers=1) as srv:
        yield srv


@pytest.fixture
def no_key_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.delenv("DECIDO_KEY", raising=False)
    return {k: v for k, v in os.environ.items() if not k.startswith("DECIDO_")}


def _decido(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*decido_command(), *args], capture_output=True, text=True,
                          timeout=120, env=env)


def test_a_missing_key_is_named_in_the_clients_words(live: LiveServer,
                                                     no_key_env: dict[str, str]) -> None:
    with Client(f"http://127.0.0.1:{live.port}") as client:
        assert client.engines()  # a read that needs no key works
        with pytest.raises(MissingKey) as caught:
            client.submit("sum(x**2)", [[-1, 1]] * 2)
    message = str(caught.value)
    assert "key=" in message and "DECIDO_KEY" in message and "Bearer" not in message
    assert isinstance(caught.value, Unauthorized) and caught.value.status == 401
    assert caught.value.code == "missing_credentials"  # the problem is still there


def test_a_missing_key_is_named_in_the_commands_words(live: LiveServer,
                                                      no_key_env: dict[str, str]) -> None:
    url = f"http://127.0.0.1:{live.port}"
    for args in (["optimize", "sum(x**2)", "-b", "-1:1", "-n", "2", "--server", url],
                 ["runs", "list", "--server", url]):
        out = _decido(no_key_env, *args)
        assert out.returncode == 1, out.stderr
        line, = out.stderr.strip().splitlines()[-1:]
        assert "--key" in line and "DECIDO_KEY" in line, out.stderr
        assert "Bearer" not in out.stderr and "Traceback" not in out.stderr
        assert "key=" not in out.stderr  # the client's words are not the command's


def test_an_unreachable_server_is_named_by_its_address(no_key_env: dict[str, str]) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with Client(url, "dk_x", retry=RetryPolicy(max_retries=0)) as client:
        with pytest.raises(ConnectionFailed) as caught:
            client.usage()
    assert url in str(caught.value) and "GET /v1/usage" in str(caught.value)
    out = _decido(no_key_env, "runs", "list", "--server", url)
    assert out.returncode == 1 and url in out.stderr and "--server" in out.stderr
    assert "Traceback" not in out.stderr


def _cancel_later(client: Client, run_id: str, after: float) -> threading.Timer:
    def cancel() -> None:
        with contextlib.suppress(Conflict):  # it has ended
            client.run(run_id).cancel()

    timer = threading.Timer(after, cancel)
    timer.start()
    return timer


def _waits(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "decido.client" and r.levelno == logging.INFO]


def test_waits_on_429_are_logged(live: LiveServer, caplog: pytest.LogCaptureFixture) -> None:
    key = live.create_key(tier="team")["key"]  # one run at a time here
    with Client(f"http://127.0.0.1:{live.port}", key,
                retry=RetryPolicy(max_retries=8)) as client:
        first = client.submit(*LASTING_RUN, **LASTING)
        timer = _cancel_later(client, first.id, 2.5)
        with caplog.at_level(logging.INFO, logger="decido.client"):
            second = client.submit("sum(x**2)", [[-1, 1]] * 2)  # waits until first ends
        timer.join()
        assert second.wait(timeout=60) is not None
    waits = _waits(caplog)
    assert waits and waits[0].startswith("POST /v1/runs: 429 too_many_runs: ")
    assert "; waiting 1." in waits[0] and waits[0].endswith("s before attempt 2 of 9")
    assert waits[-1].endswith(f"before attempt {len(waits) + 1} of 9")


@pytest.fixture(scope="module")
def one_slot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server that runs one run at a time and queues one more."""
    env = {"DECIDO_RUN_THREADS": "1", "DECIDO_RUN_BACKLOG": "1"}
    with running(tmp_path_factory.mktemp("one-slot"), env, workers=1) as srv:
        yield srv


def test_waits_on_503_are_logged(one_slot: LiveServer,
                                 caplog: pytest.LogCaptureFixture) -> None:
    key = one_slot.create_key(tier="team")["key"]
    with Client(f"http://127.0.0.1:{one_slot.port}", key,
                retry=RetryPolicy(max_retries=8)) as client:
        running_ = client.submit(*LASTING_RUN, **LASTING)
        queued = client.submit(*LASTING_RUN, **LASTING)
        timers = [_cancel_later(client, running_.id, 2.5), _cancel_later(client, queued.id, 2.5)]
        with caplog.at_level(logging.INFO, logger="decido.client"):
            third = client.submit("sum(x**2)", [[-1, 1]] * 2)  # the queue is full: 503
        for timer in timers:
            timer.join()
        assert third.wait(timeout=60) is not None
    waits = _waits(caplog)
    assert waits and waits[0].startswith("POST /v1/runs: 503 overloaded: ")
    assert "; waiting 1." in waits[0] and waits[0].endswith("s before attempt 2 of 9")
