"""The ``decido`` command.

``decido optimize``, ``decido decide`` and ``decido runs ...`` are this package's (click and
rich: the ``cli`` extra; ``--server`` and ``runs`` also need httpx, the ``client`` extra).
``decido serve`` and ``decido keys ...`` belong to the service (:mod:`decido_service.cli`,
the ``service`` extra) and are handed over untouched, so they work without click.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["SERVICE_COMMANDS", "main"]

#: the commands of :mod:`decido_service.cli`
SERVICE_COMMANDS = ("serve", "keys")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``decido`` console script; returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in SERVICE_COMMANDS:
        return _service(args)
    try:
        from decido.cli._app import cli
    except ModuleNotFoundError as exc:
        return _missing(exc, "cli", f"decido {args[0] if args else ''}".strip())
    try:
        cli.main(args=args, prog_name="decido", standalone_mode=True)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 1
    return 0


def _service(args: list[str]) -> int:
    try:
        from decido_service.cli import main as service_main

        if args[0] == "serve":
            import sanic  # noqa: F401

            import decido_service.serve  # noqa: F401 - its dependencies, checked now
    except ModuleNotFoundError as exc:
        return _missing(exc, "service", f"decido {args[0]}")
    return service_main(args)


def _missing(exc: ModuleNotFoundError, extra: str, what: str) -> int:
    sys.stderr.write(f"decido: `{what}` needs the {extra!r} extra ({exc.name} is not "
                     f"installed): pip install 'decido[{extra}]'\n")
    return 2
