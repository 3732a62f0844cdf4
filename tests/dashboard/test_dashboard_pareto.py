"""Runs of several objectives in the dashboard (issue 29), in headless chromium against a
live server (see conftest): the front drawn (a scatter plot with the reference point for
2 objectives, a scatter matrix for 3), the hypervolume over evaluations (live while the run
goes), "choose from this front" leading to a decision on the front's points, compare of
such runs (and of a mix), and the objectives shown where a run is summarised.

Every browser scenario ends with ``Visit.verify`` (no console error, no foreign request,
the key nowhere in the pages).
"""

from __future__ import annotations

import math
import re
from typing import Any
from urllib.parse import urlencode

from browser_support import WAIT_MS, Visit, auth
from test_dashboard_browser import QUICK_RUN, submit, trace_points, wait_finished
from test_dashboard_http import FORM, csrf_of, get, sign_in

#: two objectives over [0, 1]^5 (a convex front from (0, 1) to (1, 0)), a few thousand
#: evaluations: a full front of the archive's size in well under a second
TWO = {"bounds": [[0, 1]] * 5, "seed": 3, "max_evaluations": 4000,
       "objectives": [{"name": "f1", "expression": "x[0]"},
                      {"name": "cost", "expression": "(1 - sqrt(x[0]))**2 + sum(x[1:]**2)",
                       "goal": "minimize"}]}
#: three objectives (DTLZ2 with 3 variables beyond the two angles), one maximized
_G = "(1 + sum((x[2:] - 0.5)**2))"
THREE = {"bounds": [[0, 1]] * 5, "seed": 4, "max_evaluations": 6000,
         "objectives": [
             {"name": "a", "expression": f"{_G} * cos(x[0]*pi/2) * cos(x[1]*pi/2)"},
             {"name": "b", "expression": f"{_G} * cos(x[0]*pi/2) * sin(x[1]*pi/2)"},
             {"name": "c", "expression": f"-{_G} * sin(x[0]*pi/2)", "goal": "maximize"}]}
#: the front's colour in front.js (rgb)
FRONT_RGB = (29, 78, 216)

#: the pixels of a canvas in the front's colour (what uPlot drew, not its data)
COLOURED = """(args) => {
  const [selector, rgb] = args;
  let n = 0;
  for (const canvas of document.querySelectorAll(selector)) {
    const d = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    for (let i = 0; i < d.length; i += 4) {
      if (Math.abs(d[i] - rgb[0]) < 8 && Math.abs(d[i + 1] - rgb[1]) < 8 &&
          Math.abs(d[i + 2] - rgb[2]) < 8 && d[i + 3] > 200) n++;
    }
  }
  return n;
}"""


def front_of(server: Any, key: str, run_id: str) -> list[dict[str, Any]]:
    """Every point of a finished run's front (``GET /v1/runs/{id}/front``, page after
    page)."""
    points: list[dict[str, Any]] = []
    query = ""
    while True:
        page = server.request("GET", f"/v1/runs/{run_id}/front{query}", headers=auth(key)
                              ).json()
        points += page["data"]
        if not page["has_more"]:
            return points
        query = f"?starting_after={page['first'] + len(page['data']) - 1}"


def drawn_points(page: Any, plot: str) -> list[int]:
    """How many non-null values each series of ``plot`` (a JS expression) holds."""
    counts: list[int] = page.evaluate(
        f"{plot}.data.slice(1).map(s => s.filter(v => v !== null).length)")
    return counts


