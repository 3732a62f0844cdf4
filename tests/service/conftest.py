"""Start the real service (``decido serve --workers 2``) for the API tests, and talk to it.

:class:`LiveServer` runs ``decido serve`` as a subprocess in its own process group on an
ephemeral port of 127.0.0.1 with a temporary database, waits for ``/v1/health`` and stops
(or ``kill -9``s) the whole group. Requests use ``http.client`` (no client library needed).
The session-wide ``server`` runs on a fixed fake clock (``DECIDO_FAKE_NOW``) when the
settings support it, so per-minute counters never roll over in the middle of a test.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sanic")

START_TIMEOUT = 60.0
#: ports tried when another process takes the chosen one before the server binds it
PORT_TRIES = 5
#: every exchange of every LiveServer of the session: (method, path, response); the OpenAPI
#: test validates them all against the document
RECORDED: list[tuple[str, str, Response]] = []
#: 2025-03-14T12:00:30Z: the session server's fake clock (mid-minute, mid-month)
FAKE_NOW = 1741953630.0


def decido_command() -> list[str]:
    """The ``decido`` console script of this interpreter's environment (or ``-m``)."""
    script = Path(sys.executable).with_name("decido")
    if script.exists():
        return [str(script)]
    found = shutil.which("decido")
    return [found] if found else [sys.executable, "-m", "decido.cli"]


def fake_clock_supported() -> bool:
    """True when the settings read ``DECIDO_FAKE_NOW`` (a fixed clock for tests)."""
    from decido_service.config import Settings

    try:
        return Settings.from_env({"DECIDO_FAKE_NOW": "1000"}).now() == 1000.0
    except (TypeError, ValueError):
        return False


def free_port() -> int:
    """An ephemeral port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Response:
    """A finished HTTP exchange."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


