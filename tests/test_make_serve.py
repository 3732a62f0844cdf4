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
    out = subprocess.run(["make", "--no-print-directory", "-n", "serve", f"VENV={VENV}",
                          f"SERVE_STAMP={stamp}", *extra], cwd=ROOT, capture_output=True,
                         text=True, timeout=60, env=env)
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
