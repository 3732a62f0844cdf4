"""Webhooks against real processes: ``decido serve`` and a receiver on 127.0.0.1
(``webhook_receiver.py``) that verifies every delivery with the ``standardwebhooks``
package. Only loopback addresses are ever contacted: the servers allow 127.0.0.0/8 with
``DECIDO_WEBHOOK_ALLOW_NETWORKS``, and the refusals are tried with loopback spellings."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from conftest import LiveServer, auth, free_port, running
from test_api_fronts import big_front
from test_api_runs import SPHERE, submit, wait_for

from decido_service.types import Delivery, DeliveryList, Webhook, WebhookCreated

RECEIVER = Path(__file__).with_name("webhook_receiver.py")
#: deliveries to loopback allowed; retries 0.5 s apart so a test sees several attempts
ENV = {"DECIDO_WEBHOOK_ALLOW_NETWORKS": "127.0.0.0/8", "DECIDO_FAKE_NOW": "",
       "DECIDO_WEBHOOK_SCHEDULE": "0,0.5,0.5,0.5"}


class Receiver:
    """The receiver process and what it recorded."""

    def __init__(self, folder: Path, port: int | None = None) -> None:
        self.folder = folder
        folder.mkdir(exist_ok=True)
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Receiver:
        self.proc = subprocess.Popen([sys.executable, str(RECEIVER), str(self.port),
                                      str(self.folder)])
        deadline = time.monotonic() + 10
        import socket

        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(
                    ("127.0.0.1", self.port), 0.2):
                return self
            time.sleep(0.05)
        raise RuntimeError("the receiver did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def plan(self, **plan: Any) -> None:
        (self.folder / "plan.json").write_text(json.dumps(plan))

    def secrets(self, *secrets: str) -> None:
        (self.folder / "secrets.json").write_text(json.dumps(list(secrets)))

    def received(self) -> list[dict[str, Any]]:
        path = self.folder / "received.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def wait(self, done: Callable[[list[dict[str, Any]]], bool],
             timeout: float = 30) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while not done(got := self.received()):
            assert time.monotonic() < deadline, got
            time.sleep(0.05)
        return got


@contextlib.contextmanager
def receiver(folder: Path, port: int | None = None) -> Iterator[Receiver]:
    r = Receiver(folder, port).start()
    try:
        yield r
    finally:
        r.stop()


def create(server: LiveServer, key: str, url: str, events: list[str] | None = None,
           status: int = 201) -> dict[str, Any]:
    r = server.request("POST", "/v1/webhooks", {"url": url, "events": events or ["*"]},
                       headers=auth(key))
    assert r.status == status, r.body
    if status == 201:
        msgspec.convert(r.json(), WebhookCreated)
        assert r.header("cache-control") == "no-store"
    return r.json()


def deliveries(server: LiveServer, key: str, hook: str, query: str = "") -> dict[str, Any]:
    r = server.request("GET", f"/v1/webhooks/{hook}/deliveries{query}", headers=auth(key))
    assert r.status == 200, r.body
    msgspec.convert(r.json(), DeliveryList)
    return r.json()


def wait_delivery(server: LiveServer, key: str, hook: str, ok: Callable[[dict], bool],
                  timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        found = deliveries(server, key, hook)["data"]
        if found and ok(found[0]):
            return found[0]
        assert time.monotonic() < deadline, found
        time.sleep(0.1)


@pytest.fixture(scope="module")
def hooks_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server of the module's tests that delivers to loopback (one worker)."""
    with running(tmp_path_factory.mktemp("webhooks"), ENV, workers=1) as server:
        yield server


