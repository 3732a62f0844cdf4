"""``metadata`` in a decision request: the service's labels of its log entry, checked by
the library (:mod:`decido.metadata`, every fault with its pointer) and otherwise ignored."""

from __future__ import annotations

import pytest

import decido
from decido.metadata import MAX_KEYS, metadata_faults

REQUEST = {"options": [{"id": "a", "attributes": {"p": 1}}, {"id": "b", "attributes": {"p": 2}}],
           "criteria": [{"attribute": "p", "goal": "minimize", "weight": 1}]}


def test_labels_do_not_change_the_answer() -> None:
    labelled = decido.decide({**REQUEST, "metadata": {"project": "bridge-A", "é": ""}})
    assert labelled == decido.decide(REQUEST) == decido.decide({**REQUEST, "metadata": None})


def test_every_fault_is_listed_with_its_pointer() -> None:
    labels = {f"k{i}": "v" for i in range(MAX_KEYS)}
    labels.update({"": "v", "x" * 41: "v", "a]": "v", "n": 1, "long": "v" * 501})
    with pytest.raises(decido.DecisionError) as caught:
        decido.decide({**REQUEST, "metadata": labels, "top_k": 0})
    found = {e["pointer"]: e["code"] for e in caught.value.errors}
    assert found == {"/metadata": "invalid_metadata", "/metadata/": "invalid_metadata",
                     "/metadata/" + "x" * 41: "invalid_metadata",
                     "/metadata/a]": "invalid_metadata", "/metadata/n": "invalid_metadata",
                     "/metadata/long": "invalid_metadata", "/top_k": found["/top_k"]}
    with pytest.raises(decido.DecisionError, match="metadata is an object"):
        decido.decide({**REQUEST, "metadata": ["project"]})


def test_a_batch_item_s_labels_are_checked_on_their_own() -> None:
    answer = decido.decide_batch({"defaults": REQUEST,
                                  "decisions": [{"id": 1, "metadata": {"p": "1"}},
                                                {"id": 2, "metadata": {"p": 2}}]})
    assert [r["status"] for r in answer["results"]] == ["ok", "error"]


def test_the_schema_has_the_rules() -> None:
    member = decido.decision_schemas()["DecideRequest"]["properties"]["metadata"]
    assert member["maxProperties"] == MAX_KEYS
    assert member["propertyNames"]["maxLength"] == 40
    assert member["additionalProperties"] == {"type": "string", "maxLength": 500}
    assert metadata_faults({"ok": "fine"}) == [] and metadata_faults(None) == []
