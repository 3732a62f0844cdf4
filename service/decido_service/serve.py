"""Running the HTTP service (Sanic, the app factory, N worker processes): ``decido serve``.

Same semantics as ``sanic decido_service.http.app:create_app --factory``: every worker process
builds its own app with :func:`decido_service.http.app.create_app`, which reads its settings from
the ``DECIDO_*`` environment. The command line options are put into that environment
before the workers start, so workers and the command agree. The store is opened (and
migrated) once here first, so a bad ``--store`` fails before any worker starts.
"""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import socket
import sys
from typing import Any

from decido_service import metrics
from decido_service.config import Settings
from decido_service.store.postgres_url import redact_url

__all__ = ["BLAS_THREAD_VARIABLES", "end_start_up_on_signal", "port_problem", "serve"]

#: environment variables that size the BLAS/OpenMP thread pools of NumPy's libraries
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _environment(settings: Settings) -> None:
    """Export the settings (the environment and the command line) into ``DECIDO_*`` for the
    workers."""
    os.environ.update({"DECIDO_HOST": settings.host, "DECIDO_PORT": str(settings.port),
                       "DECIDO_DB": settings.db, "DECIDO_STORE": settings.db,
                       "DECIDO_WORKERS": str(settings.workers)})
    # one BLAS thread per worker: the workers (and the run threads) are the parallelism, and
    # a BLAS pool per process would only compete with them for the cores (set the variables
    # yourself to choose otherwise)
    for name in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
    if metrics.enabled():  # the workers' counters, summed by a scrape of any of them
        metrics.prepare_directory()


def banner(settings: Settings) -> str:
    """What ``decido serve`` prints once the service listens."""
    base = f"http://{settings.host}:{settings.port}"
    return (
        f"decido is listening on {base} ({settings.workers} worker"
        f"{'s' if settings.workers != 1 else ''}, store {redact_url(settings.db)})\n"
        f"  docs:     {base}/v1/docs  (OpenAPI: {base}/v1/openapi.json)\n"
        f"  get a key: curl -X POST {base}/v1/keys\n"
        f"  then:     curl -H 'Authorization: Bearer <key>' {base}/v1/usage\n"
    )


async def _check_store(settings: Settings) -> None:
    """Open (create, migrate) and close the store once, so a bad ``--store`` fails here.

    On SQLite (one node's file, no worker of it started yet) every run a process owned or
    was running belonged to a process that died: it goes back to the queue, or is marked
    ``failed`` (``interrupted``) once it has been started too many times
    (:func:`decido_service.runs.execution.requeue_interrupted`); runs still queued stay
    queued. A PostgreSQL store is shared by nodes that may be running theirs: there, the
    lease of a dead process's runs runs out and another node does the same
    (:mod:`decido_service.runs.queue`)."""
    from decido_service.runs.execution import requeue_interrupted
    from decido_service.store import open_store
    from decido_service.store.postgres_url import is_postgres_url

    store = await open_store(settings.db, clock=settings.clock)
    try:
        if not is_postgres_url(settings.db):
            await requeue_interrupted(store)
    finally:
        await store.close()


def port_problem(host: str, port: int, error: OSError | None = None) -> str | None:
    """Why ``decido serve`` cannot listen on ``host:port`` (a bind is tried, as Sanic's
    with ``SO_REUSEADDR``, unless the failure ``error`` is given), with what to do; None
    when it can."""
    if error is None:
        try:
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind((host, port))
            return None
        except OSError as exc:
            error = exc
    where = f"{host}:{port}"
    if error.errno == errno.EADDRINUSE:
        return (f"decido serve: port {port} is already in use on {host} (another "
                f"decido serve, or another program). Pick another port: decido serve "
                f"--port {port + 1} (or DECIDO_PORT={port + 1}; make serve "
                f'SERVE_ARGS="--port {port + 1}").\n')
    if error.errno == errno.EACCES:
        return (f"decido serve: no permission to listen on {where} (ports below 1024 need "
                "privileges); pick a port above 1023 with --port.\n")
    return f"decido serve: cannot listen on {where}: {error.strerror or error}\n"


