"""The one error handler, in process: every exception class becomes the right problem."""

from __future__ import annotations

from types import SimpleNamespace

import orjson
import pytest

pytest.importorskip("sanic")

from sanic.exceptions import BadRequest, MethodNotAllowed, NotFound, PayloadTooLarge  # noqa: E402

import decido  # noqa: E402
from decido_service.errors import TITLES, ApiError, as_api_error, problem_handler  # noqa: E402
from decido_service.store import StoreError  # noqa: E402


def render(exc: Exception) -> tuple[int, dict, dict]:
    request = SimpleNamespace(path="/v1/x", ctx=SimpleNamespace(request_id="rid"))
    resp = problem_handler(request, exc)
    assert resp.content_type == "application/problem+json"
    return resp.status, orjson.loads(resp.body), dict(resp.headers)


def test_500_never_shows_internals() -> None:
    status, body, _ = render(RuntimeError("password=hunter2 at /srv/secret.py line 3"))
    assert status == 500 and body["code"] == "internal_error"
    assert "hunter2" not in orjson.dumps(body).decode()
    assert "secret.py" not in orjson.dumps(body).decode()
    assert body["request_id"] == "rid" and body["instance"] == "/v1/x"


@pytest.mark.parametrize(("exc", "status", "code"), [
    (NotFound("x"), 404, "not_found"),
    (MethodNotAllowed("x", "PUT", ["GET"]), 405, "method_not_allowed"),
    (PayloadTooLarge("x"), 413, "body_too_large"),
    (BadRequest("Failed when parsing body as json"), 400, "malformed_json"),
    (BadRequest("Bad Request"), 400, "bad_request"),
    (StoreError("database is locked"), 503, "store_unavailable"),
])
def test_foreign_exceptions(exc: Exception, status: int, code: str) -> None:
    got, body, headers = render(exc)
    assert (got, body["code"], body["status"]) == (status, code, status)
    assert "locked" not in body["detail"]
    if status == 503:
        assert headers["Retry-After"] == "1"


def test_library_errors_are_422_with_fields() -> None:
    try:
        decido.Expression("sum(x) + )", n=2)
    except decido.ExpressionError as exc:
        _, body, _ = render(exc)
    assert body["errors"] == [{"field": "objective_expression", "code": "syntax_error",
                               "message": body["errors"][0]["message"], "position": 9}]
    _, body, _ = render(decido.EngineError("invalid_option", "bad", "options.popsize"))
    assert body["errors"][0]["field"] == "options.popsize"
    _, body, _ = render(decido.DecisionError("unknown_method", "no", "method"))
    assert body["code"] == "validation_failed" and body["errors"][0]["field"] == "method"


def test_every_code_has_a_status_and_title() -> None:
    for code, (status, title) in TITLES.items():
        err = ApiError(code)
        assert err.status_code == status and err.title == title and 400 <= status < 600
        assert as_api_error(err) is err
