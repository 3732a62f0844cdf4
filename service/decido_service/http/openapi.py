"""The OpenAPI 3.1 document of the service, generated from the types.

The components are the JSON Schemas msgspec generates from :mod:`decido_service.types`
(the same types that decode the requests), the parameters those of the parameter Structs
(:mod:`decido_service.types.params`, :func:`decido_service.http.params.openapi_parameters`);
the problem codes and their statuses come from :data:`decido_service.types.TITLES`. The
paths are the operations the routes carry (:class:`decido_service.http.routes.Doc`: summary,
request and response type names, statuses), collected by
:data:`decido_service.blueprints.OPERATIONS`; the decision surface's components come from
the library (:func:`decido.decision_schemas`).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import msgspec
import orjson

import decido
from decido_service import __version__
from decido_service.http.params import openapi_parameters
from decido_service.http.routes import Doc, Operation
from decido_service.tiers import DEFAULT_PLANS, default_caps
from decido_service.types import (
    PROBLEM_TYPE,
    REQUEST_TYPES,
    RESPONSE_TYPES,
    RUN_ID_PATTERN,
    TITLES,
    IdempotencyHeaders,
    OptimizeEvent,
    with_extras,
)
from decido_service.types.params import REPLAYED
from decido_service.types.studies import STUDY_ID_PATTERN

__all__ = ["EXAMPLES", "openapi_bytes", "openapi_document"]

Schema = dict[str, Any]
_REF = "#/components/schemas/{name}"


def _ref(name: str) -> Schema:
    return {"$ref": _REF.format(name=name)}


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
    "WebhookCreate": {"url": "https://hooks.example/decido",
                      "events": ["run.succeeded", "run.failed"]},
    "WebhookUpdate": {"events": ["*"]},
    "StudyCreate": {"bounds": [[-5, 5], [-5, 5]], "engine": "cmaes", "seed": 1,
                    "max_trials": 100, "trial_lease": 600, "metadata": {"project": "demo"}},
    "SuggestRequest": {"count": 3, "client_id": "worker-1"},
    "TrialsAdd": {"trials": [{"x": [1, 1], "value": 2.0},
                             {"x": [0.5, 0.5], "state": "queued"}]},
    "TrialTell": {"value": 0.42, "metrics": {"seconds": 12.5}},
    "TrialsTell": {"trials": [{"number": 1, "value": 0.37},
                              {"number": 2, "state": "failed", "reason": "out of memory"}]},
    "TrialReport": {"step": 10, "value": 0.8},
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
    "Location": {"description": "the run's URL (/v1/runs/{run_id}) or the study's "
                             "(/v1/studies/{study_id})",
                 "schema": {"type": "string"}},
    REPLAYED: {"description": "true on the answer replayed for a repeated Idempotency-Key "
                              "(the first request's; nothing was counted again); absent "
                              "otherwise", "schema": {"const": "true"}},
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


def _event_stream(event_id: dict[str, Any], events: list[str], data: str
                  ) -> dict[str, Any]:
    """The content of a ``text/event-stream`` answer: its events' ids, names and data."""
    return {"text/event-stream": {"schema": {
        "type": "object", "description": "one event (see the operation)",
        "required": ["event", "data"],
        "properties": {
            "id": event_id, "event": {"enum": events},
            "data": {"type": "string", "contentMediaType": "application/json",
                     "description": data}}}}}


def _ok(op: Doc) -> dict[str, Any]:
    status, name = op.ok
    if name == "empty":
        return {"description": "done; no body", "headers": dict(_RATE_HEADERS)}
    if name == "html":
        content: dict[str, Any] = {"text/html": {"schema": {"type": "string"}}}
    elif name == "events":
        content = _event_stream({"type": "string"}, ["state", "progress", "result", "error"],
                                "Run (state, result, error) or RunProgress")
    elif name == "study_events":
        content = _event_stream(
            {"type": "string", "pattern": "^[0-9]+$"},
            ["study", "trial", "best", "state", "finished"],
            "Study (study), Trial (trial), {best} or {front_size, hypervolume} (best), "
            "{id, state, trials} (state, finished)")
    elif name == "object":
        content = {"application/json": {"schema": {"type": "object"}}}
    else:
        content = {"application/json": {"schema": _ref(name)}}
    if name == "OptimizeResult":
        content["application/x-ndjson"] = {"schema": _ref("OptimizeEvent")}
    if name == "RunTrace":
        content["text/csv"] = {"schema": {"type": "string"}}
    out = _answer(name, content)
    if name == "OptimizeResult" or (status == 202 and name == "Run") or \
            (status == 201 and name == "Study"):
        out["headers"]["Location"] = {"$ref": "#/components/headers/Location"}
    if IdempotencyHeaders in op.params:
        out["headers"][REPLAYED] = {"$ref": f"#/components/headers/{REPLAYED}"}
    return out


