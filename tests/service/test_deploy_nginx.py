"""The nginx configuration of ``docs/deploy.md``, as written there, in front of three nodes on
one PostgreSQL database: requests reach the nodes and are counted exactly; the address
throttle of key creation counts the address nginx saw, whatever ``X-Forwarded-For`` a client
sends; a run's event stream comes through unbuffered (a progress event arrives while the run
runs) and ends with its terminal event; a run is cancelled through the proxy.

Debian's nginx is installed when missing (:mod:`debian`). The documented block is used as is,
except what cannot be the same on a test machine: the ``upstream`` addresses become the
nodes' ports, ``listen 443 ssl`` a loopback port, and the ``ssl_*`` lines go."""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import LiveServer, auth, free_port
from debian import ensure_package
from sse import Stream
from test_api_runs import SLOW, submit
from test_store_multinode import (  # noqa: F401 - database: the fixture
    KEYS_PER_HOUR,
    database,
    decide,
    nodes,
    spread,
    used,
)

DEPLOY = Path(__file__).resolve().parents[2] / "docs" / "deploy.md"
#: the nodes believe X-Forwarded-For from the proxy only (nginx connects from loopback);
#: the real clock, for the runs' time limits and leases
SETTINGS = {"DECIDO_FORWARDED_ALLOW_IPS": "127.0.0.1", "DECIDO_FAKE_NOW": ""}


def documented_block() -> str:
    """The ```nginx block of docs/deploy.md."""
    found = re.search(r"```nginx\n(.*?)```", DEPLOY.read_text(), re.DOTALL)
    assert found, "docs/deploy.md has no nginx block"
    return found[1]


def local_config(block: str, ports: list[int], listen: int, prefix: Path) -> str:
    """``block`` made runnable here, inside a minimal main configuration."""
    upstreams = re.findall(r"^\s*server \d+\.\d+\.\d+\.\d+:\d+ .*;$", block, re.MULTILINE)
    assert len(upstreams) == len(ports), upstreams
    for line, port in zip(upstreams, ports, strict=True):
        block = block.replace(line, re.sub(r"\d+\.\d+\.\d+\.\d+:\d+", f"127.0.0.1:{port}", line))
    assert "listen 443 ssl;" in block
    block = block.replace("listen 443 ssl;", f"listen 127.0.0.1:{listen};")
    block = "\n".join(line for line in block.splitlines() if not line.strip().startswith("ssl_"))
    temp = "\n".join(f"    {kind}_temp_path {prefix / kind};"
                     for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return (f"daemon off;\nworker_processes 1;\nuser root;\npid {prefix / 'nginx.pid'};\n"
            f"error_log {prefix / 'error.log'} warn;\nevents {{ worker_connections 1024; }}\n"
            f"http {{\n    access_log off;\n{temp}\n{block}\n}}\n")


@contextlib.contextmanager
def nginx_in_front(servers: list[LiveServer], prefix: Path) -> Iterator[LiveServer]:
    """nginx with the documented configuration before ``servers``; a handle whose
    ``request`` goes through it."""
    binary = ensure_package("/usr/sbin/nginx", "nginx")
    prefix.mkdir()
    port = free_port()
    conf = prefix / "nginx.conf"
    conf.write_text(local_config(documented_block(), [s.port for s in servers], port, prefix))
    check = subprocess.run([binary, "-t", "-p", str(prefix), "-c", str(conf)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    proc = subprocess.Popen([binary, "-p", str(prefix), "-c", str(conf)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "nginx did not listen"
            time.sleep(0.1)
        yield LiveServer(prefix, port=port)
    finally:
        proc.terminate()
        proc.wait(15)


@pytest.fixture
def fleet(tmp_path: Path, database: tuple[str, str]  # noqa: F811 - the fixture
          ) -> Iterator[tuple[LiveServer, list[LiveServer]]]:
    _, url = database
    with nodes(tmp_path, url, env=SETTINGS) as servers, \
            nginx_in_front(servers, tmp_path / "nginx") as front:
        yield front, servers


def test_requests_through_nginx_reach_the_nodes_and_are_counted_exactly(fleet) -> None:  # noqa: ANN001
    front, servers = fleet
    key = servers[0].create_key(plan="rtl")["key"]
    assert front.request("GET", "/v1/health").status == 200
    answers = spread([front], 40, decide(key), threads=8)
    assert {r.status for r in answers} == {200}
    assert all(r.header("x-ratelimit-limit") for r in answers)
    assert used(servers[1], key)["month"] == 40


def test_a_forwarded_for_header_sent_by_a_client_is_not_believed(fleet) -> None:  # noqa: ANN001
    """nginx replaces X-Forwarded-For with the address it saw: a client cannot spread its
    key creations over invented addresses."""
    front, _ = fleet
    statuses = [front.request("POST", "/v1/keys", {"label": f"k{i}"},
                              headers={"X-Forwarded-For": f"203.0.113.{i}"}).status
                for i in range(KEYS_PER_HOUR + 1)]
    assert statuses == [201] * KEYS_PER_HOUR + [429], statuses


def test_a_run_is_watched_and_cancelled_through_nginx(fleet) -> None:  # noqa: ANN001
    front, servers = fleet
    key = servers[0].create_key(tier="team")["key"]
    run = submit(front, key, SLOW)
    kinds: list[str] = []
    with Stream(front.port, f"/v1/runs/{run['id']}/events", auth(key)) as stream:
        assert stream.status == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        for event in stream.events():
            kinds.append(event.kind)
            if event.kind == "progress" and kinds.count("progress") == 1:
                # it came while the run runs: nothing between the node and us held it back
                now = front.request("GET", f"/v1/runs/{run['id']}", headers=auth(key)).json()
                assert now["state"] == "running", now["state"]
                cancel = front.request("POST", f"/v1/runs/{run['id']}/cancel",
                                       headers=auth(key))
                assert cancel.status == 202, cancel.body
            if event.kind in ("result", "error"):
                assert event.data["state"] == "cancelled", event.data
    assert "progress" in kinds and kinds[-1] == "result", kinds