def test_run_event_signed_retried_with_one_id_and_listed(hooks_server: LiveServer,
                                                          tmp_path: Path) -> None:
    server = hooks_server
    with receiver(tmp_path / "rcv") as rcv:
        key = server.create_key(tier="pro")["key"]
        hook = create(server, key, rcv.url, ["run.succeeded"])
        rcv.secrets(hook["secret"])
        rcv.plan(statuses=[500, 503])  # two failures (one with Retry-After: 1), then 200
        run = submit(server, key, {**SPHERE, "metadata": {"project": "bridge-A"}})
        got = rcv.wait(lambda g: len(g) >= 3)
        assert len({g["id"] for g in got}) == 1  # one event, one webhook-id on every attempt
        assert all(g["verified"] == [hook["secret"]] for g in got)
        body = json.loads(got[-1]["body"])
        final = wait_for(server, key, run["id"], "succeeded")
        assert body["type"] == "run.succeeded" and body["data"] == final
        assert "trace" not in body["data"]
        assert body["data"]["metadata"] == {"project": "bridge-A"}  # labels travel along
        assert got[0]["headers"]["user-agent"].startswith("decido-webhooks/")
        found = wait_delivery(server, key, hook["id"], lambda d: d["state"] == "delivered")
        msgspec.convert(found, Delivery)
        assert found["id"] == got[0]["id"] and found["event"] == "run.succeeded"
        assert [a["status"] for a in found["attempts"]] == [500, 503, 200]
        assert found["attempts"][0]["response"] == "ok" and found["next_attempt_at"] is None

        # the test event, a rotation (both secrets sign for 24 h), another key's 404
        rotated = server.request("POST", f"/v1/webhooks/{hook['id']}/rotate",
                                 headers=auth(key)).json()
        assert rotated["secret"] != hook["secret"]
        rcv.secrets(hook["secret"], rotated["secret"])
        r = server.request("POST", f"/v1/webhooks/{hook['id']}/test", headers=auth(key))
        assert r.status == 202 and r.json()["event"] == "webhook.test"
        got = rcv.wait(lambda g: any(json.loads(x["body"])["type"] == "webhook.test"
                                     for x in g))
        assert sorted(got[-1]["verified"]) == sorted([hook["secret"], rotated["secret"]])
        assert len(got[-1]["headers"]["webhook-signature"].split(" ")) == 2
        page = deliveries(server, key, hook["id"], "?limit=1")
        assert page["has_more"] and page["data"][0]["event"] == "webhook.test"
        rest = deliveries(server, key, hook["id"], f"?starting_after={page['data'][0]['id']}")
        assert [d["event"] for d in rest["data"]] == ["run.succeeded"]
        other = server.create_key()["key"]
        for method, path in (("GET", ""), ("PATCH", ""), ("DELETE", ""), ("POST", "/test"),
                             ("GET", "/deliveries"), ("POST", "/rotate")):
            r = server.request(method, f"/v1/webhooks/{hook['id']}{path}",
                               {} if method == "PATCH" else None, headers=auth(other))
            assert r.status == 404, (method, path, r.body)

        # resend: once more, the same webhook-id
        before = len(rcv.received())
        r = server.request("POST", f"/v1/webhooks/{hook['id']}/deliveries/{found['id']}"
                           "/resend", headers=auth(key))
        assert r.status == 202, r.body
        got = rcv.wait(lambda g: len(g) > before)
        assert got[-1]["id"] == found["id"]

        # the tier's cap (pro: 5), then delete
        for _ in range(4):
            create(server, key, rcv.url)
        refused = create(server, key, rcv.url, status=403)
        assert refused["code"] == "too_many_webhooks" and refused["limit_value"] == 5
        listed = server.request("GET", "/v1/webhooks", headers=auth(key)).json()["data"]
        assert len(listed) == 5 and all("secret" not in h for h in listed)
        assert server.request("DELETE", f"/v1/webhooks/{hook['id']}",
                              headers=auth(key)).status == 204
        assert server.request("GET", f"/v1/webhooks/{hook['id']}",
                              headers=auth(key)).status == 404


