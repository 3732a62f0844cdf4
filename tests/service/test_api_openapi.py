"""The OpenAPI document matches the code: real responses validate against it, and
schemathesis (property-based tests generated from it) finds nothing against the live server."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import RECORDED, SESSION_ENV, LiveServer, auth, free_port, running
from test_api_decide import DECISION

jsonschema = pytest.importorskip("jsonschema")

#: schemathesis's time budget (its --max-time) and the subprocess's hard limit
SCHEMATHESIS_SECONDS = 60
SCHEMATHESIS_TIMEOUT = 180


def _validator(doc: dict, schema: dict):
    # the components travel with the schema so that "#/components/..." refs resolve
    return jsonschema.Draft202012Validator({**schema, "components": doc["components"]})


def _documented(doc: dict, method: str, path: str, status: int) -> tuple[dict | None, str]:
    """The response object for an exchange (None for paths the document does not list)."""
    operation = doc["paths"].get(path.split("?")[0], {}).get(method.lower())
    if operation is None:
        return None, "undocumented"
    responses = operation["responses"]
    return responses.get(str(status), responses.get("default")), "documented"


def _check(doc: dict, method: str, path: str, resp) -> None:
    media = (resp.header("content-type") or "").split(";")[0]
    response, where = _documented(doc, method, path, resp.status)
    if response is None:  # unknown paths, docs assets, wrong methods: problems or assets
        if resp.status >= 400:
            assert media == "application/problem+json", (method, path, resp.status)
            _validator(doc, doc["components"]["schemas"]["Problem"]).validate(resp.json())
        return
    assert media in response["content"], (method, path, resp.status, media)
    if media == "application/x-ndjson":  # every line is one document
        documents = [json.loads(line) for line in resp.body.splitlines() if line.strip()]
    elif media.endswith("json"):
        documents = [resp.json()]
    else:
        return
    schema = response["content"][media]["schema"]
    for document in documents:
        errors = sorted(_validator(doc, schema).iter_errors(document), key=str)
        assert not errors, (method, path, resp.status, errors[0].message, errors[0].json_path)


def test_real_responses_match_the_document(server: LiveServer) -> None:
    doc = server.request("GET", "/v1/openapi.json").json()
    jsonschema.Draft202012Validator.check_schema({"$defs": doc["components"]["schemas"]})
    # one of each kind here (the file may run alone), then everything the session recorded
    key = server.create_key(plan="sdk", tier="pro")["key"]
    h = auth(key)
    server.request("GET", "/v1/health")
    server.request("GET", "/v1/engines")
    server.request("GET", "/v1/docs")
    server.request("GET", "/v1/usage", headers=h)
    server.request("POST", "/v1/keys", {"label": "openapi"})
    server.request("POST", "/v1/decide", DECISION, headers=h)
    server.request("POST", "/v1/decide", {**DECISION, "top_k": 0}, headers=h)
    server.request("POST", "/v1/batch", {"defaults": DECISION,
                                         "decisions": [{"id": 1}, {"method": "x"}]}, headers=h)
    server.request("POST", "/v1/optimize", {"bounds": [[-1, 2]] * 3, "seed": 5,
                                            "objective_expression": "sum(abs(x))"}, headers=h)
    server.request("POST", "/v1/optimize", {"bounds": [[0, 1]] * 600,
                                            "objective_expression": "sum(x)"}, headers=h)
    server.request("POST", "/v1/optimize", raw=b"[", headers={**h, "Content-Type":
                                                              "application/json"})
    server.request("POST", "/v1/batch", raw=b"{}", headers={**h, "Content-Type": "text/csv"})
    server.request("GET", "/v1/usage")
    server.request("PUT", "/v1/usage")
    server.request("GET", "/v2/usage")
    seen = {(m, p.split("?")[0], r.status) for m, p, r in RECORDED}
    for status in (200, 201, 400, 401, 403, 404, 405, 415, 422):
        assert any(s == status for _, _, s in seen), status
    for method, path, resp in list(RECORDED):
        _check(doc, method, path, resp)


#: set in the environment of the test's own run inside a loopback-only network namespace
IN_NETNS = "DECIDO_TEST_IN_NETNS"
#: the webhook operations, whose URLs are resolved (and test events delivered): fuzzed only
#: where no lookup or connection can leave the machine
WEBHOOK_URL_OPERATIONS = ("createWebhook", "updateWebhook")


def _loopback_only() -> list[str] | None:
    """The command prefix that runs a command in a new user and network namespace holding
    only a loopback interface, brought up (``unshare -rn``), or ``None`` where the machine
    does not allow it (no unshare or ip, or unprivileged user namespaces disabled)."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if unshare is None or ip is None:
        return None
    prefix = [unshare, "-rn", "sh", "-c", f'"{ip}" link set lo up && exec "$@"', "netns"]
    try:
        probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return prefix if probe.returncode == 0 else None


