"""Debian packages some tests drive for real (nginx in front of the nodes, chromium for the
dashboard): found on the machine, or installed with apt when the tests run as root (CI
starts from a clean clone as root); otherwise the test is skipped with the reason."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

__all__ = ["ensure_package"]


def ensure_package(executable: str, package: str) -> str:
    """The path of ``executable``, installing Debian's ``package`` when it is missing
    (``apt-get update`` first when the install fails on a stale package list)."""
    if os.path.exists(executable):
        return executable
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.skip(f"no {executable} and no root apt-get to install {package}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", package]
    if subprocess.run(install, env=env, capture_output=True, timeout=900).returncode != 0:
        subprocess.run(["apt-get", "update"], env=env, capture_output=True, timeout=900,
                       check=True)
        subprocess.run(install, env=env, capture_output=True, timeout=900, check=True)
    if not os.path.exists(executable):
        raise RuntimeError(f"apt-get installed {package} but {executable} is not there")
    return executable
