"""decido.decision_schemas(): JSON Schema components that agree with decide() and
decide_batch() on valid and invalid bodies, and that describe their answers; every
fault of a request reported at once; the ``log`` member."""

from __future__ import annotations

import copy

import pytest
from jsonschema import Draft202012Validator

import decido

SCHEMAS = decido.decision_schemas()

BASE = {
    "options": [
        {"id": "a", "attributes": {"price": 10.0, "quality": 7.0}},
        {"id": "b", "attributes": {"price": 12.0, "quality": 8.0}},
        {"id": 3, "attributes": {"price": 9.0, "quality": 6.0}, "note": "ignored"},
    ],
    "criteria": [
        {"attribute": "price", "goal": "minimize", "weight": 2},
        {"attribute": "quality", "weight": 1},
    ],
}


def validator(name: str) -> Draft202012Validator:
    schema = {"components": {"schemas": SCHEMAS}, "$ref": f"#/components/schemas/{name}"}
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_components_and_references():
    for name in ("DecideRequest", "BatchRequest", "DecideResult", "BatchResult"):
        assert name in SCHEMAS
    text = repr(SCHEMAS)
    for ref in text.split("'$ref': '")[1:]:
        assert ref.split("'")[0].removeprefix("#/components/schemas/") in SCHEMAS
    request = SCHEMAS["DecideRequest"]
    assert request["required"] == ["options"] and request["additionalProperties"] is False
    assert request["properties"]["method"]["enum"][:2] == ["expression", "wsm"]
    assert request["properties"]["options"]["maxItems"] == decido.DECISION_LIMITS["max_options"]


VALID = [
    BASE,
    BASE | {"method": "topsis", "normalization": "sum", "top_k": 2, "explain": True},
    BASE | {"weighting": "entropy", "sensitivity": True, "log": True, "id": 7},
    BASE | {"method": "vikor", "params": {"v": 0.25}, "constraints": ["price < 11"]},
    BASE | {"method": "promethee2", "params": {"preference": "v_shape",
                                               "p": {"price": 2, "quality": 1}}},
    {"options": BASE["options"], "expression": "quality / price", "goal": "minimize"},
    {"options": BASE["options"], "expression": "quality / price", "goal": "min"},
    BASE | {"criteria": [{"attribute": "price", "goal": "max"}, {"attribute": "quality"}]},
    BASE | {"method": None, "top_k": None, "log": None},
    {"options": BASE["options"], "method": "expression", "expression": "quality"},
    {"options": BASE["options"], "method": None, "expression": "quality"},
    BASE | {"weighting": "equal", "criteria": [{"attribute": "price"}, {"attribute": "quality"}]},
]  # fmt: skip
INVALID = [
    BASE | {"method": "wsum"},
    BASE | {"normalization": "zscore"},
    BASE | {"weighting": 3},
    BASE | {"top_k": 0},
    BASE | {"explain": "yes"},
    BASE | {"log": 1},
    BASE | {"sensitivity": "no"},
    BASE | {"crtieria": []},
    BASE | {"options": []},
    BASE | {"criteria": [{"attribute": "price", "weight": 0}]},
    BASE | {"criteria": [{"attribute": "price", "wieght": 1}]},
    BASE | {"criteria": [{"attribute": "price", "goal": "MAX", "weight": 1}]},
    BASE | {"constraints": "price < 3"},
    BASE | {"constraints": [3]},
    BASE | {"method": "vikor", "params": {"v": 1.5}},
    BASE | {"params": {"lamda": 1}},
    BASE | {"id": 1.5},
    {"criteria": BASE["criteria"]},
    [1, 2],
    # criteria are required unless the method is "expression" (named or implied)
    {"options": BASE["options"]},
    {"options": BASE["options"], "method": "topsis"},
    {"options": BASE["options"], "method": "wsm", "expression": "quality / price"},
    BASE | {"criteria": None},
]


@pytest.mark.parametrize("body", VALID)
def test_valid_bodies_pass_both(body):
    validator("DecideRequest").validate(body)
    out = decido.decide(body)
    validator("DecideResult").validate(out)


@pytest.mark.parametrize("body", INVALID)
def test_invalid_bodies_fail_both(body):
    assert not validator("DecideRequest").is_valid(body)
    with pytest.raises(decido.DecisionError):
        decido.decide(body)


