"""The CLI on a server: ``--server``/``--key``, the client, submitting a run and following
it (its event stream, or reading it until it ends on a server without one).

Ctrl-C at any moment cancels the run, if it was made, and keeps its best so far. The
submission carries an ``Idempotency-Key`` chosen here, so a Ctrl-C that cut it short
(the answer lost, or the request never sent) sends it again with the same key: the
server answers the run it made, or makes it now, and the run is cancelled either way. A
second Ctrl-C while cancelling gives up at once, naming the run left going.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import click

from decido.cli._exits import INTERRUPTED
from decido.cli._progress import ProgressDisplay
from decido.optimize import OptimizeResult
from decido.pareto import ParetoResult

__all__ = ["CANCEL_WAIT", "INTERRUPTED", "client_for", "follow", "follow_cancelling",
           "meta_option", "needs_server", "server_options", "stopped", "submit_and_follow"]

F = TypeVar("F", bound=Callable[..., Any])
#: what a run ends with: one objective's best point, or several objectives' front
Result = OptimizeResult | ParetoResult
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


def follow(run: Any, display: ProgressDisplay) -> Result | None:
    """Show ``run``'s progress until it ends; its result (Ctrl-C is the caller's)."""
    from decido.client import NotFound

    try:
        for event in run.events():
            if event.event == "progress":
                display.progress(event.data)
    except NotFound:  # a server without event streams: read the run until it ends
        run.wait(progress=display.progress)
    return _shown(run.wait(), display)


def follow_cancelling(run: Any, display: ProgressDisplay) -> tuple[Result | None, bool]:
    """:func:`follow`; Ctrl-C cancels the run. Its result and whether Ctrl-C stopped it."""
    try:
        return follow(run, display), False
    except KeyboardInterrupt:
        return stopped(lambda: run, display), True


def submit_and_follow(client: Any, objective: str | list[Any], bounds: list[list[float]],
                      args: dict[str, Any], display: ProgressDisplay
                      ) -> tuple[Result | None, bool]:
    """Start a run on ``client``'s server (of one objective, or of a list of them) and
    follow it until it ends; its result and whether Ctrl-C stopped it (module docs: at
    any moment, the run is cancelled)."""
    key = uuid.uuid4().hex
    made: list[Any] = []
    try:
        made.append(client.submit(objective, bounds, idempotency_key=key, **args))
        return follow(made[0], display), False
    except KeyboardInterrupt:
        pass

    def run() -> Any:  # the run the submission made (sent again with its key if cut)
        return made[0] if made else _resubmitted(client, objective, bounds, args, key)

    return stopped(run, display), True


def stopped(run: Callable[[], Any], display: ProgressDisplay) -> Result | None:
    """After Ctrl-C: cancel ``run()`` and wait for its final state; its result (None for
    a run cancelled before it started). A second Ctrl-C exits at once (status 130)."""
    found: list[Any] = []
    try:
        found.append(run())
        _cancel(found[0])
        return _shown(found[0].wait(timeout=CANCEL_WAIT), display)
    except KeyboardInterrupt:
        going = f"run {found[0].id} may go on: decido runs cancel {found[0].id}" if found \
            else "the run may go on: decido runs list shows it"
        click.echo(f"decido: interrupted again; {going}", err=True)
        sys.exit(INTERRUPTED)


def _cancel(run: Any) -> None:
    """Cancel ``run`` (one that has already ended stays as it is)."""
    from decido.client import Conflict

    try:
        run.cancel()
    except Conflict:
        run.refresh()


def _resubmitted(client: Any, objective: str | list[Any], bounds: list[list[float]],
                 args: dict[str, Any], key: str) -> Any:
    """The run of a submission with Idempotency-Key ``key``, sent again: the server
    answers the run it made (or makes it now; while it is still answering the first
    sending, 409 ``idempotency_key_in_use``, the client asks again)."""
    return client.submit(objective, bounds, idempotency_key=key, **args)


def _shown(result: Result | None, display: ProgressDisplay) -> Result | None:
    """The result, its evaluations and best value (a front's hypervolume) drawn last."""
    if result is not None:
        display.update(result.evaluations, result.hypervolume if isinstance(
            result, ParetoResult) else result.fun, result.elapsed)
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