def test_schemathesis_against_the_live_server(tmp_path: Path) -> None:
    """Every check, positive and negative data, bounded in time, with a fixed seed.

    Every operation but the two static documents is exercised, the decision surface with
    the schemas the library publishes (decido.decision_schemas). schemathesis's
    positive_data_acceptance is replaced by the hooks' schema_valid_data_is_accepted (a 422
    for a semantic fault the document cannot express is not a disagreement).

    Where the machine allows it, the test runs itself again, with its server, inside a
    network namespace that has only a loopback interface (``unshare -rn``): nothing it
    provokes (a webhook URL resolved, a delivery attempted) can leave the machine, so the
    webhook operations are fuzzed too. Elsewhere it runs here, without them."""
    pytest.importorskip("schemathesis")
    inside = os.environ.get(IN_NETNS) == "1"
    if not inside:
        prefix = _loopback_only()
        if prefix is not None:
            out = subprocess.run(
                [*prefix, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                 f"{Path(__file__).name}::test_schemathesis_against_the_live_server"],
                capture_output=True, text=True, timeout=SCHEMATHESIS_TIMEOUT + 120,
                cwd=Path(__file__).parent, env={**os.environ, IN_NETNS: "1"})
            assert out.returncode == 0, out.stdout[-8000:] + out.stderr[-2000:]
            assert re.search(r"\b1 passed\b", out.stdout), out.stdout[-3000:]
            return
    (tmp_path / "server").mkdir()
    with running(tmp_path / "server", SESSION_ENV, workers=1) as server:
        _schemathesis(server, tmp_path, webhooks=inside)


def _schemathesis(server: LiveServer, tmp_path: Path, *, webhooks: bool) -> None:
    key = server.create_key(plan="enterprise", tier="enterprise")["key"]
    cmd = [str(Path(sys.executable).with_name("schemathesis")), "run",
           f"http://127.0.0.1:{server.port}/v1/openapi.json",
           "-H", f"Authorization: Bearer {key}", "--exclude-checks",
           "positive_data_acceptance", "--mode", "all", "--max-time", str(SCHEMATHESIS_SECONDS),
           "--max-examples", "40", "--seed", "20251", "--request-timeout", "20",
           "--workers", "1", "--exclude-operation-id", "docs",
           "--exclude-operation-id", "openapi"]
    if not webhooks:  # their URLs would be resolved; test_webhooks.py covers them
        for operation in WEBHOOK_URL_OPERATIONS:
            cmd += ["--exclude-operation-id", operation]
    if not Path(cmd[0]).exists():
        cmd[0:1] = [sys.executable, "-m", "schemathesis.cli"]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "schemathesis_hooks",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent),
                                          os.environ.get("PYTHONPATH", "")])}
    # schemathesis's statuses of a rejection, and 413: a body over the size cap (a batch of
    # more decisions than the document allows can be that) is refused before it is read
    (tmp_path / "schemathesis.toml").write_text(
        "[checks.negative_data_rejection]\nexpected-statuses = [" + ", ".join(
            f'"{s}"' for s in ("400", "401", "403", "404", "405", "406", "409", "413", "415",
                               "422", "428", "429", "5xx")) + "]\n")
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=SCHEMATHESIS_TIMEOUT,
                         cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stdout[-8000:] + out.stderr[-2000:]
    counts = re.search(r"(\d+) generated, (\d+) passed", out.stdout)
    assert counts and counts[1] == counts[2] and int(counts[1]) >= 100, out.stdout[-3000:]
    if webhooks:  # the fuzzer's webhook URLs were checked (and none left the machine)
        log = server.log.read_text()
        for method in ("POST", "PATCH"):
            assert f'"method":"{method}","path":"/v1/webhooks' in log, method


