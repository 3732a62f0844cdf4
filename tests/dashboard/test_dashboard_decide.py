"""The decide page as a new user meets it (issue 43, item 2), in headless chromium against
a live server (see conftest): an example that is shown, not sent; an infeasible decision
that says which constraint excluded what; weighting ``unknown``, interval weights and
decision makers; no ``explain`` warning under uncertainty.
"""

from __future__ import annotations

import json
from typing import Any

from browser_support import Visit, auth
from test_dashboard_http import get, sign_in

import decido

#: options of the user's own, sharing no column with the page's example
MINE = "id,cost,speed\na,3,5\nb,4,9\nc,6,7\n"


def test_what_is_pasted_is_all_that_is_sent(visit: Visit, server: Any, key: str) -> None:
    """The boxes start empty, the example greyed in them; one's own options and criteria
    are decided without the example's constraint or criteria."""
    visit.sign_in()
    page = visit.go("/dashboard/decide")
    for box in ("#options", "#criteria", "#constraints"):
        assert page.input_value(box) == ""
    assert "s1,18.5" in (page.get_attribute("#options", "placeholder") or "")
    assert page.get_attribute("#constraints", "placeholder") == "price <= 25"
    page.fill("#options", MINE)
    page.fill("#criteria", "cost min\nspeed max")
    page.click("#decide-submit")
    page.wait_for_selector("#ranking")
    body = json.loads(page.input_value("#request-body"))
    assert "constraints" not in body
    assert [c["attribute"] for c in body["criteria"]] == ["cost", "speed"]
    api = server.request("POST", "/v1/decide", body, headers=auth(key)).json()
    assert page.locator('#ranking [data-col="id"]').all_inner_texts() == \
        [r["id"] for r in api["ranking"]]
    visit.verify()


def test_an_empty_form_says_what_to_do_and_the_example_fills_it(visit: Visit) -> None:
    """Decide on the empty form: the message says to paste options or use the example;
    "Use the example" fills the boxes with it (the other fields kept), and it ranks."""
    visit.sign_in()
    page = visit.go("/dashboard/decide")
    page.click("#decide-submit")
    page.wait_for_selector("#decide-problems")
    message = page.inner_text("#decide-problems")
    assert "the box is empty" in message and "Use the example" in message
    page.fill("#top_k", "2")
    page.click("#use-example")
    assert page.input_value("#options").startswith("id,price,quality,lead_time\ns1,18.5")
    assert page.input_value("#constraints") == "price <= 25"
    assert page.input_value("#top_k") == "2"
    page.click("#decide-submit")
    page.wait_for_selector("#ranking")
    body = json.loads(page.input_value("#request-body"))
    assert body["constraints"] == ["price <= 25"] and body["top_k"] == 2
    visit.verify()


def test_use_the_example_without_script(server: Any, key: str) -> None:
    """``?example=1`` (the button's link) is the form filled with the example."""
    session = sign_in(server, key)
    text = get(server, "/dashboard/decide?example=1", session).body.decode()
    assert ">id,price,quality,lead_time\ns1,18.5" in text
    assert ">price &lt;= 25</textarea>" in text
    text = get(server, "/dashboard/decide", session).body.decode()
    assert ">price &lt;= 25</textarea>" not in text


def test_an_infeasible_decision_names_what_each_constraint_excluded(
        visit: Visit, server: Any, key: str) -> None:
    """Every option excluded: the page says so, and lists each constraint with the
    options it excluded, as the library's answer does."""
    visit.sign_in()
    page = visit.go("/dashboard/decide")
    page.fill("#options", MINE)
    page.fill("#criteria", "cost min\nspeed max")
    page.fill("#constraints", "cost <= 3.5\nspeed >= 8")
    page.click("#decide-submit")
    page.wait_for_selector("#excluded")
    assert "infeasible" in page.inner_text("#rank-h")
    assert "No option meets every constraint" in page.inner_text("#infeasible-note")
    body = json.loads(page.input_value("#request-body"))
    answer = decido.decide(body)
    assert answer["status"] == "infeasible"
    expected = {}
    for option in answer["infeasible"]:
        for text in option["violated"]:
            expected.setdefault(text, []).append(option["id"])
    shown = {}
    for row in page.locator("#excluded tbody tr").all():
        ids = row.locator('[data-col="ids"]').inner_text().split(", ")
        shown[row.locator('[data-col="constraint"]').inner_text()] = ids
    assert shown == expected == {"cost <= 3.5": ["b", "c"], "speed >= 8": ["a", "c"]}
    assert page.locator("#ranking").count() == 0
    visit.verify()


