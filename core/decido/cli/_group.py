"""The ``decido`` click group: this package's commands and the ones other packages register.

A command is loaded when it is used (or listed by ``--help``), so ``decido serve`` never
imports rich and ``decido optimize`` never imports the service. Another package adds
commands through the entry point group :data:`ENTRY_POINTS` (``name = "module:command"``,
a click command); the service registers ``serve`` and ``keys`` there (pyproject.toml), so
this package never imports it. A command whose extra is not installed is still listed and
answers with one line naming the extra to install, never a traceback.
"""

from __future__ import annotations

import importlib
from functools import cache
from importlib.metadata import entry_points
from typing import Any

import click

import decido
from decido.cli._extras import EXTRA_OF_COMMAND, internal, missing_extra
from decido.client.errors import ConnectionFailed, MissingKey
from decido.errors import DecidoError

__all__ = ["BUILT_IN", "ENTRY_POINTS", "INTERRUPTED", "DecidoGroup", "cli"]

#: the entry point group where other packages register ``decido`` commands
ENTRY_POINTS = "decido.commands"
#: this package's commands: name -> "module:attribute" (the ``cli`` extra: click, rich)
BUILT_IN = {
    "optimize": "decido.cli._app:optimize",
    "decide": "decido.cli._app:decide",
    "runs": "decido.cli._runs:runs",
    "studies": "decido.cli._studies:studies",
}


@cache
def _registered() -> dict[str, str]:
    """The commands other packages register: name -> "module:attribute"."""
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINTS)}


def _target(name: str) -> str | None:
    return BUILT_IN.get(name) or _registered().get(name)


def _load(target: str) -> click.Command:
    module, _, attribute = target.partition(":")
    command = getattr(importlib.import_module(module), attribute)
    if not isinstance(command, click.Command):
        raise TypeError(f"decido: {target} is not a click command")
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


#: the exit code after Ctrl-C (128 + SIGINT)
INTERRUPTED = 130


class DecidoGroup(click.Group):
    """Commands loaded on use; library and client errors printed as ``decido: ...`` (exit
    1: a missing key names ``--key``/``DECIDO_KEY``, an unreachable server ``--server``),
    a module of a missing extra as the line naming the extra (exit 2), Ctrl-C a command
    did not handle as ``decido: interrupted`` (exit 130, not click's ``Aborted!``); a
    module of decido's own that is missing is a bug, raised as it is."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*BUILT_IN, *_registered(), *EXTRA_OF_COMMAND})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _target(cmd_name)
        if target is None:
            return _unavailable(cmd_name, None) if cmd_name in EXTRA_OF_COMMAND else None
        try:
            return _load(target)
        except ModuleNotFoundError as exc:
            if internal(exc.name):
                raise
            return _unavailable(cmd_name, exc.name)

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