def end_start_up_on_signal(manager: Any) -> None:
    """Make SIGTERM and SIGINT end ``decido serve`` also while its workers start.

    Sanic's main process waits for every worker to report it started
    (``wait_for_ack``); a signal in that wait stops the workers, but the wait never ends
    (it keeps re-reading the shutdown message it sent itself), spinning a core and
    holding the port until SIGKILL. This wraps Sanic's handler (installed by its worker
    manager, ``manager``, which calls this before it starts any worker): until the wait
    is over, a signal is only noted, and the start-up acts on it at its next step —
    before and after the manager spawns the workers (``start``; after it each has its
    process id, so Sanic's handler reaches every one), at each round of the wait (its
    ``_all_workers_ack``, at least every 0.1 s) and at the wait's end: Sanic's handler
    stops the workers, then ``ServerKilled`` leaves the start-up (Sanic closes its
    sockets and exits with status 1). Later signals go to Sanic's handler: its graceful
    stop once the wait is over, its kill after a signal was acted on.

    The handler never raises: an exception raised by a signal handler surfaces wherever
    the main thread is, and in a garbage collector's callback or a ``__del__`` Python
    drops it ("Exception ignored in"); the start-up then went on and hung (once in seven
    test runs). Start-up is judged by where the manager is, not by the workers' states:
    every worker may have reported it started while the wait has not seen it yet, and
    none has a state before it is spawned — a signal in either moment was Sanic's
    graceful stop, which then waited forever (3 of 96 tries under load). ``ServerKilled``
    at once when Sanic's handler already ran (a signal between the manager's creation
    and this call)."""
    from sanic.exceptions import ServerKilled

    handlers: dict[int, Any] = {}
    received: list[tuple[int, Any]] = []  # the start-up's signals, for its next step
    starting = True

    def handler(signum: int, frame: Any) -> None:
        if starting:
            received.append((signum, frame))
        else:
            handlers[signum](signum, frame)

    def step() -> None:
        """Stop the start-up here if a signal came."""
        nonlocal starting
        if received:
            starting = False
            signum, frame = received[0]
            handlers[signum](signum, frame)
            raise ServerKilled

    sanic_start, sanic_wait = manager.start, manager.wait_for_ack
    sanic_all_ack = manager._all_workers_ack

    def start() -> None:
        step()
        sanic_start()
        step()

    def all_workers_ack() -> bool:
        step()
        return bool(sanic_all_ack())

    def wait_for_ack() -> None:
        nonlocal starting
        sanic_wait()
        starting = False  # from here on Sanic's handler; one noted before, acted on
        step()

    for number in (signal.SIGTERM, signal.SIGINT):
        sanics = signal.getsignal(number)
        if callable(sanics):
            handlers[number] = sanics
            signal.signal(number, handler)
    manager.start, manager.wait_for_ack = start, wait_for_ack
    manager._all_workers_ack = all_workers_ack
    if getattr(manager, "_shutting_down", False):  # Sanic's handler ran before this
        raise ServerKilled


def serve(settings: Settings) -> int:
    """Run the service with ``settings`` until interrupted; returns the exit code (the
    ``decido serve`` command: :mod:`decido_service.cli`)."""
    from sanic import Sanic
    from sanic.worker.loader import AppLoader

    from decido_service.http.app import create_app
    from decido_service.http.connections import CappedProtocol
    _environment(settings)
    problem = port_problem(settings.host, settings.port)
    if problem is not None:
        sys.stderr.write(problem)
        return 1
    asyncio.run(_check_store(settings))
    loader = AppLoader(factory=create_app)
    app = loader.load()

    @app.main_process_ready
    async def _announce(_app: Sanic[Any, Any], _loop: Any) -> None:
        end_start_up_on_signal(_app.manager)
        sys.stdout.write(banner(settings))
        sys.stdout.flush()

    app.prepare(host=settings.host, port=settings.port, workers=settings.workers,
                access_log=False, motd=False, single_process=False,
                protocol=CappedProtocol)
    try:
        Sanic.serve(primary=app, app_loader=loader)
    except OSError as exc:  # taken between the check and the bind
        sys.stderr.write(port_problem(settings.host, settings.port, exc) or f"{exc}\n")
        return 1
    return 0
