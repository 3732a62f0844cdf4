"""``Idempotency-Key`` submissions whose connection is cut mid-request (a live server, raw
sockets): whatever the moment of the cut, the resend with the same key answers one run
(the first request's, when it was admitted) and exactly one run exists for the key; the
key is never left stuck ``409 idempotency_key_in_use``."""

from __future__ import annotations

import json
import socket
import struct
import time
from collections.abc import Iterator

import pytest
from conftest import LiveServer, Response, auth, running

#: one quick run per submission; a key allowed many at once and many a minute
ENV = {"DECIDO_RUN_THREADS": "2",
       "DECIDO_TIERS": json.dumps({"team": {"max_runs": 1000, "minute": 100000}})}
BODY = {"bounds": [[-5, 5]] * 3, "objective_expression": "sum((x - 1)**2)", "seed": 3,
        "max_evaluations": 100}
#: seconds between sending a request and cutting its connection
CUTS = [0.0, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.008, 0.012, 0.02, 0.03, 0.05, 0.1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with running(tmp_path_factory.mktemp("cut"), ENV, workers=2) as srv:
        yield srv


def send_and_cut(srv: LiveServer, path: str, body: bytes, headers: dict[str, str],
                 after: float, reset: bool) -> None:
    """Send one whole request on a new connection and close it ``after`` seconds later
    without reading the answer (``reset``: with a TCP RST, as a killed client does)."""
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    raw = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           f"Content-Length: {len(body)}\r\n{head}\r\n").encode() + body
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    try:
        if reset:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.sendall(raw)
        if after:
            time.sleep(after)
    finally:
        sock.close()


def resend(srv: LiveServer, path: str, body: dict[str, object],
           headers: dict[str, str]) -> Response:
    """The same request again, asked again while it is ``409 idempotency_key_in_use``
    (the first one still being admitted) for at most 10 s."""
    deadline = time.monotonic() + 10
    while True:
        answer = srv.request("POST", path, body, headers=headers)
        if answer.status != 409 or answer.json()["code"] != "idempotency_key_in_use" \
                or time.monotonic() > deadline:
            return answer
        time.sleep(0.05)


@pytest.mark.parametrize("path", ["/v1/runs", "/v1/optimize"])
def test_a_cut_submission_resent_makes_one_run(server: LiveServer, path: str) -> None:
    key = server.create_key(plan="enterprise", tier="team")["key"]
    for i, after in enumerate(CUTS * 2):
        label = f"cut-{i}"
        body = {**BODY, "metadata": {"cut": label}}
        headers = {**auth(key), "Idempotency-Key": label}
        send_and_cut(server, path, json.dumps(body).encode(), headers, after, reset=i % 2 == 1)
        again = resend(server, path, body, headers)
        # /v1/optimize: the first request's run, stopped when its client went away (409
        # run_cancelled when that was before it started)
        expected = [202] if path == "/v1/runs" else [200, 409]
        assert again.status in expected, (after, again.status, again.body)
        if again.status == 409:
            assert again.json()["code"] == "run_cancelled", again.body
        run_id = again.header("location").rsplit("/", 1)[-1]
        made = server.request("GET", f"/v1/runs?metadata[cut]={label}",
                              headers=auth(key)).json()["data"]
        assert [run["id"] for run in made] == [run_id], (after, label, made)
