"""The ``decido`` command through its entry point, on this machine (no server): optimize,
decide, output on a terminal (a pseudo-terminal) and on pipes, Ctrl-C, the extras' messages."""

from __future__ import annotations

import json
import os
import pty
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import decido

pytest.importorskip("click")
pytest.importorskip("rich")


def decido_command() -> list[str]:
    script = Path(sys.executable).with_name("decido")
    if script.exists():
        return [str(script)]
    found = shutil.which("decido")
    return [found] if found else [sys.executable, "-m", "decido.cli"]


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("DECIDO_")}
    out.pop("NO_COLOR", None)
    return out


def decido_run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*decido_command(), *args], capture_output=True, text=True,
                          timeout=120, env=env(), cwd=cwd)


def test_optimize_prints_the_result_and_plain_progress_lines_off_a_terminal() -> None:
    out = decido_run("optimize", "sum((x - 1)**2)", "--bounds", "-5:5", "--dims", "3",
                     "--seed", "4", "--engine", "de", "--budget", "3000")
    assert out.returncode == 0, out.stderr
    local = decido.minimize("sum((x - 1)**2)", [[-5, 5]] * 3, seed=4, engine="de",
                            max_evaluations=3000)
    assert f"best value   {local.fun:.10g}" in out.stdout
    assert f"{local.evaluations} ({local.iterations} iterations)" in out.stdout
    lines = out.stderr.splitlines()
    assert lines and all(line.startswith("evaluations ") for line in lines)
    assert f"evaluations {local.evaluations}/3000" in lines[-1]
    assert "\x1b[" not in out.stderr  # no terminal codes on a pipe


