"""The worker's services (:mod:`decido_service.services`) on ``app.ctx``, opened when a
worker starts and closed when it stops, and the worker's garbage collector tuned."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
from typing import Any

from sanic import Sanic

from decido_service import services

__all__ = ["register"]

#: young-generation threshold of the cyclic garbage collector in a worker (Python: 700)
GC_GEN0_THRESHOLD = 10_000


def tune_gc() -> None:
    """Move everything loaded at start-up (modules, the app, NumPy) out of the collector's
    sight (``gc.freeze``) and collect the young generation less often: a request allocates
    few cycles, and scanning start-up objects again and again cost a worker about a tenth
    of its time under load (measured, benchmarks/load)."""
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GC_GEN0_THRESHOLD, gen1, gen2)


async def open_resources(app: Sanic[Any, Any]) -> None:
    """``before_server_start``: the worker's services (:func:`services.open_services`)."""
    await services.open_services(app.ctx)
    tune_gc()


async def close_resources(app: Sanic[Any, Any]) -> None:
    """``after_server_stop``: finish the runs (:func:`stop_runs`, a no-op when it ran
    already), stop the pools, send the admissions still queued, close the store."""
    await services.close(app.ctx)


async def stop_runs(app: Sanic[Any, Any]) -> None:
    """``before_server_stop`` (SIGTERM), while the open connections are still served:
    ignore a further SIGTERM or SIGINT (a process manager signals the whole group: the
    worker gets one of its own and one relayed by Sanic's main process, which would stop
    the event loop in the middle of this), then :func:`services.stop_runs` (their clients
    get their answers before Sanic closes the connections)."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, lambda: None)
    await services.stop_runs(app.ctx)


def register(app: Sanic[Any, Any]) -> None:
    """Attach the listeners to ``app``."""
    app.register_listener(stop_runs, "before_server_stop")
    app.register_listener(open_resources, "before_server_start")
    app.register_listener(close_resources, "after_server_stop")
