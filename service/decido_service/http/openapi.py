"""The OpenAPI 3.1 document of the service, generated from the types.

The components are the JSON Schemas msgspec generates from :mod:`decido_service.types`
(the same types that decode the requests); the problem codes and their statuses come from
:data:`decido_service.http.problems.TITLES`. The only hand-written parts are the paths table
(:data:`OPERATIONS`: path, method, summary, request and response type names, statuses); the
decision surface's components come from the library (:func:`decido.decision_schemas`).
"""

from __future__ import annotations

import copy
import inspect
from functools import lru_cache
from typing import Any, NamedTuple

import msgspec

import decido
from decido_service import __version__
from decido_service.http.problems import PROBLEM_TYPE, TITLES
from decido_service.pages import DEFAULT_PAGE, MAX_PAGE
from decido_service.schemas import engine_table
from decido_service.store import RUN_STATES
from decido_service.types import (
    REQUEST_TYPES,
    RESPONSE_TYPES,
    RUN_ID_PATTERN,
    OptimizeEvent,
    with_extras,
)

__all__ = ["EXAMPLES", "OPERATIONS", "Operation", "openapi_document"]

Schema = dict[str, Any]
_REF = "#/components/schemas/{name}"


def _ref(name: str) -> Schema:
    return {"$ref": _REF.format(name=name)}


class Operation(NamedTuple):
    """One row of the paths table."""

    path: str
    method: str
    operation_id: str
    summary: str
    tag: str
    ok: tuple[int, str]
    """status and component (or ``"html"``/``"object"``) of the success answer"""
    errors: tuple[int, ...]
    """the statuses of its problem answers besides ``default``"""
    body: str | None = None
    """the request body's component"""
    body_required: bool = True
    keyed: bool = True
    description: str | None = None
    parameters: tuple[str, ...] = ()
    """names of :data:`_PARAMETERS` it takes"""


_KEYED = (401, 413, 429, 503)
_POSTED = (400, 415, 422)

