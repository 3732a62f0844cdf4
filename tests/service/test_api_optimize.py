"""``POST /v1/optimize`` against the live server: runs, validation, caps, overload, cancel."""

from __future__ import annotations

import json
import socket
import time

from conftest import LiveServer, auth
from test_api_meta import assert_common_headers, assert_problem

from decido_service.store.blocking import open_blocking

SPHERE = {"bounds": [[-5, 5]] * 4, "objective_expression": "sum((x - 1)**2)", "seed": 7}
#: a run that only stops at its time limit: random search on 1,000 dimensions
SLOW = {"bounds": [[-5, 5]] * 1000, "objective_expression": "sum(sin(x)**2 + cos(3*x))",
        "engine": "random", "max_evaluations": 5_000_000, "time_limit": 3}


def test_optimize_runs_and_is_recorded(server: LiveServer) -> None:
    made = server.create_key(tier="pro")
    r = server.request("POST", "/v1/optimize", SPHERE, headers=auth(made["key"]))
    assert r.status == 200, r.body
    body = r.json()
    assert set(body) == {"id", "run_id", "engine", "status", "message", "x", "value", "goal",
                         "evaluations", "iterations", "elapsed_ms", "seed", "dims", "history",
                         "feasible", "max_violation", "constraints", "variables",
                         "engine_chosen"}
    assert body["feasible"] and body["constraints"] == [] and body["variables"] is None
    assert body["engine"] == body["engine_chosen"] == "dss"
    assert body["dims"] == 4 and body["seed"] == 7
    assert body["status"] == "converged" and body["value"] < 1e-12
    assert all(abs(v - 1) < 1e-6 for v in body["x"])
    assert r.header("x-ratelimit-limit") == "60"  # pro: 60 per minute
    assert_common_headers(r)
    # same seed, same answer
    again = server.request("POST", "/v1/optimize", SPHERE, headers=auth(made["key"], "x"))
    assert again.json()["x"] == body["x"]
    with open_blocking(str(server.db)) as store:
        runs = store.runs.page(made["id"], 100)
    assert {run.id for run in runs} == {body["id"], again.json()["id"]}
    assert runs[0].status == "converged" and runs[0].dims == 4
    usage = server.request("GET", "/v1/usage", headers=auth(made["key"])).json()
    assert usage["optimization"]["month"]["used"] == 2


def test_engine_and_options(server: LiveServer, free_key: str) -> None:
    req = {**SPHERE, "engine": "de", "goal": "maximize", "max_evaluations": 3000,
           "time_limit": 5, "options": {"popsize_factor": 10}, "target": 1e9}
    body = server.request("POST", "/v1/optimize", req, headers=auth(free_key)).json()
    assert body["engine"] == "de" and body["goal"] == "maximize"
    assert body["evaluations"] <= 3000 and body["value"] > 100


def test_auto_says_which_engine_it_ran(server: LiveServer, free_key: str) -> None:
    req = {**SPHERE, "engine": "auto", "max_evaluations": 40}
    body = server.request("POST", "/v1/optimize", req, headers=auth(free_key)).json()
    assert body["engine"] == "auto" and body["engine_chosen"] == "bo"
    assert body["evaluations"] == 40 and body["value"] < 1.0
    schema = server.request("GET", "/v1/openapi.json").json()["components"]["schemas"]
    assert "engine_chosen" in schema["OptimizeResult"]["properties"]


def test_validation_lists_every_field(server: LiveServer, free_key: str) -> None:
    req = {"bounds": [[0, 1], [0, 1], [0, 1], [2, 1]], "objective_expression": "sum(x)",
           "engine": "de", "options": {"popsize": 3}, "seed": -1, "color": "red"}
    body = assert_problem(server.request("POST", "/v1/optimize", req, headers=auth(free_key)),
                          422, "validation_failed")
    found = {e["pointer"]: (e["field"], e["code"]) for e in body["errors"]}
    assert found == {"/bounds/3": ("bounds[3]", "invalid_bounds"),
                     "/options/popsize": ("options.popsize", "invalid_option"),
                     "/seed": ("seed", "out_of_range"),
                     "/color": ("color", "unknown_field")}
    req = {"bounds": [[0, 1]] * 3, "objective_expression": "sum(x**2) + y"}
    (error,) = assert_problem(server.request("POST", "/v1/optimize", req,
                                             headers=auth(free_key)),
                              422, "validation_failed")["errors"]
    assert error["pointer"] == "/objective_expression" and error["position"] == 12
    assert error["field"] == "objective_expression" and error["code"] == "unknown_name"
    body = assert_problem(server.request("POST", "/v1/optimize", {"engine": "nope"},
                                         headers=auth(free_key)), 422, "validation_failed")
    assert {(e["pointer"], e["code"]) for e in body["errors"]} == {
        ("/bounds", "required"), ("/objective_expression", "required"),
        ("/engine", "unknown_engine")}  # the library's fault, which names the value sent
    # invalid requests are not counted as optimizations
    usage = server.request("GET", "/v1/usage", headers=auth(free_key)).json()
    assert usage["optimization"]["month"]["used"] == 0


