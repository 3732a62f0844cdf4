"""JSON Schema (2020-12, OpenAPI 3.1) of the decision requests and answers.

Written from the tables the validation reads (``decido._mcdm_vocabulary``: members,
methods, parameters, weightings, goals, limits; ``decido._mcdm``: normalizations), so
that the schema and ``decido.decide`` name the same things.
The schema checks shapes, and that a decision names its criteria unless its method is
``expression``; rules that need the values (an attribute every option has, weights
required by weighting ``given``, positivity, bounds) are ``decide``'s alone.
"""

from __future__ import annotations

from typing import Any

from decido._mcdm import NORMALIZATIONS
from decido._mcdm_schema_more import ID as _ID
from decido._mcdm_schema_more import NUMBER as _NUMBER
from decido._mcdm_schema_more import (
    more_request_members,
    more_result_members,
    more_schemas,
)
from decido._mcdm_schema_more import ref as _ref
from decido._mcdm_vocabulary import (
    ALL_METHODS,
    ALL_PARAMS,
    CRITERION_FIELDS,
    DEFAULT_GOAL,
    DEFAULT_WEIGHT,
    FIELDS,
    FLAGS,
    LIMITS,
    PARAMS,
    WEIGHTINGS,
    Param,
)
from decido.goals import GOAL_NAMES
from decido.metadata import metadata_schema


def _nullable(values: tuple[str, ...]) -> dict[str, Any]:
    """One of ``values``, or null (a member set to null is absent)."""
    return {"enum": [*values, None]}


def _request_members() -> dict[str, dict[str, Any]]:
    members: dict[str, dict[str, Any]] = {
        "id": {"type": ["string", "integer", "null"]},
        "options": {
            "type": "array",
            "minItems": 1,
            "maxItems": LIMITS["max_options"],
            "items": _ref("DecisionOption"),
        },
        "method": _nullable(ALL_METHODS),
        "criteria": {
            "type": ["array", "null"],
            "minItems": 1,
            "maxItems": LIMITS["max_criteria"],
            "items": _ref("DecisionCriterion"),
        },
        "normalization": _nullable(NORMALIZATIONS),
        "weighting": _nullable(tuple(WEIGHTINGS)),
        "params": {"anyOf": [_ref("DecisionParams"), {"type": "null"}]},
        "constraints": {
            "type": ["array", "null"],
            "maxItems": LIMITS["max_constraints"],
            "items": {"type": "string"},
        },
        "top_k": {"type": ["integer", "null"], "minimum": 1},
        "expression": {"type": ["string", "null"]},
        "goal": _nullable(GOAL_NAMES),
        "metadata": metadata_schema(),
        **more_request_members(),
    }
    for name in FLAGS:
        members[name] = {"type": ["boolean", "null"], "default": False}
    assert set(members) == set(FIELDS), "every member of a request has a schema"
    return {name: {**members[name], "description": FIELDS[name]} for name in FIELDS}


def _request(required: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "object",
        "properties": _request_members(),
        "additionalProperties": False,
    }
    if required:
        out["required"] = ["options"]
        out.update(_conditions())
    return out


#: the method is "expression": named, or implied by an expression when none is named
_EXPRESSION = {"anyOf": [
    {"required": ["method"], "properties": {"method": {"const": "expression"}}},
    {"required": ["expression"], "properties": {"method": {"const": None},
                                                "expression": {"type": "string"}}}]}


def _conditions() -> dict[str, Any]:
    """What a decision needs besides its options, as far as a schema can say it: an expression
    (a string) when the method is "expression", criteria (a list) otherwise."""
    return {"if": _EXPRESSION,
            "then": {"required": ["expression"], "properties": {"expression": {"type": "string"}}},
            "else": {"required": ["criteria"], "properties": {"criteria": {"type": "array"}}}}


