"""One ``decido`` command: the library's commands and the service's (registered through the
``decido.commands`` entry points, so the decido package never imports decido_service), and
``decido optimize --constraint`` handing constraints to the library's own."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import decido

click = pytest.importorskip("click")
pytest.importorskip("rich")
from click.testing import CliRunner  # noqa: E402

from decido.cli._group import cli  # noqa: E402

CORE = Path(decido.__file__).resolve().parent
SOURCE = Path(__file__).resolve().parents[2] / "core" / "decido"


def test_the_decido_package_never_imports_the_service() -> None:
    root = SOURCE if SOURCE.is_dir() else CORE
    files = [*root.rglob("*.py"), *root.rglob("*.pyx")]
    assert files
    for path in files:
        text = path.read_text()
        if path.suffix == ".pyx":
            assert "decido_service" not in text, path
            continue
        for node in ast.walk(ast.parse(text)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.split(".")[0] == "decido_service" for n in names), path
    code = ("import sys\nfrom decido.cli import main\n"
            "assert main(['optimize', 'x[0]', '-b', '0:1', '--seed', '1', '--json']) == 0\n"
            "assert not [m for m in sys.modules if m.startswith('decido_service')]\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_decido_package_imports_no_module_by_a_name_in_a_string() -> None:
    """Issue 39: no ``importlib`` between the library's modules (a command's module is
    imported by its function in ``BUILT_IN``); ``importlib.metadata`` (the package's
    metadata, the entry points of other packages) is its one use of importlib."""
    root = SOURCE if SOURCE.is_dir() else CORE
    files = list(root.rglob("*.py"))
    assert files
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                assert not [a.name for a in node.names if a.name.split(".")[0] == "importlib"], \
                    path
            elif isinstance(node, ast.ImportFrom):
                assert node.module != "importlib", path
                if node.module == "importlib.metadata":
                    assert "import_module" not in {a.name for a in node.names}, path
            elif isinstance(node, ast.Name):
                assert node.id != "__import__", path
            elif isinstance(node, ast.Attribute):
                assert node.attr not in ("import_module", "__import__"), path


def test_each_built_in_command_is_loaded_when_used() -> None:
    from decido.cli._group import BUILT_IN

    ctx = click.Context(cli)
    for name, load in BUILT_IN.items():
        command = cli.get_command(ctx, name)
        assert isinstance(command, click.Command) and command is load(), name
        assert command.name == name
    code = ("import sys\nfrom decido.cli import main\n"
            "assert main(['serve', '--help']) == 0\n"
            "assert 'decido_service.cli' in sys.modules\n"
            "assert not [m for m in sys.modules if m.split('.')[0] == 'rich'], 'rich imported'\n"
            "assert 'decido.cli._app' not in sys.modules, 'a built-in command imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def test_serve_and_keys_are_the_service_entry_points() -> None:
    from decido_service import cli as service_cli

    registered = {ep.name: ep for ep in entry_points(group="decido.commands")}
    assert set(registered) == {"serve", "keys"}
    assert registered["serve"].load() is service_cli.serve
    ctx = click.Context(cli)
    assert cli.get_command(ctx, "keys") is service_cli.keys
    assert set(cli.list_commands(ctx)) == {"optimize", "decide", "runs", "studies",
                                             "serve", "keys"}


def test_constraints_are_the_librarys_own() -> None:
    objective = "(x[0] - 2)**2 + (x[1] - 1)**2"
    constraints = ["x[0] + x[1] <= 1", "same: x[0] == x[1]"]
    out = CliRunner().invoke(cli, ["optimize", objective, "-b", "-5:5", "-n", "2", "--seed",
                                   "3", "-c", constraints[0], "-c", constraints[1], "--json"])
    assert out.exit_code == 0, out.output
    shown = json.loads(out.stdout)
    local = decido.minimize(objective, [[-5, 5]] * 2, seed=3, constraints=constraints)
    assert shown["x"] == local.x.tolist() and shown["fun"] == local.fun  # the same run
    assert shown["status"] == local.status and shown["feasible"] and shown["violated"] == []
    assert local.feasible and abs(local.x[0] - local.x[1]) <= 1e-6


def test_an_infeasible_constraint_is_reported() -> None:
    out = CliRunner().invoke(cli, ["optimize", "x[0]", "-b", "0:1", "--seed", "1", "-c",
                                   "x[0] >= 9", "--json"])
    assert out.exit_code == 0, out.output
    shown = json.loads(out.stdout)
    assert shown["status"] == "infeasible" and shown["violated"] == ["x[0] >= 9"]
    table = CliRunner().invoke(cli, ["optimize", "x[0]", "-b", "0:1", "--seed", "1", "-c",
                                     "x[0] >= 9"])
    assert "feasible     no: x[0] >= 9" in table.stdout


def test_a_missing_module_of_decido_itself_is_a_bug_not_an_extra() -> None:
    code = ("import sys\n"
            "class Refuse:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'decido_service.serve': raise ModuleNotFoundError(name=name)\n"
            "sys.meta_path.insert(0, Refuse())\n"
            "from decido.cli import main\n"
            "sys.exit(main(['serve', '--port', '1']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1 and "Traceback" in done.stderr  # shown as the bug it is
    assert "serve" in done.stderr.splitlines()[-1] and "pip install" not in done.stderr


def test_python_m_decido_cli_is_the_command() -> None:
    done = subprocess.run([sys.executable, "-m", "decido.cli", "--version"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and decido.__version__ in done.stdout


# "installed with the cli extra only": every module the service extra brings and the cli
# extra does not is refused by a finder on sys.meta_path, in a real subprocess
_WITHOUT = ("import sys\n"
            "class Refuse:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in {names!r}: raise ModuleNotFoundError(name=name)\n"
            "sys.meta_path.insert(0, Refuse())\n"
            "from decido.cli import main\n"
            "sys.exit(main({argv!r}))\n")
_SERVICE_ONLY = {"sanic", "orjson", "msgspec", "jsonschema", "asyncpg", "jinja2", "httpx"}


@pytest.mark.parametrize("missing", [_SERVICE_ONLY, {"httpx"}, {"click"}, {"msgspec"}])
@pytest.mark.parametrize("argv", [["keys", "list"], ["keys", "create", "--tier", "pro"],
                                  ["serve", "--port", "1"]])
def test_the_services_commands_without_its_extra_name_it(missing: set[str], argv: list[str],
                                                          tmp_path: Path) -> None:
    code = _WITHOUT.format(names=missing, argv=argv)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"decido: `decido {argv[0]}` needs the 'service' extra (")
    assert done.stderr.endswith("is not installed): pip install 'decido[service]'\n")


def test_a_vector_expression_without_dims_says_the_dimension_it_assumed() -> None:
    note = "optimizing over 1 dimension (one --bounds and no --dims)"
    vector = CliRunner().invoke(cli, ["optimize", "sum(x**2)", "-b", "-1:1", "--seed", "1"])
    assert vector.exit_code == 0 and note in vector.stderr and "--dims N" in vector.stderr
    assert note not in vector.stdout
    for args in (["x[0]**2", "-b", "-1:1"], ["sum(x**2)", "-b", "-1:1", "-n", "3"],
                 ["sum(x**2)", "-b", "-1:1", "-b", "0:1"]):
        quiet = CliRunner().invoke(cli, ["optimize", *args, "--seed", "1"])
        assert quiet.exit_code == 0 and note not in quiet.stderr, args


def test_a_criterion_leaves_its_weight_and_short_goal_to_the_library(tmp_path: Path) -> None:
    data = tmp_path / "o.csv"
    data.write_text("id,price,quality\na,10,5\nb,12,9\nc,11,7\n")
    given = CliRunner().invoke(cli, ["decide", str(data), "--criterion", "price:min",
                                     "--criterion", "quality:maximize", "--json"])
    assert given.exit_code == 0, given.output
    answer = json.loads(given.stdout)
    request = {"options": decido.option_table.options_from_csv(data.read_text())[0],
               "method": "topsis", "criteria": [{"attribute": "price", "goal": "min"},
                                                {"attribute": "quality", "goal": "max"}]}
    assert answer == decido.decide(request)