def test_weighting_unknown_with_interval_weights_and_no_explain_warning(
        visit: Visit, server: Any, key: str) -> None:
    """Weighting ``unknown`` with a weight interval ``low..high`` is a decision under
    uncertainty (the samples the form's default); ``explain``, on at first, is not sent
    there, so the answer has no warning the user did not cause."""
    visit.sign_in()
    page = visit.go("/dashboard/decide")
    assert page.is_checked("#explain")
    page.fill("#options", MINE)
    page.select_option("#weighting", "unknown")
    page.fill("#criteria", "cost min 0.2..0.6\nspeed max")
    page.fill("#samples", "2000")
    page.fill("#seed", "7")
    page.click("#decide-submit")
    page.wait_for_selector("#acceptability")
    body = json.loads(page.input_value("#request-body"))
    assert body["weighting"] == "unknown"
    assert body["criteria"][0]["weight"] == {"low": 0.2, "high": 0.6}
    assert body["uncertainty"] == {"samples": 2000, "seed": 7}
    assert "explain" not in body and "sensitivity" not in body
    api = server.request("POST", "/v1/decide", body, headers=auth(key)).json()
    assert api["warnings"] == []
    assert "Warnings" not in page.inner_text("main")
    assert page.locator('#acceptability [data-col="id"]').all_inner_texts() == \
        [r["id"] for r in api["ranking"]]
    visit.verify()


def test_decision_makers_as_blocks(visit: Visit, server: Any, key: str) -> None:
    """One block per decision maker: direct weights, or pairwise judgments (weighting
    ``ahp`` by the library's default); the group's members and consensus are shown."""
    visit.sign_in()
    page = visit.go("/dashboard/decide")
    page.fill("#options", MINE)
    page.fill("#criteria", "cost min\nspeed max")
    page.fill("#decision_makers", "ann 2\ncost 3\nspeed 1\n\nbob\ncost 1\nspeed 1\n")
    page.click("#decide-submit")
    page.wait_for_selector("#group")
    body = json.loads(page.input_value("#request-body"))
    assert body["decision_makers"] == [{"id": "ann", "weight": 2, "weights": {"cost": 3,
                                                                               "speed": 1}},
                                       {"id": "bob", "weights": {"cost": 1, "speed": 1}}]
    api = server.request("POST", "/v1/decide", body, headers=auth(key)).json()
    assert page.locator('#group [data-col="id"]').all_inner_texts() == ["ann", "bob"]
    assert f"consensus {api['group']['consensus']:.3f}" in page.inner_text("#group-h")
    assert page.locator('#ranking [data-col="id"]').all_inner_texts() == \
        [r["id"] for r in api["ranking"]]
    page.fill("#decision_makers", "ann\n1 3\n- 1\n\nbob\n1 1/2\n- 1\n")
    page.select_option("#aggregation", "aip")
    page.click("#decide-submit")
    page.wait_for_selector("#group")
    body = json.loads(page.input_value("#request-body"))
    assert body["decision_makers"] == [{"id": "ann", "pairwise": [[1, 3], [None, 1]]},
                                       {"id": "bob", "pairwise": [[1, 0.5], [None, 1]]}]
    assert body["aggregation"] == "aip"
    assert "(aip)" in page.inner_text("#group-h")
    visit.verify()


def test_a_bad_decision_maker_block_is_named(visit: Visit) -> None:
    """A block line that is not ``attribute weight`` is named by its line."""
    visit.sign_in()
    page = visit.go("/dashboard/decide")
    page.fill("#options", MINE)
    page.fill("#criteria", "cost min\nspeed max")
    page.fill("#decision_makers", "ann\ncost heavy\nspeed 1")
    page.click("#decide-submit")
    page.wait_for_selector("#decide-problems")
    assert "decision makers: line 2: write 'attribute weight'" in \
        page.inner_text("#decide-problems")
    assert page.input_value("#decision_makers") == "ann\ncost heavy\nspeed 1"
    visit.verify()


def test_the_form_of_the_expression_method_sends_an_expression_and_no_criteria() -> None:
    """The form tells the method an expression scores by the method table's kernel ("VM"),
    not by its name, and the body it sends is one decido.decide answers."""
    from decido_service.dashboard.decide_form import body_of, defaults

    fields = {**defaults(), "method": "expression", "expression": "quality - price / 10",
              "options": "id,price,quality\ns1,18.5,7.2\ns2,22,8.1\n"}
    body = body_of(fields)
    assert body["expression"] == "quality - price / 10" and "criteria" not in body
    assert decido.decide(body)["best"] == "s2"
    body = body_of({**fields, "method": "topsis", "criteria": "price minimize 1"})
    assert "expression" not in body and body["criteria"][0]["attribute"] == "price"
