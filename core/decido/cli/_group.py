"""The ``decido`` click group: this package's commands and the ones other packages register.

A command is loaded when it is used (or listed by ``--help``), so ``decido serve`` never
imports rich and ``decido optimize`` never imports the service: each of this package's
commands is imported by its own function in :data:`BUILT_IN`. Another package adds commands
through the entry point group :data:`ENTRY_POINTS` (``name = "module:command"``, a click
command, loaded by its entry point); the service registers ``serve`` and ``keys`` there
(pyproject.toml), so this package never imports it. A command whose extra is not installed
is still listed and answers with one line naming the extra to install, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import click

import decido
from decido.cli._exits import INTERRUPTED
from decido.cli._extras import EXTRA_OF_COMMAND, internal, missing_extra
from decido.client.errors import ConnectionFailed, MissingKey
from decido.errors import DecidoError

__all__ = ["BUILT_IN", "ENTRY_POINTS", "DecidoGroup", "cli"]

#: the entry point group where other packages register ``decido`` commands
ENTRY_POINTS = "decido.commands"


def _optimize() -> click.Command:
    from decido.cli._app import optimize
    return optimize


def _decide() -> click.Command:
    from decido.cli._app import decide
    return decide


def _runs() -> click.Command:
    from decido.cli._runs import runs
    return runs


def _studies() -> click.Command:
    from decido.cli._studies import studies
    return studies


#: this package's commands (the ``cli`` extra: click, rich): name -> what imports it
BUILT_IN: dict[str, Callable[[], click.Command]] = {
    "optimize": _optimize, "decide": _decide, "runs": _runs, "studies": _studies,
}


@cache
def _registered() -> dict[str, EntryPoint]:
    """The commands other packages register: name -> its entry point."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINTS)}


def _load(name: str) -> click.Command | None:
    """Command ``name``, imported: this package's or another's; None when none has it."""
    if name in BUILT_IN:
        return BUILT_IN[name]()
    entry = _registered().get(name)
    if entry is None:
        return None
    command = entry.load()
    if not isinstance(command, click.Command):
        raise TypeError(f"decido: {entry.value} is not a click command")
    return command


def _unavailable(name: str, module: str | None) -> click.Command:
    """A stand-in for a command that cannot be loaded: it says what to install."""
    line, extra = missing_extra(name, module)

    def say(ctx: click.Context) -> None:
        click.echo(line, err=True)
        ctx.exit(2)

    return click.Command(name, callback=click.pass_context(say), add_help_option=False,
                         help=f"(needs the {extra!r} extra: pip install 'decido[{extra}]')",
                         context_settings={"ignore_unknown_options": True,
                                           "allow_extra_args": True})


class DecidoGroup(click.Group):
    """Commands loaded on use; library and client errors printed as ``decido: ...`` (exit
    1: a missing key names ``--key``/``DECIDO_KEY``, an unreachable server ``--server``),
    a module of a missing extra as the line naming the extra (exit 2), Ctrl-C a command
    did not handle as ``decido: interrupted`` (exit 130, not click's ``Aborted!``); a
    module of decido's own that is missing is a bug, raised as it is."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*BUILT_IN, *_registered(), *EXTRA_OF_COMMAND})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        try:
            command = _load(cmd_name)
        except ModuleNotFoundError as exc:
            if internal(exc.name):
                raise
            return _unavailable(cmd_name, exc.name)
        if command is None and cmd_name in EXTRA_OF_COMMAND:
            return _unavailable(cmd_name, None)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("decido: interrupted", err=True)
            ctx.exit(INTERRUPTED)
        except MissingKey:
            raise click.ClickException(
                "no API key: give --key KEY or set DECIDO_KEY (POST /v1/keys on the server "
                "makes a free one)") from None
        except ConnectionFailed as exc:
            raise click.ClickException(f"{exc} (the server: --server URL or DECIDO_URL)"
                                       ) from None
        except DecidoError as exc:
            raise click.ClickException(str(exc)) from None
        except ModuleNotFoundError as exc:  # imported when the command ran
            if internal(exc.name):
                raise
            click.echo(missing_extra(ctx.invoked_subcommand or "", exc.name)[0], err=True)
            ctx.exit(2)


@click.group(cls=DecidoGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(decido.__version__, prog_name="decido")
def cli() -> None:
    """decido: optimization and decisions, here or on a decido server."""
