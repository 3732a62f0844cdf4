"""What a new user reads and leaves behind: the README's examples say what the code does,
the documentation's links stay inside the repository, local state is ignored by git."""

from __future__ import annotations

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