def test_the_front_of_two_objectives_and_choosing_from_it(visit: Visit, server: Any,
                                                          key: str) -> None:
    run_id = submit(server, key, TWO)
    done = wait_finished(server, key, run_id)
    assert done["state"] == "succeeded", done
    result = done["result"]
    pareto = front_of(server, key, run_id)
    assert len(pareto) == result["front_size"] > 10
    visit.sign_in()
    # the runs list names the objectives and shows the front's hypervolume
    page = visit.go("/dashboard/runs")
    row = page.locator(f'tr[data-run="{run_id}"]')
    assert row.locator('[data-col="objective"]').inner_text() == "f1 min, cost min"
    assert "cost (minimize): (1 - sqrt(x[0]))**2" in row.locator(
        '[data-col="objective"]').get_attribute("title")
    assert row.locator('[data-col="best"]').inner_text() == f"HV {result['hypervolume']:.6g}"

    page = visit.go(f"/dashboard/runs/{run_id}")
    page.wait_for_function("() => window.decidoDash.finished === true", timeout=WAIT_MS)
    assert page.inner_text("#objectives").splitlines() == [
        "f1 (minimize): x[0]", "cost (minimize): (1 - sqrt(x[0]))**2 + sum(x[1:]**2)"]
    assert page.inner_text("#run-front-size") == str(len(pareto))
    # the front: every point once (all feasible), the reference point once, axes named
    # by the objectives with their goals
    plot = "window.decidoDash.plots.front"
    assert drawn_points(page, plot) == [len(pareto), 0, 1]
    assert page.evaluate(f"{plot}.axes.map(a => a.label)") == ["f1 (minimize)",
                                                              "cost (minimize)"]
    reference = page.evaluate(f"[{plot}.data[0][{plot}.data[3].findIndex(v => v !== null)], "
                              f"{plot}.data[3].find(v => v !== null)]")
    assert reference == result["reference_point"]
    shown = sorted(zip(*page.evaluate(
        f"[{plot}.data[0].filter((x, k) => {plot}.data[1][k] !== null), "
        f"{plot}.data[1].filter(v => v !== null)]"), strict=True))
    assert shown == sorted((p["f"][0], p["f"][1]) for p in pareto)
    # ... and drawn: the canvas holds pixels of the front's colour
    assert page.evaluate(COLOURED, ["#front canvas", FRONT_RGB]) > 5 * len(pareto)
    # the hypervolume over evaluations: the trace, ending at the result's hypervolume
    hv = "window.decidoDash.plots.hypervolume"
    assert page.evaluate(f"{hv}.data[0].length") == trace_points(server, key, run_id) > 1
    assert math.isclose(page.evaluate(f"{hv}.data[1][{hv}.data[1].length - 1]"),
                        result["hypervolume"], rel_tol=1e-12)
    assert page.evaluate(COLOURED, ["#hypervolume canvas", FRONT_RGB]) > 100

    # choose from this front: the decide page filled with the front, one click more
    page.click("#choose-front")
    page.wait_for_url(f"{visit.origin}/dashboard/decide?from_run={run_id}")
    assert run_id in page.inner_text("#from-run")
    options = page.input_value("#options").strip().splitlines()
    assert options[0] == "id,f1,cost,x0,x1,x2,x3,x4" and len(options) == len(pareto) + 1
    assert page.input_value("#criteria").splitlines() == ["f1 minimize 1", "cost minimize 1"]
    assert page.locator("#options_file").count() == 0
    page.click("#decide-submit")
    page.wait_for_selector("#ranking")
    rows = page.locator("#ranking tbody tr")
    assert rows.count() == len(pareto)
    ids = [rows.nth(k).locator('[data-col="id"]').inner_text() for k in range(rows.count())]
    assert sorted(ids, key=int) == [str(k) for k in range(len(pareto))]
    for k in (0, len(ids) - 1):  # each row's objectives are its front point's
        f = pareto[int(ids[k])]["f"]
        assert rows.nth(k).locator('[data-col="f"]').inner_text() == ", ".join(
            f"{v:.6g}" for v in f)
    # the same decision through the API ranks the same way; the log keeps from_run
    api = server.request("POST", "/v1/decide", {
        "from_run": run_id, "method": "topsis", "explain": True,
        "criteria": [{"attribute": "f1", "goal": "minimize", "weight": 1},
                     {"attribute": "cost", "goal": "minimize", "weight": 1}]},
        headers=auth(key))
    assert api.status == 200, api.body
    assert [r["id"] for r in api.json()["ranking"]] == ids
    assert page.inner_text("#best") == api.json()["best"]
    logged = server.request("GET", "/v1/decisions", headers=auth(key)).json()["data"]
    entry = server.request("GET", f"/v1/decisions/{logged[1]['id']}", headers=auth(key)).json()
    assert entry["request"]["from_run"] == run_id and "options" not in entry["request"]
    assert '"from_run": "' + run_id in page.input_value("#request-body")
    # the logged decision leads back to its run
    page = visit.go(f"/dashboard/decisions/{logged[1]['id']}")
    page.click("#from-run a")
    page.wait_for_url(f"{visit.origin}/dashboard/runs/{run_id}")
    visit.verify()


