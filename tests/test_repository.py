"""What a new user reads and leaves behind: the README's examples say what the code does,
the documentation's links stay inside the repository, local state is ignored by git."""

from __future__ import annotations

import ast
import graphlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import decido

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_BLOCK = re.compile(r"```(?:sh|bash|console)\n(.*?)```", re.S)


def test_the_readme_error_example_is_the_error_the_library_raises() -> None:
    text = (ROOT / "README.md").read_text()
    call = 'decido.Expression("sum(x**2) + y", n=3)\n'
    shown = text.split(call, 1)[1].split("```", 1)[0].splitlines()
    with pytest.raises(decido.ExpressionError) as err:
        decido.Expression("sum(x**2) + y", n=3)
    actual = f"decido.ExpressionError: {err.value}".splitlines()
    assert [line.removeprefix("# ") for line in shown[:len(actual)]] == actual


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_file_a_shell_example_sends_is_made_first(doc: Path) -> None:
    shell = "\n".join(_BLOCK.findall(doc.read_text()))
    for used in re.finditer(r"-d @(\S+)", shell):
        made = re.search(rf"(cat|python3 -) > {re.escape(used[1])} <<", shell)
        assert made and made.start() < used.start(), (doc.name, used[1])


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_links_stay_inside_the_repository(doc: Path) -> None:
    for target in _LINK.findall(doc.read_text()):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (doc.parent / target.split("#", 1)[0]).resolve()
        assert path.is_relative_to(ROOT), (doc.name, target)
        assert path.exists(), (doc.name, target)


def test_local_state_is_ignored_by_git() -> None:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    names = ["decido.db", "decido.db-wal", "decido.db-shm", "decido.db-journal",
             ".decido/serve.stamp", "service/decido.db"]
    out = subprocess.run([git, "check-ignore", *names], cwd=ROOT, capture_output=True,
                         text=True, timeout=30)
    assert out.stdout.split() == names


def test_the_engines_do_not_include_the_compilers_internal_header() -> None:
    """Issue 39: the driver and the engines take dc_set_error from csrc/common/, not from
    the expression compiler's internals."""
    engine = sorted((ROOT / "csrc" / "engine").glob("*.[ch]"))
    assert engine
    including = [p.name for p in engine if '#include "expr/' in p.read_text()]
    assert including == []


def test_the_decisions_are_one_package() -> None:
    """Issue 39: the decisions live in the package decido.decisions, no flat _mcdm module."""
    core = ROOT / "core" / "decido"
    assert sorted(p.name for p in core.glob("_mcdm*")) == []
    assert (core / "decisions" / "__init__.py").exists()


def _method_names(node: ast.AST, names: frozenset[str]) -> bool:
    """Whether ``node`` is a method name, or a tuple, list or set holding one."""
    if isinstance(node, ast.Constant):
        return node.value in names
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_method_names(e, names) for e in node.elts)
    return False


def _mentions_method(node: ast.AST) -> bool:
    return any((isinstance(n, ast.Name) and "method" in n.id)
               or (isinstance(n, ast.Attribute) and "method" in n.attr) for n in ast.walk(node))


def test_no_method_name_branches_outside_the_method_table() -> None:
    """Issue 39: what differs between decision methods is a column of the method table
    (decido/decisions/vocabulary.py); no other code compares a method with a method's name."""
    from decido.decisions.vocabulary import METHODS

    names = frozenset(METHODS)
    table = ROOT / "core" / "decido" / "decisions" / "vocabulary.py"
    files = [*sorted((ROOT / "core" / "decido").rglob("*.py")),
             *sorted((ROOT / "service" / "decido_service").rglob("*.py"))]
    found = []
    for path in files:
        if path == table:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            if any(_method_names(s, names) for s in sides) and any(
                    _mentions_method(s) for s in sides if not _method_names(s, names)):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


#: the service's capability packages and modules: below HTTP (issue 39)
_CAPABILITIES = ("runs", "decisions", "webhooks", "studies", "admission.py", "limits.py",
                 "errors.py", "services.py", "feeds.py")


def _imported(tree: ast.AST, module: str) -> list[tuple[int, str]]:
    """Every module ``tree`` (of ``module``, dotted) imports, at any level (inside
    ``if TYPE_CHECKING:`` or a function too), relative imports resolved."""
    package = module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def test_the_capabilities_never_import_the_http_layer() -> None:
    """Issue 39: no module of runs/, decisions/, webhooks/, studies/ (nor the admission
    core, the limits, the errors and the worker's services) imports decido_service.http,
    at any level (TYPE_CHECKING included)."""
    service = ROOT / "service" / "decido_service"
    files = [f for name in _CAPABILITIES for f in (
        sorted((service / name).rglob("*.py")) if (service / name).is_dir() else
        [service / name])]
    assert len(files) > 20
    found = []
    for path in files:
        relative = path.relative_to(service.parent).with_suffix("")
        module = ".".join(relative.parts)
        if path.name == "__init__.py":
            module += ".__init__"
        for line, name in _imported(ast.parse(path.read_text()), module):
            if name == "decido_service.http" or name.startswith("decido_service.http."):
                found.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert found == []


#: the one circle allowed: the client's run methods name the handles they return, for
#: types only (under TYPE_CHECKING in decido/client/_run_methods.py)
_TYPE_ONLY_IMPORTS = {("decido.client._run_methods", "decido.client.aio"),
                      ("decido.client._run_methods", "decido.client.sync")}


def _module_graph(top: Path) -> dict[str, set[str]]:
    """Each module under ``top`` (dotted) -> the modules under ``top`` it imports, at any
    level; an import of a package's ``__init__`` (a face that hands names on) is left out."""
    modules = {".".join(p.relative_to(top.parent).with_suffix("").parts): p
               for p in sorted(top.rglob("*.py"))}
    graph = {}
    for module, path in modules.items():
        graph[module] = set()
        for _, name in _imported(ast.parse(path.read_text()), module):
            parts = name.split(".")
            found = next((m for m in (".".join(parts[:k]) for k in range(len(parts), 0, -1))
                          if m in modules), None)
            if found is not None and found != module and (module, found) not in _TYPE_ONLY_IMPORTS:
                graph[module].add(found)
    return graph


@pytest.mark.parametrize("top", ["core/decido", "service/decido_service"])
def test_the_modules_import_each_other_one_way(top: str) -> None:
    """Issue 39: no import circle (TYPE_CHECKING included) but the client's type-only one."""
    graph = _module_graph(ROOT / top)
    assert len(graph) > 40
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as e:
        pytest.fail(f"an import circle: {' -> '.join(e.args[1])}")


def test_the_import_check_sees_every_kind_of_import() -> None:
    """The check above finds a plain, a relative, a deferred and a type-only import."""
    source = """
from typing import TYPE_CHECKING
import decido_service.http.app
from ..http import problems
if TYPE_CHECKING:
    from decido_service.http.context import ApiRequest
def f():
    from decido_service import http
"""
    names = [n for _, n in _imported(ast.parse(source), "decido_service.runs.api")]
    assert [n for n in names if "http" in n] == [
        "decido_service.http.app", "decido_service.http.problems",
        "decido_service.http.context.ApiRequest", "decido_service.http"]
