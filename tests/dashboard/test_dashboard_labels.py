"""The dashboard's labels in headless chromium against a live server (see conftest): a run's
and a decision's labels on their pages, and the runs and decisions lists filtered by the
filter box (the same ``metadata[key]`` filter as the API's lists, kept on the next page)."""

from __future__ import annotations

import time
from typing import Any

from browser_support import Visit, auth

QUICK = {"bounds": [[-1, 1]] * 2, "objective_expression": "sum(x**2)", "engine": "random",
         "max_evaluations": 100}
DECISION = {"options": [{"id": "a", "attributes": {"p": 1}}, {"id": "b", "attributes": {"p": 2}}],
            "criteria": [{"attribute": "p", "goal": "minimize", "weight": 1}]}


def _run(server: Any, key: str, labels: dict[str, str]) -> str:
    r = server.request("POST", "/v1/runs", {**QUICK, "metadata": labels}, headers=auth(key))
    assert r.status == 202, r.body
    run_id: str = r.json()["id"]
    deadline = time.monotonic() + 60
    while server.request("GET", f"/v1/runs/{run_id}",
                         headers=auth(key)).json()["state"] in ("queued", "running"):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    return run_id


def _filtered(visit: Visit, path: str, text: str) -> Any:
    """Open the list at ``path``, type ``text`` in its labels box and submit it."""
    page = visit.go(path)
    page.fill("#f-labels", text)
    page.press("#f-labels", "Enter")
    page.wait_for_url("**labels=**")
    return page


def test_labels_are_shown_and_filter_the_lists(visit: Visit, server: Any, key: str) -> None:
    a = _run(server, key, {"project": "bridge-A", "team": "north"})
    b = _run(server, key, {"project": "bridge-B"})
    for labels in ({"project": "bridge-A"}, {"project": "bridge-B"}):
        r = server.request("POST", "/v1/decide", {**DECISION, "metadata": labels},
                           headers=auth(key))
        assert r.status == 200, r.body
    visit.sign_in()

    page = visit.go("/dashboard/runs")
    assert page.locator(f'tr[data-run="{a}"]').count() == 1
    assert page.locator(f'tr[data-run="{b}"]').count() == 1
    page = _filtered(visit, "/dashboard/runs", "project=bridge-A")
    assert page.locator(f'tr[data-run="{a}"]').count() == 1
    assert page.locator(f'tr[data-run="{b}"]').count() == 0
    assert page.input_value("#f-labels") == "project=bridge-A"
    page = _filtered(visit, "/dashboard/runs", "project=bridge-A, team=south")
    assert page.locator("tr[data-run]").count() == 0

    page = visit.go(f"/dashboard/runs/{a}")
    assert page.inner_text("#run-labels").split() == ["project=bridge-A", "team=north"]

    page = _filtered(visit, "/dashboard/decisions", "project=bridge-B")
    rows = page.locator("tbody tr")
    assert rows.count() == 1 and "project=bridge-B" in rows.first.inner_text()
    rows.first.locator("a").click()
    page.wait_for_url("**/dashboard/decisions/dec_*")
    assert page.inner_text("#decision-labels") == "Labels: project=bridge-B"
    visit.verify()


def test_a_bad_filter_is_named(visit: Visit, server: Any, key: str) -> None:
    visit.sign_in()
    page = visit.go("/dashboard/runs?labels=project")
    assert "is not key=value" in page.inner_text("main")
    visit.errors.clear()  # the page's 400 is the answer under test
    visit.verify()
