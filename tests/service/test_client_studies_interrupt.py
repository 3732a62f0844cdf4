"""Ctrl-C in ``client.studies.optimize`` (decido.Client, and decido.AsyncClient under
``asyncio.run``): the loop stops at once, though its function is in the middle of a long
evaluation, its active trials are abandoned on the server, and the exception carries the
study's id and the trials given up. A real server and a real Python process sent SIGINT."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator

import pytest
from conftest import LiveServer, auth, running

pytest.importorskip("httpx")

BLOCKING = """
import json, sys, time
from decido.client import Client

def fn(trial):
    time.sleep(120)                 # far longer than the test waits
    return 1.0

with Client(sys.argv[1], sys.argv[2]) as client:
    study = client.studies.create(bounds=[[-5, 5]] * 2, engine="random", seed=1,
                                  max_trials=100)
    print(study.id, flush=True)
    try:
        client.studies.optimize(fn, study=study, n_workers=3)
    except KeyboardInterrupt as exc:
        print(json.dumps({"study_id": exc.study_id, "abandoned": exc.abandoned,
                          "notes": getattr(exc, "__notes__", [])}), flush=True)
        sys.exit(130)
"""

AWAITED = """
import asyncio, json, sys
from decido.client import AsyncClient

async def fn(trial):
    await asyncio.sleep(120)
    return 1.0

async def main():
    async with AsyncClient(sys.argv[1], sys.argv[2]) as client:
        study = await client.studies.create(bounds=[[-5, 5]] * 2, engine="random", seed=1,
                                            max_trials=100)
        print(study.id, flush=True)
        try:
            await client.studies.optimize(fn, study=study, n_workers=3)
        except asyncio.CancelledError as exc:
            print(json.dumps({"study_id": exc.study_id, "abandoned": exc.abandoned,
                              "notes": getattr(exc, "__notes__", [])}), flush=True)
            raise

try:
    asyncio.run(main())
except KeyboardInterrupt:
    sys.exit(130)
"""


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with running(tmp_path_factory.mktemp("studies_interrupt"), workers=1) as srv:
        yield srv


@pytest.mark.parametrize("script", [BLOCKING, AWAITED], ids=["Client", "AsyncClient"])
def test_ctrl_c_abandons_the_active_trials(live: LiveServer, script: str) -> None:
    key = live.create_key(tier="pro")["key"]
    url = f"http://127.0.0.1:{live.port}"
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), url, key],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        study_id = proc.stdout.readline().strip()
        assert study_id.startswith("st_"), proc.communicate(timeout=10)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            study = live.request("GET", f"/v1/studies/{study_id}", headers=auth(key)).json()
            if study["trials"]["active"] == 3:
                break
            time.sleep(0.05)
        else:
            raise AssertionError(f"three trials never became active: {study}")
        time.sleep(0.3)
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - start
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert took < 15  # the 120 s evaluations were not waited for
    told = json.loads(out.strip().splitlines()[-1])
    assert told["study_id"] == study_id and told["abandoned"] == [0, 1, 2]
    assert any(study_id in note and "abandoned" in note for note in told["notes"])
    study = live.request("GET", f"/v1/studies/{study_id}", headers=auth(key)).json()
    assert study["state"] == "active"  # the study goes on: optimize(study=...) resumes it
    assert study["trials"]["abandoned"] == 3 and study["trials"]["active"] == 0
    trials = live.request("GET", f"/v1/studies/{study_id}/trials",
                          headers=auth(key)).json()["data"]
    assert [(t["number"], t["state"]) for t in trials] == [
        (0, "abandoned"), (1, "abandoned"), (2, "abandoned")]
