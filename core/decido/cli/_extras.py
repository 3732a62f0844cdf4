"""Which extra brings a ``decido`` command, and the one line that names it when it is missing
(this module imports nothing beyond the standard library: it speaks when click is missing)."""

from __future__ import annotations

import re
from functools import cache
from importlib.metadata import PackageNotFoundError, requires
from pathlib import Path

__all__ = ["EXTRA_OF_COMMAND", "install_command", "internal", "missing_extra"]

#: the extra that brings a command: what to install when it cannot be loaded or run (the
#: service's commands are named here too, for when its entry points are absent)
EXTRA_OF_COMMAND = {"optimize": "cli", "decide": "cli", "runs": "cli", "studies": "cli",
                    "serve": "service", "keys": "service"}
#: the extra that brings a module any command may import (when the command's own extra
#: does not: ``decido keys`` without httpx needs the service extra, which brings it)
_EXTRA_OF_MODULE = {"click": "cli", "rich": "cli", "httpx": "client"}
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")
#: the line of a pyproject.toml that names the project decido
_DECIDO_PROJECT = re.compile(r"""^name\s*=\s*["']decido["']\s*$""", re.M)


def install_command(extra: str, where: Path | None = None) -> str:
    """The command that installs ``extra`` where the user is: in a checkout of decido (its
    pyproject.toml in ``where``, the working directory by default) ``pip install ".[x]"``
    (what the README says; ``decido[x]`` there would fetch another copy from PyPI), else
    ``pip install 'decido[x]'``."""
    project = (where or Path.cwd()) / "pyproject.toml"
    try:
        checkout = bool(_DECIDO_PROJECT.search(project.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError):
        checkout = False
    return f'pip install ".[{extra}]"' if checkout else f"pip install 'decido[{extra}]'"


@cache
def _modules_of_extra() -> dict[str, frozenset[str]]:
    """Each extra's packages as their module names, from the installed metadata (the
    ``optional-dependencies`` of pyproject.toml, written there once)."""
    try:
        lines = requires("decido") or []
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        return {}
    found: dict[str, set[str]] = {}
    for line in lines:
        requirement, _, marker = line.partition(";")
        extra = _EXTRA_MARKER.search(marker)
        name = re.match(r"[A-Za-z0-9._-]+", requirement.strip())
        if extra and name:
            module = name.group(0).lower().replace("-", "_")
            found.setdefault(extra.group(1), set()).add(module)
    return {extra: frozenset(modules) for extra, modules in found.items()}


def internal(module: str | None) -> bool:
    """True for a module inside decido or decido_service: missing, it is a bug to show (a
    traceback), not an extra to install (the packages themselves missing are an extra)."""
    return bool(module) and "." in str(module) and \
        str(module).split(".")[0] in ("decido", "decido_service")


def missing_extra(command: str, module: str | None) -> tuple[str, str]:
    """The line saying what ``decido COMMAND`` needs (``module`` could not be imported), and
    the extra it names."""
    top = (module or "").split(".")[0]
    own = EXTRA_OF_COMMAND.get(command)
    extra = own if own and top in _modules_of_extra().get(own, ()) else \
        _EXTRA_OF_MODULE.get(top) or own or "cli"
    why = f" ({top} is not installed)" if top and top not in ("decido", "decido_service") \
        else ""
    what = f"decido {command}".strip()
    return (f"decido: `{what}` needs the {extra!r} extra{why}: {install_command(extra)}",
            extra)