OPERATIONS: tuple[Operation, ...] = (
    Operation("/v1/health", "get", "health", "Liveness and readiness (store reachable)",
              "meta", (200, "Health"), (), keyed=False),
    Operation("/v1/engines", "get", "engines", "The optimization engines and their options",
              "meta", (200, "Engines"), (), keyed=False),
    Operation("/v1/keys", "post", "createKey", "Create a free key (the secret is shown once)",
              "account", (201, "KeyCreated"), (*_POSTED, 413, 429, 503), "KeyRequest",
              body_required=False, keyed=False),
    Operation("/v1/usage", "get", "usage", "The key's plan, tier, limits and usage", "account",
              (200, "Usage"), (401, 503)),
    Operation("/v1/decide", "post", "decide", "One decision", "decisions",
              (200, "DecideResult"), (*_POSTED, *_KEYED), "DecideRequest"),
    Operation("/v1/batch", "post", "batch", "Many decisions (each item ok or error on its "
              "own)", "decisions", (200, "BatchResult"), (*_POSTED, 403, *_KEYED),
              "BatchRequest"),
    Operation("/v1/optimize", "post", "optimize", "One optimization run", "optimization",
              (200, "OptimizeResult"), (*_POSTED, 403, 409, *_KEYED), "OptimizeRequest",
              parameters=("idempotency_key",),
              description="Runs to the end and answers with the result. Send "
                          "`Accept: application/x-ndjson` to have the answer streamed "
                          "instead: one JSON object per line (OptimizeEvent), a `progress` "
                          "event every 0.25 s while the run lasts, then its `result` (or an "
                          "`error` problem). Everything decided before the run starts "
                          "(credentials, validation, caps, limits) is answered as usual. A "
                          "client that disconnects stops its run."),
    Operation("/v1/decisions", "get", "decisions", "The key's decision log, newest first",
              "decisions", (200, "DecisionLogPage"), (400, 401, 429, 503),
              parameters=("limit", "decision_cursor"),
              description="At most `limit` entries and about 1 MiB of them (at least one): "
                          "a page of large entries holds fewer, and `has_more` says more "
                          "follow. Option ids longer than 200 characters are cut in "
                          "summaries (to 200, the last one `…`); the entry keeps them whole."),
    Operation("/v1/decisions/{decision_id}", "get", "decision",
              "One logged decision with its request and answer", "decisions",
              (200, "DecisionLogRecord"), (401, 404, 429, 503), parameters=("decision_id",)),
    Operation("/v1/runs", "post", "submitRun", "Submit a run (answered at once; it runs in "
              "the background)", "runs", (202, "Run"), (*_POSTED, 403, 409, *_KEYED),
              "OptimizeRequest", parameters=("idempotency_key",),
              description="The body, validation, caps and limits of /v1/optimize; the run is "
                          "counted at admission and answered `queued` with `Location`. "
                          "A key's runs queued or running at once are capped by its tier "
                          "(429 `too_many_runs`); a full queue is 503 `overloaded`."),
    Operation("/v1/runs", "delete", "deleteRuns", "Delete every finished run of the key",
              "runs", (200, "RunsDeleted"), (401, 503),
              description="Queued and running runs are kept (cancel them first)."),
    Operation("/v1/runs", "get", "listRuns", "The key's runs, newest first", "runs",
              (200, "RunList"), (400, 401, 503),
              parameters=("limit", "starting_after", "state", "engine")),
    Operation("/v1/runs/{run_id}", "get", "getRun", "One run (with progress while it runs)",
              "runs", (200, "Run"), (401, 404, 503), parameters=("run_id",)),
    Operation("/v1/runs/{run_id}", "delete", "deleteRun", "Delete a finished run", "runs",
              (204, "empty"), (401, 404, 409, 503), parameters=("run_id",)),
    Operation("/v1/runs/{run_id}/cancel", "post", "cancelRun", "Stop a queued or running run",
              "runs", (202, "Run"), (401, 404, 409, 503), parameters=("run_id",),
              description="The run stops after its current iteration and ends `cancelled` "
                          "with its best so far; a finished run is 409."),
    Operation("/v1/runs/{run_id}/events", "get", "runEvents",
              "Watch a run: Server-Sent Events until it ends", "runs", (200, "events"),
              (400, 401, 404, 429, 503), parameters=("run_id", "last_event_id"),
              description="`text/event-stream`. Each event has `id:`, `event:` and one "
                          "`data:` line of JSON: `state` (data: the Run, on each state "
                          "change: queued, running, the final state), `progress` (data: "
                          "RunProgress, at most every 0.25 s while running), then exactly "
                          "one `result` (final state succeeded or cancelled) or `error` "
                          "(failed), data: the final Run; then the stream ends. A `: "
                          "heartbeat` comment every 15 s. Send the last event id seen as "
                          "`Last-Event-ID` to resume with no duplicate and no missed state "
                          "(an id this stream has not sent is 400); a finished run yields "
                          "its final state and terminal event at once. The Run's `request` "
                          "is in the first Run document of a connection only (absent from "
                          "the later ones). A key's open streams per worker are capped by "
                          "its tier (429 `too_many_streams`)."),
    Operation("/v1/runs/{run_id}/trace", "get", "runTrace", "A run's convergence trace",
              "runs", (200, "RunTrace"), (400, 401, 404, 503),
              parameters=("run_id", "format")),
    Operation("/v1/openapi.json", "get", "openapi", "This document", "meta",
              (200, "object"), (), keyed=False),
    Operation("/v1/docs", "get", "docs", "Interactive documentation (vendored Swagger UI)",
              "meta", (200, "html"), (), keyed=False),
)

_SUPPLIERS = [{"id": "s1", "attributes": {"price": 18.5, "quality": 7.2, "lead_time": 5}},
              {"id": "s2", "attributes": {"price": 22.0, "quality": 8.1, "lead_time": 12}},
              {"id": "s3", "attributes": {"price": 15.0, "quality": 6.0, "lead_time": 3}}]
_CRITERIA = [{"attribute": "price", "goal": "minimize", "weight": 5},
             {"attribute": "quality", "goal": "maximize", "weight": 3}]