def test_a_run_event_stays_small_whatever_the_front(hooks_server: LiveServer,
                                                     tmp_path: Path) -> None:
    """The payload of a run with a front of about 2.5 MB: the run as GET /v1/runs/{id}
    answers it, its front's size and hypervolume but not its points (stored and sent
    once per endpoint, it was the whole front on every attempt)."""
    server = hooks_server
    with receiver(tmp_path / "rcv") as rcv:
        key = server.create_key(tier="pro", limits={
            "optimization": {"max_archive_size": 2500}})["key"]  # beyond the tier's cap
        hook = create(server, key, rcv.url, ["run.succeeded"])
        rcv.secrets(hook["secret"])
        run = submit(server, key, big_front())
        got = rcv.wait(lambda g: len(g) >= 1, timeout=120)
        final = wait_for(server, key, run["id"], "succeeded")
        assert len(got[0]["body"]) < 64 * 1024, len(got[0]["body"])
        body = json.loads(got[0]["body"])
        assert body["data"] == final and final["result"]["front_size"] == 2500
        assert "pareto" not in body["data"]["result"]
    with sqlite3.connect(server.db) as db:
        (stored,) = db.execute("SELECT max(length(payload)) FROM webhook_deliveries "
                               "WHERE webhook_id = ?", (hook["id"],)).fetchone()
    assert stored < 64 * 1024, stored


def test_410_disables_and_redirects_are_not_followed(hooks_server: LiveServer,
                                                      tmp_path: Path) -> None:
    server = hooks_server
    with receiver(tmp_path / "rcv") as rcv:
        key = server.create_key(tier="pro")["key"]
        hook = create(server, key, rcv.url)
        rcv.plan(statuses=[302, 302, 302, 302])  # a redirect to the receiver's /redirected
        server.request("POST", f"/v1/webhooks/{hook['id']}/test", headers=auth(key))
        found = wait_delivery(server, key, hook["id"], lambda d: d["state"] == "failed")
        assert [a["status"] for a in found["attempts"]] == [302] * 4  # schedule exhausted
        assert all(g["path"] == "/hook" for g in rcv.received())  # never followed

        rcv.plan(statuses=[410])
        (rcv.folder / "received.jsonl").unlink()
        server.request("POST", f"/v1/webhooks/{hook['id']}/test", headers=auth(key))
        found = wait_delivery(server, key, hook["id"], lambda d: d["state"] == "failed")
        assert [a["status"] for a in found["attempts"]] == [410]
        doc = server.request("GET", f"/v1/webhooks/{hook['id']}", headers=auth(key)).json()
        msgspec.convert(doc, Webhook)
        assert doc["enabled"] is False and doc["disabled_reason"] == "gone"
        r = server.request("POST", f"/v1/webhooks/{hook['id']}/test", headers=auth(key))
        assert r.status == 409 and r.json()["code"] == "webhook_disabled"
        r = server.request("PATCH", f"/v1/webhooks/{hook['id']}", {"enabled": True},
                           headers=auth(key))
        assert r.status == 200 and r.json()["enabled"] and r.json()["disabled_reason"] is None


def test_pending_delivery_survives_sigterm_and_kill9(tmp_path: Path) -> None:
    env = {**ENV, "DECIDO_WEBHOOK_SCHEDULE": ",".join(["0"] + ["1"] * 60)}
    port = free_port()  # nothing listens there yet: every attempt fails
    server = LiveServer(tmp_path, env, workers=1).start()
    try:
        key = server.create_key(tier="pro")["key"]
        hook = create(server, key, f"http://127.0.0.1:{port}/hook", ["run.succeeded"])
        ids = []
        for stop in (server.stop, server.kill9):
            run = submit(server, key, SPHERE)
            wait_for(server, key, run["id"], "succeeded")
            pending = wait_delivery(server, key, hook["id"],
                                    lambda d: d["attempts"] and d["state"] == "pending")
            assert pending["attempts"][0]["error"]  # connection refused
            ids.append(pending["id"])
            stop()
            with receiver(tmp_path / f"rcv{len(ids)}", port) as rcv:
                rcv.secrets(hook["secret"])
                server.start()
                got = rcv.wait(lambda g: len(g) >= 1)
                assert got[0]["id"] == pending["id"] and got[0]["verified"]
                wait_delivery(server, key, hook["id"], lambda d: d["state"] == "delivered")
        assert len(set(ids)) == 2
    finally:
        server.stop()


