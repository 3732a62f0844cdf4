"""The documentation's service examples, run as written against a real ``decido serve``
on a free key (the default tiers): the README's, docs/client.md's and docs/studies.md's
Python client blocks
(their key ``dk_...`` and address replaced by the test server's; every claim of their
comments checked, tests/docs_examples.py), and the README's shell session with curl (only
the address replaced). The run of a few seconds (a block that follows a run's events) must
show progress and be cancelled while it runs, not answer 409 after it ended."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import LiveServer, running
from docs_examples import README, ROOT, blocks, needs_server, run_block

pytest.importorskip("httpx")

ADDRESS = "http://127.0.0.1:8000"
SERVER_BLOCKS = [b for doc in (README, ROOT / "docs" / "client.md",
                                ROOT / "docs" / "studies.md")
                 for b in blocks(doc, "python") if needs_server(b)]


@pytest.fixture(scope="module")
def docs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # the default tiers and plans; only the per-address throttle of POST /v1/keys (5 an
    # hour) is raised: every test here makes its keys from 127.0.0.1
    env = {"DECIDO_KEYS_PER_HOUR": "50"}
    with running(tmp_path_factory.mktemp("docs"), env, workers=1) as srv:
        yield srv


def _url(server: LiveServer) -> str:
    return f"http://127.0.0.1:{server.port}"


@pytest.mark.parametrize("block", SERVER_BLOCKS, ids=lambda b: b.where)
def test_a_client_block_runs_on_a_free_key(docs_server: LiveServer, block) -> None:
    made = docs_server.request("POST", "/v1/keys")
    assert made.status == 201 and made.json()["tier"] == "free"
    assert ADDRESS in block.code and '"dk_..."' in block.code
    code = block.code.replace(ADDRESS, _url(docs_server))
    code = code.replace('"dk_..."', json.dumps(made.json()["key"]))
    printed = run_block(code, block.where)
    if ".events()" not in block.code:
        return
    progress = [line.split() for line in printed.splitlines()]
    assert len(progress) >= 2, printed  # the run of a few seconds showed its progress
    assert all(len(p) == 2 and int(p[0]) > 0 for p in progress), printed


def _objects(line: str) -> list[dict]:
    """The JSON objects of a line (curl prints an answer without a newline after it)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while at < len(line) and line[at] == "{":
        obj, at = decoder.raw_decode(line, at)
        found.append(obj)
    return found


def _session() -> str:
    """The README's shell blocks of the service that need no editing: the key, the runs."""
    shell = [b.code for b in blocks(README, "sh")]
    first = next(c for c in shell if "KEY=$(curl" in c)
    runs = next(c for c in shell if "RUN=$(curl" in c)
    front = next(c for c in shell if "FRONT=$(curl" in c)
    return first + runs + front


def test_the_readmes_curl_session_streams_and_cancels(docs_server: LiveServer,
                                                       tmp_path: Path) -> None:
    if shutil.which("curl") is None or shutil.which("python3") is None:
        pytest.skip("needs curl and python3")
    script = _session().replace(ADDRESS, _url(docs_server))
    out = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=tmp_path,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    streamed = [a for line in lines if line.startswith('{"event":') for a in _objects(line)
                if "event" in a]
    progress = [e for e in streamed if e["event"] == "progress"]
    assert len(progress) >= 3, out.stdout[:2000]  # 0.75 s or more of a run streamed
    assert streamed[-1]["event"] == "result"
    assert streamed[-1]["evaluations"] > progress[0]["evaluations"]
    # the runs block: cancelled while it ran (a 409 would leave it succeeded)
    events = re.findall(r"^event: (\w+)\ndata: (.*)$", out.stdout, re.M)
    assert events and events[-1][0] == "result", out.stdout[-2000:]
    final = json.loads(events[-1][1])
    assert final["state"] == "cancelled", final
    answers = [a for line in lines if line.startswith("{") for a in _objects(line)]
    listed = next(a for a in answers if "data" in a)  # GET /v1/runs: newest first
    assert listed["data"][0]["id"] == final["id"] and listed["data"][0]["state"] == "cancelled"
    decided = answers[-1]  # a decision on the front of a run with two objectives
    assert decided["status"] == "ok" and decided["ranking"][0]["id"] == decided["best"]
    assert len(decided["ranking"][0]["f"]) == 2


def test_the_readmes_study_over_http(docs_server: LiveServer, tmp_path: Path) -> None:
    if shutil.which("curl") is None or shutil.which("python3") is None:
        pytest.skip("needs curl and python3")
    shell = [b.code for b in blocks(README, "sh")]
    first = next(c for c in shell if "KEY=$(curl" in c).split("curl -H")[0]  # the key only
    study = next(c for c in shell if "STUDY=$(curl" in c)
    script = (first + study).replace(ADDRESS, _url(docs_server))
    out = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=tmp_path,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    read = _objects(out.stdout.splitlines()[-1])[0]
    assert read["id"].startswith("st_") and read["state"] == "completed", read
    assert read["trials"]["completed"] == 12
    assert read["best"]["value"] >= 0 and read["pareto"] is None


def test_the_readmes_command_line_block_runs(docs_server: LiveServer, tmp_path: Path) -> None:
    """The README's `decido` block, here and against the server (key and address
    replaced, and the server named to `runs list` and `studies list`, which default to port
    8000); `decido
    keys create` writes its store in the working directory."""
    pytest.importorskip("rich")
    block = next(b.code for b in blocks(README, "sh") if "decido optimize" in b.code)
    key = docs_server.request("POST", "/v1/keys").json()["key"]
    script = block.replace(ADDRESS, _url(docs_server)).replace("dk_...", key)
    for listing in ("decido runs list", "decido studies list"):
        script = script.replace(listing, f"{listing} --server {_url(docs_server)}")
    env = {**docs_server.environment(),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    out = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    assert re.search(r"^1\s+s3\s", out.stdout, re.M), out.stdout  # decide's ranking
    assert out.stdout.count("engine") >= 2 and "run_" in out.stdout
    assert "dk_" in out.stdout and (tmp_path / "decido.db").exists()  # a pro key, made
