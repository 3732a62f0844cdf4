"""The ``decido`` command: one click group (:mod:`decido.cli._group`).

``decido optimize``, ``decido decide`` and ``decido runs ...`` are this package's (click and
rich: the ``cli`` extra; ``--server`` and ``runs`` also need httpx, the ``client`` extra).
``decido serve`` and ``decido keys ...`` are the service's: it registers them through the
``decido.commands`` entry points, and this package never imports it. A missing extra is one
line naming it, never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from decido.cli._extras import missing_extra

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``decido`` console script; returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        from decido.cli._group import cli
    except ModuleNotFoundError as exc:  # click itself
        command = args[0] if args and not args[0].startswith("-") else ""
        sys.stderr.write(missing_extra(command, exc.name)[0] + "\n")
        return 2
    try:
        cli.main(args=args, prog_name="decido", standalone_mode=True)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 1
    return 0
