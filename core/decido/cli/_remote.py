"""The CLI on a server: ``--server``/``--key``, the client, and following a run (its
event stream, or reading it until it ends on a server without one) with Ctrl-C cancelling
it and keeping its best so far."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from decido.cli._progress import ProgressDisplay
from decido.optimize import OptimizeResult

__all__ = ["CANCEL_WAIT", "client_for", "follow", "meta_option", "needs_server",
           "server_options"]

F = TypeVar("F", bound=Callable[..., Any])
#: seconds to wait for a cancelled run's final state
CANCEL_WAIT = 60.0


def server_options(command: F) -> F:
    """``--server URL`` (``DECIDO_URL``) and ``--key KEY`` (``DECIDO_KEY``)."""
    command = click.option("--key", envvar="DECIDO_KEY", metavar="KEY",
                           help="API key (default $DECIDO_KEY)")(command)
    return click.option("--server", envvar="DECIDO_URL", metavar="URL",
                        help="run on this decido server (default $DECIDO_URL; "
                             "without either: here)")(command)


def client_for(server: str, key: str | None) -> Any:
    """A :class:`decido.Client` for ``server``."""
    from decido.client import Client

    return Client(server, key)


def follow(run: Any, display: ProgressDisplay) -> tuple[OptimizeResult | None, bool]:
    """Show ``run``'s progress until it ends; its result and whether Ctrl-C cancelled it."""
    from decido.client import NotFound

    try:
        try:
            for event in run.events():
                if event.event == "progress":
                    display.progress(event.data)
        except NotFound:  # a server without event streams: read the run until it ends
            run.wait(progress=display.progress)
    except KeyboardInterrupt:
        run.cancel()
        return _shown(run.wait(timeout=CANCEL_WAIT), display), True
    return _shown(run.wait(), display), False


def _shown(result: OptimizeResult | None, display: ProgressDisplay) -> OptimizeResult | None:
    """The result, its evaluations and best value drawn last."""
    if result is not None:
        display.update(result.evaluations, result.fun, result.elapsed)
    return result


def meta_option(help_text: str) -> Callable[[F], F]:
    """``--meta KEY=VALUE`` (repeatable), read into a ``{key: value}`` dict (``None``
    without one); a pair without ``=`` or with an empty key is a usage error."""

    def labels(ctx: click.Context, param: click.Parameter,
               pairs: tuple[str, ...]) -> dict[str, str] | None:
        out: dict[str, str] = {}
        for text in pairs:
            name, sep, value = text.partition("=")
            if not sep or not name:
                raise click.BadParameter(f"{text!r}: expected KEY=VALUE (e.g. "
                                         "project=bridge-A)", ctx, param)
            out[name] = value
        return out or None

    return click.option("--meta", "metadata", multiple=True, metavar="KEY=VALUE",
                        callback=labels, help=help_text + "; repeatable")


def needs_server(metadata: dict[str, str] | None, server: str | None) -> None:
    """A usage error for ``--meta`` without ``--server`` (labels are kept by a server)."""
    if metadata and server is None:
        raise click.UsageError("--meta labels what a server keeps: give --server URL "
                               "(or $DECIDO_URL) too")
