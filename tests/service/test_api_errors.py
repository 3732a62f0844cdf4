"""The one error handler and request decoding, in process: every exception class becomes
the right problem, and a 422 lists every fault of a body with its JSON pointer."""

from __future__ import annotations

from types import SimpleNamespace

import msgspec
import orjson
import pytest

pytest.importorskip("sanic")

from sanic.exceptions import BadRequest, MethodNotAllowed, NotFound, PayloadTooLarge  # noqa: E402

import decido  # noqa: E402
from decido_service.http.problems import (  # noqa: E402
    TITLES,
    ApiError,
    as_api_error,
    pointer_of,
    problem_handler,
)
from decido_service.runs.objective import compile_objective  # noqa: E402
from decido_service.schemas import decode_key_request, decode_optimize  # noqa: E402
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
    assert body["errors"] == [{"pointer": "/objective_expression",
                               "field": "objective_expression", "code": "syntax_error",
                               "message": body["errors"][0]["message"], "position": 9}]
    _, body, _ = render(decido.EngineError("invalid_option", "bad", "options.popsize"))
    assert body["errors"][0]["field"] == "options.popsize"
    assert body["errors"][0]["pointer"] == "/options/popsize"
    _, body, _ = render(decido.DecisionError("unknown_method", "no", "criteria[2].weight"))
    assert body["code"] == "validation_failed"
    assert body["errors"][0]["pointer"] == "/criteria/2/weight"


@pytest.mark.parametrize(("field", "pointer"), [
    ("", ""), ("bounds", "/bounds"), ("bounds[3]", "/bounds/3"),
    ("options.popsize", "/options/popsize"),
    ("decisions[2].options[0].id", "/decisions/2/options/0/id"),
    ("criteria[0].a/b~c", "/criteria/0/a~1b~0c"),
])
def test_pointer_of_a_field(field: str, pointer: str) -> None:
    assert pointer_of(field) == pointer


def faults(body: bytes, decode=None) -> list[tuple[str, str]]:
    """The (pointer, code) of every entry of the 422 that decoding ``body`` raises."""
    with pytest.raises(ApiError) as info:
        (decode or decode_optimize)(body)
    assert info.value.status_code == 422 and info.value.code == "validation_failed"
    for entry in info.value.extra["errors"]:
        assert entry["field"] == "" or pointer_of(entry["field"]) == entry["pointer"]
    return [(e["pointer"], e["code"]) for e in info.value.extra["errors"]]


def test_decoding_lists_every_fault_with_its_pointer() -> None:
    body = orjson.dumps({
        "bounds": [[0, 1], [2, 1], "x", [0, 1, 2], [0, 5]],
        "objective_expression": "", "engine": "random", "goal": "up", "seed": -3,
        "max_evaluations": 0, "time_limit": "soon", "options": {"batch": 0, "nope": 1},
        "extra": 1, "more": [],
    })
    assert sorted(faults(body)) == sorted([
        ("/extra", "unknown_field"), ("/more", "unknown_field"),
        ("/bounds/2", "invalid_type"), ("/bounds/3", "invalid_length"),
        ("/objective_expression", "invalid_length"), ("/goal", "not_allowed"),
        ("/seed", "out_of_range"), ("/max_evaluations", "out_of_range"),
        ("/time_limit", "invalid_type"),
        ("/bounds/1", "invalid_bounds"), ("/options/batch", "invalid_option"),
        ("/options/nope", "invalid_option"),
    ])


def test_decoding_fast_path_and_its_semantic_checks() -> None:
    ok = decode_optimize(b'{"bounds": [[0, 1], [-2, 2]], "objective_expression": "sum(x)"}')
    assert ok.dims == 2 and ok.engine == decido.default_engine() and ok.options == {}
    assert ok.max_evaluations is None and ok.goal == "minimize"
    # schema-valid bodies the library refuses: every fault, from the library's one check
    body = orjson.dumps({"bounds": [[0, 1], [3, 2], [-1e308, 1e308]], "engine": "nelder_mead",
                         "objective_expression": "sum(x)", "options": {"nope": 1}})
    assert faults(body) == [("/bounds/1", "invalid_bounds"), ("/bounds/2", "invalid_bounds"),
                            ("/options/nope", "invalid_option")]
    wide = orjson.dumps({"bounds": [[0, 1]] * 5000, "objective_expression": "sum(x)",
                         "engine": "nelder_mead"})
    max_dims = next(e["max_dims"] for e in decido.engines() if e["id"] == "nelder_mead")
    assert max_dims is not None and max_dims < 5000
    assert faults(wide) == [("/bounds", "invalid_argument")]


def test_decoding_does_not_compile() -> None:
    req = decode_optimize(b'{"bounds": [[0, 1]], "objective_expression": "sum(x) + )"}')
    with pytest.raises(ApiError) as info:
        compile_objective(req)
    (entry,) = info.value.extra["errors"]
    assert entry["pointer"] == "/objective_expression" and entry["position"] == 9
    assert compile_objective(decode_optimize(
        b'{"bounds": [[0, 1]], "objective_expression": "sum(x)"}')).n == 1


def test_decoding_faults_the_schema_cannot_see() -> None:
    # JSON Schema's "integer" admits 7.0, and so does the service (the slow path converts)
    req = decode_optimize(b'{"bounds": [[0, 1]], "objective_expression": "x", "seed": 7.0, '
                          b'"max_evaluations": 100.0}')
    assert (req.seed, req.max_evaluations) == (7, 100) and isinstance(req.seed, int)
    assert faults(b'{"bounds": [[0, 1]], "objective_expression": "x", "seed": 7.5}') == [
        ("/seed", "invalid_type")]
    assert faults(b'{"bounds": [[0, 1e400]], "objective_expression": "x"}') == [
        ("/bounds/0/1", "out_of_range")]
    huge = b"1" + b"0" * 400  # an integer JSON admits and the schema too; no float holds it
    assert faults(b'{"bounds": [[0, 1]], "objective_expression": "x", "x0": [[%s]]}' % huge
                  ) == [("/x0/0/0", "out_of_range")]
    assert faults(b"[]") == [("", "invalid_type")]
    assert faults(b'{"label": null}', decode_key_request) == [("/label", "invalid_type")]
    assert decode_key_request(b"").label is msgspec.UNSET
    for bad in (b"{", b'{"bounds": [[0, 1]], "zz": ', b"nul"):
        with pytest.raises(ApiError) as info:
            decode_optimize(bad)
        assert info.value.code == "malformed_json"


def test_every_code_has_a_status_and_title() -> None:
    for code, (status, title) in TITLES.items():
        err = ApiError(code)
        assert err.status_code == status and err.title == title and 400 <= status < 600
        assert as_api_error(err) is err
