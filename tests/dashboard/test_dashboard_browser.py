"""The dashboard's scenarios in headless chromium against a live server (see conftest).

Every scenario ends with ``Visit.verify``: no console error, every request to the
service's own origin, the key absent from the page sources, storage and cookies.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from typing import Any

import pytest
from browser_support import WAIT_MS, Visit, auth, live

#: a run that lasts a few seconds (its time limit; CMA-ES on Rastrigin, d = 50)
SLOW_RUN = {"bounds": [[-5.12, 5.12]] * 50, "engine": "cmaes", "seed": 11,
            "objective_expression": "10*n + sum(x**2 - 10*cos(2*pi*x))",
            "max_evaluations": 10_000_000, "time_limit": 4}
QUICK_RUN = {"bounds": [[-5.12, 5.12]] * 5, "engine": "de",
             "objective_expression": "10*n + sum(x**2 - 10*cos(2*pi*x))",
             "max_evaluations": 20_000}


def submit(server: Any, key: str, body: dict[str, Any]) -> str:
    response = server.request("POST", "/v1/runs", body, headers=auth(key))
    assert response.status == 202, response.body
    run_id: str = response.json()["id"]
    return run_id


def run_doc(server: Any, key: str, run_id: str) -> dict[str, Any]:
    doc: dict[str, Any] = server.request("GET", f"/v1/runs/{run_id}", headers=auth(key)).json()
    return doc


def wait_finished(server: Any, key: str, run_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        doc = run_doc(server, key, run_id)
        if doc["state"] not in ("queued", "running"):
            return doc
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} did not finish")


def trace_points(server: Any, key: str, run_id: str) -> int:
    body = server.request("GET", f"/v1/runs/{run_id}/trace", headers=auth(key)).json()
    return len(body["points"])


def test_sign_in_shows_plan_usage_and_latest(visit: Visit, server: Any, key: str) -> None:
    run_id = submit(server, key, QUICK_RUN)
    wait_finished(server, key, run_id)
    visit.sign_in()
    page = visit.page
    assert "tier team" in page.inner_text("main").replace("\n", " ")
    assert page.locator("meter").count() == 4  # both surfaces, this minute and this month
    assert page.locator(f'tr[data-run="{run_id}"]').count() == 1
    for path in ("/dashboard/runs", "/dashboard/engines", "/dashboard/decisions",
                 "/dashboard/keys", "/dashboard/decide", "/dashboard/compare"):
        assert visit.go(path).locator("h1").count() == 1
    assert visit.go("/dashboard/engines").locator("h2", has_text="dss").count() == 1
    visit.verify()


def test_sign_in_after_a_batch(visit: Visit, server: Any, key: str) -> None:
    """A batch's log entry has no method or best of its own: the overview and the log
    answered 500 (the templates read summary.method) until batch entries were rendered."""
    options = [{"id": "a", "attributes": {"p": 1}}, {"id": "b", "attributes": {"p": 2}}]
    batch = {"decisions": [{"id": "first", "options": options, "expression": "p"},
                           {"id": "second", "options": options, "expression": "-p"}]}
    answer = server.request("POST", "/v1/batch", batch, headers=auth(key))
    assert answer.status == 200, answer.body
    visit.sign_in()
    latest = visit.page.inner_text("main")
    assert "batch" in latest and "2 of 2 ok" in latest
    page = visit.go("/dashboard/decisions")
    row = page.locator("tbody tr").first.inner_text()
    assert "batch" in row and "2 of 2 ok" in row
    page.locator("tbody tr a").first.click()
    assert "batch" in page.inner_text("main")
    visit.verify()


def test_a_run_appears_grows_and_finishes(visit: Visit, server: Any, key: str) -> None:
    visit.sign_in()
    run_id = submit(server, key, SLOW_RUN)
    page = visit.go("/dashboard/runs")
    row = page.locator(f'tr[data-run="{run_id}"]')
    assert row.count() == 1
    page = visit.go(f"/dashboard/runs/{run_id}")
    # the curve grows while the run runs (progress events over SSE)
    page.wait_for_function("() => document.getElementById('convergence').dataset.points > 2",
                           timeout=WAIT_MS)
    grown = int(page.get_attribute("#convergence", "data-points"))
    page.wait_for_function(f"() => document.getElementById('convergence').dataset.points > {grown}",
                           timeout=WAIT_MS)
    page.wait_for_function("() => window.decidoDash.finished === true", timeout=WAIT_MS)
    doc = run_doc(server, key, run_id)
    assert doc["state"] == "succeeded"
    assert page.inner_text("#run-state") == "succeeded"
    # the plot holds the trace's points (read from the plot's data, not pixels)
    shown = page.evaluate("window.decidoDash.plots.convergence.data[0].length")
    assert shown == trace_points(server, key, run_id) > 1
    assert page.evaluate("window.decidoDash.plots.profile.data[1].length") == 50
    page.check("#log-y")
    assert page.evaluate("window.decidoDash.plots.convergence.scales.y.distr") == 3
    page.check("#time-x")
    assert page.evaluate("window.decidoDash.plots.convergence.data[0].length") == shown
    visit.verify()


def test_trace_downloads_and_replay(visit: Visit, server: Any, key: str) -> None:
    run_id = submit(server, key, {**QUICK_RUN, "seed": 5})
    done = wait_finished(server, key, run_id)
    visit.sign_in()
    page = visit.go(f"/dashboard/runs/{run_id}")
    page.wait_for_function("() => window.decidoDash.finished === true")
    with page.expect_download() as got:
        page.click("text=Trace as CSV")
    csv_text = open(got.value.path()).read()
    api_csv = server.request("GET", f"/v1/runs/{run_id}/trace?format=csv", headers=auth(key))
    assert csv_text == api_csv.body.decode()
    with page.expect_download() as got:
        page.click("text=Trace as JSON")
    assert len(json.load(open(got.value.path()))["trace"]) == trace_points(server, key, run_id)
    page.click("#replay")
    page.wait_for_url(re.compile(r".*/dashboard/runs/run_[0-9a-f]{24}$"))
    new_id = page.url.rsplit("/", 1)[1]
    assert new_id != run_id
    again = wait_finished(server, key, new_id)
    assert again["result"]["value"] == done["result"]["value"]
    assert again["result"]["x"] == done["result"]["x"]
    visit.verify()


def test_compare_two_runs(visit: Visit, server: Any, key: str) -> None:
    ids = [submit(server, key, {**QUICK_RUN, "seed": s}) for s in (1, 2)]
    for run_id in ids:
        wait_finished(server, key, run_id)
    visit.sign_in()
    page = visit.go("/dashboard/compare")
    for run_id in ids:
        page.check(f"#pick-{run_id}")
    page.click("#compare-submit")
    page.wait_for_function("() => window.decidoDash.plots.compare !== undefined")
    assert page.evaluate("window.decidoDash.plots.compare.series.length") == 3
    assert page.evaluate("window.decidoDash.plots.compare.scales.y.distr") == 3  # log
    counts = page.evaluate("window.decidoDash.points")
    assert sorted(counts) == sorted(trace_points(server, key, r) for r in ids)
    legend = page.inner_text("#legend")
    assert legend.count("de · seed") == 2
    page = visit.go("/dashboard/compare?run=" + ids[0])  # one run is not enough
    assert "pick from 2 to 8 runs" in page.inner_text(".error")
    visit.verify()


def test_compare_draws_a_run_whose_trace_has_one_point(visit: Visit, server: Any,
                                                       key: str) -> None:
    """A run whose first point was already its best (a constant objective) has a trace of
    one point: no line to draw, so its point is drawn (it was only listed)."""
    flat = {"bounds": [[-1, 1]] * 2, "objective_expression": "x[0]*0 + 3", "engine": "de",
            "seed": 1, "max_evaluations": 200}
    ids = [submit(server, key, flat), submit(server, key, QUICK_RUN)]
    for run_id in ids:
        wait_finished(server, key, run_id)
    assert trace_points(server, key, ids[0]) == 1
    visit.sign_in()
    page = visit.go("/dashboard/compare?" + "&".join(f"run={r}" for r in ids))
    page.wait_for_function("() => window.decidoDash.plots.compare !== undefined")
    plot = "window.decidoDash.plots.compare"
    assert page.evaluate(f"{plot}.series[1].points.show") is True  # the one point: drawn
    assert page.evaluate(f"{plot}.series[2].points.show") is False
    assert page.evaluate("window.decidoDash.points")[0] == 1
    visit.verify()


def test_compare_runs_below_uplots_decades_and_reaching_zero(visit: Visit, server: Any,
                                                             key: str) -> None:
    """cmaes seed 2 and de seed 1 (8-D, 20,000 evaluations each) drew nothing: de's best
    reaches 1.8e-23, below the decades uPlot's log axis knows ("Invalid array length");
    with them a run on Rastrigin whose best reaches 0 (drawn at the floor)."""
    # the whole budget (a run of an expression may otherwise end at its proven floor, 0)
    sphere = {"bounds": [[-5, 5]] * 8, "objective_expression": "sum(x**2)",
              "max_evaluations": 20_000, "options": {"stop_on_convergence": 0}}
    rastrigin = {**QUICK_RUN, "bounds": [[-5.12, 5.12]] * 8, "engine": "de", "seed": 1}
    ids = [submit(server, key, {**sphere, "engine": "cmaes", "seed": 2}),
           submit(server, key, {**sphere, "engine": "de", "seed": 1}),
           submit(server, key, rastrigin)]
    finals = [wait_finished(server, key, run_id)["result"]["value"] for run_id in ids]
    assert finals[1] < 1e-16 and finals[2] == 0, finals
    visit.sign_in()
    page = visit.go("/dashboard/compare?" + "&".join(f"run={r}" for r in ids))
    page.wait_for_function("() => window.decidoDash.plots.compare !== undefined")
    plot = "window.decidoDash.plots.compare"
    page.wait_for_function(f"() => {plot}.axes[1]._splits && {plot}.axes[1]._splits.length")
    low, high = page.evaluate(f"[{plot}.scales.y.min, {plot}.scales.y.max]")
    assert 0 < low < 1e-16 < high, (low, high)
    assert page.evaluate(f"{plot}.series.length") == 4
    visit.verify()  # no console error


def test_cancel_a_running_run_from_its_page(visit: Visit, server: Any, key: str) -> None:
    visit.sign_in()
    run_id = submit(server, key, {**SLOW_RUN, "bounds": [[-5.12, 5.12]] * 500,
                                  "time_limit": 120})
    page = visit.go(f"/dashboard/runs/{run_id}")
    page.click("#cancel")
    page.wait_for_url(visit.origin + f"/dashboard/runs/{run_id}")
    assert wait_finished(server, key, run_id)["state"] == "cancelled"
    page = visit.go(f"/dashboard/runs/{run_id}")
    page.wait_for_function("() => window.decidoDash.finished === true")
    assert page.inner_text("#run-state") == "cancelled"
    assert page.locator("#cancel").count() == 0
    visit.verify()


def test_create_and_revoke_a_key(visit: Visit, server: Any, key: str) -> None:
    visit.sign_in()
    page = visit.go("/dashboard/keys")
    page.fill("#label", "ci <b>bot</b>")
    page.click("#create-key")
    secret = page.input_value("#new-secret")
    assert re.fullmatch(r"dk_[A-Za-z0-9_-]{43}", secret)
    assert page.locator("#keys tbody tr").count() == 2
    assert "ci <b>bot</b>" in page.inner_text("#keys")  # escaped, shown as typed
    assert server.request("GET", "/v1/usage", headers=auth(secret)).status == 200
    new_row = page.locator("#keys tbody tr").nth(1)
    new_row.locator("button", has_text="Revoke").click()
    page.wait_for_url(visit.origin + "/dashboard/keys")
    assert page.locator("#keys tbody tr").nth(1).locator('[data-col="revoked"]').inner_text() != "—"
    refused = server.request("GET", "/v1/usage", headers=auth(secret))
    assert refused.status == 401 and refused.json()["code"] == "revoked_key"
    # revoking the signed-in key ends the session
    page.locator("#keys tbody tr").nth(0).locator("button", has_text="Revoke").click()
    page.wait_for_url(visit.origin + "/dashboard/sign-in")
    visit.go("/dashboard/keys")
    assert visit.page.url == visit.origin + "/dashboard/sign-in"
    visit.verify()


OPTIONS_CSV = "id,price,quality,lead_time\ns1,18.5,7.2,5\ns2,22,8.1,12\ns3,15,6,3\ns4,30,9.5,2\n"


def test_a_decision_from_csv_ranks_as_the_api(visit: Visit, server: Any, key: str) -> None:
    visit.sign_in()
    page = visit.go("/dashboard/decide")
    page.fill("#options", OPTIONS_CSV)
    page.select_option("#method", "topsis")
    page.fill("#criteria", "price min 5\nquality max 3\nlead_time min 2")
    page.fill("#constraints", "price <= 25")
    page.click("#decide-submit")
    page.wait_for_selector("#ranking")
    shown = page.locator('#ranking [data-col="id"]').all_inner_texts()
    body = json.loads(page.input_value("#request-body"))
    api = server.request("POST", "/v1/decide", body, headers=auth(key)).json()
    assert shown == [r["id"] for r in api["ranking"]]
    assert page.inner_text("#best") == api["best"]
    assert "s4" in page.inner_text("#infeasible")
    # the decision is in the log, as an API call's would be
    page = visit.go("/dashboard/decisions")
    assert page.locator("tbody tr").count() >= 1
    visit.verify()


def test_judgments_and_intervals_show_acceptabilities(visit: Visit, server: Any,
                                                       key: str) -> None:
    """A pairwise matrix gives the weights, ``low..high`` cells uncertain values; the
    acceptabilities are a stacked bar per option, as the API computes them."""
    visit.sign_in()
    page = visit.go("/dashboard/decide")
    page.fill("#options", "id,price,quality\ns1,18..22,7\ns2,20,6..9\ns3,15..30,5\n")
    page.select_option("#method", "topsis")
    page.fill("#criteria", "price min\nquality max")
    page.fill("#constraints", "")
    page.fill("#pairwise", "1 3\n- 1")
    page.fill("#samples", "2000")
    page.fill("#seed", "5")
    page.click("#decide-submit")
    page.wait_for_selector("#acceptability")
    body = json.loads(page.input_value("#request-body"))
    assert body["pairwise"] == [[1, 3], [None, 1]]
    assert body["uncertainty"] == {"samples": 2000, "seed": 5}
    assert body["options"][0]["attributes"]["price"] == {"low": 18, "high": 22}
    api = server.request("POST", "/v1/decide", body, headers=auth(key)).json()
    shown = page.locator('#acceptability [data-col="id"]').all_inner_texts()
    assert shown == [r["id"] for r in api["ranking"]]
    for option in shown:  # one rect per rank, widths the API's acceptabilities
        row = page.locator("#acceptability tr", has_text=option)
        widths = [float(w) for w in row.locator("rect").evaluate_all(
            "rs => rs.map(r => r.getAttribute('width'))")]
        assert widths == pytest.approx([100 * b for b in api["smaa"]["acceptability"][option]])
    assert "ratio 0.000" in page.inner_text("#consistency")
    visit.verify()


@pytest.mark.parametrize(("csv_text", "message"), [
    ("id,price,quality\ns1,18.5\ns2,22,8.1\n", "line 2 has 2 fields"),
    ("id,price,quality\ns1,cheap,7\ns2,22,8.1\n", "'cheap' is not a number"),
    ("id,price,quality\ns1,18,7\ns1,22,8.1\n", "the id 's1' is given twice"),
    ("name,price\ns1,18\n", "no 'id' column"),
])
def test_a_bad_csv_is_named_next_to_the_form(visit: Visit, csv_text: str,
                                             message: str) -> None:
    visit.sign_in()
    page = visit.go("/dashboard/decide")
    page.fill("#options", csv_text)
    page.fill("#criteria", "price min 1")
    page.click("#decide-submit")
    page.wait_for_selector("#decide-problems")
    assert message in page.inner_text("#decide-problems")
    assert page.input_value("#options") == csv_text  # what was typed is kept
    assert page.input_value("#criteria") == "price min 1"
    visit.verify()


def test_sign_out_then_pages_redirect(visit: Visit, server: Any, key: str) -> None:
    visit.sign_in()
    cookies = visit.context.cookies()
    visit.page.click("text=Sign out")
    visit.page.wait_for_url(visit.origin + "/dashboard/sign-in")
    for path in ("/dashboard", "/dashboard/runs", "/dashboard/keys", "/dashboard/decide"):
        visit.go(path)
        assert visit.page.url == visit.origin + "/dashboard/sign-in"
    # the old cookie, replayed, opens nothing: the session ended on the server
    visit.context.add_cookies(cookies)
    visit.go("/dashboard")
    assert visit.page.url == visit.origin + "/dashboard/sign-in"
    visit.verify()


def test_a_revoked_keys_session_ends(visit: Visit, server: Any, key: str) -> None:
    visit.sign_in()
    key_id = server.request("GET", "/v1/usage", headers=auth(key)).json()["key"]["id"]
    subprocess.run([*live.decido_command(), "keys", "revoke", key_id, "--db", server.db_url],
                   check=True, capture_output=True, env=server.environment(), timeout=60)
    visit.go("/dashboard/runs")
    assert visit.page.url == visit.origin + "/dashboard/sign-in"
    visit.verify()


def test_a_narrow_screen(browser: Any, server: Any, key: str) -> None:
    visit = Visit(browser, server, key, width=375)
    try:
        visit.sign_in()
        for path in ("/dashboard", "/dashboard/runs", "/dashboard/decide", "/dashboard/keys"):
            page = visit.go(path)
            # nothing but the tables' own scroll boxes is wider than the screen
            assert page.evaluate("document.documentElement.scrollWidth") <= 375
        visit.verify()
    finally:
        visit.close()

