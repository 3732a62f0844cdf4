"""``decido studies ...`` against a real server: docs/studies.md's shell loop run as written
(bash: create, suggest --format env, the program, complete, until suggest exits 3),
``create`` from a file, ``list``, ``show``, ``watch`` following a study to its end,
``suggest`` as JSON lines and with a client id, ``complete`` every way, ``stop``,
``delete``, and the errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import LiveServer, decido_command, running
from docs_examples import ROOT, blocks

pytest.importorskip("httpx")
pytest.importorskip("click")


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with running(tmp_path_factory.mktemp("cli_studies"), workers=1) as srv:
        yield srv


@pytest.fixture
def remote(live: LiveServer) -> dict[str, str]:
    """The environment of a command talking to ``live`` with a fresh team key, the
    ``decido`` command first on the PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DECIDO_")}
    bin_dir = str(Path(decido_command()[0]).parent)
    return {**env, "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
            "DECIDO_URL": f"http://127.0.0.1:{live.port}",
            "DECIDO_KEY": live.create_key(tier="team")["key"]}


def decido(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*decido_command(), *args], capture_output=True, text=True,
                          timeout=120, env=env)


def _loop() -> str:
    """docs/studies.md's shell loop, without its ``export`` line (the test's environment
    holds the server and the key)."""
    code = next(b.code for b in blocks(ROOT / "docs" / "studies.md", "sh")
                if "studies suggest" in b.code and "while" in b.code)
    return "\n".join(line for line in code.splitlines() if not line.startswith("export "))