LOOPBACK_SPELLINGS = [
    "http://127.0.0.1/", "https://127.0.0.1/", "https://localhost/", "https://2130706433/",
    "https://0x7f000001/", "https://0177.0.0.1/", "https://127.1/", "https://[::1]/",
    "https://[::ffff:127.0.0.1]/", "ftp://127.0.0.1/", "https://user:pw@127.0.0.1/"]


def test_creation_refuses_loopback_without_the_setting(server: LiveServer,
                                                       free_key: str) -> None:
    for url in LOOPBACK_SPELLINGS:
        problem = create(server, free_key, url, status=422)
        assert problem["errors"][0]["pointer"] == "/url", (url, problem)
        assert problem["errors"][0]["code"] == "address_refused", (url, problem)
    r = server.request("PATCH", "/v1/webhooks/wh_000000000000000000000000",
                       {"url": "https://[::1]/"}, headers=auth(free_key))
    assert r.status == 404  # no such endpoint: nothing is resolved


def test_creation_validates_the_body(server: LiveServer, free_key: str) -> None:
    problem = create(server, free_key, "https://127.0.0.1/", ["run.exploded"], status=422)
    assert [(e["pointer"], e["code"]) for e in problem["errors"]] == [
        ("/url", "address_refused"), ("/events/0", "not_allowed")]  # every fault
    problem = create(server, free_key, "https://93.184.215.14:0/", status=422)  # a literal:
    assert [(e["pointer"], e["code"]) for e in problem["errors"]] == [  # nothing resolved
        ("/url", "address_refused")] and "port 0" in problem["errors"][0]["message"]
    problem = create(server, free_key, "https://hooks.example/decido", status=422)
    assert "special-use" in problem["errors"][0]["message"]
    hook = create(server, free_key, "https://93.184.215.14/hook")  # a public literal
    r = server.request("PATCH", f"/v1/webhooks/{hook['id']}",
                       {"url": "https://127.0.0.1/", "events": ["run.exploded"]},
                       headers=auth(free_key))
    assert r.status == 422 and [(e["pointer"], e["code"]) for e in r.json()["errors"]] == [
        ("/url", "address_refused"), ("/events/0", "not_allowed")], r.body
    assert server.request("DELETE", f"/v1/webhooks/{hook['id']}",
                          headers=auth(free_key)).status == 204
    r = server.request("POST", "/v1/webhooks", {"events": []}, headers=auth(free_key))
    assert r.status == 422 and {e["pointer"] for e in r.json()["errors"]} >= {"/url"}
    assert server.request("GET", "/v1/webhooks/wh_nope", headers=auth(free_key)).status == 404
    assert server.request("GET", "/v1/webhooks").status == 401


