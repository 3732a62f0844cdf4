"""The run pages' polish (issue 43, item 10), in headless chromium against a live server
(see conftest): the new-run form starts a run of several objectives; a run's result is a
first view that is not raw JSON (its status, best value, evaluations and message as facts,
the constraints at the best x as a table, the JSON behind a disclosure), filled in when a
run ends while its page is open."""

from __future__ import annotations

import re
from typing import Any

from browser_support import Visit
from test_dashboard_browser import SLOW_RUN, submit, wait_finished

#: a quick constrained run of 3 variables
CONSTRAINED = {"bounds": [[-2, 2]] * 3, "engine": "de", "seed": 3,
               "objective_expression": "sum(x**2)", "constraints": ["x[0] >= 0.5"],
               "max_evaluations": 3000}


def test_a_result_reads_as_facts_with_its_json_behind_a_disclosure(
        visit: Visit, server: Any, key: str) -> None:
    run_id = submit(server, key, CONSTRAINED)
    result = wait_finished(server, key, run_id)["result"]
    visit.sign_in()
    page = visit.go(f"/dashboard/runs/{run_id}")
    summary = page.locator("#result-summary")
    assert summary.locator('[data-col="status"]').inner_text() == result["status"]
    assert float(summary.locator('[data-col="value"]').inner_text()) == \
        float(f"{result['value']:.12g}")
    assert summary.locator('[data-col="evaluations"]').inner_text() == \
        str(result["evaluations"])
    assert summary.locator('[data-col="message"]').inner_text() == result["message"]
    assert summary.locator('[data-col="feasible"]').inner_text().startswith("yes")
    rows = page.locator("#result-constraints tbody tr")
    assert rows.count() == len(result["constraints"]) == 1
    assert not page.locator("#result-json").is_visible()  # behind its disclosure
    page.click("#result-raw summary")
    assert page.locator("#result-json").is_visible()
    visit.verify()


def test_the_result_fills_in_when_the_run_ends_on_its_page(
        visit: Visit, server: Any, key: str) -> None:
    visit.sign_in()
    run_id = submit(server, key, SLOW_RUN)
    page = visit.go(f"/dashboard/runs/{run_id}")
    assert "No result yet" in page.inner_text("#result-summary")
    page.wait_for_selector('#result-summary [data-col="status"]')
    result = wait_finished(server, key, run_id)["result"]
    assert page.inner_text('#result-summary [data-col="status"]') == result["status"]
    visit.verify()


def test_a_run_of_several_objectives_from_the_form(visit: Visit, server: Any,
                                                   key: str) -> None:
    """Objectives as lines ``name goal expression`` are sent instead of the expression
    (the engine blank: the API's default for several); a bad line is named next to the
    field; the run's page shows its front's facts."""
    visit.sign_in()
    page = visit.go("/dashboard/runs/new")
    page.fill("#objectives", "cost min sum(x**2)\nrisk")
    page.fill("#bounds", "-2:2")
    page.fill("#dims", "3")
    page.fill("#max_evaluations", "2000")
    page.click("#run-submit")
    page.wait_for_selector("#run-problems")
    assert "line 2: write 'name goal expression'" in page.inner_text("#err-objectives")
    page.fill("#objectives", "cost min sum(x**2)\nrisk max -sum((x-1)**2)")
    page.fill("#reference_point", "20 -20")
    page.click("#run-submit")
    page.wait_for_url(re.compile(r".*/dashboard/runs/run_[0-9a-f]{24}$"))
    run_id = page.url.rsplit("/", 1)[1]
    doc = wait_finished(server, key, run_id)
    request = doc["request"]
    assert [(o["name"], o["goal"], o["expression"]) for o in request["objectives"]] == [
        ("cost", "minimize", "sum(x**2)"), ("risk", "maximize", "-sum((x-1)**2)")]
    assert "objective_expression" not in request and request["reference_point"] == [20, -20]
    page = visit.go(f"/dashboard/runs/{run_id}")
    summary = page.locator("#result-summary")
    assert summary.locator('[data-col="front_size"]').inner_text() == \
        str(doc["result"]["front_size"])
    visit.verify()