#: a request body that works, by component: the interactive docs' "Try it out" starts
#: from it (tests/service/test_api_openapi.py sends each one)
EXAMPLES: dict[str, Any] = {
    "KeyRequest": {"label": "my laptop"},
    "DecideRequest": {"options": _SUPPLIERS, "method": "topsis", "criteria": _CRITERIA,
                      "constraints": ["price <= 25", "lead_time < 10 or quality >= 9"],
                      "explain": True},
    "BatchRequest": {"defaults": {"method": "wsm", "criteria": _CRITERIA},
                     "decisions": [{"id": "all", "options": _SUPPLIERS},
                                   {"id": "cheap two", "options": _SUPPLIERS[::2]}]},
    "OptimizeRequest": {"bounds": [[-5, 5], [-5, 5], [-5, 5]],
                        "objective_expression": "sum((x - 1)**2)", "engine": "de",
                        "max_evaluations": 20000, "time_limit": 2, "seed": 42},
}

_HEADERS = {
    "X-RateLimit-Limit": {"description": "the limit of the counter this response describes "
                                         "(per minute; keys.hour for POST /v1/keys)",
                          "schema": {"type": "integer"}},
    "X-RateLimit-Remaining": {"description": "requests left in the window",
                              "schema": {"type": "integer"}},
    "X-RateLimit-Reset": {"description": "Unix epoch seconds when the window ends",
                          "schema": {"type": "integer"}},
    "X-Request-Id": {"description": "the request's id (echoed when sent)",
                     "schema": {"type": "string"}},
    "Retry-After": {"description": "seconds to wait", "schema": {"type": "integer"}},
    "Location": {"description": "the run's URL (/v1/runs/{run_id})",
                 "schema": {"type": "string"}},
}
_PARAMETERS: dict[str, dict[str, Any]] = {
    "run_id": {"name": "run_id", "in": "path", "required": True,
               "description": "a run id (another key's, unknown or malformed: 404)",
               "schema": {"type": "string", "pattern": RUN_ID_PATTERN}},
    "decision_id": {"name": "decision_id", "in": "path", "required": True,
                    "description": "a decision-log id (another key's or unknown: 404)",
                    "schema": {"type": "string"}},
    "decision_cursor": {"name": "starting_after", "in": "query", "required": False,
                        "description": "the last id of the previous page (not one of the "
                                       "key's entries: 400)",
                        "schema": {"type": "string"}},
    "limit": {"name": "limit", "in": "query", "required": False,
              "description": f"page size (default {DEFAULT_PAGE})",
              "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE,
                         "default": DEFAULT_PAGE}},
    "starting_after": {"name": "starting_after", "in": "query", "required": False,
                       "description": "the last id of the previous page (not one of the "
                                      "key's runs: 400)",
                       "schema": {"type": "string", "pattern": RUN_ID_PATTERN}},
    "state": {"name": "state", "in": "query", "required": False,
              "description": "only runs in this state",
              "schema": {"enum": list(RUN_STATES)}},
    "engine": {"name": "engine", "in": "query", "required": False,
               "description": "only runs of this engine",
               "schema": {"enum": list(engine_table())}},
    "idempotency_key": {"name": "Idempotency-Key", "in": "header", "required": False,
                        "description": "1 to 255 characters of the client's choice: the same "
                                       "key and request within 24 h gets the first answer "
                                       "again and is not counted twice; with another "
                                       "request: 422; while the first is being answered: "
                                       "409; longer: 400",
                        "schema": {"type": "string", "minLength": 1, "maxLength": 255}},
    "last_event_id": {"name": "Last-Event-ID", "in": "header", "required": False,
                      "description": "resume after this event id (the last one seen; empty: "
                                     "from the start); an id this stream never sent: 400",
                      "schema": {"type": "string", "pattern": r"^([1-4]|2\.[0-9]{1,19})?$"}},
    "format": {"name": "format", "in": "query", "required": False,
               "description": "json (default) or csv (text/csv: evaluations,elapsed_ms,best lines)",
               "schema": {"enum": ["json", "csv"], "default": "json"}},
}
_RATE_HEADERS = {name: {"$ref": f"#/components/headers/{name}"}
                 for name in ("X-RateLimit-Limit", "X-RateLimit-Remaining",
                              "X-RateLimit-Reset", "X-Request-Id")}
_RETRY_STATUSES = (429, 503)


def _codes(status: int) -> str:
    return ", ".join(code for code, (s, _) in TITLES.items() if s == status)


