"""``GET /metrics`` (Prometheus text format, prometheus-client): off by default; with
``DECIDO_METRICS=1`` the counters of both workers summed, the latency histogram, refused
admissions by code and the runs queued or running (from the store)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from conftest import auth, running

pytest.importorskip("prometheus_client")
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

SLOW = {"bounds": [[-5, 5]] * 300, "objective_expression": "sum(sin(x)**2)",
        "engine": "random", "max_evaluations": 2_000_000, "time_limit": 30}


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_metrics_are_off_unless_enabled(tmp_path: Path) -> None:
    with running(tmp_path, workers=1) as srv:
        assert srv.request("GET", "/metrics").status == 404


def test_metrics_sum_every_worker(tmp_path: Path) -> None:
    with running(tmp_path, {"DECIDO_METRICS": "1",
                            "DECIDO_METRICS_DIR": str(tmp_path / "metrics")},
                 workers=2) as srv:
        key = srv.create_key()["key"]  # free: 10 decisions a minute
        n = 40  # new connections each: the kernel spreads them over both workers
        for _ in range(n):
            assert srv.request("GET", "/v1/engines").status == 200
        for _ in range(12):
            srv.request("POST", "/v1/decide", {"options": [{"id": "a", "attributes": {"p": 1}}],
                                               "expression": "p"}, headers=auth(key))
        capped = srv.request("POST", "/v1/runs", SLOW, headers=auth(key))
        assert capped.status == 403  # the free tier's 50 dimensions
        pro = srv.create_key(tier="pro")["key"]
        submitted = srv.request("POST", "/v1/runs", SLOW, headers=auth(pro))
        assert submitted.status == 202, submitted.body
        run = submitted.json()
        time.sleep(1)
        r = srv.request("GET", "/metrics")
        assert r.status == 200 and r.header("content-type").startswith("text/plain")
        got = samples(r.body.decode())
        engines = (("method", "GET"), ("route", "/v1/engines"), ("status", "200"))
        assert got[("decido_http_requests_total", engines)] == n
        refused = got[("decido_admissions_refused_total", (("code", "rate_limited"),))]
        assert refused == 2
        capped_count = got[("decido_admissions_refused_total", (("code", "max_dims_exceeded"),))]
        assert capped_count == 1
        ok = got[("decido_http_requests_total", (("method", "POST"), ("route", "/v1/decide"),
                                                 ("status", "200")))]
        assert ok == 10
        bucket = [v for (name, labels), v in got.items()
                  if name == "decido_http_request_duration_seconds_count"
                  and ("route", "/v1/engines") in labels]
        assert bucket == [n]
        states = {dict(labels)["state"]: v for (name, labels), v in got.items()
                  if name == "decido_runs"}
        assert states["running"] + states["queued"] == 1
        assert set(states) == {"queued", "running", "succeeded", "failed", "cancelled"}
        srv.request("POST", f"/v1/runs/{run['id']}/cancel", headers=auth(pro))
        deadline = time.monotonic() + 30  # a finished run counts in its final state
        while True:
            got = samples(srv.request("GET", "/metrics").body.decode())
            states = {dict(labels)["state"]: v for (name, labels), v in got.items()
                      if name == "decido_runs"}
            if states["cancelled"] == 1 and states["running"] + states["queued"] == 0:
                break
            assert time.monotonic() < deadline, states
            time.sleep(0.2)
        # both workers wrote their own files: the sum came from several processes
        files = [p.name for p in (tmp_path / "metrics").iterdir()]
        assert len({re.sub(r"\D", "", f) for f in files if f.startswith("counter")}) == 2


def test_made_up_methods_are_labelled_other(tmp_path: Path) -> None:
    """Any token is a method on the wire; 200 made-up ones made 200 label values."""
    with running(tmp_path, {"DECIDO_METRICS": "1",
                            "DECIDO_METRICS_DIR": str(tmp_path / "metrics")},
                 workers=1) as srv:
        for i in range(200):
            assert srv.request(f"X{i}", "/v1/health").status in (400, 405)
        assert srv.request("GET", "/v1/health").status == 200
        got = samples(srv.request("GET", "/metrics").body.decode())
        methods = {dict(labels)["method"] for (name, labels), _ in got.items()
                   if name == "decido_http_requests_total"}
        assert methods == {"GET", "other"}
        other = sum(v for (name, labels), v in got.items()
                    if name == "decido_http_requests_total" and ("method", "other") in labels)
        assert other == 200


def test_serve_help_names_the_metrics_switch() -> None:
    import subprocess

    from conftest import decido_command

    out = subprocess.run([*decido_command(), "serve", "--help"], capture_output=True,
                         text=True, check=True).stdout
    assert "DECIDO_METRICS=1" in out and "/metrics" in out
