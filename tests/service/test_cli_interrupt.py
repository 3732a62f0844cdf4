"""Ctrl-C of ``decido optimize --server`` at every moment cancels the run on the server.

A real server, the real ``decido`` command in a subprocess sent SIGINT, and between them a
TCP relay on 127.0.0.1 that stops a moment of the submission (``POST /v1/runs``) so the
signal lands in it: before the request reaches the server (the relay keeps it), after the
server made the run but before its answer is back (the relay holds the answer), right
after the answer is back, and while the progress streams. Each time the command exits 130
without click's ``Aborted!`` or a traceback, and the key has exactly one run, cancelled.
A second Ctrl-C while cancelling exits at once, saying the run may go on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest
from conftest import LiveServer, decido_command, running

from decido.client import Client

pytest.importorskip("httpx")
pytest.importorskip("click")

SLOW = ["sum(sin(x)**2 + cos(3*x))", "-b", "-5:5", "-n", "300", "--engine", "random",
        "--budget", "5000000", "--time-limit", "30"]
#: seconds the relay holds an answer (longer than any test waits before its SIGINT)
HOLD = 20.0


class Relay:
    """A TCP relay to ``port`` on 127.0.0.1 that stops the first ``POST /v1/runs``: ``keep``
    drops the request (the server never sees it), ``hold`` delays the answer by
    :data:`HOLD` seconds (``hold-all``: every submission's), ``pass`` lets it through.
    ``seen`` is set when the request came (``again`` when a second one came), ``answered``
    once its answer went back to the client."""

    def __init__(self, port: int, mode: str) -> None:
        self.upstream, self.mode = port, mode
        self.seen, self.answered = threading.Event(), threading.Event()
        self.again = threading.Event()
        self.port = 0
        self._used = False
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Relay:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        async def stop() -> None:  # the held answers' tasks too
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._loop.stop()

        asyncio.run_coroutine_threadsafe(stop(), self._loop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._connection, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _connection(self, client_in: asyncio.StreamReader,
                          client_out: asyncio.StreamWriter) -> None:
        server_in, server_out = await asyncio.open_connection("127.0.0.1", self.upstream)
        stopped = asyncio.Event()  # this connection carries the stopped submission

        async def up() -> None:
            while data := await client_in.read(65536):
                if b"POST /v1/runs " in data and (self.mode == "hold-all" or not self._used):
                    (self.again if self._used else self.seen).set()
                    self._used = True
                    stopped.set()
                    if self.mode == "keep":  # never sent: wait for the client to give up
                        while await client_in.read(65536):
                            pass
                        break
                server_out.write(data)
                await server_out.drain()

        async def down() -> None:
            waited = False
            while data := await server_in.read(65536):
                if stopped.is_set() and self.mode.startswith("hold") and not waited:
                    waited = True
                    await asyncio.sleep(HOLD)
                client_out.write(data)
                await client_out.drain()
                if stopped.is_set():
                    self.answered.set()

        with contextlib.suppress(Exception):
            await asyncio.wait([asyncio.ensure_future(up()), asyncio.ensure_future(down())],
                               return_when=asyncio.FIRST_COMPLETED)
        for writer in (client_out, server_out):
            writer.close()


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with running(tmp_path_factory.mktemp("interrupt"), workers=1) as srv:
        yield srv


def _interrupted(live: LiveServer, mode: str, when: str) -> tuple[str, str, list[str]]:
    """Run ``decido optimize --server`` through a relay in ``mode``, send SIGINT at
    ``when``; its stdout, stderr and the states of the key's runs."""
    key = live.create_key(tier="team")["key"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("DECIDO_")}
    with Relay(live.port, mode) as relay:
        env.update(DECIDO_URL=f"http://127.0.0.1:{relay.port}", DECIDO_KEY=key)
        proc = subprocess.Popen([*decido_command(), "optimize", *SLOW], env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert proc.stderr is not None
            if when == "streaming":
                assert proc.stderr.readline().startswith("evaluations ")
            else:
                event = relay.answered if when == "answered" else relay.seen
                assert event.wait(60), "the submission never came"
                if when == "held":
                    time.sleep(1.0)  # the server has made the run; its answer is held
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=90)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 130, err
    with Client(f"http://127.0.0.1:{live.port}", key) as client:
        states = [run.state for run in client.runs()]
    return out, err, states


@pytest.mark.parametrize(("mode", "when"), [
    ("keep", "seen"),        # the request never reached the server
    ("hold", "held"),        # the run was made, its answer not yet back
    ("pass", "answered"),    # the answer has just come back
    ("pass", "streaming"),   # the progress is streaming
])
def test_ctrl_c_at_any_moment_cancels_the_run(live: LiveServer, mode: str, when: str) -> None:
    out, err, states = _interrupted(live, mode, when)
    assert states == ["cancelled"], (states, err)
    assert "Aborted!" not in err and "Traceback" not in err
    if "status       stopped" in out:  # it had a best point: shown
        assert "best value" in out and "interrupted: the best point so far" in err
    else:
        assert out == "" and "cancelled before it started" in err
    if when == "streaming":  # the run has shown progress: it has a best
        assert "status       stopped" in out


def test_a_second_ctrl_c_while_cancelling_exits_naming_what_may_go_on(live: LiveServer) -> None:
    key = live.create_key(tier="team")["key"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("DECIDO_")}
    with Relay(live.port, "hold-all") as relay:  # the submission sent again is held too
        env.update(DECIDO_URL=f"http://127.0.0.1:{relay.port}", DECIDO_KEY=key)
        proc = subprocess.Popen([*decido_command(), "optimize", *SLOW], env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert relay.seen.wait(60)
            time.sleep(1.0)
            proc.send_signal(signal.SIGINT)  # the command sends the submission again ...
            assert relay.again.wait(60)
            proc.send_signal(signal.SIGINT)  # ... and gives up while it is held
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130 and out == "", err
    assert err.strip().splitlines()[-1] == ("decido: interrupted again; the run may go on: "
                                            "decido runs list shows it")
    assert "Traceback" not in err and "Aborted!" not in err
    with Client(f"http://127.0.0.1:{live.port}", key) as client:
        left = list(client.runs())
        assert [run.state for run in left] in (["queued"], ["running"])  # as it says
        left[0].cancel()