def test_the_front_of_three_objectives_is_a_scatter_matrix(visit: Visit, server: Any,
                                                           key: str) -> None:
    run_id = submit(server, key, THREE)
    result = wait_finished(server, key, run_id)["result"]
    pareto = front_of(server, key, run_id)
    visit.sign_in()
    page = visit.go(f"/dashboard/runs/{run_id}")
    page.wait_for_function("() => window.decidoDash.finished === true", timeout=WAIT_MS)
    matrix = "window.decidoDash.plots.matrix"
    assert page.evaluate(f"{matrix}.map(p => p.pair)") == [[0, 1], [0, 2], [1, 2]]
    assert page.evaluate(f"{matrix}.map(p => p.drawn)") == [len(pareto)] * 3
    assert page.evaluate(f"{matrix}.map(p => p.axes.map(a => a.label))") == [
        ["a (minimize)", "b (minimize)"], ["a (minimize)", "c (maximize)"],
        ["b (minimize)", "c (maximize)"]]
    for k in range(3):  # each cell marks the reference point in its pair
        i, j = page.evaluate(f"{matrix}[{k}].pair")
        assert page.evaluate(f"{matrix}[{k}].data[3].find(v => v !== null)") == \
            result["reference_point"][j]
    assert page.get_attribute("#front", "data-pairs") == "3"
    assert page.evaluate(COLOURED, ["#front canvas", FRONT_RGB]) > 3 * 5 * len(pareto)
    assert page.evaluate("window.decidoDash.plots.front") is None
    # replay: the same request and seed, the same front
    page.click("#replay")
    page.wait_for_url(re.compile(r".*/dashboard/runs/run_[0-9a-f]{24}$"))
    again_id = page.url.rsplit("/", 1)[1]
    again = wait_finished(server, key, again_id)["result"]
    assert front_of(server, key, again_id) == pareto
    assert again["hypervolume"] == result["hypervolume"]
    visit.verify()


def test_the_hypervolume_grows_live(visit: Visit, server: Any, key: str) -> None:
    """A run of several objectives lasting a few seconds: its hypervolume curve grows from
    the progress events, then the final trace replaces it."""
    slow = {**TWO, "bounds": [[0, 1]] * 30, "max_evaluations": 10_000_000, "time_limit": 5,
            "options": {"stop_on_convergence": 0}}
    visit.sign_in()
    run_id = submit(server, key, slow)
    page = visit.go(f"/dashboard/runs/{run_id}")
    assert page.locator("#choose-front").is_hidden()
    page.wait_for_function("() => document.getElementById('hypervolume').dataset.points > 2",
                           timeout=WAIT_MS)
    grown = int(page.get_attribute("#hypervolume", "data-points"))
    page.wait_for_function(
        f"() => document.getElementById('hypervolume').dataset.points > {grown}",
        timeout=WAIT_MS)
    assert page.inner_text("#run-front-size") not in ("", "\u2014")
    page.wait_for_function("() => window.decidoDash.finished === true", timeout=WAIT_MS)
    assert page.inner_text("#run-state") == "succeeded"
    assert page.evaluate("window.decidoDash.plots.hypervolume.data[0].length") == \
        trace_points(server, key, run_id)
    assert page.evaluate("window.decidoDash.plots.front.data[1].filter(v => v !== null)"
                         ".length") > 0
    assert page.locator("#choose-front").is_visible()
    visit.verify()


