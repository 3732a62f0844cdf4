"""schemathesis hooks for test_api_openapi.py (loaded through ``SCHEMATHESIS_HOOKS``).

``schema_valid_data_is_accepted`` replaces schemathesis's ``positive_data_acceptance``: a
request that the document says is valid must be answered 2xx, or refused for a reason the
document does not claim to describe — credentials or caps (401, 403), counters or
overload (429, 503), an id that is well formed but names nothing of the key's (404, or 400
``invalid_parameter`` for a ``Last-Event-ID`` the run's stream never sent), a run in the
wrong state (409), a study or trial in the wrong state (409), an ``from_run`` or
``from_study`` of a decision naming a run or study that is not the key's or not finished
(404, 409), an ``Idempotency-Key`` already used with another request or still in
use (422, 409) or whose run was deleted since (404), or a 422 whose every fault is one of
the library's semantic checks on values the request holds: bounds out of order, options
outside the engine's ranges, an attribute an option lacks, an expression that does not
compile — among them one naming ``x[i]`` past the number of bounds, which a schema cannot
say (the expression is a string; the operations' descriptions say it). Any other 400 (a
``starting_after`` cursor is never refused once the document's pattern holds), a 415, a 422
naming a schema fault (``invalid_type``, ``required``, ``unknown_field``, ``not_allowed``,
``out_of_range``, ``invalid_length``, ...), or a 422 fault at a member of the body that it
lacks (the document could have said it is required, as it now does of ``criteria``) means
that the document and the service disagree.
"""

from __future__ import annotations

import json

import schemathesis

from decido_service.schemas import SCHEMA_CODES

_REFUSALS = {401, 403, 429, 503}


def _lacks(body: object, pointer: str) -> bool:
    """True when ``pointer`` names a member of the body itself (``/criteria``) that the body
    does not have, or has null: the document names every such member, so it could have
    said it is required. (Deeper places can be keys the request chose, an option's
    attribute or a decision maker's weight, that no schema can require.)"""
    tokens = pointer.split("/")[1:] if pointer else []
    return (len(tokens) == 1 and isinstance(body, dict)
            and body.get(tokens[0].replace("~1", "/").replace("~0", "~")) is None)


@schemathesis.check
def schema_valid_data_is_accepted(ctx, response, case) -> bool | None:
    """Data valid under the document is accepted or refused for a semantic reason only."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return None
    status = response.status_code
    if 200 <= status < 300 or status in _REFUSALS:
        return None
    if status == 404 and case.path_parameters:  # a well-formed id of nothing of the key's
        return None
    if status == 404 and (case.headers or {}).get("Idempotency-Key") is not None:
        return None  # the run of the key's earlier use was deleted since
    if ("/v1/runs/" in case.path or "/v1/studies/" in case.path) and status == 409:
        return None  # a run, a study or a trial in the wrong state
    if status in (404, 409) and any(f'"{member}"' in json.dumps(case.body, default=str)
                                    for member in ("from_run", "from_study")):
        return None  # a decision on a run or study that is not the key's, or not finished
    if status in (409, 422) and json.loads(response.content).get("code") in (
            "idempotency_key_reused", "idempotency_key_in_use"):
        return None  # the key's earlier use: a state the document cannot describe
    if status == 400 and (case.headers or {}).get("Last-Event-ID") is not None and \
            b"Last-Event-ID" in response.content:  # an event id this stream never sent
        return None
    faults = []
    if status == 422:
        faults = json.loads(response.content).get("errors", [])
        schema_faults = [f for f in faults if f["code"] in set(SCHEMA_CODES.values()) | {
            "invalid_value"} or _lacks(case.body, f["pointer"])]
        if faults and not schema_faults:
            return None
        faults = schema_faults or faults
    raise AssertionError(f"a request valid under the document was refused with {status}: "
                         f"{faults or response.content[:300]!r}")