def _criterion() -> dict[str, Any]:
    properties = {
        "attribute": {"type": "string", "minLength": 1},
        "goal": {"enum": list(GOAL_NAMES), "default": DEFAULT_GOAL,
                 "description": "minimize or maximize ('min' and 'max' are aliases)"},
        "weight": {"anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "null"},
                             _ref("DecisionInterval")],
                   "default": DEFAULT_WEIGHT,
                   "description": "a weight > 0 (default 1 under weighting 'given'); under "
                                  "uncertainty also an interval"},
    }
    assert tuple(properties) == CRITERION_FIELDS, "every member of a criterion has a schema"
    return {
        "type": "object",
        "required": ["attribute"],
        "properties": properties,
        "additionalProperties": False,
    }


def _params() -> dict[str, Any]:
    properties = {name: _param(p) for name, p in PARAMS.items()}
    assert set(properties) == set(ALL_PARAMS), "every parameter has a schema"
    return {"type": "object", "properties": properties, "additionalProperties": False}


def _param(p: Param) -> dict[str, Any]:
    """The schema of one parameter, from its row."""
    bound = "exclusiveMinimum" if p.open_low else "minimum"
    if p.kind == "unit":
        out: dict[str, Any] = {"type": "number", "minimum": p.low, "maximum": p.high,
                               "default": p.default}
    elif p.kind == "choice":
        out = {"enum": list(p.choices), "default": p.default}
    elif p.kind == "per_criterion":
        out = {"type": "object", "additionalProperties": {"type": "number", bound: p.low}}
    else:
        out = {"type": "object", "additionalProperties": {
            "type": "array", "items": _NUMBER, "minItems": 2, "maxItems": 2}}
    return {**out, "description": p.description}


def _result() -> dict[str, Any]:
    weights = {"type": "object", "additionalProperties": _NUMBER}
    nullable_number = {"type": ["number", "null"]}
    entry = {
        "type": "object",
        "required": ["id", "rank", "score"],
        "properties": {
            "id": _ID,
            "rank": {"type": "integer", "minimum": 1},
            "score": nullable_number,
            "explanation": {"type": "object"},
        },
    }
    return {
        "type": "object",
        "required": [
            "status", "method", "normalization", "weighting", "weights", "higher_is_better",
            "best", "best_is_tied", "ties", "n_options", "n_feasible", "ranking",
            "infeasible", "warnings",
        ],  # fmt: skip
        "properties": {
            "id": {"type": ["string", "integer", "null"]},
            "status": {"enum": ["ok", "infeasible"]},
            "method": {"enum": list(ALL_METHODS)},
            "normalization": _nullable(NORMALIZATIONS),
            "weighting": _nullable(tuple(WEIGHTINGS)),
            "weights": weights,
            "higher_is_better": {"type": "boolean"},
            "best": {"type": ["string", "integer", "null"]},
            "best_is_tied": {"type": "boolean"},
            "ties": {"type": "array", "items": {"type": "array", "items": _ID, "minItems": 2}},
            "n_options": {"type": "integer", "minimum": 1},
            "n_feasible": {"type": "integer", "minimum": 0},
            "ranking": {"type": "array", "items": entry},
            "infeasible": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "violated"],
                    "properties": {
                        "id": _ID,
                        "violated": {"type": "array", "items": {"type": "string"}},
                    },
                },
            },
            "compromise": {"type": "array", "items": _ID},
            "warnings": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["code", "message"],
                    "properties": {
                        "code": {"type": "string"},
                        "message": {"type": "string"},
                        "path": {"type": "string"},
                    },
                },
            },
            "sensitivity": _ref("DecisionSensitivity"),
            **more_result_members(),
        },
    }