def test_compare_two_runs_of_several_objectives(visit: Visit, server: Any, key: str) -> None:
    ids = [submit(server, key, {**TWO, "seed": s}) for s in (1, 2)]
    results = [wait_finished(server, key, r)["result"] for r in ids]
    visit.sign_in()
    page = visit.go("/dashboard/compare")
    for run_id in ids:
        page.check(f"#pick-{run_id}")
    page.click("#compare-submit")
    page.wait_for_function("() => window.decidoDash.plots.hypervolume !== undefined")
    assert page.evaluate("window.decidoDash.plots.hypervolume.series.length") == 3
    assert page.evaluate("window.decidoDash.plots.hypervolume.scales.y.distr") == 1
    assert page.evaluate("window.decidoDash.hvPoints") == [trace_points(server, key, r)
                                                           for r in ids]
    assert page.locator("#compare").count() == 0 and page.locator("#mixed-kinds").count() == 0
    assert page.inner_text("#hv-legend").count("moea · seed") == 2
    assert page.inner_text("#hv-legend").count("f1 min, cost min") == 2
    # the final fronts at one reference point: the farthest out of the two
    common = [max(r["reference_point"][j] for r in results) for j in range(2)]
    assert f"{common[0]:.6g}" in page.inner_text("#hv-common caption")
    for run_id, result in zip(ids, results, strict=True):
        cell = page.locator(f'#hv-common tr[data-run="{run_id}"] [data-col="common-hv"]')
        assert float(cell.inner_text()) >= result["hypervolume"] * (1 - 1e-5)
    assert page.evaluate(COLOURED, ["#compare-hv canvas", FRONT_RGB]) > 100
    visit.verify()


def test_compare_says_when_one_and_several_objectives_are_mixed(visit: Visit, server: Any,
                                                                key: str) -> None:
    ids = [submit(server, key, QUICK_RUN), submit(server, key, TWO)]
    for run_id in ids:
        wait_finished(server, key, run_id)
    visit.sign_in()
    page = visit.go("/dashboard/compare?" + "&".join(f"run={r}" for r in ids))
    page.wait_for_function("() => window.decidoDash.plots.hypervolume !== undefined"
                           " && window.decidoDash.plots.compare !== undefined")
    notice = page.inner_text("#mixed-kinds")
    assert "runs of one objective and runs of several" in notice
    assert page.inner_text("#cmp-h") == "Convergence of 1 run"
    assert page.inner_text("#hv-cmp-h") == "Hypervolume of 1 run of several objectives"
    assert page.evaluate("window.decidoDash.plots.compare.series.length") == 2
    assert page.evaluate("window.decidoDash.plots.hypervolume.series.length") == 2
    assert page.get_attribute("#compare", "data-runs") == ids[0]
    assert page.get_attribute("#compare-hv", "data-runs") == ids[1]
    visit.verify()


def test_choose_from_this_front_refusals(server: Any, key: str) -> None:
    """The bridge's refusals, as pages: a run of one objective (422), a run that is not
    the key's (404), nothing decided; a fault of the form on a front is shown next to the
    form, which stays on the front."""
    single = submit(server, key, QUICK_RUN)
    mine = submit(server, key, {**TWO, "bounds": [[0, 1]] * 25})
    other = server.create_key("sdk", "team", label="other")["key"]
    theirs = submit(server, other, TWO)
    for k, run_id in ((key, single), (key, mine), (other, theirs)):
        wait_finished(server, k, run_id)
    session = sign_in(server, key)
    page = get(server, f"/dashboard/decide?from_run={single}", session)
    assert page.status == 422 and "has one objective" in page.body.decode()
    page = get(server, f"/dashboard/decide?from_run={theirs}", session)
    assert page.status == 404
    assert server.request("GET", "/v1/decisions", headers=auth(key)).json()["data"] == []
    page = get(server, f"/dashboard/decide?from_run={mine}", session)
    text = page.body.decode()
    # the preview shows the objectives and 20 of the 25 variables; the options have all
    assert page.status == 200 and "the options have 5 more" in text
    assert "id,f1,cost," + ",".join(f"x{j}" for j in range(20)) + "\n" in text

    def post(**more: str) -> str:
        fields = {"csrf": csrf_of(page.body), "from_run": mine, "method": "topsis",
                  "options": "ignored", **more}
        answer = server.request("POST", "/dashboard/decide", raw=urlencode(fields).encode(),
                                headers={**FORM, "Cookie": f"decido_session={session}"})
        assert answer.status == 200
        return str(answer.body.decode())

    text = post(criteria="f1 minimize 1\nweight minimize 1")
    assert "weight" in text.split('id="decide-problems"')[1].split("</div>")[0]
    assert f'name="from_run" value="{mine}"' in text and "f1 minimize 1\nweight" in text
    text = post(criteria="f1 minimize 1\ncost minimize 3", constraints="x24 <= 0.5")
    assert 'id="ranking"' in text and 'id="decide-problems"' not in text


