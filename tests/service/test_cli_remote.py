"""The ``decido`` command against a real server: ``optimize --server``, ``decide --server``,
``runs list|show|watch|cancel``, Ctrl-C of a remote run (it is cancelled, its best shown)."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import LiveServer, decido_command, running

from decido import minimize
from decido.client import Client

pytest.importorskip("httpx")
pytest.importorskip("click")

SLOW = ["sum(sin(x)**2 + cos(3*x))", "-b", "-5:5", "-n", "500", "--engine", "random",
        "--budget", "5000000", "--time-limit", "30"]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with running(tmp_path_factory.mktemp("cli"), workers=1) as srv:
        yield srv


@pytest.fixture
def remote(live: LiveServer) -> dict[str, str]:
    """The environment of a command talking to ``live`` with a fresh team key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DECIDO_")}
    return {**env, "DECIDO_URL": f"http://127.0.0.1:{live.port}",
            "DECIDO_KEY": live.create_key(tier="team")["key"]}


def decido(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*decido_command(), *args], capture_output=True, text=True,
                          timeout=120, env=env)


def test_optimize_on_the_server_then_list_and_show_the_run(remote: dict[str, str]) -> None:
    out = decido(remote, "optimize", "sum((x - 1)**2)", "-b", "-5:5", "-n", "3", "--seed",
                 "3", "--engine", "de", "--budget", "3000", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["engine"] == "de" and result["seed"] == 3 and result["fun"] < 1e-3
    assert out.stderr.splitlines()[-1].startswith("evaluations ")
    listed = json.loads(decido(remote, "runs", "list", "--json").stdout)
    assert len(listed) == 1 and listed[0]["state"] == "succeeded"
    run_id = listed[0]["id"]
    table = decido(remote, "runs", "list").stdout.splitlines()
    assert table[0].split() == ["id", "state", "engine", "dims", "created", "best",
                                "metadata"]
    assert table[1].split()[:4] == [run_id, "succeeded", "de", "3"]
    shown = decido(remote, "runs", "show", run_id)
    assert f"id           {run_id}" in shown.stdout and "status       " in shown.stdout
    assert json.loads(decido(remote, "runs", "show", run_id, "--json").stdout)["id"] == run_id
    missing = decido(remote, "runs", "show", "run_" + "0" * 24)
    assert missing.returncode == 1 and "404 not_found" in missing.stderr


def test_watch_and_cancel_a_remote_run(remote: dict[str, str]) -> None:
    with Client(remote["DECIDO_URL"], remote["DECIDO_KEY"]) as client:
        run = client.submit("sum(sin(x)**2)", [[-5, 5]] * 300, engine="random",
                            max_evaluations=5_000_000, time_limit=30)
        watcher = subprocess.Popen([*decido_command(), "runs", "watch", run.id],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   env=remote)
        assert watcher.stderr is not None
        assert watcher.stderr.readline().startswith("evaluations ")  # it is drawing
        out = decido(remote, "runs", "cancel", run.id)
        assert out.returncode == 0 and "cancel requested" in out.stdout
        stdout, _ = watcher.communicate(timeout=60)
        assert watcher.returncode == 0
        assert stdout.startswith(f"{run.id} cancelled: stopped, best ")
        assert run.refresh().state == "cancelled"
        again = decido(remote, "runs", "cancel", run.id)
        assert again.returncode == 1 and "409 run_finished" in again.stderr


def test_ctrl_c_cancels_the_remote_run_and_prints_its_best(remote: dict[str, str]) -> None:
    proc = subprocess.Popen([*decido_command(), "optimize", *SLOW], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=remote)
    assert proc.stderr is not None
    assert proc.stderr.readline().startswith("evaluations ")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "status       stopped" in out and "best value" in out
    with Client(remote["DECIDO_URL"], remote["DECIDO_KEY"]) as client:
        assert [r.state for r in client.runs()] == ["cancelled"]


def test_decide_on_the_server(remote: dict[str, str], tmp_path: Path) -> None:
    data = tmp_path / "o.csv"
    data.write_text("id,price,quality\na,10,5\nb,12,9\n")
    out = decido(remote, "decide", str(data), "--criterion", "price:min:2", "--criterion",
                 "quality:max", "--json")
    assert out.returncode == 0, out.stderr
    local = subprocess.run([*decido_command(), "decide", str(data), "--criterion",
                            "price:min:2", "--criterion", "quality:max", "--json"],
                           capture_output=True, text=True, timeout=60,
                           env={k: v for k, v in remote.items() if not k.startswith("DECIDO")})
    assert json.loads(out.stdout)["ranking"] == json.loads(local.stdout)["ranking"]
    bad = decido({**remote, "DECIDO_KEY": "dk_" + "x" * 43}, "decide", str(data),
                 "--criterion", "price:min")
    assert bad.returncode == 1 and "401" in bad.stderr


def test_several_objectives_on_the_server(remote: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "front.csv"
    out = decido(remote, "optimize", "--objective", "cost=x[0]**2 + x[1]**2", "--objective",
                 "risk=(x[0] - 2)**2 + (x[1] - 2)**2", "-b", "-3:3", "-n", "2", "--seed", "4",
                 "--budget", "2000", "--csv", str(path))
    assert out.returncode == 0, out.stderr
    front = minimize([{"name": "cost", "expression": "x[0]**2 + x[1]**2"},
                      {"name": "risk", "expression": "(x[0] - 2)**2 + (x[1] - 2)**2"}],
                     [[-3, 3]] * 2, seed=4, max_evaluations=2000)
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["#", "cost", "(min)", "risk", "(min)", "x0", "x1"]
    assert len([ln for ln in lines if ln.split()[0].isdigit()]) == len(front.pareto)
    assert f"hypervolume  {front.hypervolume:.10g} at (" in out.stdout
    assert "hypervolume" in out.stderr  # the progress lines
    with path.open() as f:
        rows = list(csv.DictReader(f))
    assert [[float(r["cost"]), float(r["risk"])] for r in rows] == [p["f"] for p in front.pareto]
    listed = decido(remote, "runs", "list").stdout.splitlines()
    assert listed[1].split()[-2:] == ["hv", f"{front.hypervolume:.6g}"]
    run_id = listed[1].split()[0]
    head, _, table = decido(remote, "runs", "show", run_id).stdout.partition("\n\n")
    assert f"best         hv {front.hypervolume:.6g}" in head
    assert table.splitlines()[0].split() == ["#", "cost", "(min)", "risk", "(min)", "x0", "x1"]
    assert f"hypervolume  {front.hypervolume:.10g} at (" in table
    watched = decido(remote, "runs", "watch", run_id)
    assert watched.returncode == 0, watched.stderr
    assert watched.stdout.startswith(f"{run_id} succeeded: max_evaluations, front of "
                                     f"{len(front.pareto)} points, hypervolume "
                                     f"{front.hypervolume:.10g} after 2000 evaluations")
    bad = decido(remote, "optimize", "--objective", "a=x[0]", "--objective", "a=x[1]",
                 "-b", "0:1", "-n", "2")
    assert bad.returncode == 1 and "/objectives/1/name" in bad.stderr


def test_ctrl_c_cancels_a_remote_run_of_several_objectives(remote: dict[str, str]) -> None:
    proc = subprocess.Popen([*decido_command(), "optimize", "--objective", "sum(sin(x)**2)",
                             "--objective", "sum(cos(x)**2)", "-b", "-5:5", "-n", "300",
                             "--budget", "5000000", "--time-limit", "30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=remote)
    assert proc.stderr is not None
    assert proc.stderr.readline().startswith("evaluations ")  # the run is going
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted: the front so far" in err
    assert "status       stopped" in out and "hypervolume" in out
    with Client(remote["DECIDO_URL"], remote["DECIDO_KEY"]) as client:
        assert [r.state for r in client.runs()] == ["cancelled"]


def test_labels_from_the_command_line(remote: dict[str, str], tmp_path: Path) -> None:
    """``--meta KEY=VALUE`` labels a remote run or decision; ``runs list --meta`` filters."""
    small = ["sum(x**2)", "-b", "-1:1", "-n", "2", "--budget", "200", "--json"]
    out = decido(remote, "optimize", *small, "--meta", "project=bridge-A", "--meta",
                 "team=north")
    assert out.returncode == 0, out.stderr
    assert decido(remote, "optimize", *small, "--meta", "project=bridge-B").returncode == 0
    listed = json.loads(decido(remote, "runs", "list", "--meta", "project=bridge-A",
                               "--json").stdout)
    assert [r["metadata"] for r in listed] == [{"project": "bridge-A", "team": "north"}]
    table = decido(remote, "runs", "list", "--meta", "project=bridge-B").stdout.splitlines()
    assert len(table) == 2 and table[1].split()[-1] == "project=bridge-B"
    shown = decido(remote, "runs", "show", listed[0]["id"]).stdout
    assert "metadata     project=bridge-A team=north" in shown
    data = tmp_path / "o.csv"
    data.write_text("id,price\na,10\nb,12\n")
    out = decido(remote, "decide", str(data), "--criterion", "price:min", "--meta", "lot=7")
    assert out.returncode == 0, out.stderr
    with Client(remote["DECIDO_URL"], remote["DECIDO_KEY"]) as client:
        (entry,) = client.decisions(metadata={"lot": "7"})
    assert entry["metadata"] == {"lot": "7"}
    bad = decido(remote, "runs", "list", "--meta", "project")
    assert bad.returncode == 2 and "'project': expected KEY=VALUE" in bad.stderr
    here = {k: v for k, v in remote.items() if not k.startswith("DECIDO")}
    bad = decido(here, "optimize", *small, "--meta", "project=x")
    assert bad.returncode == 2 and "--meta labels what a server keeps" in bad.stderr
