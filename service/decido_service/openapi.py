"""The OpenAPI 3.1 document of the service, written by hand as data.

Every request body, response body and problem document the code produces has a schema
here; ``tests/service/test_api_openapi.py`` validates real responses against them and
schemathesis checks the live server against the whole document. Change both together.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

import decido
from decido_service import __version__
from decido_service.errors import PROBLEM_BASE, PROBLEM_TYPE, TITLES

__all__ = ["openapi_document"]

Schema = dict[str, Any]


def _ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def _obj(props: dict[str, Schema], required: list[str] | None = None, *,
         extra: bool | Schema = False, **more: Any) -> Schema:
    out: Schema = {"type": "object", "properties": props, "additionalProperties": extra}
    if required:
        out["required"] = required
    out.update(more)
    return out


_NUM = {"type": "number"}
_INT = {"type": "integer"}
_STR = {"type": "string"}
_NULLABLE_NUM = {"type": ["number", "null"]}
_NULLABLE_INT = {"type": ["integer", "null"]}
_ID = {"type": ["string", "integer"]}

# ---------------------------------------------------------------- problems
_FIELD_ERROR = _obj({
    "field": {**_STR, "description": "the field at fault, e.g. bounds[3] or options.popsize "
                                     "('' for the whole body)"},
    "code": {**_STR, "description": "stable machine code of this fault"},
    "message": _STR,
    "position": {**_INT, "minimum": 0,
                 "description": "for expressions: 0-based character offset of the fault"},
}, ["field", "code", "message"])

_PROBLEM = _obj({
    "type": {**_STR, "format": "uri", "description": f"{PROBLEM_BASE}<code>"},
    "title": _STR,
    "status": {**_INT, "minimum": 400, "maximum": 599},
    "detail": _STR,
    "code": {"type": "string", "enum": sorted(TITLES)},
    "instance": {**_STR, "description": "the request path"},
    "request_id": {**_STR, "description": "same as the X-Request-Id header"},
    "errors": {"type": "array", "items": _ref("FieldError"),
               "description": "422: every faulty field"},
    "limit": {**_STR, "description": "429: the counter refused (decide.minute, decide.month, "
                                     "decide.refused, optimize.minute, optimize.month, "
                                     "optimize.refused, keys.hour)"},
    "limit_value": {**_NULLABLE_INT, "description": "429, 403: the limit or cap"},
    "reset": {**_INT, "description": "429: epoch seconds at which the counter's window ends"},
    "field": {**_STR, "description": "403: the field beyond the cap"},
    "requested": {**_NUM, "description": "403: what the request asked for"},
}, ["type", "title", "status", "detail", "code", "instance", "request_id"])

# ---------------------------------------------------------------- meta
_HEALTH = _obj({
    "status": {"type": "string", "enum": ["ok", "unavailable"]},
    "version": _STR,
    "store": {"type": "string", "enum": ["ok", "unavailable"]},
    "engines": {**_INT, "minimum": 0, "description": "number of engines"},
}, ["status", "version", "store", "engines"])

_ENGINE_OPTION = _obj({
    "name": _STR, "default": _NUM, "min": _NUM, "max": _NUM, "integer": {"type": "boolean"},
    "description": _STR,
}, ["name", "default", "min", "max", "integer", "description"])

_ENGINE = _obj({
    "id": _STR, "name": _STR, "summary": _STR, "kind": _STR,
    "max_dims": {**_NULLABLE_INT, "description": "null: no limit of the engine's own"},
    "options": {"type": "array", "items": _ref("EngineOption")},
}, ["id", "name", "summary", "kind", "max_dims", "options"])

_ENGINES = _obj({
    "default": {**_STR, "description": "the engine used when a request names none"},
    "engines": {"type": "array", "items": _ref("Engine")},
}, ["default", "engines"])

# ---------------------------------------------------------------- account
_KEY_REQUEST = _obj({"label": {**_STR, "maxLength": 200}},
                    description="optional; the body may also be empty")

_KEY_CREATED = _obj({
    "key": {**_STR, "pattern": "^dk_[A-Za-z0-9_-]{43}$",
            "description": "the secret: shown once, never again"},
    "id": _STR, "prefix": _STR,
    "plan": {"type": "string", "enum": ["free"]}, "tier": {"type": "string", "enum": ["free"]},
    "label": {"type": ["string", "null"]},
    "created_at": {**_STR, "format": "date-time"},
}, ["key", "id", "prefix", "plan", "tier", "label", "created_at"])

_MINUTE = _obj({
    "limit": _NULLABLE_INT, "remaining": _NULLABLE_INT,
    "reset": {**_INT, "description": "epoch seconds"},
}, ["limit", "remaining", "reset"])

_MONTH = _obj({
    "limit": _NULLABLE_INT, "used": _INT, "remaining": _NULLABLE_INT,
    "period_start": {**_STR, "format": "date-time"},
    "period_end": {**_STR, "format": "date-time"},
    "reset": {**_INT, "description": "epoch seconds"},
}, ["limit", "used", "remaining", "period_start", "period_end"])

_USAGE = _obj({
    "key": _obj({"id": _STR, "prefix": _STR, "label": {"type": ["string", "null"]},
                 "created": {**_STR, "format": "date-time"}},
                ["id", "prefix", "label", "created"]),
    "decision": _obj({
        "plan": _STR, "minute": _ref("MinuteUsage"), "month": _ref("MonthUsage"),
        "batch_max": _NULLABLE_INT, "refused_per_minute": _NULLABLE_INT,
    }, ["plan", "minute", "month", "batch_max", "refused_per_minute"]),
    "optimization": _obj({
        "tier": _STR, "minute": _ref("MinuteUsage"), "month": _ref("MonthUsage"),
        "max_dims": _NULLABLE_INT, "max_evaluations": _NULLABLE_INT,
        "max_time_limit": {**_NUM, "description": "seconds"},
        "refused_per_minute": _NULLABLE_INT,
    }, ["tier", "minute", "month", "max_dims", "max_evaluations", "max_time_limit",
        "refused_per_minute"]),
}, ["key", "decision", "optimization"])

# ---------------------------------------------------------------- optimize
_OPTIMIZE_REQUEST = _obj({
    "bounds": {"type": "array", "minItems": 1,
               "items": {"type": "array", "items": _NUM, "minItems": 2, "maxItems": 2},
               "description": "one [lower, upper] pair per dimension (finite, lower <= upper); "
                              "their number is the run's dims (Max Dims per tier)"},
    "objective_expression": {**_STR, "description": "the objective in decido's expression "
                                                   "language over the vector x, e.g. "
                                                   "\"sum(x**2)\"", "examples": ["sum(x**2)"]},
    "engine": {"type": "string", "enum": [e["id"] for e in decido.engines()],
               "description": "an engine id from /v1/engines (default: the default engine)"},
    "goal": {"type": "string", "enum": ["minimize", "maximize"], "default": "minimize"},
    "max_evaluations": {**_INT, "minimum": 1, "description": "default min(max(10000, 2000 n), "
                                                             "tier cap); above the cap: 403"},
    "time_limit": {**_NUM, "exclusiveMinimum": 0,
                   "description": "seconds; default the tier's cap; above it: 403"},
    "target": {**_NUM, "description": "stop once the best value is at least this good"},
    "seed": {**_INT, "minimum": 0, "maximum": 2**64 - 1,
             "description": "replays a run; drawn and reported when absent"},
    "options": {"type": "object", "additionalProperties": _NUM,
                "description": "the engine's options by name (see /v1/engines)"},
}, ["bounds", "objective_expression"],
    examples=[{"bounds": [[-5, 5]] * 3, "objective_expression": "sum(x**2)", "seed": 1}])

_OPTIMIZE_RESULT = _obj({
    "id": {**_STR, "description": "the run record's id"},
    "engine": _STR,
    "status": {"type": "string", "enum": ["converged", "target_reached", "max_evaluations",
                                          "time_limit", "stopped"]},
    "message": _STR,
    "x": {"type": "array", "items": _NUM},
    "value": {**_NULLABLE_NUM, "description": "objective at x (null if not finite)"},
    "goal": {"type": "string", "enum": ["minimize", "maximize"]},
    "evaluations": _INT, "iterations": _INT,
    "elapsed_ms": _NUM,
    "seed": {**_INT, "minimum": 0},
    "dims": {**_INT, "minimum": 1},
    "history": {"type": "array", "description": "[evaluations, best] at each improvement",
                "items": {"type": "array", "minItems": 2, "maxItems": 2,
                          "items": _NULLABLE_NUM}},
}, ["id", "engine", "status", "message", "x", "value", "goal", "evaluations", "iterations",
    "elapsed_ms", "seed", "dims", "history"])

# ---------------------------------------------------------------- decide
_CRITERION = _obj({
    "attribute": _STR,
    "goal": {"type": "string", "enum": ["maximize", "minimize"], "default": "maximize"},
    "weight": _NUM,
}, ["attribute"])

_OPTION = _obj({"id": _ID, "attributes": {"type": "object",
                                          "additionalProperties": {"type": ["number",
                                                                            "boolean"]}}},
               ["id", "attributes"], extra=True)

_DECIDE_FIELDS: dict[str, Schema] = {
    "id": _ID,
    "options": {"type": "array", "items": _ref("DecisionOption"), "minItems": 1},
    "method": {"type": "string", "enum": ["expression", "wsm", "wpm", "topsis", "vikor",
                                          "promethee2", "waspas", "copras", "moora", "edas",
                                          "aras", "spotis"]},
    "criteria": {"type": "array", "items": _ref("Criterion")},
    "normalization": {"type": ["string", "null"],
                      "enum": ["minmax", "vector", "sum", "max", "linear", None]},
    "weighting": {"type": "string", "enum": ["given", "equal", "entropy", "critic", "std"]},
    "params": {"type": "object"},
    "constraints": {"type": "array", "items": _STR},
    "top_k": {**_INT, "minimum": 1},
    "explain": {"type": "boolean"},
    "expression": _STR,
    "goal": {"type": "string", "enum": ["maximize", "minimize"]},
}
_DECIDE_REQUEST = _obj(_DECIDE_FIELDS, ["options"], description="see docs/decisions.md",
                       examples=[{
                           "options": [{"id": "a", "attributes": {"price": 10, "quality": 7}},
                                       {"id": "b", "attributes": {"price": 12, "quality": 9}}],
                           "method": "topsis",
                           "criteria": [{"attribute": "price", "goal": "minimize", "weight": 1},
                                        {"attribute": "quality", "weight": 2}]}])

_WARNING = _obj({"code": _STR, "message": _STR, "path": _STR}, ["code", "message"])

_RANKED = _obj({
    "id": _ID, "rank": {**_INT, "minimum": 1}, "score": _NULLABLE_NUM,
    "explanation": {"type": "object"},
}, ["id", "rank", "score"])

_DECISION = _obj({
    "id": _ID,
    "status": {"type": "string", "enum": ["ok", "infeasible"]},
    "method": _STR,
    "normalization": {"type": ["string", "null"]},
    "weighting": {"type": ["string", "null"]},
    "weights": {"type": "object", "additionalProperties": _NUM},
    "higher_is_better": {"type": "boolean"},
    "best": {"type": ["string", "integer", "null"]},
    "n_options": _INT, "n_feasible": _INT,
    "ranking": {"type": "array", "items": _ref("RankedOption")},
    "compromise": {"type": "array", "items": _ID},
    "infeasible": {"type": "array", "items": _obj(
        {"id": _ID, "violated": {"type": "array", "items": _STR}}, ["id", "violated"])},
    "warnings": {"type": "array", "items": _ref("DecisionWarning")},
}, ["status", "method", "best", "ranking", "infeasible", "warnings"], extra=True)

_BATCH_REQUEST = _obj({
    "defaults": {"type": "object", "description": "fields merged into every decision"},
    "decisions": {"type": "array", "items": {"type": "object"},
                  "description": "decision requests (see /v1/decide); at most the plan's "
                                 "batch_max (403 batch_too_large above)"},
}, ["decisions"])

_BATCH_ERROR = _obj({
    "id": {"type": ["string", "integer", "null"]},
    "status": {"type": "string", "const": "error"},
    "error": _obj({"code": _STR, "message": _STR, "path": _STR,
                   "position": {**_INT, "minimum": 0}}, ["code", "message", "path"]),
}, ["id", "status", "error"])

_BATCH_RESULT = _obj({
    "results": {"type": "array", "items": {"oneOf": [_ref("DecisionResult"),
                                                     _ref("BatchItemError")]}},
    "n_decisions": _INT, "n_ok": _INT, "n_error": _INT,
}, ["results", "n_decisions", "n_ok", "n_error"])

_OPTIMIZE_EVENT = {
    "description": "one line of a streamed run (Accept: application/x-ndjson): `progress` "
                   "events while the run lasts, then exactly one `result` (the members of "
                   "OptimizeResult) or `error` (the members of Problem)",
    "oneOf": [
        _obj({"event": {"const": "progress"}, "evaluations": _INT, "iterations": _INT,
              "best": {**_NULLABLE_NUM, "description": "best value so far (goal's sense); "
                                                       "null before the first evaluation"},
              "elapsed_ms": _NUM},
             ["event", "evaluations", "iterations", "best", "elapsed_ms"]),
        _obj({**_OPTIMIZE_RESULT["properties"], "event": {"const": "result"}},
             [*_OPTIMIZE_RESULT["required"], "event"]),
        {"allOf": [_ref("Problem")], "type": "object", "required": ["event"],
         "properties": {"event": {"const": "error"}}},
    ],
}

# ---------------------------------------------------------------- responses
_RATE_HEADERS = {
    "X-RateLimit-Limit": {"$ref": "#/components/headers/X-RateLimit-Limit"},
    "X-RateLimit-Remaining": {"$ref": "#/components/headers/X-RateLimit-Remaining"},
    "X-RateLimit-Reset": {"$ref": "#/components/headers/X-RateLimit-Reset"},
    "X-Request-Id": {"$ref": "#/components/headers/X-Request-Id"},
}


def _json(schema: Schema, description: str, media: str = "application/json",
          headers: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"description": description, "headers": {**_RATE_HEADERS, **(headers or {})},
            "content": {media: {"schema": schema}}}


def _problem(description: str, retry: bool = False) -> dict[str, Any]:
    headers = {"Retry-After": {"$ref": "#/components/headers/Retry-After"}} if retry else None
    return _json(_ref("Problem"), description, PROBLEM_TYPE, headers)


_ERRORS = {
    "400": "malformed_json: the body is not JSON",
    "401": "missing_credentials, invalid_credentials, conflicting_credentials, revoked_key",
    "403": "max_dims_exceeded, compute_cap_exceeded, batch_too_large: beyond the key's "
           "tier or plan",
    "413": "body_too_large: above the body size limit",
    "415": "unsupported_media_type: the body is not application/json",
    "422": "validation_failed (errors lists each field)",
    "429": "rate_limited, monthly_quota_exceeded, too_many_refused, key_creation_throttled "
           "(limit names it)",
    "503": "overloaded (every run slot busy) or store_unavailable",
}


def _responses(ok: tuple[str, dict[str, Any]], *codes: str) -> dict[str, Any]:
    out = {ok[0]: ok[1]}
    for code in codes:
        out[code] = _problem(_ERRORS[code], retry=code in ("429", "503"))
    out["default"] = _problem("any other error: not_found, method_not_allowed, internal_error")
    return out


_AUTH = [{"bearer": []}, {"apiKey": []}]
_AUTH_ERRORS = ("401", "413", "429", "503")
_POST_ERRORS = ("400", "415", "422")


def _body(name: str, required: bool = True) -> dict[str, Any]:
    return {"required": required, "content": {"application/json": {"schema": _ref(name)}}}


def _op(op_id: str, summary: str, tag: str, responses: dict[str, Any], **more: Any) -> Schema:
    return {"operationId": op_id, "summary": summary, "tags": [tag], "responses": responses,
            **more}


def _optimize_ok() -> dict[str, Any]:
    ok = _json(_ref("OptimizeResult"), "the run's result (or, streamed, its events)")
    ok["content"]["application/x-ndjson"] = {"schema": _ref("OptimizeEvent")}
    return ok


def _paths() -> dict[str, Any]:
    no_auth: dict[str, Any] = {"security": []}
    return {
        "/v1/health": {"get": _op(
            "health", "Liveness and readiness (store reachable)", "meta",
            {"200": _json(_ref("Health"), "the service and its store are up"),
             "429": _problem(_ERRORS["429"], True),
             "503": _json(_ref("Health"), "the store is not answering"),
             "default": _problem("any other error")}, **no_auth)},
        "/v1/engines": {"get": _op(
            "engines", "The optimization engines and their options", "meta",
            _responses(("200", _json(_ref("Engines"), "engine metadata")), "429"), **no_auth)},
        "/v1/keys": {"post": _op(
            "createKey", "Create a free key (the secret is shown once)", "account",
            _responses(("201", _json(_ref("KeyCreated"), "the new key")),
                       *_POST_ERRORS, "413", "429", "503"),
            requestBody=_body("KeyRequest", required=False), **no_auth)},
        "/v1/usage": {"get": _op(
            "usage", "The key's plan, tier, limits and usage", "account",
            _responses(("200", _json(_ref("Usage"), "usage of both surfaces")),
                       "401", "429", "503"))},
        "/v1/decide": {"post": _op(
            "decide", "One decision", "decisions",
            _responses(("200", _json(_ref("DecisionResult"), "the ranking")),
                       *_POST_ERRORS, *_AUTH_ERRORS),
            requestBody=_body("DecisionRequest"))},
        "/v1/batch": {"post": _op(
            "batch", "Many decisions (each item ok or error on its own)", "decisions",
            _responses(("200", _json(_ref("BatchResult"), "one result per item")),
                       *_POST_ERRORS, *_AUTH_ERRORS),
            requestBody=_body("BatchRequest"))},
        "/v1/optimize": {"post": _op(
            "optimize", "One optimization run", "optimization",
            _responses(("200", _optimize_ok()), *_POST_ERRORS, "403", *_AUTH_ERRORS),
            requestBody=_body("OptimizeRequest"),
            description="Runs to the end and answers with the result. Send "
                        "`Accept: application/x-ndjson` to have the answer streamed instead: "
                        "one JSON object per line, a `progress` event every 0.25 s while the "
                        "run lasts, then its `result` (or an `error` problem). Everything "
                        "decided before the run starts (credentials, validation, caps, "
                        "limits) is answered as usual. A client that disconnects stops its "
                        "run.")},
        "/v1/openapi.json": {"get": _op(
            "openapi", "This document", "meta",
            _responses(("200", _json({"type": "object"}, "OpenAPI 3.1")), "429"), **no_auth)},
        "/v1/docs": {"get": _op(
            "docs", "Interactive documentation (vendored Swagger UI)", "meta",
            _responses(("200", {"description": "HTML page", "headers": _RATE_HEADERS,
                                "content": {"text/html": {"schema": _STR}}}), "429"),
            **no_auth)},
    }


_HEADERS = {
    "X-RateLimit-Limit": {"description": "the limit of the counter this response describes "
                                         "(per minute; keys.hour for POST /v1/keys)",
                          "schema": _INT},
    "X-RateLimit-Remaining": {"description": "requests left in the window", "schema": _INT},
    "X-RateLimit-Reset": {"description": "Unix epoch seconds when the window ends",
                          "schema": _INT},
    "X-Request-Id": {"description": "the request's id (echoed when sent)", "schema": _STR},
    "Retry-After": {"description": "seconds to wait", "schema": _INT},
}

_SCHEMAS = {
    "Problem": _PROBLEM, "FieldError": _FIELD_ERROR, "Health": _HEALTH,
    "EngineOption": _ENGINE_OPTION, "Engine": _ENGINE, "Engines": _ENGINES,
    "KeyRequest": _KEY_REQUEST, "KeyCreated": _KEY_CREATED, "MinuteUsage": _MINUTE,
    "MonthUsage": _MONTH, "Usage": _USAGE, "OptimizeRequest": _OPTIMIZE_REQUEST,
    "OptimizeResult": _OPTIMIZE_RESULT, "OptimizeEvent": _OPTIMIZE_EVENT,
    "Criterion": _CRITERION, "DecisionOption": _OPTION,
    "DecisionRequest": _DECIDE_REQUEST, "DecisionWarning": _WARNING,
    "RankedOption": _RANKED, "DecisionResult": _DECISION, "BatchRequest": _BATCH_REQUEST,
    "BatchItemError": _BATCH_ERROR, "BatchResult": _BATCH_RESULT,
}


@lru_cache(maxsize=1)
def _document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "decido",
            "version": __version__,
            "summary": "Decisions and optimization over a compiled expression language",
            "description": (
                "Every endpoint but health, engines, keys, openapi.json and docs needs a key: "
                "`Authorization: Bearer <key>` or `X-API-Key: <key>` (get one with "
                "`POST /v1/keys`). Every response carries `X-Request-Id` and "
                "`X-RateLimit-Limit/Remaining/Reset`. Errors are RFC 9457 problem documents "
                f"(`{PROBLEM_TYPE}`) with a stable `code`. Library version "
                f"{decido.__version__}."),
            "license": {"name": "MIT", "identifier": "MIT"},
        },
        "servers": [{"url": "/"}],
        "security": _AUTH,
        "tags": [{"name": t} for t in ("meta", "account", "decisions", "optimization")],
        "paths": _paths(),
        "components": {
            "schemas": _SCHEMAS,
            "headers": _HEADERS,
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer",
                           "description": "Authorization: Bearer dk_..."},
                "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            },
        },
    }


def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document (a fresh copy: callers may change it)."""
    return copy.deepcopy(_document())