def test_the_documented_shell_loop_runs_a_study_to_its_end(remote: dict[str, str],
                                                           tmp_path: Path) -> None:
    if shutil.which("bash") is None or Path(decido_command()[0]).name != "decido":
        pytest.skip("needs bash and the decido console script")
    env = {**remote, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{remote['PATH']}"}
    out = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", _loop()], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    told = [line for line in out.stdout.splitlines() if line.startswith("trial ")]
    assert len(told) == 12 and all(" completed: " in line for line in told), out.stdout
    assert "study st_" in out.stderr and "is completed" in out.stderr  # suggest's exit 3
    shown = dict(line.split(None, 1) for line in out.stdout.splitlines()[len(told):]
                 if line.strip() and not line.startswith(("trial ", " ")))
    assert shown["state"] == "completed" and shown["trials"] == "12: completed 12"
    listed = json.loads(decido(remote, "studies", "list", "--json").stdout)
    assert len(listed) == 1 and listed[0]["id"] == shown["id"]
    best = listed[0]["best"]
    x0, x1 = best["variables"]["x0"], best["variables"]["x1"]
    assert best["value"] == pytest.approx((x0 - 1) ** 2 + (x1 + 2) ** 2, rel=1e-9)
    values = [float(line.rsplit(" ", 1)[1]) for line in told]
    assert best["value"] == pytest.approx(min(values), rel=1e-9)


def test_every_command(remote: dict[str, str], tmp_path: Path) -> None:
    spec = tmp_path / "study.json"
    spec.write_text(json.dumps({"variables": [{"name": "lr", "lower": 0.001, "upper": 1,
                                               "log": True},
                                              {"name": "opt", "values": ["sgd", "adam"]}],
                                "objectives": ["loss", "latency"], "engine": "moea",
                                "max_trials": 50}))
    made = decido(remote, "studies", "create", "--file", str(spec), "--seed", "5",
                  "--max-trials", "6", "--meta", "project=cli", "--json")
    assert made.returncode == 0, made.stderr
    document = json.loads(made.stdout)
    sid = document["id"]
    assert document["spec"]["max_trials"] == 6 and document["spec"]["seed"] == 5
    assert document["metadata"] == {"project": "cli"}
    env = decido(remote, "studies", "suggest", sid, "--count", "2", "--format", "env")
    assert env.returncode == 0, env.stderr
    lines = env.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["TRIAL=0", "TRIAL=1"]
    assert all(line.split()[1].startswith("LR=") and line.split()[2] in ("OPT=sgd", "OPT=adam")
               for line in lines)
    as_json = decido(remote, "studies", "suggest", sid, "--count", "2", "--client-id", "me")
    held = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert [t["number"] for t in held] == [2, 3] and held[0]["client_id"] == "me"
    again = decido(remote, "studies", "suggest", sid, "--client-id", "me")
    assert [json.loads(line)["number"] for line in again.stdout.splitlines()] == [2, 3]
    two = decido(remote, "studies", "complete", sid, "0", "--value", "0.5", "--value", "20",
                 "--metric", "gpu=3")
    assert two.returncode == 0 and two.stdout.strip() == "trial 0 completed: 0.5 20", two.stderr
    failed = decido(remote, "studies", "complete", sid, "1", "--failed", "out of memory",
                    "--json")
    assert json.loads(failed.stdout)["reason"] == "out of memory"
    twice = decido(remote, "studies", "complete", sid, "1", "--value", "1", "--value", "2")
    assert twice.returncode == 1 and "409 trial_finished" in twice.stderr
    usage = decido(remote, "studies", "complete", sid, "2")
    assert usage.returncode == 2 and "--value" in usage.stderr
    bad_metric = decido(remote, "studies", "complete", sid, "2", "--value", "1",
                        "--value", "1", "--metric", "gpu")
    assert bad_metric.returncode == 2 and "NAME=NUMBER" in bad_metric.stderr
    decido(remote, "studies", "complete", sid, "2", "--infeasible", "too slow")
    decido(remote, "studies", "complete", sid, "3", "--value", "0.25", "--value", "30")
    table = decido(remote, "studies", "list", "--meta", "project=cli").stdout.splitlines()
    assert table[0].split() == ["id", "state", "engine", "dims", "trials", "best", "created",
                                "metadata"]
    assert table[1].split()[:6] == [sid, "active", "moea", "2", "4", "front"]
    shown = decido(remote, "studies", "show", sid, "--trials")
    assert shown.returncode == 0, shown.stderr
    assert f"id          {sid}" in shown.stdout
    assert "trials      4: completed 2, infeasible 1, failed 1" in shown.stdout
    assert "best        front of 2" in shown.stdout
    rows = [line.split() for line in shown.stdout.splitlines() if line[:1].isdigit()]
    assert [r[:2] for r in rows] == [["0", "completed"], ["1", "failed"],
                                     ["2", "infeasible"], ["3", "completed"]]
    # watch follows the study until it finishes: the last two trials told meanwhile
    watcher = subprocess.Popen([*decido_command(), "studies", "watch", sid, "--interval",
                                "0.1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=remote)
    assert watcher.stdout is not None
    assert watcher.stdout.readline().startswith("trials 4: completed 2")
    last = [json.loads(line) for line in
            decido(remote, "studies", "suggest", sid, "--count", "5").stdout.splitlines()]
    assert [t["number"] for t in last] == [4, 5]  # max_trials=6
    for t in last:
        decido(remote, "studies", "complete", sid, str(t["number"]), "--value", "1",
               "--value", "1")
    out, err = watcher.communicate(timeout=60)
    assert watcher.returncode == 0, err
    assert out.splitlines()[-1].startswith(f"{sid} completed: 6 trials, best front of")
    finished = decido(remote, "studies", "suggest", sid)
    assert finished.returncode == 3 and "is completed" in finished.stderr
    active = decido(remote, "studies", "create", "-b", "0:1", "--max-trials", "5")
    other = active.stdout.strip()
    assert active.returncode == 0 and other.startswith("st_")
    refused = decido(remote, "studies", "delete", other)
    assert refused.returncode == 1 and "409 study_not_stopped" in refused.stderr
    stopped = decido(remote, "studies", "stop", other)
    assert stopped.stdout.strip() == f"{other} stopped: trials none"
    assert decido(remote, "studies", "suggest", other).returncode == 3
    assert decido(remote, "studies", "delete", other).stdout.strip() == f"{other} deleted"
    missing = decido(remote, "studies", "show", other)
    assert missing.returncode == 1 and "404 not_found" in missing.stderr
    invalid = decido(remote, "studies", "create", "-b", "1:0", "--trial-lease", "5")
    assert invalid.returncode == 1 and "/bounds/0" in invalid.stderr


def test_watch_stops_on_ctrl_c(remote: dict[str, str]) -> None:
    sid = decido(remote, "studies", "create", "-b", "0:1", "--max-trials", "5").stdout.strip()
    watcher = subprocess.Popen([*decido_command(), "studies", "watch", sid],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=remote)
    assert watcher.stdout is not None
    assert watcher.stdout.readline().startswith("trials 0: none  best -")
    watcher.send_signal(2)
    _, err = watcher.communicate(timeout=30)
    assert watcher.returncode == 130 and "interrupted" in err
