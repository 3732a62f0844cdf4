"""The CLI on a server: ``--server``/``--key``, the client, and following a run (its
event stream, or reading it until it ends on a server without one) with Ctrl-C cancelling
it and keeping its best so far."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from decido.cli._progress import ProgressDisplay
from decido.optimize import OptimizeResult
from decido.pareto import ParetoResult

if TYPE_CHECKING:
    from decido.client import Run

#: what a run ends with: one objective's best point, or several objectives' front
R = TypeVar("R", bound=OptimizeResult | ParetoResult)

__all__ = ["CANCEL_WAIT", "client_for", "follow", "server_options"]

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


def follow(run: Run[R], display: ProgressDisplay) -> tuple[R | None, bool]:
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


def _shown(result: R | None, display: ProgressDisplay) -> R | None:
    """The result, its evaluations and best value (a front's hypervolume) drawn last."""
    if result is not None:
        display.update(result.evaluations, result.hypervolume if isinstance(
            result, ParetoResult) else result.fun, result.elapsed)
    return result