def test_the_receiver_of_the_docs_accepts_deliveries(hooks_server: LiveServer,
                                                      tmp_path: Path) -> None:
    """docs/webhooks.md's receiver, run as it is written, verifies a real delivery."""
    text = (Path(__file__).parents[2] / "docs" / "webhooks.md").read_text()
    code = text.split("## A receiver", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "receiver.py").write_text(code)
    port = free_port()
    server = hooks_server
    key = server.create_key(tier="pro")["key"]
    hook = create(server, key, f"http://127.0.0.1:{port}/")
    proc = subprocess.Popen([sys.executable, str(tmp_path / "receiver.py")],
                            env={**os.environ, "WEBHOOK_SECRET": hook["secret"],
                                 "PORT": str(port)},
                            stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:  # until the receiver listens and has taken a test event
            server.request("POST", f"/v1/webhooks/{hook['id']}/test", headers=auth(key))
            found = wait_delivery(server, key, hook["id"], lambda d: d["attempts"])
            if found["state"] == "delivered":
                break
            assert time.monotonic() < deadline, found
            time.sleep(0.2)
        assert found["attempts"][-1]["status"] == 204
        forged = create(server, key, f"http://127.0.0.1:{port}/")  # another secret
        server.request("POST", f"/v1/webhooks/{forged['id']}/test", headers=auth(key))
        refused = wait_delivery(server, key, forged["id"], lambda d: d["attempts"])
        assert refused["attempts"][0]["status"] == 400
    finally:
        proc.terminate()
        out, _ = proc.communicate(10)
    assert out.startswith("webhook.test None")


class Silent:
    """A receiver that accepts every connection, reads the request head and never
    answers; it counts the connections open at once, in all and per path."""

    def __init__(self) -> None:
        import socket
        import threading

        self.sock = socket.create_server(("127.0.0.1", 0), backlog=256)
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.open: dict[str, int] = {}
        self.most = 0
        self.most_per_path = 0
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import threading

        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self._hold, args=(conn,), daemon=True).start()

    def _hold(self, conn: Any) -> None:
        head = b""
        with contextlib.suppress(OSError):
            while b"\r\n" not in head:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
        path = head.split(b" ")[1].decode() if head.count(b" ") >= 2 else "?"
        with self.lock:
            self.open[path] = self.open.get(path, 0) + 1
            self.most = max(self.most, sum(self.open.values()))
            self.most_per_path = max(self.most_per_path, self.open[path])
        with contextlib.suppress(OSError):
            while conn.recv(4096):  # until the client gives up
                pass
        with self.lock:
            self.open[path] -= 1

    def close(self) -> None:
        self.sock.close()
        for conn in self.conns:
            with contextlib.suppress(OSError):
                conn.close()


def test_silent_endpoints_of_one_key_never_hold_up_another_keys(tmp_path: Path) -> None:
    """One key's 80 deliveries to endpoints that never answer (each attempt holds its slot
    for the 15 s timeout) take at most the per-key and per-endpoint caps of the slots:
    another key's delivery still arrives within a few seconds (it waited 150 s behind
    them when deliveries were one line for every key)."""
    silent = Silent()
    env = {**ENV, "DECIDO_WEBHOOK_KEY_CONCURRENCY": "4",
           "DECIDO_WEBHOOK_ENDPOINT_CONCURRENCY": "2"}
    try:
        with running(tmp_path, env, workers=1) as server, \
                receiver(tmp_path / "rcv") as rcv:
            noisy = server.create_key(tier="pro")["key"]
            hooks = [create(server, noisy, f"http://127.0.0.1:{silent.port}/h{i}")
                     for i in range(5)]
            for _ in range(16):
                for h in hooks:
                    r = server.request("POST", f"/v1/webhooks/{h['id']}/test",
                                       headers=auth(noisy))
                    assert r.status == 202, r.body
            deadline = time.monotonic() + 10
            while silent.most < 4:  # the noisy key's attempts are under way
                assert time.monotonic() < deadline, silent.open
                time.sleep(0.05)
            calm = server.create_key(tier="pro")["key"]
            hook = create(server, calm, rcv.url)
            rcv.secrets(hook["secret"])
            sent = time.monotonic()
            r = server.request("POST", f"/v1/webhooks/{hook['id']}/test", headers=auth(calm))
            assert r.status == 202, r.body
            got = rcv.wait(lambda g: len(g) >= 1, timeout=20)
            waited = time.monotonic() - sent
            assert got[0]["verified"] == [hook["secret"]]
            assert waited < 3.0, waited
            assert silent.most == 4 and silent.most_per_path <= 2, silent.open
    finally:
        silent.close()