def test_what_the_schema_refuses_is_refused(server: LiveServer, free_key: str) -> None:
    """The four places where schemathesis once found the document and the service apart
    (for optimize and keys), and nulls where the document says a string."""
    cases = [
        ({**SPHERE, "objective_expression": ""}, "/objective_expression", "invalid_length"),
        ({**SPHERE, "objective_expression": " \t\n "}, "/objective_expression",
         "invalid_format"),
        ({"bounds": [[0, 1]], "objectives": [{"name": "a", "expression": "x[0]"},
                                             {"name": "b", "expression": "  "}]},
         "/objectives/1/expression", "invalid_format"),
        ({**SPHERE, "engine": None}, "/engine", "not_allowed"),
        ({**SPHERE, "goal": None}, "/goal", "not_allowed"),
        ({**SPHERE, "options": None}, "/options", "invalid_type"),
        ({**SPHERE, "bounds": [[0, 1, 2]]}, "/bounds/0", "invalid_length"),
        ({**SPHERE, "seed": 2**64}, "/seed", "out_of_range"),
        ({**SPHERE, "time_limit": 0}, "/time_limit", "out_of_range"),
        ({"objective_expression": "sum(x)"}, "/bounds", "required"),
    ]
    for req, pointer, code in cases:
        body = assert_problem(server.request("POST", "/v1/optimize", req,
                                             headers=auth(free_key)), 422, "validation_failed")
        assert [(e["pointer"], e["code"]) for e in body["errors"]] == [(pointer, code)], req
    # the document says an expression holds more than white space, as the service does
    schemas = server.request("GET", "/v1/openapi.json").json()["components"]["schemas"]
    assert schemas["OptimizeRequest"]["properties"]["objective_expression"]["pattern"] == \
        schemas["Objective"]["properties"]["expression"]["pattern"] == "\\S"
    # optional numbers may be null (their default), as the document says
    r = server.request("POST", "/v1/optimize", {**SPHERE, "max_evaluations": None,
                                                "time_limit": None, "target": None},
                       headers=auth(free_key))
    assert r.status == 200, r.body
    body = assert_problem(server.request("POST", "/v1/keys", {"label": None}), 422,
                          "validation_failed")
    assert [(e["pointer"], e["code"]) for e in body["errors"]] == [("/label", "invalid_type")]


def test_tier_caps_are_checked_before_the_objective_is_compiled(server: LiveServer,
                                                                free_key: str) -> None:
    # 60,000 dimensions (a ~0.4 MB body) and an objective that would not compile: a free
    # key is refused for its dimensions; nothing is compiled for it
    wide = {"bounds": [[0, 1]] * 60_000, "objective_expression": "sum(x) + y"}
    started = time.monotonic()
    body = assert_problem(server.request("POST", "/v1/optimize", wide, headers=auth(free_key)),
                          403, "max_dims_exceeded")
    assert body["requested"] == 60_000 and time.monotonic() - started < 5


def test_403_tier_caps(server: LiveServer, free_key: str) -> None:
    wide = {"bounds": [[0, 1]] * 51, "objective_expression": "sum(x)"}  # free: 50 dims
    body = assert_problem(server.request("POST", "/v1/optimize", wide, headers=auth(free_key)),
                          403, "max_dims_exceeded")
    assert body["limit_value"] == 50 and body["requested"] == 51
    for field, value, cap in (("max_evaluations", 200_001, 200_000), ("time_limit", 10.5, 10)):
        r = server.request("POST", "/v1/optimize", {**SPHERE, field: value},
                           headers=auth(free_key))
        body = assert_problem(r, 403, "compute_cap_exceeded")
        assert body["field"] == field and body["limit_value"] == cap


def _send_and_hold(server: LiveServer, key: str, body: dict) -> socket.socket:
    payload = json.dumps(body).encode()
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.sendall(b"POST /v1/optimize HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                 + f"Authorization: Bearer {key}\r\nContent-Length: {len(payload)}\r\n\r\n"
                 .encode() + payload)
    return sock


def _answer(sock: socket.socket) -> bytes | None:
    """The response already sent on ``sock`` (small: one read), or None."""
    sock.settimeout(0.2)
    try:
        return sock.recv(65536) or None
    except TimeoutError:
        return None


