"""JSON Schema of the members of judgments, groups and uncertainty (AHP, decision makers,
SMAA), in requests and answers; ``decido._mcdm_schema`` joins them to the rest."""

from __future__ import annotations

from typing import Any

from decido._mcdm_vocabulary import (
    AGGREGATIONS,
    AHP_METHODS,
    DECISION_MAKER_FIELDS,
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    LIMITS,
    UNCERTAINTY_FIELDS,
)

REF = "#/components/schemas/"
ID = {"type": ["string", "integer"]}
NUMBER = {"type": "number"}
_SHARE = {"type": "number", "minimum": 0, "maximum": 1}


def ref(name: str) -> dict[str, str]:
    """A reference to the component ``name``."""
    return {"$ref": REF + name}


def _matrix() -> dict[str, Any]:
    return {
        "type": "array",
        "minItems": 2,
        "maxItems": LIMITS["max_criteria"],
        "items": {"type": "array", "items": {"anyOf": [
            {"type": "number", "exclusiveMinimum": 0}, {"type": "null"}]}},
        "description": "n x n judgments a_ij (criterion i over j) in the order of the "
        "criteria; the diagonal 1; null below the diagonal for 1 / a_ji",
    }


def more_request_members() -> dict[str, Any]:
    """The request members ``pairwise``, ``ahp_method``, ``decision_makers``,
    ``aggregation`` and ``uncertainty``."""
    return {
        "pairwise": {"anyOf": [_matrix(), {"type": "null"}]},
        "ahp_method": {"enum": [*AHP_METHODS, None], "default": AHP_METHODS[0]},
        "decision_makers": {"type": ["array", "null"], "minItems": 1,
                            "items": ref("DecisionMaker")},
        "aggregation": {"enum": [*AGGREGATIONS, None], "default": AGGREGATIONS[0]},
        "uncertainty": {"anyOf": [ref("DecisionUncertainty"), {"type": "null"}]},
    }


def _consistency() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["lambda_max", "index", "ratio", "acceptable", "most_inconsistent"],
        "properties": {
            "lambda_max": NUMBER,
            "index": {"type": "number", "minimum": 0},
            "ratio": {"type": "number", "minimum": 0},
            "acceptable": {"type": "boolean"},
            "most_inconsistent": {"anyOf": [
                {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2},
                {"type": "null"}]},
        },
    }


def _group() -> dict[str, Any]:
    member = {
        "type": "object",
        "required": ["id", "weight", "weights", "consistency"],
        "properties": {
            "id": ID,
            "weight": _SHARE,
            "weights": {"type": "object", "additionalProperties": _SHARE},
            "consistency": {"anyOf": [ref("DecisionConsistency"), {"type": "null"}]},
        },
    }
    return {
        "type": "object",
        "required": ["aggregation", "members", "consistency", "consensus"],
        "properties": {
            "aggregation": {"enum": [*AGGREGATIONS, "mean"]},
            "members": {"type": "array", "items": member},
            "consistency": {"anyOf": [ref("DecisionConsistency"), {"type": "null"}]},
            "consensus": _SHARE,
        },
    }


def _smaa() -> dict[str, Any]:
    nullable_share = {"anyOf": [_SHARE, {"type": "null"}]}
    return {
        "type": "object",
        "required": ["samples", "seed", "acceptability", "central_weights", "confidence"],
        "properties": {
            "samples": {"type": "integer", "minimum": 1},
            "seed": {"type": "integer", "minimum": 0},
            "acceptability": {"type": "object", "additionalProperties": {
                "type": "array", "items": _SHARE}},
            "central_weights": {"type": "object", "additionalProperties": {"anyOf": [
                {"type": "object", "additionalProperties": _SHARE}, {"type": "null"}]}},
            "confidence": {"type": "object", "additionalProperties": nullable_share},
        },
    }


def more_result_members() -> dict[str, Any]:
    """The answer members ``consistency``, ``group`` and ``smaa``."""
    return {
        "consistency": ref("DecisionConsistency"),
        "group": ref("DecisionGroup"),
        "smaa": ref("DecisionSmaa"),
    }


def more_schemas() -> dict[str, dict[str, Any]]:
    """The components these members reference."""
    maker_members = {
        "id": ID,
        "weight": {"type": "number", "exclusiveMinimum": 0, "default": 1},
        "pairwise": _matrix(),
        "weights": {"type": "object",
                    "additionalProperties": {"type": "number", "exclusiveMinimum": 0}},
    }
    assert tuple(maker_members) == DECISION_MAKER_FIELDS, "every member has a schema"
    maker = {"type": "object", "required": ["id"], "properties": maker_members,
             "additionalProperties": False}
    uncertainty_members = {
        "samples": {"type": "integer", "minimum": 1, "maximum": LIMITS["max_samples"],
                    "default": DEFAULT_SAMPLES},
        "seed": {"type": "integer", "minimum": 0, "maximum": 2**63 - 1,
                 "default": DEFAULT_SEED},
    }
    assert tuple(uncertainty_members) == UNCERTAINTY_FIELDS, "every member has a schema"
    uncertainty = {"type": "object", "properties": uncertainty_members,
                   "additionalProperties": False}
    interval = {"type": "object", "required": ["low", "high"],
                "properties": {"low": {"type": "number", "minimum": 0}, "high": NUMBER},
                "additionalProperties": False}
    value = {"anyOf": [
        {"type": "object", "required": ["low", "high"],
         "properties": {"low": NUMBER, "high": NUMBER}, "additionalProperties": False},
        {"type": "object", "required": ["mean", "sd"],
         "properties": {"mean": NUMBER, "sd": {"type": "number", "minimum": 0},
                        "low": NUMBER, "high": NUMBER}, "additionalProperties": False},
    ], "description": "an uncertain value: uniform {low, high} or normal {mean, sd}, "
       "clipped to low and high when given"}
    return {
        "DecisionMaker": maker,
        "DecisionUncertainty": uncertainty,
        "DecisionInterval": interval,
        "DecisionUncertainValue": value,
        "DecisionConsistency": _consistency(),
        "DecisionGroup": _group(),
        "DecisionSmaa": _smaa(),
    }
