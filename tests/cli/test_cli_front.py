"""``decido optimize --objective ... --objective ...`` on this machine: the front as a table
and a CSV file (which ``decido decide`` reads), names and goals, Ctrl-C, and the messages
of bad input. The same on a server: tests/service/test_cli_remote.py."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
from pathlib import Path

import pytest
from test_cli_local import decido_command, decido_run, env

import decido

pytest.importorskip("click")
pytest.importorskip("rich")

COST = "x[0]**2 + x[1]**2"
RISK = "(x[0] - 2)**2 + (x[1] - 2)**2"
ARGS = ["-b", "-3:3", "-n", "2", "--seed", "5", "--budget", "2000"]


def library() -> decido.ParetoResult:
    return decido.minimize([{"name": "cost", "expression": COST},
                            {"name": "risk", "expression": RISK}], [[-3, 3]] * 2, seed=5,
                           max_evaluations=2000, archive_size=12)


def test_the_front_is_printed_as_a_table_and_written_as_csv(tmp_path: Path) -> None:
    path = tmp_path / "front.csv"
    out = decido_run("optimize", "--objective", f"cost={COST}", "--objective",
                     f"risk = {RISK}", *ARGS, "--archive-size", "12", "--csv", str(path))
    assert out.returncode == 0, out.stderr
    front = library()
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["#", "cost", "(min)", "risk", "(min)", "x0", "x1"]
    rows = [line.split() for line in lines[1:1 + len(front.pareto)]]
    assert sorted(int(r[0]) for r in rows) == list(range(len(front.pareto))) and len(rows) == 12
    for r in rows:  # each row: the point's objective values and x, as the library's
        p = front.pareto[int(r[0])]
        assert [float(v) for v in r[1:]] == pytest.approx([*p["f"], *p["x"]], rel=1e-5)
    assert [float(r[1]) for r in rows] == sorted(float(r[1]) for r in rows)
    assert f"hypervolume  {front.hypervolume:.10g} at (" in out.stdout
    assert "front        12 points" in out.stdout and "engine       moea (seed 5)" in out.stdout
    assert out.stderr.splitlines()[-1] == f"wrote 12 points to {path}"
    assert "hypervolume" in out.stderr.splitlines()[-2]  # the progress line says what it is
    with path.open() as f:
        table = list(csv.DictReader(f))
    assert [row["id"] for row in table] == [str(i) for i in range(12)]
    for row, p in zip(table, front.pareto, strict=True):  # the values exactly
        assert [float(row["cost"]), float(row["risk"])] == p["f"]
        assert [float(row["x0"]), float(row["x1"])] == p["x"]
        assert row["feasible"] == "1" and float(row["max_violation"]) == 0.0
    # the CSV is the front's options: decide reads it as decido.decide does the options
    ranked = decido_run("decide", str(path), "--criterion", "cost:min:3", "--criterion",
                        "risk:min", "--json")
    assert ranked.returncode == 0, ranked.stderr
    expected = decido.decide({"options": front.options(), "method": "topsis", "criteria": [
        {"attribute": "cost", "goal": "minimize", "weight": 3},
        {"attribute": "risk", "goal": "minimize", "weight": 1}]})
    assert json.loads(ranked.stdout)["best"] == expected["best"]


def test_names_goals_json_and_the_runs_arguments() -> None:
    out = decido_run("optimize", "--maximize", "--objective", "gain=-x[0]**2",
                     "--objective", "risk:min=(x[0] - 1)**2", "--objective", "x[1]",
                     "-b", "-2:2", "-n", "2", "--seed", "3", "--budget", "1500",
                     "--reference-point", "-10,10,-5", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    local = decido.maximize([{"name": "gain", "expression": "-x[0]**2"},
                             {"name": "risk", "expression": "(x[0] - 1)**2",
                              "goal": "minimize"}, "x[1]"], [[-2, 2]] * 2, seed=3,
                            max_evaluations=1500, reference_point=[-10, 10, -5])
    assert result["objectives"] == local.to_dict()["objectives"]
    assert [o["goal"] for o in result["objectives"]] == ["maximize", "minimize", "maximize"]
    assert result["pareto"] == local.to_dict()["pareto"]
    assert result["reference_point"] == [-10, 10, -5]
    # an expression with == is an expression, not a name
    out = decido_run("optimize", "--objective", "x[0]", "--objective", "(x[1] == 1) + x[1]",
                     "-b", "0:1", "-n", "2", "--budget", "300", "--json")
    assert out.returncode == 0, out.stderr
    assert [o["name"] for o in json.loads(out.stdout)["objectives"]] == ["f1", "f2"]


@pytest.mark.parametrize(("argv", "message"), [
    (["x[0]", "--objective", "x[1]"], "give EXPRESSION, or --objective EXPR for each of "
                                      "several objectives, not both"),
    ([], "give EXPRESSION, or --objective EXPR"),
    (["x[0]", "--csv", "f.csv"], "only with several objectives (--objective): --csv"),
    (["--objective", "a:up=x[0]", "--objective", "x[1]"], "the goal after a: is min or max"),
    (["--objective", "x[0]", "--objective", "x[1]", "--reference-point", "1,x"],
     "expected numbers separated by commas"),
    (["--objective", "a=x[0]", "--objective", "a=x[1]", "--target", "1"],
     "'a' is also the name of objectives[0]; target does not apply to several objectives"),
    (["--objective", "x[0]", "--objective", "x[1]", "--reference-point", "0,5"],
     "reference_point[0] is 0, but objective 'f1' is at least 0 everywhere"),
])
def test_bad_input_is_one_line(argv: list[str], message: str) -> None:
    out = decido_run("optimize", *argv, "-b", "0:1", "-n", "2")
    assert out.returncode in (1, 2), out.stdout
    assert message in out.stderr and "Traceback" not in out.stderr


def test_ctrl_c_prints_the_front_so_far() -> None:
    proc = subprocess.Popen([*decido_command(), "optimize", "--objective", "sum(x**2)",
                             "--objective", "sum((x - 1)**2)", "-b", "-5:5", "-n", "30",
                             "--budget", str(10**10)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env())
    assert proc.stderr is not None
    assert proc.stderr.readline().startswith("evaluations ")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted: the front so far" in err
    assert "status       stopped" in out and "hypervolume" in out