def test_every_request_body_has_an_example_that_works(tmp_path: Path) -> None:
    """The interactive docs' "Try it out" starts from each operation's example body: sent
    as it is, every one is answered 2xx (a server of its own: the session's has used up
    its address's key creations)."""
    # a webhook example's receiver is replaced by a loopback one the server allows (the
    # example's name is a special-use one, refused without a lookup)
    with running(tmp_path, {"DECIDO_WEBHOOK_ALLOW_NETWORKS": "127.0.0.0/8"},
                 workers=1) as server:
        _send_every_example(server)


def _send_every_example(server: LiveServer) -> None:
    document = server.request("GET", "/v1/openapi.json").json()
    key = server.create_key(plan="sdk", tier="team")["key"]
    sent, webhook, study = [], "", ""
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if "requestBody" not in operation:
                continue
            media = operation["requestBody"]["content"]["application/json"]
            assert "example" in media, (method, path)
            example = media["example"]
            if "url" in example:  # as it is: refused, its name never looked up
                r = server.request(method.upper(), path.replace("{webhook_id}", webhook),
                                   example, headers=auth(key))
                assert r.status == 422, (method, path, r.status, r.body[:500])
                assert [(e["pointer"], e["code"]) for e in r.json()["errors"]] == [
                    ("/url", "address_refused")] and b"special-use" in r.body, r.body
                example = {**example, "url": f"http://127.0.0.1:{free_port()}/hook"}
            # a study's examples go to the study made by its own: suggest hands out trials
            # 0 to 2, complete takes 0, the batch 1 and 2 (failed), report needs an active one
            target = path.replace("{webhook_id}", webhook).replace("{study_id}", study)
            target = target.replace("{number}", "4" if path.endswith("/report") else "0")
            if path.endswith("/report"):  # the queued point the trials example added
                server.request("POST", target.split("/trials/")[0] + "/suggest", {},
                               headers=auth(key))
            r = server.request(method.upper(), target, example, headers=auth(key))
            assert 200 <= r.status < 300, (method, path, r.status, r.body[:500])
            if path == "/v1/webhooks":
                webhook = r.json()["id"]
            if path == "/v1/studies":
                study = r.json()["id"]
            sent.append(path)
    assert set(sent) == {"/v1/keys", "/v1/decide", "/v1/batch", "/v1/optimize", "/v1/runs",
                         "/v1/webhooks", "/v1/webhooks/{webhook_id}", "/v1/studies",
                         "/v1/studies/{study_id}/suggest", "/v1/studies/{study_id}/trials",
                         "/v1/studies/{study_id}/trials/{number}/complete",
                         "/v1/studies/{study_id}/complete",
                         "/v1/studies/{study_id}/trials/{number}/report"}


def test_the_decide_schema_says_what_a_decision_needs(server: LiveServer) -> None:
    """With options, the document requires an expression string for the method "expression"
    and criteria otherwise, as the service does (schemathesis sent a schema-valid
    ``{"method": "expression"}`` without an expression, refused with a 422); from_run needs
    neither."""
    doc = server.request("GET", "/v1/openapi.json").json()
    operation = doc["paths"]["/v1/decide"]["post"]
    validator = _validator(doc, operation["requestBody"]["content"]["application/json"]["schema"])
    options = DECISION["options"]
    assert not validator.is_valid({"options": options, "method": "expression"})
    assert not validator.is_valid({"options": options, "method": "topsis"})
    assert validator.is_valid({"options": options, "method": "expression", "expression": "1"})
    assert validator.is_valid({"options": options, "criteria": DECISION["criteria"]})
    assert validator.is_valid({"from_run": "run_" + "0" * 24})