def test_optimize_json_bounds_per_variable_and_constraints() -> None:
    out = decido_run("optimize", "x[0] + x[1]", "-b", "0:4", "-b", "-1:3", "-c",
                     "x[0] + x[1] >= 2", "-c", "x[0] <= 0.5", "--seed", "1", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["feasible"] is True and result["violated"] == []
    assert result["fun"] == pytest.approx(2, abs=1e-3) and result["x"][0] <= 0.5 + 1e-9
    assert set(result) >= {"x", "fun", "status", "evaluations", "engine", "seed", "goal"}
    out = decido_run("optimize", "--maximize", "-b", "-1:2", "-n", "2", "--seed", "1",
                     "--json", "--", "-sum(x**2)")  # an expression that starts with -
    assert json.loads(out.stdout)["goal"] == "maximize"


def test_optimize_on_a_terminal_draws_a_bar(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    proc = subprocess.Popen([*decido_command(), "optimize", "sum(x**2)", "-b", "-5:5", "-n",
                             "2", "--seed", "2", "--engine", "de", "--budget", "4000"],
                            stdin=follower, stdout=follower, stderr=follower,
                            env={**env(), "TERM": "xterm", "COLUMNS": "100"})
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:  # the pty closed: the process is done
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait(60) == 0
    os.close(leader)
    text = b"".join(chunks).decode("utf-8", "replace")
    assert "optimizing" in text and "━" in text and "/4000" in text
    assert "best value" in text


def test_ctrl_c_stops_a_compiled_run_and_prints_the_best_so_far() -> None:
    proc = subprocess.Popen([*decido_command(), "optimize", "sum(sin(x)**2)", "-b", "-5:5",
                             "-n", "200", "--engine", "random", "--budget", str(10**10)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env())
    assert proc.stderr is not None
    first = proc.stderr.readline()  # the run has started: its first progress line
    assert first.startswith("evaluations "), first
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted: the best point so far" in err
    assert "status       stopped" in out and "best value" in out
    evaluations = int(out.split("evaluations  ")[1].split()[0])
    assert 0 < evaluations < 10**10


def test_decide_a_csv_file_prints_an_aligned_ranking(tmp_path: Path) -> None:
    data = tmp_path / "suppliers.csv"
    data.write_text("name,price,quality,lead_time\ns1,18.5,7.2,5\ns2,22,8.1,12\n"
                    "s3,15,6,3\n")
    out = decido_run("decide", str(data), "--method", "topsis", "--criterion", "price:min:5",
                     "--criterion", "quality:max:3", "--constraint", "lead_time < 10")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["rank", "id", "score"]
    request = {"options": [{"id": "s1", "attributes": {"price": 18.5, "quality": 7.2,
                                                       "lead_time": 5.0}},
                           {"id": "s2", "attributes": {"price": 22.0, "quality": 8.1,
                                                       "lead_time": 12.0}},
                           {"id": "s3", "attributes": {"price": 15.0, "quality": 6.0,
                                                       "lead_time": 3.0}}],
               "method": "topsis", "constraints": ["lead_time < 10"],
               "criteria": [{"attribute": "price", "goal": "minimize", "weight": 5.0},
                            {"attribute": "quality", "goal": "maximize", "weight": 3.0}]}
    local = decido.decide(request)
    ranked = [line.split() for line in lines[1:1 + len(local["ranking"])]]
    assert [r[1] for r in ranked] == [r["id"] for r in local["ranking"]]
    ids_at = {line.index(row[1]) for line, row in zip(lines[1:], ranked, strict=False)}
    assert len(ids_at) == 1  # aligned
    assert "infeasible: s2 (lead_time < 10)" in out.stdout
    as_json = decido_run("decide", str(data), "--criterion", "price:min:5", "--criterion",
                         "quality:max:3", "--constraint", "lead_time < 10", "--json")
    assert json.loads(as_json.stdout)["ranking"] == local["ranking"]


def test_decide_a_json_request_with_an_expression(tmp_path: Path) -> None:
    data = tmp_path / "options.json"
    data.write_text(json.dumps([{"id": "a", "attributes": {"q": 1, "p": 3}},
                                {"id": "b", "attributes": {"q": 2, "p": 1}}]))
    out = decido_run("decide", str(data), "--expression", "q*10 - p", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["best"] == "b"


def test_bad_input_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    out = decido_run("optimize", "sum(x**2) + y", "-b", "0:1", "-n", "2")
    assert out.returncode == 1 and "unknown name 'y'" in out.stderr
    assert "Traceback" not in out.stderr
    out = decido_run("optimize", "sum(x**2)", "-b", "0-1")
    assert out.returncode == 2 and "expected LO:HI" in out.stderr
    out = decido_run("optimize", "sum(x**2)", "-b", "0:1", "-c", "x[0]")
    assert out.returncode == 1 and "constraints[0]" in out.stderr  # the library's check
    assert "Traceback" not in out.stderr
    out = decido_run("decide", str(tmp_path / "missing.csv"), "--criterion", "p:min")
    assert out.returncode == 2 and "cannot read" in out.stderr
    bad = tmp_path / "bad.csv"
    bad.write_text("id,price\na,1\nb,2\n")
    out = decido_run("decide", str(bad), "--criterion", "price:cheap")
    assert out.returncode == 2 and "ATTRIBUTE:min|max" in out.stderr
    out = decido_run("decide", str(bad), "--criterion", "weight:min")
    assert out.returncode == 1 and "weight" in out.stderr and "Traceback" not in out.stderr


# A real subprocess where the extra's modules cannot be imported (a finder on sys.meta_path
# refuses them) and, with no_entry_points, where importlib.metadata lists no decido.commands
# entry point (as when the service is not installed at all).
_REFUSE = ("import sys\n"
           "class Refuse:\n"
           "    def find_spec(self, name, path=None, target=None):\n"
           "        if name.split('.')[0] in {names!r}: raise ModuleNotFoundError(name=name)\n"
           "sys.meta_path.insert(0, Refuse())\n"
           "if {no_entry_points!r}:\n"
           "    import importlib.metadata as md\n"
           "    real = md.entry_points\n"
           "    md.entry_points = lambda **kw: [] if kw.get('group') == 'decido.commands' "
           "else real(**kw)\n"
           "from decido.cli import main\n"
           "sys.exit(main({argv!r}))\n")


@pytest.mark.parametrize(("missing", "no_entry_points", "argv", "extra"), [
    (["sanic"], False, ["serve", "--port", "1"], "service"),
    (["sanic", "msgspec", "orjson", "asyncpg"], False, ["keys", "list"], "service"),
    (["decido_service", "sanic"], True, ["serve"], "service"),
    (["decido_service", "sanic"], True, ["keys", "create", "--plan", "free"], "service"),
    (["click"], False, ["optimize", "x", "-b", "0:1"], "cli"),
    (["rich"], False, ["optimize", "x", "-b", "0:1"], "cli"),
    (["httpx"], False, ["runs", "list"], "client"),
])
def test_a_missing_extra_is_named(missing: list[str], no_entry_points: bool, argv: list[str],
                                  extra: str, tmp_path: Path) -> None:
    code = _REFUSE.format(names=set(missing), no_entry_points=no_entry_points, argv=argv)
    # outside a checkout (the repository's root would make it name ".[extra]", as below)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env=env(), cwd=tmp_path)
    assert out.returncode in (1, 2) and f"pip install 'decido[{extra}]'" in out.stderr
    assert "Traceback" not in out.stderr
    if extra != "client":  # one line (the client's message is its exception's)
        assert out.stderr.count("\n") == 1 and out.stdout == "", out.stderr


def test_in_a_checkout_the_missing_extra_is_installed_from_it(tmp_path: Path) -> None:
    """In a checkout of decido, ``pip install 'decido[cli]'`` would fetch another copy from
    PyPI: the message names the checkout's own extra, as the README installs it."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "decido"\nversion = "1"\n')
    code = _REFUSE.format(names={"rich"}, no_entry_points=False,
                          argv=["optimize", "x", "-b", "0:1"])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env=env(), cwd=tmp_path)
    assert out.returncode in (1, 2) and out.stderr.endswith(
        """(rich is not installed): pip install ".[cli]"\n"""), out.stderr


def test_without_the_service_the_help_still_lists_its_commands() -> None:
    code = _REFUSE.format(names={"decido_service"}, no_entry_points=True, argv=["--help"])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env=env())
    assert out.returncode == 0, out.stderr
    lines = {line.split()[0]: line for line in out.stdout.splitlines()
             if line.startswith("  ") and line.split()}
    assert "needs the 'service' extra" in lines["serve"] and "optimize" in lines
