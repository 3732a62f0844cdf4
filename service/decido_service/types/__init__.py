"""The request and response bodies of the service, as msgspec Structs: the one source.

Decoding (:mod:`decido_service.schemas`), the 422 error list and the OpenAPI components
(:mod:`decido_service.http.openapi`) all come from these types. Limits are the library's
(:data:`decido.DEFAULT_LIMITS`, :data:`decido.optimize.SEED_END`), engine ids are read from
:func:`decido.engines` at import, problem codes from :data:`decido_service.http.problems.TITLES`.
What a type cannot say (``lower <= upper``, options within the engine's ranges, a valid
expression) is checked by :func:`decido.optimize.problems` and the expression compiler.

A class's docstring is its schema's description: it is written for API users.

The types are grouped by surface, a module each: :mod:`~decido_service.types.fields`
(the field types they share), :mod:`~decido_service.types.problems`,
:mod:`~decido_service.types.meta`, :mod:`~decido_service.types.account`,
:mod:`~decido_service.types.optimize`, :mod:`~decido_service.types.decision_log`,
:mod:`~decido_service.types.runs`, :mod:`~decido_service.types.webhooks` and
:mod:`~decido_service.types.params` (path, query and header parameters); the names other
modules take from the package are re-exported here, with the tables of request and response
bodies the decoder and the OpenAPI document read.
"""

from __future__ import annotations

from typing import Any

import msgspec

from decido_service.types.account import (
    KeyCreated,
    KeyRequest,
    Usage,
)
from decido_service.types.decision_log import (
    DecisionLogEntry,
    DecisionLogPage,
    DecisionLogRecord,
)
from decido_service.types.fields import RUN_ID_PATTERN
from decido_service.types.meta import Engine, Engines, Health
from decido_service.types.optimize import (
    SEMANTIC_FAULTS,
    ConstraintValue,
    ErrorEvent,
    ObjectiveInfo,
    OptimizeEvent,
    OptimizeRequest,
    OptimizeResult,
    ParetoPoint,
    ProgressEvent,
    ResultEvent,
)
from decido_service.types.params import (
    MAX_PAGE,
    DecisionPage,
    DecisionPath,
    EventsHeaders,
    FrontQuery,
    IdempotencyHeaders,
    RunPage,
    RunPath,
    TraceQuery,
)
from decido_service.types.problems import PROBLEM_TYPE, TITLES, Problem
from decido_service.types.runs import (
    Budget,
    Run,
    RunDocument,
    RunFront,
    RunList,
    RunProgress,
    RunResult,
    RunsDeleted,
    RunTrace,
)
from decido_service.types.studies import (
    ReportAnswer,
    Study,
    StudyCreate,
    StudyList,
    SuggestAnswer,
    SuggestRequest,
    Trial,
    TrialList,
    TrialReport,
    TrialsAdd,
    TrialsTell,
    TrialTell,
)
from decido_service.types.webhooks import (
    Delivery,
    DeliveryList,
    DeliveryPage,
    DeliveryPath,
    Webhook,
    WebhookCreate,
    WebhookCreated,
    WebhookList,
    WebhookPath,
    WebhookUpdate,
)

__all__ = [
    "encode",
    "MAX_PAGE",
    "PROBLEM_TYPE",
    "TITLES",
    "Budget",
    "DecisionPage",
    "DecisionPath",
    "EventsHeaders",
    "IdempotencyHeaders",
    "RunDocument",
    "FrontQuery",
    "RunPage",
    "RunPath",
    "TraceQuery",
    "RUN_ID_PATTERN",
    "SEMANTIC_FAULTS",
    "DecisionLogEntry",
    "DecisionLogPage",
    "DecisionLogRecord",
    "REQUEST_TYPES",
    "RESPONSE_TYPES",
    "Delivery",
    "DeliveryList",
    "DeliveryPage",
    "DeliveryPath",
    "Webhook",
    "WebhookCreate",
    "WebhookCreated",
    "WebhookList",
    "WebhookPath",
    "WebhookUpdate",
    "Engine",
    "Engines",
    "ConstraintValue",
    "Health",
    "KeyCreated",
    "KeyRequest",
    "ObjectiveInfo",
    "OptimizeEvent",
    "OptimizeRequest",
    "OptimizeResult",
    "ParetoPoint",
    "Problem",
    "ProgressEvent",
    "ErrorEvent",
    "ResultEvent",
    "Run",
    "RunFront",
    "RunList",
    "RunProgress",
    "RunResult",
    "RunTrace",
    "RunsDeleted",
    "with_extras",
]


#: the request bodies, by OpenAPI component name (the class's)
REQUEST_TYPES: dict[str, Any] = {kind.__name__: kind for kind in (
    OptimizeRequest, KeyRequest, WebhookCreate, WebhookUpdate, StudyCreate, SuggestRequest,
    TrialTell, TrialsTell, TrialsAdd, TrialReport)}
#: what the generated component schemas cannot say, added to them by name
SCHEMA_EXTRAS: dict[str, dict[str, Any]] = {
    "OptimizeRequest": {"anyOf": [
        {"required": ["bounds"]},
        {"required": ["variables"], "properties": {"variables": {"type": "array"}}}],
        "oneOf": [{"required": ["objective_expression"]}, {"required": ["objectives"]}]}}


def with_extras(components: dict[str, Any]) -> dict[str, Any]:
    """``components`` (from ``msgspec.json.schema_components``) with :data:`SCHEMA_EXTRAS`."""
    for name, extra in SCHEMA_EXTRAS.items():
        if name in components:
            components[name].update(extra)
    return components


#: the response bodies
RESPONSE_TYPES: tuple[Any, ...] = (Problem, Health, Engines, KeyCreated, Usage, OptimizeResult,
                                   ProgressEvent, ResultEvent, ErrorEvent, DecisionLogPage,
                                   DecisionLogRecord, Run, RunFront, RunList, RunTrace, RunsDeleted,
                                   Webhook, WebhookCreated, WebhookList, Delivery, DeliveryList,
                                   Study, StudyList, SuggestAnswer, Trial, TrialList,
                                   ReportAnswer)


#: the one encoder of every answer the service builds (a Struct of this package, or a
#: list of them); non-finite floats are written null
encode = msgspec.json.Encoder().encode