def _answer(description: str, content: dict[str, Any], retry: bool = False) -> dict[str, Any]:
    headers = dict(_RATE_HEADERS)
    if retry:
        headers["Retry-After"] = {"$ref": "#/components/headers/Retry-After"}
    return {"description": description, "headers": headers, "content": content}


def _problem(status: int | None, listed: tuple[int, ...] = ()) -> dict[str, Any]:
    """A problem answer: of one status, or (``None``) of every status not ``listed``."""
    content = {PROBLEM_TYPE: {"schema": _ref("Problem")}}
    if status is None:
        others = sorted({s for s, _ in TITLES.values()} - set(listed))
        return _answer("any other error: " + ", ".join(_codes(s) for s in others), content)
    return _answer(_codes(status), content, retry=status in _RETRY_STATUSES)


def _ok(op: Operation) -> dict[str, Any]:
    status, name = op.ok
    if name == "empty":
        return {"description": "done; no body", "headers": dict(_RATE_HEADERS)}
    if name == "html":
        content: dict[str, Any] = {"text/html": {"schema": {"type": "string"}}}
    elif name == "events":
        content = {"text/event-stream": {"schema": {
            "type": "object", "description": "one event (see the operation)",
            "required": ["event", "data"],
            "properties": {
                "id": {"type": "string"},
                "event": {"enum": ["state", "progress", "result", "error"]},
                "data": {"type": "string", "contentMediaType": "application/json",
                         "description": "Run (state, result, error) or RunProgress"}}}}}
    elif name == "object":
        content = {"application/json": {"schema": {"type": "object"}}}
    else:
        content = {"application/json": {"schema": _ref(name)}}
    if name == "OptimizeResult":
        content["application/x-ndjson"] = {"schema": _ref("OptimizeEvent")}
    if name == "RunTrace":
        content["text/csv"] = {"schema": {"type": "string"}}
    out = _answer(name, content)
    if name == "OptimizeResult" or status == 202:
        out["headers"]["Location"] = {"$ref": "#/components/headers/Location"}
    return out


def _operation(op: Operation) -> dict[str, Any]:
    responses: dict[str, Any] = {str(op.ok[0]): _ok(op)}
    for status in op.errors:
        responses[str(status)] = _problem(status)
    if op.path == "/v1/health":  # readiness: the same document, store unavailable
        responses["503"] = _answer("the store is not answering",
                                   {"application/json": {"schema": _ref("Health")}})
    responses["default"] = _problem(None, tuple(int(s) for s in responses))
    out: dict[str, Any] = {"operationId": op.operation_id, "summary": op.summary,
                           "tags": [op.tag], "responses": responses}
    if op.description:
        out["description"] = op.description
    if op.parameters:
        out["parameters"] = list(op.parameters)
    if op.body:
        media: dict[str, Any] = {"schema": _ref(op.body)}
        if op.body in EXAMPLES:
            media["example"] = EXAMPLES[op.body]
        out["requestBody"] = {"required": op.body_required,
                              "content": {"application/json": media}}
    if op.parameters:
        out["parameters"] = [_PARAMETERS[name] for name in op.parameters]
    if not op.keyed:
        out["security"] = []
    return out


def _type_schemas() -> dict[str, Schema]:
    """The components generated from :mod:`decido_service.types`."""
    (*_, event), components = msgspec.json.schema_components(
        [*REQUEST_TYPES.values(), *RESPONSE_TYPES, OptimizeEvent], ref_template=_REF)
    with_extras(components)
    components["OptimizeEvent"] = {
        **event, "description": "one line of a streamed run (Accept: application/x-ndjson)"}
    for schema in components.values():
        if "description" in schema:
            schema["description"] = inspect.cleandoc(schema["description"])
    return components


def _paths() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for op in OPERATIONS:
        out.setdefault(op.path, {})[op.method] = _operation(op)
    return out


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
                f"(`{PROBLEM_TYPE}`) with a stable `code`; a 422 lists every fault of the "
                "request with its JSON pointer. Library version "
                f"{decido.__version__}."),
            "license": {"name": "MIT", "identifier": "MIT"},
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}, {"apiKey": []}],
        "tags": [{"name": t} for t in dict.fromkeys(op.tag for op in OPERATIONS)],
        "paths": _paths(),
        "components": {
            "schemas": {**_type_schemas(), **decido.decision_schemas()},
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