@dataclass
class LiveServer:
    """``decido serve`` in a subprocess (own process group), with its database and log."""

    workdir: Path
    env: dict[str, str] = field(default_factory=dict)
    workers: int = 2
    db_url: str | None = None
    port: int = 0
    proc: subprocess.Popen | None = None

    @property
    def db(self) -> Path:
        return self.workdir / "decido.db"

    @property
    def log(self) -> Path:
        return self.workdir / "server.log"

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DECIDO_")}
        return {**env, **self.env}

    def start(self) -> LiveServer:
        """Start and wait until ``/v1/health`` answers 200. The free port is chosen before
        the server binds it, so another test's process may take it between the two: the
        server then exits saying so, and it is started again on another port."""
        for _ in range(PORT_TRIES):
            if self._start_on(free_port()):
                return self
        raise RuntimeError(f"decido serve found no free port:\n{self.log.read_text()}")

    def _logged_since(self, offset: int) -> str:
        return self.log.read_bytes()[offset:].decode(errors="replace")

    def _start_on(self, port: int) -> bool:
        """Start on ``port``; False when the port was taken meanwhile."""
        self.port = port
        cmd = [*decido_command(), "serve", "--workers", str(self.workers), "--host",
               "127.0.0.1", "--port", str(self.port), "--db", self.db_url or str(self.db)]
        logged = self.log.stat().st_size if self.log.exists() else 0
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                         env=self.environment(), start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                if f"port {port} is already in use" in self._logged_since(logged):
                    return False
                raise RuntimeError(f"decido serve exited early:\n{self.log.read_text()}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                # one worker answering is not enough: tests that touch the database must
                # not race the others' start-up (migrations), so wait for every worker
                if (self.request("GET", "/v1/health", timeout=2).status == 200
                        and self._logged_since(logged).count("Worker ready") >= self.workers):
                    if not _document_recorded():  # for the session's end (below)
                        self.request("GET", "/v1/openapi.json")
                    return True
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"decido serve did not come up:\n{self.log.read_text()}")

    def _signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)

    def stop(self) -> None:
        """SIGTERM the process group (SIGKILL after 15 s)."""
        if self.proc is None:
            return
        self._signal_group(signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self._signal_group(signal.SIGKILL)
            self.proc.wait(5)
        self._signal_group(signal.SIGKILL)  # any straggling worker
        self.proc = None

    def kill9(self) -> None:
        """``kill -9`` every process of the server at once (no clean-up runs)."""
        self._signal_group(signal.SIGKILL)
        self.proc.wait(10)
        self.proc = None

    def request(self, method: str, path: str, body: Any = None, *,
                headers: dict[str, str] | None = None, raw: bytes | None = None,
                timeout: float = 30) -> Response:
        """One request on a new connection; ``body`` is sent as JSON, ``raw`` as is."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            hdrs = dict(headers or {})
            data = raw
            if body is not None:
                data = json.dumps(body).encode()
                hdrs.setdefault("Content-Type", "application/json")
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            out = Response(resp.status, {k.lower(): v for k, v in resp.getheaders()},
                           resp.read())
            RECORDED.append((method, path, out))
            return out
        finally:
            conn.close()

    def create_key(self, plan: str = "free", tier: str = "free",
                   label: str | None = None, limits: dict[str, Any] | None = None
                   ) -> dict[str, Any]:
        """A key made with ``decido keys create --json`` (the admin CLI) on this database;
        ``limits``: its per-key limit overrides."""
        cmd = [*decido_command(), "keys", "create", "--plan", plan, "--tier", tier,
               "--db", self.db_url or str(self.db), "--json"]
        if label:
            cmd += ["--label", label]
        if limits:
            cmd += ["--limits", json.dumps(limits)]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                             env=self.environment(), check=True)
        return json.loads(out.stdout)


def auth(key: str, style: str = "bearer") -> dict[str, str]:
    """Credentials headers in one of the two accepted styles."""
    return {"Authorization": f"Bearer {key}"} if style == "bearer" else {"X-API-Key": key}


@contextlib.contextmanager
def running(workdir: Path, env: dict[str, str] | None = None, **kw: Any):
    """A server for the duration of a ``with`` block."""
    server = LiveServer(workdir, dict(env or {}), **kw).start()
    try:
        yield server
    finally:
        server.stop()


#: the session server: small per-run caps so schemathesis stays quick; a short busy
#: timeout so the store_unavailable test need not hold a lock for long; 1 run thread and
#: no queue per worker so "overloaded" is reachable.
SESSION_ENV = {
    "DECIDO_RUN_THREADS": "1",
    "DECIDO_RUN_QUEUE": "0",
    "DECIDO_TIERS": json.dumps({"enterprise": {"max_evaluations": 200000,
                                               "max_time_limit": 2}}),
}


def _document_recorded() -> bool:
    return any(m == "GET" and p == "/v1/openapi.json" and r.status == 200
               for m, p, r in RECORDED)


@pytest.fixture(scope="session", autouse=True)
def recorded_exchanges_match_the_document() -> Iterator[None]:
    """After the session's last test, every exchange a :class:`LiveServer` recorded is
    validated against the OpenAPI document (test_api_openapi.py's check), in each
    pytest-xdist worker (each records its own): whatever order the tests ran in and
    wherever test_api_openapi.py ran, no response escapes the document."""
    yield
    documents = [r for m, p, r in RECORDED
                 if m == "GET" and p == "/v1/openapi.json" and r.status == 200]
    if not documents:
        return
    from test_api_openapi import _check

    document = documents[0].json()
    for method, path, resp in list(RECORDED):
        _check(document, method, path, resp)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory):
    """The shared live server (2 workers)."""
    workdir = tmp_path_factory.mktemp("server")
    env = dict(SESSION_ENV)
    if fake_clock_supported():
        env["DECIDO_FAKE_NOW"] = str(FAKE_NOW)
    db_url = f"sqlite:///{workdir / 'decido.db'}?busy_timeout=1000"
    with running(workdir, env, db_url=db_url) as srv:
        yield srv


@pytest.fixture
def free_key(server: LiveServer) -> str:
    """A fresh free/free key's secret."""
    return server.create_key()["key"]