def _operation(path: str, op: Doc) -> dict[str, Any]:
    responses: dict[str, Any] = {str(op.ok[0]): _ok(op)}
    for status in op.errors:
        responses[str(status)] = _problem(status)
    if path == "/v1/health":  # readiness: the same document, store unavailable
        responses["503"] = _answer("the store is not answering",
                                   {"application/json": {"schema": _ref("Health")}})
    responses["default"] = _problem(None, tuple(int(s) for s in responses))
    out: dict[str, Any] = {"operationId": op.operation_id, "summary": op.summary,
                           "tags": [op.tag], "responses": responses}
    if op.description:
        out["description"] = op.description
    if op.body:
        media: dict[str, Any] = {"schema": _ref(op.body)}
        if op.body in EXAMPLES:
            media["example"] = EXAMPLES[op.body]
        out["requestBody"] = {"required": op.body_required,
                              "content": {"application/json": media}}
    if op.params:
        out["parameters"] = [p for kind in op.params for p in openapi_parameters(kind)]
    if not op.keyed:
        out["security"] = []
    return out


def _decision_schemas() -> dict[str, Schema]:
    """The library's decision components with what the service adds: ``from_run`` (a
    decision on a run's front, :mod:`decido_service.decisions.bridge`) and the front
    point's ``x`` and ``f`` on the ranking items of such a decision."""
    schemas = decido.decision_schemas()
    caps = default_caps(DEFAULT_PLANS, "from_run_points")
    from_run = {"type": "string", "pattern": RUN_ID_PATTERN, "description": (
        "instead of options: the id of one of the key's finished runs of several "
        "objectives; its front points are the options (id: the point's index; attributes: "
        "the objectives' names and the variables' names or x0, x1, ...) and criteria "
        "default to the objectives with their goals and equal weights. The fronts of one "
        "request (a batch's items together) hold at most the plan's from_run_points "
        f"(by default {caps}): beyond, 422 with an above_plan_cap entry for each "
        "from_run up to the one past the cap")}
    from_study = {"type": "string", "pattern": STUDY_ID_PATTERN, "description": (
        "instead of options: the id of one of the key's studies; the options are its "
        "front (several objectives) or its completed trials (one objective), ids the "
        "trials' numbers as strings, attributes the objectives' values by name, then the "
        "numeric variables; criteria default to the objectives; counted against "
        "from_run_points as from_run is")}
    for name in ("DecideRequest", "DecisionItem"):
        schemas[name]["properties"]["from_run"] = from_run
        schemas[name]["properties"]["from_study"] = from_study
    request = schemas["DecideRequest"]
    request.pop("required", None)
    # with options: an expression when the method is "expression", criteria otherwise; a
    # run's front brings its own criteria (its objectives)
    request["oneOf"] = [{"required": ["options"], "if": request.pop("if"),
                         "then": request.pop("then"), "else": request.pop("else")},
                        {"required": ["from_run"]}, {"required": ["from_study"]}]
    entry = schemas["DecideResult"]["properties"]["ranking"]["items"]
    numbers = {"type": "array", "items": {"type": ["number", "null"]}}
    entry["properties"].update(
        x={**numbers, "description": "from_run: the front point's x"},
        f={**numbers, "description": "from_run: the front point's objective values"})
    return schemas


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


def _paths(operations: Sequence[Operation]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for op in operations:
        out.setdefault(op.path, {})[op.method] = _operation(op.path, op.doc)
    return out


def openapi_document(operations: Sequence[Operation]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``operations``."""
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
        "tags": [{"name": t} for t in dict.fromkeys(op.doc.tag for op in operations)],
        "paths": _paths(operations),
        "components": {
            "schemas": {**_type_schemas(), **_decision_schemas()},
            "headers": _HEADERS,
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer",
                           "description": "Authorization: Bearer dk_..."},
                "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            },
        },
    }


@lru_cache(maxsize=1)
def openapi_bytes(operations: tuple[Operation, ...]) -> bytes:
    """The document of ``operations``, serialized (once per process)."""
    return orjson.dumps(openapi_document(operations))
