"""decido.decision_methods(): the one method table, and decide() and the schema behave as
each row says (direction, default normalization, positivity, parameters and ranges)."""

from __future__ import annotations

import json

import pytest

import decido

ROWS = {row["name"]: row for row in decido.decision_methods()}
OPTIONS = [{"id": i, "attributes": {"a": float(i + 1), "b": 4.0 - i}} for i in range(3)]
CRITERIA = [{"attribute": "a", "weight": 1}, {"attribute": "b", "weight": 2}]


def test_the_table_is_the_schemas_and_json_ready():
    schemas = decido.decision_schemas()
    enum = [m for m in schemas["DecideRequest"]["properties"]["method"]["enum"] if m]
    assert list(ROWS) == enum
    params = set(schemas["DecisionParams"]["properties"])
    assert {p for row in ROWS.values() for p in row["params"]} == params
    assert all(row["kernel"] in ("C", "NumPy", "VM") for row in ROWS.values())
    json.dumps(decido.decision_methods(), allow_nan=False)


@pytest.mark.parametrize("name", [m for m in ROWS if m != "expression"])
def test_each_row_says_what_decide_does(name):
    row = ROWS[name]
    out = decido.decide({"options": OPTIONS, "criteria": CRITERIA, "method": name})
    assert out["higher_is_better"] is row["higher_is_better"]
    assert out["normalization"] == row["normalization"]
    zero = [{"id": 9, "attributes": {"a": 0.0, "b": 1.0}}, *OPTIONS[1:]]
    body = {"options": zero, "criteria": CRITERIA, "method": name}
    if row["positive_values"]:
        with pytest.raises(decido.DecisionError) as info:
            decido.decide(body)
        assert info.value.code == "non_positive_value"
    else:
        decido.decide(body)
    for param, spec in row["params"].items():
        if spec["kind"] == "unit":
            bad = {**body, "options": OPTIONS, "params": {param: spec["high"] + 1}}
            with pytest.raises(decido.DecisionError) as info:
                decido.decide(bad)
            assert info.value.errors[0]["pointer"] == f"/params/{param}"


def test_a_methods_limit_and_value_checks_are_its_rows(monkeypatch):
    """A row carries its method's own limit on the options and its value checks: the same
    row fields on another method's row make decide apply them there."""
    import dataclasses

    from decido.decisions import vocabulary

    def no_zeros(d, Xc, faults):
        for i in (Xc == 0).any(axis=1).nonzero()[0].tolist():
            faults.add(("options", d.option(i)), "invalid_request", "a zero value")

    row = vocabulary.METHODS["wsm"]
    monkeypatch.setitem(vocabulary.METHODS, "wsm", dataclasses.replace(
        row, max_options="max_promethee_options", max_options_reason="is tested",
        check_values=no_zeros))
    monkeypatch.setitem(decido.DECISION_LIMITS, "max_promethee_options", 2)
    body = {"options": OPTIONS, "criteria": CRITERIA, "method": "wsm"}
    with pytest.raises(decido.DecisionError) as info:
        decido.decide(body)
    assert info.value.code == "too_many"
    assert info.value.message == "wsm is tested: 3 feasible options (limit 2)"
    zero = [{"id": 9, "attributes": {"a": 0.0, "b": 1.0}}, OPTIONS[1]]
    with pytest.raises(decido.DecisionError) as info:
        decido.decide({**body, "options": zero})
    assert [e["pointer"] for e in info.value.errors] == ["/options/0"]
    monkeypatch.undo()
    assert decido.decide(body)["n_feasible"] == 3