def test_overloaded_and_disconnect_cancels_the_run(server: LiveServer) -> None:
    # the session server has 1 run thread and no queue per worker, and 2 workers: of three
    # concurrent slow runs at least one finds its worker busy (pigeonhole) and gets a 503
    made = server.create_key(tier="team")
    socks = [_send_and_hold(server, made["key"], SLOW) for _ in range(3)]
    time.sleep(0.5)
    answers = [_answer(s) for s in socks]
    busy = [a for a in answers if a is not None]
    assert busy and len(busy) < 3, answers
    for head in busy:
        assert head.startswith(b"HTTP/1.1 503"), head
        lower = head.lower()
        assert b"retry-after: 1\r\n" in lower and b"application/problem+json" in lower
        assert b'"code":"overloaded"' in head and b"x-ratelimit-remaining" in lower
    started = time.monotonic()
    for sock in socks:
        sock.close()  # the clients still waiting go away: their runs must stop early
    waiting = answers.count(None)
    deadline = time.monotonic() + 10
    stopped: list = []
    while time.monotonic() < deadline and len(stopped) < waiting:
        time.sleep(0.1)
        with open_blocking(str(server.db)) as store:
            stopped = [r for r in store.runs.page(made["id"], 100) if r.status == "stopped"]
    assert len(stopped) == waiting, "a disconnected client's run was not stopped"
    assert time.monotonic() - started < 2.5
    assert all(r.elapsed_ms < 2500 for r in stopped)
    for _ in range(2):  # the slots are free again (whichever worker answers)
        assert server.request("POST", "/v1/optimize", SPHERE,
                              headers=auth(made["key"])).status == 200


# ---------------------------------------------------------------- streamed runs (NDJSON)

NDJSON = {"Accept": "application/x-ndjson"}


def _events(resp) -> list[dict]:
    return [json.loads(line) for line in resp.body.splitlines() if line.strip()]


def test_streamed_run_reports_progress_then_the_result(server: LiveServer) -> None:
    made = server.create_key(tier="team")
    r = server.request("POST", "/v1/optimize", {**SLOW, "time_limit": 1.2},
                       headers={**auth(made["key"]), **NDJSON})
    assert r.status == 200, r.body
    assert r.header("content-type").startswith("application/x-ndjson")
    assert_common_headers(r)
    events = _events(r)
    progress, last = events[:-1], events[-1]
    assert len(progress) >= 2 and all(e["event"] == "progress" for e in progress)
    assert all(set(e) == {"event", "evaluations", "iterations", "best", "elapsed_ms"}
               for e in progress)
    evaluations = [e["evaluations"] for e in progress]
    assert evaluations == sorted(evaluations) and evaluations[-1] > 0
    assert all(e["best"] is not None for e in progress[1:])
    assert last["event"] == "result" and last["status"] == "time_limit"
    assert set(last) == {"event", "id", "run_id", "engine", "engine_chosen", "status",
                         "message", "x", "value", "goal",
                         "evaluations", "iterations", "elapsed_ms", "seed", "dims", "history",
                         "feasible", "max_violation", "constraints", "variables"}
    assert last["evaluations"] >= evaluations[-1] and last["dims"] == 1000
    with open_blocking(str(server.db)) as store:
        assert [run.id for run in store.runs.page(made["id"], 100)] == [last["id"]]


def test_stream_only_when_asked(server: LiveServer, free_key: str) -> None:
    for accept in ("application/json", "application/x-ndjson;q=0", "*/*", ""):
        r = server.request("POST", "/v1/optimize", SPHERE,
                           headers={**auth(free_key), "Accept": accept})
        assert r.status == 200 and r.header("content-type") == "application/json", accept
    quick = server.request("POST", "/v1/optimize", SPHERE,
                           headers={**auth(free_key),
                                    "Accept": "application/json;q=0.5, application/x-ndjson"})
    events = _events(quick)
    assert events[-1]["event"] == "result" and events[-1]["status"] == "converged"


def test_streamed_request_refused_before_the_run_is_a_problem(server: LiveServer,
                                                               free_key: str) -> None:
    r = server.request("POST", "/v1/optimize", {**SPHERE, "bounds": [[1, 0]]},
                       headers={**auth(free_key), **NDJSON})
    assert_problem(r, 422, "validation_failed")
    r = server.request("POST", "/v1/optimize", SPHERE, headers=NDJSON)
    assert_problem(r, 401, "missing_credentials")


def test_disconnect_mid_stream_stops_the_run(server: LiveServer) -> None:
    made = server.create_key(tier="team")
    payload = json.dumps({**SLOW, "time_limit": 20}).encode()
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.sendall(b"POST /v1/optimize HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                 b"Accept: application/x-ndjson\r\n"
                 + f"Authorization: Bearer {made['key']}\r\nContent-Length: {len(payload)}"
                 "\r\n\r\n".encode() + payload)
    received = b""
    while b'"event":"progress"' not in received:  # the stream has begun
        chunk = sock.recv(65536)
        assert chunk, received
        received += chunk
    assert received.startswith(b"HTTP/1.1 200")
    started = time.monotonic()
    sock.close()
    deadline = started + 10
    stopped: list = []
    while time.monotonic() < deadline and not stopped:
        time.sleep(0.1)
        with open_blocking(str(server.db)) as store:
            stopped = [r for r in store.runs.page(made["id"], 100) if r.status == "stopped"]
    assert stopped, "a client that left mid-stream did not stop its run"
    assert time.monotonic() - started < 5 and stopped[0].elapsed_ms < 10_000
    message = stopped[0].document.result.message
    assert message.startswith("cancelled: the client of POST /v1/optimize disconnected"), \
        message  # said so, not the engine's "stopped by its monitor"
