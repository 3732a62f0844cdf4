"""``GET /metrics``: Prometheus text format, with the official ``prometheus-client``; off
unless ``DECIDO_METRICS=1`` (it needs the ``metrics`` extra).

What is counted, in every worker process:

* ``decido_http_requests_total{route, method, status}``: answered requests, by route
  pattern (``/v1/runs/<run_id:str>``; ``unmatched`` for paths of no route), method (one of
  :data:`METHODS`, else ``other``: a client can send any token as a method) and status;
* ``decido_http_request_duration_seconds{route, method}``: a latency histogram;
* ``decido_admissions_refused_total{code}``: requests refused by a limit or cap (429, the
  403 caps, 503 overloaded or store unavailable), by problem code;
* ``decido_runs{state}``: runs in the store in each state (``queued``, ``running``, and the
  finished ones until their retention ends), read from the store at each
  scrape (so every worker and node agrees: it is the store's number, not a process's).

Every label's values are a bounded set: the app's route patterns and ``unmatched``,
:data:`METHODS` and ``other``, the statuses the service answers, :data:`REFUSED`, and
:data:`decido_service.store.RUN_STATES`.

Several worker processes: ``decido serve`` points ``PROMETHEUS_MULTIPROC_DIR`` at a fresh
directory (``DECIDO_METRICS_DIR``, default a new temporary one) before the workers start;
each worker writes its counters there (prometheus-client's multiprocess mode) and a scrape
of any worker sums them all. Without that variable (an app built some other way) each
process reports its own counters.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from typing import TYPE_CHECKING, Any

from decido_service.store import RUN_STATES

if TYPE_CHECKING:  # decido serve imports this module; Sanic only in the workers
    from sanic import Request, Sanic
    from sanic.response import HTTPResponse

__all__ = ["ENV_DIR", "METHODS", "REFUSED", "Metrics", "enabled", "prepare_directory", "register"]

#: the variable prometheus-client reads for its multiprocess mode
ENV_DIR = "PROMETHEUS_MULTIPROC_DIR"
#: problem codes that count as a refused admission
REFUSED = frozenset({"rate_limited", "monthly_quota_exceeded", "too_many_refused",
                     "key_creation_throttled", "too_many_runs", "too_many_streams",
                     "max_dims_exceeded", "compute_cap_exceeded", "batch_too_large",
                     "overloaded", "store_unavailable"})
#: the methods labelled by name (RFC 9110's); any other is labelled ``other``
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE",
                     "PATCH"})
_ON = {"1", "true", "yes", "on"}


def enabled(environ: Any = None) -> bool:
    """``DECIDO_METRICS`` is set to 1 (true, yes, on)."""
    env = os.environ if environ is None else environ
    return str(env.get("DECIDO_METRICS", "")).strip().lower() in _ON


def prepare_directory() -> str:
    """For ``decido serve`` (before any worker starts): an empty directory for the workers'
    counters, exported as ``PROMETHEUS_MULTIPROC_DIR``; its path."""
    path = os.environ.get("DECIDO_METRICS_DIR") or tempfile.mkdtemp(prefix="decido-metrics-")
    if os.path.isdir(path):
        shutil.rmtree(path)  # counters of an earlier run of the service
    os.makedirs(path)
    os.environ[ENV_DIR] = path
    return path


class Metrics:
    """The collectors of one worker process."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.own = CollectorRegistry()
        self.requests = Counter("decido_http_requests", "answered HTTP requests",
                                ["route", "method", "status"], registry=self.own)
        self.latency = Histogram("decido_http_request_duration_seconds",
                                 "time from the request's arrival to its answer",
                                 ["route", "method"], registry=self.own,
                                 buckets=(.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1,
                                          2.5, 5, 10, 30, 60))
        self.refused = Counter("decido_admissions_refused", "requests refused by a limit "
                               "or cap", ["code"], registry=self.own)

    def observe(self, request: Request[Any, Any], status: int, seconds: float | None) -> None:
        """Count one answered request."""
        route = request.route.path if request.route is not None else "unmatched"
        route = "/" + route.lstrip("/")
        method = request.method if request.method in METHODS else "other"
        self.requests.labels(route, method, str(status)).inc()
        if seconds is not None:
            self.latency.labels(route, method).observe(seconds)
        code = getattr(request.ctx, "problem_code", None)
        if code in REFUSED:
            self.refused.labels(code).inc()

    async def exposition(self, store: Any) -> bytes:
        """The text of a scrape: every worker's counters (multiprocess mode) or this
        process's, and the runs by state from ``store``."""
        from prometheus_client import CollectorRegistry, generate_latest, multiprocess
        from prometheus_client.core import GaugeMetricFamily

        registry = self.own
        if os.environ.get(ENV_DIR):
            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        runs = GaugeMetricFamily("decido_runs", "runs in the store by state (finished ones "
                                 "until their retention ends)", labels=["state"])
        counts = await store.runs.count_by_state()
        for state in RUN_STATES:
            runs.add_metric([state], counts.get(state, 0))
        return generate_latest(registry) + generate_latest(_Fixed(runs))


class _Fixed:
    """A registry-like holder of metric families already made (for ``generate_latest``)."""

    def __init__(self, *families: Any) -> None:
        self._families = families

    def collect(self) -> Any:
        return iter(self._families)


async def _scrape(request: Request[Any, Any]) -> HTTPResponse:
    from prometheus_client import CONTENT_TYPE_LATEST
    from sanic.response import HTTPResponse

    metrics = request.app.ctx.metrics
    assert metrics is not None  # the route exists only with the metrics on
    started = time.perf_counter()
    body = await metrics.exposition(request.app.ctx.store)
    metrics.observe(request, 200, time.perf_counter() - started)
    return HTTPResponse(body, content_type=CONTENT_TYPE_LATEST)


def register(app: Sanic[Any, Any]) -> None:
    """With ``DECIDO_METRICS`` on: ``app.ctx.metrics`` and the ``/metrics`` route; else
    nothing (``/metrics`` is then a 404 like any unknown path)."""
    if not enabled():
        app.ctx.metrics = None
        return
    app.ctx.metrics = Metrics()
    app.add_route(_scrape, "/metrics", methods=["GET"], name="metrics")
