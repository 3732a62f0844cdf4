"""Tables on stdout (rich): aligned columns, never cut or wrapped off a terminal."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = ["add_row", "print_table", "table"]

#: the width of a table written to a pipe or a file (no terminal to fit)
_PIPE_WIDTH = 10_000


def table(*columns: str) -> Table:
    """A borderless table with these column headers."""
    out = Table(box=None, pad_edge=False)
    for name in columns:
        out.add_column(name, no_wrap=True)
    return out


def add_row(rows: Table, *values: object) -> None:
    """A row of plain texts (never read as rich markup: an id may hold brackets)."""
    rows.add_row(*(Text(str(v)) for v in values))


def print_table(rows: Table) -> None:
    """Print ``rows`` on stdout: fitted to a terminal, at full width elsewhere."""
    console = Console(file=sys.stdout, soft_wrap=True)
    if not console.is_terminal:
        console = Console(file=sys.stdout, soft_wrap=True, width=_PIPE_WIDTH)
    console.print(rows)
