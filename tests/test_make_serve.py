"""``make serve`` sets up once: with nothing changed since the last install it only starts
the service; a changed source installs again, saying so first (``make -n``: what it would
run, nothing is built here)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(sys.prefix)  # this interpreter's virtual environment


def dry_run(stamp: Path, *extra: str) -> str:
    env = {k: v for k, v in os.environ.items()  # not a sub-make of a `make test`
           if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES")}
    # the venv's build requirements count as installed (a pyproject.toml newer than their
    # stamp, after a merge, would add their install to every plan)
    out = subprocess.run(["make", "--no-print-directory", "-n", "serve", f"VENV={VENV}",
                          f"SERVE_STAMP={stamp}", "-o", f"{VENV}/.decido-build-deps", *extra],
                         cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture
def stamp(tmp_path: Path) -> Path:
    if shutil.which("make") is None or sys.prefix == sys.base_prefix:
        pytest.skip("needs make and a virtual environment")
    path = tmp_path / "serve.stamp"
    path.touch()  # newer than every source and the environment
    return path


def test_nothing_changed_only_starts_the_service(stamp: Path) -> None:
    commands = dry_run(stamp).strip().splitlines()
    assert commands == [f"{VENV}/bin/decido serve"]


def test_a_changed_source_installs_again_and_says_so(stamp: Path) -> None:
    commands = dry_run(stamp, "-W", "csrc/engine/driver.c")
    assert "pip install" in commands and "make serve: building the C library" in commands
    assert commands.index("make serve: building") < commands.index("pip install")
    assert commands.strip().splitlines()[-1] == f"{VENV}/bin/decido serve"


def _pyproject() -> dict:
    import tomllib  # Python 3.11+; the test extra's mypy and ruff need 3.10 at least

    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_one_build_installs_every_extra_a_command_needs(stamp: Path) -> None:
    """`make serve` installs every extra but test and bench (the service's commands, the
    `decido` command's, the client, /metrics) in its one build: adding one later built the
    whole package again."""
    pytest.importorskip("tomllib")
    commands = dry_run(stamp, "-W", "core/decido/client/sync.py")
    install = next(line for line in commands.splitlines() if "pip install" in line
                   and "--no-build-isolation" in line)
    extras = install.rsplit(".[", 1)[1].split("]", 1)[0].split(",")
    wanted = set(_pyproject()["project"]["optional-dependencies"]) - {"test", "bench"}
    assert set(extras) == wanted, install


def test_every_install_builds_in_the_kept_build_directory(stamp: Path) -> None:
    """Every pip install of the Makefile builds without isolation (the venv's Cython, whose
    path does not change, so CMake's build directory stays valid and a rebuild compiles only
    what changed), after the build requirements are in the venv."""
    pytest.importorskip("tomllib")
    assert "{wheel_tag}" in _pyproject()["tool"]["scikit-build"]["build-dir"]
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES")}
    for target in ("install", "serve", "bench", "compare"):
        out = subprocess.run(["make", "--no-print-directory", "-n", "-B", target,
                              f"VENV={VENV}", f"SERVE_STAMP={stamp}"], cwd=ROOT,
                             capture_output=True, text=True, timeout=60, env=env)
        assert out.returncode == 0, out.stderr
        builds = [line for line in out.stdout.splitlines()
                  if "pip install" in line and '"."' not in line and ".[" in line]
        assert builds and all("--no-build-isolation" in line for line in builds), (target,
                                                                                    builds)
        requires = out.stdout.index("build-system")  # the build requirements come first
        assert requires < out.stdout.index(builds[0]), target


def test_the_build_directory_uses_this_environments_cython() -> None:
    """The kept build directory was configured by a build of this venv (make install or
    make serve), not by an isolated build whose temporary Cython is gone (which made every
    later build compile all the Cython modules again)."""
    tags = sorted((ROOT / "build").glob("cp*/CMakeCache.txt"))
    if not tags:
        pytest.skip("no build directory: the package was not built from this checkout")
    cache = max(tags, key=lambda p: p.stat().st_mtime).read_text()
    cython = next(line for line in cache.splitlines() if line.startswith("CYTHON_EXECUTABLE"))
    if "pip-build-env" in cython and os.environ.get("CI") is None:
        pytest.skip("the last build was a plain `pip install .` (isolated) by hand")
    assert cython.split("=", 1)[1].startswith(str(VENV)), cython