def test_batches_agree_with_the_schema():
    good = {"defaults": {"options": BASE["options"], "log": True},
            "decisions": [{"id": "a", "criteria": BASE["criteria"], "log": False},
                          {"id": "b", "method": "topsis", "criteria": BASE["criteria"]}]}
    validator("BatchRequest").validate(good)
    out = decido.decide_batch(good)
    assert out["n_error"] == 0
    validator("BatchResult").validate(out)
    for bad in ({"decisions": "x"}, {"decisions": [], "extra": 1},
                {"defaults": 3, "decisions": []}, {"decisions": [{"id": "a"}, 7, "x"]}):
        assert not validator("BatchRequest").is_valid(bad)
        with pytest.raises(decido.DecisionError):
            decido.decide_batch(bad)
    # an invalid item is the envelope's business no more: it gets an error result of its
    # own, and DecisionItem (what the item's result refers to) says why
    item = {"decisions": [{"id": "x", **BASE, "log": "yes"}]}
    assert validator("BatchRequest").is_valid(item)
    assert not validator("DecisionItem").is_valid(item["decisions"][0])
    result = decido.decide_batch(item)
    assert result["n_error"] == 1
    validator("BatchResult").validate(result)
    assert result["results"][0]["error"]["path"] == "log"


def test_every_fault_is_reported():
    body = copy.deepcopy(BASE) | {"top_k": 0, "explain": "yes", "metod": "wsm"}
    body["criteria"][0]["weight"] = -1
    body["options"][1]["attributes"]["quality"] = "high"
    body["options"][2]["id"] = "a"
    with pytest.raises(decido.DecisionError) as info:
        decido.decide(body)
    err = info.value
    pointers = [(e["pointer"], e["code"]) for e in err.errors]
    assert pointers == [
        ("/metod", "invalid_request"),
        ("/explain", "invalid_request"),
        ("/top_k", "invalid_request"),
        ("/criteria/0/weight", "non_positive_value"),
        ("/options/2/id", "duplicate_option_id"),
    ]
    # the first fault is the error's own code, path and message
    first = ("invalid_request", "metod", err.errors[0]["message"])
    assert (err.code, err.path, err.message) == first
    assert "errors" not in err.to_dict() and err.to_dict(errors=True)["errors"] == err.errors
    validator("DecisionErrorDetail").validate(err.to_dict(errors=True))


def test_value_faults_are_all_listed_with_pointers():
    body = copy.deepcopy(BASE)
    body["options"][0]["attributes"]["quality"] = "high"
    del body["options"][1]["attributes"]["price"]
    body["options"][2]["attributes"]["price"] = float("nan")
    body["options"].append({"id": "lead", "attributes": {"lead time": None, "price": 1,
                                                          "quality": 2}})
    body["constraints"] = ["lead time > 0", "qualty > 1", "price > 0"]
    with pytest.raises(decido.DecisionError) as info:
        decido.decide(body)
    got = [(e["pointer"], e["code"], e.get("position")) for e in info.value.errors]
    assert got == [
        ("/constraints/0", "invalid_expression", 5),  # 'lead time' is not a name
        ("/constraints/1", "invalid_expression", 0),
        ("/options/0/attributes/quality", "invalid_request", None),
        ("/options/1/attributes/price", "missing_attribute", None),
        ("/options/2/attributes/price", "non_finite_value", None),
    ]
    assert "did you mean 'quality'" in info.value.errors[1]["message"]


def test_pointers_escape_and_paths_quote():
    body = copy.deepcopy(BASE)
    body["criteria"] = [{"attribute": "a/b~c", "weight": 1}]
    for o in body["options"]:
        o["attributes"]["a/b~c"] = 1.0
    body["options"][1]["attributes"]["a/b~c"] = float("inf")
    with pytest.raises(decido.DecisionError) as info:
        decido.decide(body)
    assert info.value.errors[0]["pointer"] == "/options/1/attributes/a~1b~0c"
    assert info.value.path == 'options[1].attributes["a/b~c"]'


def test_the_log_member_is_a_boolean_and_otherwise_ignored():
    assert decido.decide(BASE | {"log": True}) == decido.decide(BASE)
    with pytest.raises(decido.DecisionError) as info:
        decido.decide(BASE | {"log": "yes"})
    assert (info.value.code, info.value.path) == ("invalid_request", "log")


def test_the_schema_is_derived_from_the_types(monkeypatch):
    """Issue 39: each component is its type's members (the required ones those the type
    requires), request types closed, and a Rule's limit read at the call."""
    from decido.decisions import types
    from decido.decisions.rules import members

    schemas = decido.decision_schemas()
    for name in ("DecideRequest", "DecisionCriterion", "DecisionMaker", "DecisionUncertainty",
                 "DecisionOption", "DecideResult", "DecisionItemError", "BatchResult"):
        kind = getattr(types, name)
        assert list(schemas[name]["properties"]) == list(members(kind)), name
        required = [m for m in members(kind) if m in kind.__required_keys__]
        assert schemas[name].get("required", []) == required, name
        closed = schemas[name].get("additionalProperties") is False
        assert closed == (kind in types.REQUEST_TYPES), name
    assert set(schemas["DecisionItem"]["properties"]) == types.REQUEST_MEMBERS
    monkeypatch.setitem(decido.DECISION_LIMITS, "max_criteria", 7)
    assert decido.decision_schemas()["DecideRequest"]["properties"]["criteria"]["maxItems"] == 7