def _sensitivity() -> dict[str, Any]:
    unit = {"type": "number", "minimum": 0, "maximum": 1}
    changes = {"type": ["string", "integer", "null"]}
    return {
        "type": "object",
        "required": ["margin", "criteria"],
        "properties": {
            "margin": {"type": ["number", "null"], "minimum": 0},
            "criteria": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": [
                        "attribute", "weight", "lower", "upper", "lower_changes_to",
                        "upper_changes_to",
                    ],  # fmt: skip
                    "properties": {
                        "attribute": {"type": "string"},
                        "weight": unit,
                        "lower": unit,
                        "upper": unit,
                        "lower_changes_to": changes,
                        "upper_changes_to": changes,
                    },
                },
            },
        },
    }


def _error() -> dict[str, Any]:
    fault = {
        "type": "object",
        "required": ["pointer", "code", "message"],
        "properties": {
            "pointer": {"type": "string", "description": "JSON pointer of the field"},
            "code": {"type": "string"},
            "message": {"type": "string"},
            "position": {"type": "integer", "minimum": 0},
        },
    }
    return {
        "type": "object",
        "required": ["code", "message", "path"],
        "properties": {
            "code": {"type": "string"},
            "message": {"type": "string"},
            "path": {"type": "string"},
            "position": {"type": "integer", "minimum": 0},
            "errors": {"type": "array", "items": fault},
        },
    }


def decision_schemas() -> dict[str, dict[str, Any]]:
    """JSON Schema components of the decision API, by name: ``DecideRequest``,
    ``BatchRequest``, ``DecideResult``, ``BatchResult`` and the sub-schemas they
    reference (``DecisionOption``, ``DecisionCriterion``, ``DecisionParams``,
    ``DecisionItem``, ``DecisionSensitivity``, ``DecisionItemError``,
    ``DecisionErrorDetail``).  References are ``#/components/schemas/<Name>``, as an
    OpenAPI 3.1 document holds them.  Limits are read from ``decido.DECISION_LIMITS``
    at the call."""
    result = _result()
    item_error = {
        "type": "object",
        "required": ["id", "status", "error"],
        "properties": {
            "id": {"type": ["string", "integer", "null"]},
            "status": {"const": "error"},
            "error": _ref("DecisionErrorDetail"),
        },
    }
    return {
        "DecideRequest": _request(required=True),
        "DecisionItem": _request(required=False),
        "DecisionOption": {
            "type": "object",
            "required": ["id", "attributes"],
            "properties": {
                "id": _ID,
                "attributes": {
                    "type": "object",
                    "description": "attribute values: numbers (true and false count as 1 "
                    "and 0), or under uncertainty a DecisionUncertainValue; values no "
                    "criterion, constraint or expression uses are not read",
                },
            },
        },
        "DecisionCriterion": _criterion(),
        "DecisionParams": _params(),
        "BatchRequest": {
            "type": "object",
            "required": ["decisions"],
            "properties": {
                # each item is checked on its own and answered in its own result (a
                # DecisionItemError when invalid), so the envelope asks only for objects;
                # DecisionItem says what makes an item valid
                "defaults": {"type": ["object", "null"],
                             "description": "members merged into every item (DecisionItem)"},
                "decisions": {
                    "type": "array",
                    "maxItems": LIMITS["max_batch"],
                    "items": {"type": "object",
                              "description": "a decision (DecisionItem), valid or not on "
                                             "its own"},
                },
            },
            "additionalProperties": False,
        },
        "DecideResult": result,
        "DecisionSensitivity": _sensitivity(),
        "DecisionErrorDetail": _error(),
        "DecisionItemError": item_error,
        "BatchResult": {
            "type": "object",
            "required": ["results", "n_decisions", "n_ok", "n_error"],
            "properties": {
                "results": {
                    "type": "array",
                    "items": {"anyOf": [_ref("DecideResult"), _ref("DecisionItemError")]},
                },
                "n_decisions": {"type": "integer", "minimum": 0},
                "n_ok": {"type": "integer", "minimum": 0},
                "n_error": {"type": "integer", "minimum": 0},
            },
        },
        **more_schemas(),
    }
