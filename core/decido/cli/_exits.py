"""The ``decido`` command's exit codes that several of its modules give (the group, and a
command that handles Ctrl-C itself); standard library only."""

from __future__ import annotations

__all__ = ["INTERRUPTED"]

#: the exit code after Ctrl-C (128 + SIGINT)
INTERRUPTED = 130
