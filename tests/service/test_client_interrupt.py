"""Ctrl-C in ``decido.Client.minimize`` (and ``AsyncClient.minimize`` under ``asyncio.run``)
cancels the run on the server, so a free key's only run slot is not held by a run nobody
waits for, and the exception carries the run's best so far (``exc.result``) and its id.

A real server and a real Python process sent SIGINT while it waits for its run.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import LiveServer, auth

pytest.importorskip("httpx")

#: random search of a pro key that runs for seconds, unless cancelled
SLOW = ("objective='sum(sin(x)**2 + cos(3*x))', bounds=[[-5, 5]] * 300, engine='random', "
        "max_evaluations=2_000_000, time_limit=30")

BLOCKING = """
import json, sys
from decido.client import Client
with Client(sys.argv[1], sys.argv[2]) as client:
    try:
        client.minimize({slow})
    except KeyboardInterrupt as exc:
        result = exc.result
        print(json.dumps({{"run_id": exc.run_id,
                          "evaluations": None if result is None else result.evaluations,
                          "status": None if result is None else result.status,
                          "notes": getattr(exc, "__notes__", [])}}))
        sys.exit(130)
"""

AWAITED = """
import asyncio, json, sys
from decido.client import AsyncClient

async def main():
    async with AsyncClient(sys.argv[1], sys.argv[2]) as client:
        try:
            await client.minimize({slow})
        except asyncio.CancelledError as exc:
            result = exc.result
            print(json.dumps({{"run_id": exc.run_id,
                              "evaluations": None if result is None else result.evaluations,
                              "status": None if result is None else result.status,
                              "notes": getattr(exc, "__notes__", [])}}), flush=True)
            raise

try:
    asyncio.run(main())
except KeyboardInterrupt:
    sys.exit(130)
"""


def _running_run(server: LiveServer, key: str, proc: subprocess.Popen[str],
                 deadline: float) -> str:
    """The id of the key's run once it is running."""
    while time.monotonic() < deadline and proc.poll() is None:
        runs = server.request("GET", "/v1/runs", headers=auth(key)).json()["data"]
        if runs and runs[0]["state"] == "running":
            return str(runs[0]["id"])
        time.sleep(0.1)
    raise AssertionError(f"the run never started: {proc.communicate(timeout=10)}")


@pytest.mark.parametrize("script", [BLOCKING, AWAITED], ids=["Client", "AsyncClient"])
def test_ctrl_c_cancels_the_run_and_carries_its_best_so_far(
        server: LiveServer, script: str) -> None:
    key = server.create_key(tier="pro")["key"]
    code = textwrap.dedent(script).format(slow=SLOW)
    url = f"http://127.0.0.1:{server.port}"
    proc = subprocess.Popen([sys.executable, "-c", code, url, key],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        run_id = _running_run(server, key, proc, time.monotonic() + 30)
        time.sleep(1.0)  # some evaluations before Ctrl-C
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    told = json.loads(out.strip().splitlines()[-1])
    assert told["run_id"] == run_id
    assert told["status"] == "stopped" and told["evaluations"] > 0
    if sys.version_info >= (3, 11):
        assert any(run_id in note and "cancelled" in note for note in told["notes"])
    # the server's run ended cancelled long before its 10 s time limit
    run = server.request("GET", f"/v1/runs/{run_id}", headers=auth(key)).json()
    assert run["state"] == "cancelled"