def test_a_front_of_least_violation_is_drawn_as_infeasible(visit: Visit, server: Any,
                                                           key: str) -> None:
    """Nothing feasible: the front is the non-dominated points of least violation, drawn
    in their own series, and the page says so."""
    run_id = submit(server, key, {**TWO, "constraints": ["x[0] + x[1] >= 3"]})
    result = wait_finished(server, key, run_id)["result"]
    assert result["status"] == "infeasible" and result["front_size"]
    visit.sign_in()
    page = visit.go(f"/dashboard/runs/{run_id}")
    page.wait_for_function("() => window.decidoDash.finished === true", timeout=WAIT_MS)
    assert drawn_points(page, "window.decidoDash.plots.front") == [0, result["front_size"], 1]
    assert "nothing feasible was found" in page.inner_text("#front-note")
    visit.verify()


def test_compare_measures_fronts_at_the_farthest_reference_point() -> None:
    """The common reference point is the farthest out objective by objective (the largest
    for a minimized objective, the smallest for a maximized one); each final front is
    measured there (hand-computed boxes); other objectives get a note instead."""
    from decido_service.dashboard.front import compare_kinds

    objectives = [{"name": "cost", "expression": "x[0]", "goal": "minimize"},
                  {"name": "gain", "expression": "x[1]", "goal": "maximize"}]

    def view(run_id: str, f: list[float], reference: list[float],
             objectives: list[dict[str, str]] = objectives) -> dict[str, Any]:
        point = {"x": [0.0, 0.0], "f": f, "feasible": True, "max_violation": 0.0}
        return {"id": run_id, "state": "succeeded", "engine": "moea", "dims": 2,
                "created_at": "2026-11-28T00:00:00Z", "progress": None,
                "request": {"objectives": objectives, "goal": "minimize"},
                "result": {"pareto": [point], "reference_point": reference,
                           "hypervolume": 1.0, "evaluations": 10, "elapsed_ms": 1.0}}

    kinds = compare_kinds([view("run_a", [1, 5], [2, 4]), view("run_b", [1.5, 6], [3, 5])])
    assert kinds["common"] == [3, 4] and not kinds["single"] and not kinds["mixed"]
    assert [r["common_hv"] for r in kinds["several"]] == [2.0, 3.0]
    assert len(kinds["notes"]) == 1 and "own reference point" in kinds["notes"][0]
    other = [{**objectives[0], "name": "price"}, objectives[1]]
    kinds = compare_kinds([view("run_a", [1, 5], [2, 4]),
                           view("run_b", [1.5, 6], [3, 5], other)])
    assert kinds["common"] is None and "common_hv" not in kinds["several"][0]
    assert "do not optimize the same objectives" in kinds["notes"][0]


def test_a_list_of_one_objective(visit: Visit, server: Any, key: str) -> None:
    """``objectives`` with one item: its front is its best point, said in words."""
    run_id = submit(server, key, {**TWO, "objectives": TWO["objectives"][1:]})
    result = wait_finished(server, key, run_id)["result"]
    visit.sign_in()
    page = visit.go(f"/dashboard/runs/{run_id}")
    page.wait_for_function("() => window.decidoDash.finished === true", timeout=WAIT_MS)
    note = page.inner_text("#front-note")
    assert note.startswith("One objective: the front is its best value") and \
        "(cost (minimize))" in note
    assert page.get_attribute("#front", "data-points") == str(result["front_size"])
    assert page.evaluate("window.decidoDash.plots.hypervolume.data[0].length") > 0
    visit.verify()
