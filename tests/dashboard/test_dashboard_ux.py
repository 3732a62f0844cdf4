"""What a new user tripped over in the dashboard (issue 33), in headless chromium against a
live server (see conftest): short ids that tell runs apart, a compare plot whose scale
fits the data and says when the runs differ, axis labels that do not overlap, a live
point count, scroll cues on phone tables, a wrapped explanation, a logged decision shown
as a ranking, whole numbers for integer options, a sign-in page that makes a key, a form
that starts a run (its faults next to their fields), the decide form's switches.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlencode

import pytest
from browser_support import WAIT_MS, Visit, auth, live
from test_dashboard_browser import SLOW_RUN, submit, wait_finished
from test_dashboard_http import FORM, cookie_of, csrf_of, get, sign_in

#: a quick 4-D run whose best value is negative (the minimum is -3 at 0), whole budget
SHIFTED = {"bounds": [[-5, 5]] * 4, "objective_expression": "sum(x**2) - 3", "engine": "de",
           "max_evaluations": 4000, "options": {"stop_on_convergence": 0}}

#: the rendered tick labels of a plot's axis and their boxes (CSS px along the axis),
#: measured with the axis's own font on a canvas (uPlot draws its axes on a canvas)
LABEL_BOXES = """([name, axis]) => {
  const u = window.decidoDash.plots[name], ax = u.axes[axis];
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.font = ax.font[0];
  const boxes = [];
  ax._splits.forEach((v, i) => {
    const text = ax._values[i];
    if (text === null || text === undefined || text === "") return;
    const at = u.valToPos(v, axis === 0 ? "x" : "y");
    const w = ctx.measureText(String(text)).width;
    boxes.push([at - w / 2, at + w / 2, String(text)]);
  });
  return boxes.sort((a, b) => a[0] - b[0]);
}"""


def overlaps(boxes: list[list[Any]], gap: float = 2.0) -> list[tuple[str, str]]:
    """Neighbouring labels closer than ``gap`` px."""
    return [(a[2], b[2]) for a, b in zip(boxes, boxes[1:], strict=False) if b[0] < a[1] + gap]


def test_runs_made_in_a_row_have_distinct_short_ids(visit: Visit, server: Any,
                                                     key: str) -> None:
    """The short form was the time prefix of the ids: six runs in a row all read the
    same. It is the random tail now, on the runs page, in the compare legend, in titles."""
    body = {**SHIFTED, "max_evaluations": 200}
    ids = [submit(server, key, body) for _ in range(6)]
    for run_id in ids:
        wait_finished(server, key, run_id)
    visit.sign_in()
    page = visit.go("/dashboard/runs")
    shown = {run_id: page.locator(f'tr[data-run="{run_id}"] td a code').inner_text()
             for run_id in ids}
    assert len(set(shown.values())) == len(ids), shown
    assert all(run_id.endswith(short) and len(short) == 8 for run_id, short in shown.items())
    page = visit.go("/dashboard/compare?" + "&".join(f"run={r}" for r in ids[:3]))
    legend = page.locator("#legend code").all_inner_texts()
    assert legend == [shown[r] for r in ids[:3]]
    page = visit.go(f"/dashboard/runs/{ids[0]}")
    assert page.title().startswith(f"Run {shown[ids[0]]}")
    visit.verify()


def test_compare_runs_with_negative_best_values(visit: Visit, server: Any, key: str) -> None:
    """Best values below zero were drawn as if they reached ~1e-13 (a log scale of the
    values): the plot shows the log of the distance to the best value seen, says so on
    its axis, and draws each run's last point at its own distance."""
    ids = [submit(server, key, {**SHIFTED, "seed": s}) for s in (1, 2)]
    finals = [wait_finished(server, key, r)["result"]["value"] for r in ids]
    assert max(finals) < 0, finals
    visit.sign_in()
    page = visit.go("/dashboard/compare?" + "&".join(f"run={r}" for r in ids))
    page.wait_for_function("() => window.decidoDash.plots.compare !== undefined")
    scale = page.evaluate("window.decidoDash.scale")
    assert scale["kind"] == "log-distance" and scale["best"] == min(finals), scale
    plot = "window.decidoDash.plots.compare"
    assert page.evaluate(f"{plot}.scales.y.distr") == 3
    assert "distance to best seen" in page.evaluate(f"{plot}.axes[1].label")
    assert "distance to the best value seen" in page.inner_text("#compare-note")
    worse = finals.index(max(finals))
    if finals[worse] > min(finals):  # its last point: its distance, not a floor
        ys = page.evaluate(f"{plot}.data[{worse + 1}].filter(y => y !== null)")
        assert ys[-1] == pytest.approx(finals[worse] - min(finals), rel=1e-9)
    assert page.locator("#compare-differ").count() == 0  # the same problem
    # the choice itself (dash.js): a narrow range is linear, positive decades are log
    choose = "([a, m]) => window.decidoScale.choose(a, m).kind"
    assert page.evaluate(choose, [[[-2.5, -2.4, -2.45]], False]) == "linear"
    assert page.evaluate(choose, [[[100, 1, 1e-6]], False]) == "log"
    assert page.evaluate(choose, [[[-1, -50, -1e4]], True]) == "log-distance"
    visit.verify()


def test_compare_says_when_objectives_and_bounds_differ(visit: Visit, server: Any,
                                                        key: str) -> None:
    sphere = {**SHIFTED, "objective_expression": "sum(x**2)", "seed": 1}
    other = {**SHIFTED, "objective_expression": "sum(abs(x))", "bounds": [[-2, 3]] * 4,
             "seed": 1}
    ids = [submit(server, key, sphere), submit(server, key, other)]
    for run_id in ids:
        wait_finished(server, key, run_id)
    visit.sign_in()
    page = visit.go("/dashboard/compare?" + "&".join(f"run={r}" for r in ids))
    notice = page.inner_text("#compare-differ")
    assert "objectives differ" in notice and "bounds differ" in notice
    assert "sum(x**2)" in notice and "sum(abs(x))" in notice
    assert "goals differ" not in notice
    visit.verify()


@pytest.mark.parametrize("width", [1280, 375])
def test_convergence_axis_labels_do_not_overlap(browser: Any, server: Any, key: str,
                                                width: int) -> None:
    """uPlot's default wrote 1,000,000-wide labels every 50 px; measured here: every
    rendered x label's box on both axes (evaluations, time) apart from its neighbours."""
    body = {**SHIFTED, "bounds": [[-5, 5]] * 20, "max_evaluations": 400_000, "seed": 3}
    run_id = submit(server, key, body)
    wait_finished(server, key, run_id)
    visit = Visit(browser, server, key, width=width)
    try:
        visit.sign_in()
        page = visit.go(f"/dashboard/runs/{run_id}")
        page.wait_for_function("() => window.decidoDash.finished === true")
        for toggle in (None, "#time-x"):
            if toggle:
                page.check(toggle)
            page.wait_for_function(
                "() => window.decidoDash.plots.convergence.axes[0]._values")
            boxes = page.evaluate(LABEL_BOXES, ["convergence", 0])
            assert len(boxes) >= (2 if toggle is None else 1), boxes
            assert not overlaps(boxes), boxes
        visit.verify()
    finally:
        visit.close()


def test_a_live_chart_counts_its_points(visit: Visit, server: Any, key: str) -> None:
    """The note under a live chart said "0 points" while it showed 11."""
    visit.sign_in()
    run_id = submit(server, key, SLOW_RUN)
    page = visit.go(f"/dashboard/runs/{run_id}")
    page.wait_for_function("() => document.getElementById('convergence').dataset.points > 3",
                           timeout=WAIT_MS)
    points, note = page.evaluate("[window.decidoDash.plots.convergence.data[0].length, "
                                 "document.getElementById('conv-note').textContent]")
    assert note.startswith(f"{points} points"), (points, note)
    page.wait_for_function("() => window.decidoDash.finished === true", timeout=WAIT_MS)
    visit.verify()


def _boxes_of_tables(page: Any) -> list[dict[str, Any]]:
    return page.evaluate("""() => Array.from(document.querySelectorAll("main table")).map(t => {
      const box = t.closest(".scroll");
      const cue = box && box.previousElementSibling;
      return {id: t.id || (t.caption && t.caption.textContent), boxed: !!box,
              overflow: box ? getComputedStyle(box).overflowX : null,
              wider: box ? box.scrollWidth > box.clientWidth + 1 : false,
              marked: box ? box.classList.contains("overflows") : false,
              focusable: box ? box.getAttribute("tabindex") === "0" : false,
              cue: !!(cue && cue.classList.contains("scroll-cue") && cue.offsetHeight > 0),
              right: t.getBoundingClientRect().right};
    })""")


def test_phone_tables_scroll_with_a_cue(browser: Any, server: Any, key: str) -> None:
    """At 375 px the runs list, the engines' options and the decide page's scores scroll
    inside their box, with a visible cue and keyboard focus; the explanation wraps."""
    run_id = submit(server, key, {**SHIFTED, "max_evaluations": 300})
    wait_finished(server, key, run_id)
    visit = Visit(browser, server, key, width=375)
    try:
        visit.sign_in()
        page = visit.go("/dashboard/decide")
        page.click("#use-example")
        page.check("#explain")
        page.check("#sensitivity")
        page.click("#decide-submit")
        page.wait_for_selector("#ranking")
        # the explanation wraps inside the page rather than running off its edge
        explanation = page.locator("#explanation")
        assert explanation.count() == 1
        assert explanation.evaluate("t => t.getBoundingClientRect().right") <= 375
        item = page.locator("#explanation ul.explain li").first
        assert item.evaluate("li => li.getBoundingClientRect().height") > 30  # wrapped
        for path in (None, "/dashboard/runs", "/dashboard/engines"):
            if path:
                page = visit.go(path)
            assert page.evaluate("document.documentElement.scrollWidth") <= 375
            tables = [t for t in _boxes_of_tables(page) if t["id"] != "explanation"]
            assert any(t["wider"] for t in tables), (path, tables)
            for t in tables:
                assert t["boxed"] and t["overflow"] == "auto", (path, t)
                assert t["marked"] == t["cue"] == t["focusable"] == t["wider"], (path, t)
        visit.verify()
    finally:
        visit.close()


def test_decide_switches_and_a_logged_decision_as_a_ranking(visit: Visit, server: Any,
                                                            key: str) -> None:
    """The decide form sends ``explain`` and ``sensitivity`` as checked; the log's page
    of a decision shows its ranking (as the decide page does), the JSON behind a
    disclosure."""
    visit.sign_in()
    page = visit.go("/dashboard/decide")
    page.click("#use-example")
    page.uncheck("#explain")
    page.check("#sensitivity")
    page.click("#decide-submit")
    page.wait_for_selector("#ranking")
    body = json.loads(page.input_value("#request-body"))
    assert body.get("sensitivity") is True and "explain" not in body
    api = server.request("POST", "/v1/decide", body, headers=auth(key)).json()
    assert page.locator("#explanation").count() == 0
    shown = page.locator('#sensitivity [data-col="attribute"]').all_inner_texts()
    assert shown == [c["attribute"] for c in api["sensitivity"]["criteria"]]
    page = visit.go("/dashboard/decisions")
    page.locator("tbody tr a").nth(1).click()  # the form's decision (the API's is newer)
    page.wait_for_selector("#ranking")
    ids = page.locator('#ranking [data-col="id"]').all_inner_texts()
    assert ids == [r["id"] for r in api["ranking"]]
    assert page.inner_text("#best") == api["best"]
    assert page.locator("#sensitivity").count() == 1
    assert not page.locator("#answer-raw pre").is_visible()  # behind its disclosure
    page.click("#answer-raw summary")
    assert page.locator("#answer-raw pre").is_visible()
    visit.verify()


def test_integer_options_read_as_whole_numbers(visit: Visit, server: Any, key: str) -> None:
    """``stop_on_convergence=0``, not ``0.0``; and the log toggle of a run whose best is
    negative shows the distance to its best value, said on the axis."""
    run_id = submit(server, key, {**SHIFTED, "max_evaluations": 300,
                                  "options": {"stop_on_convergence": 0, "memory_size": 6}})
    best = wait_finished(server, key, run_id)["result"]["value"]
    assert best < 0
    visit.sign_in()
    page = visit.go(f"/dashboard/runs/{run_id}")
    page.wait_for_function("() => window.decidoDash.finished === true")
    page.check("#log-y")
    plot = "window.decidoDash.plots.convergence"
    assert page.evaluate(f"{plot}.scales.y.distr") == 3
    assert "distance to best seen" in page.evaluate(f"{plot}.axes[1].label")
    assert page.evaluate(f"Math.min(...{plot}.data[1])") > 0
    text = page.inner_text("main")
    assert "stop_on_convergence=0" in text and "stop_on_convergence=0.0" not in text
    assert re.search(r"memory_size=6(?![.\d])", text), text
    page = visit.go("/dashboard/engines")  # defaults and ranges
    cells = page.locator("td:nth-child(3), td:nth-child(4)").all_inner_texts()
    assert "18" in cells and not [c for c in cells if re.search(r"\b\d+\.0\b", c)], cells
    visit.verify()


def test_start_a_run_from_the_form(visit: Visit, server: Any, key: str) -> None:
    """The new-run form's faults are shown next to their fields (the form's own and the
    API's problem document's, by JSON pointer); a good one starts the run."""
    visit.sign_in()
    page = visit.go("/dashboard/runs")
    page.click("#new-run")
    page.wait_for_url(visit.origin + "/dashboard/runs/new")
    page.fill("#expression", "sum(x**2) + y")
    page.fill("#bounds", "-5:5\n3:1")
    page.fill("#dims", "")
    page.fill("#max_evaluations", "lots")
    page.click("#run-submit")
    page.wait_for_selector("#run-problems")
    assert "'lots' is not a whole number" in page.inner_text("#err-max_evaluations")
    assert page.get_attribute("#max_evaluations", "aria-invalid") == "true"
    assert page.input_value("#expression") == "sum(x**2) + y"  # kept as typed
    page.fill("#max_evaluations", "3000")
    page.click("#run-submit")
    page.wait_for_selector("#run-problems")
    # the API's faults, by their pointers: /bounds/1, then /objective_expression
    assert "variable 2" in page.inner_text("#err-bounds")
    assert page.locator("#err-max_evaluations").count() == 0
    page.fill("#bounds", "-5:5")
    page.fill("#dims", "1001")  # above the team tier's cap: a 403 by its field
    page.click("#run-submit")
    page.wait_for_selector("#run-problems")
    assert "1001" in page.inner_text("#err-dims")
    page.fill("#dims", "3")
    page.click("#run-submit")
    page.wait_for_selector("#run-problems")
    assert "unknown name 'y'" in page.inner_text("#err-expression")
    assert page.locator("#err-bounds").count() == 0
    page.fill("#expression", "sum(x**2) - 1")
    page.fill("#bounds", "-5:5")
    page.fill("#dims", "3")
    page.select_option("#engine", "de")
    page.fill("#seed", "7")
    page.fill("#options", "stop_on_convergence=0")
    page.click("#run-submit")
    page.wait_for_url(re.compile(r".*/dashboard/runs/run_[0-9a-f]{24}$"))
    run_id = page.url.rsplit("/", 1)[1]
    doc = wait_finished(server, key, run_id)
    request = doc["request"]
    assert request["objective_expression"] == "sum(x**2) - 1"
    assert request["bounds"] == [[-5, 5]] * 3 and request["engine"] == "de"
    assert request["seed"] == 7 and request["max_evaluations"] == 3000
    assert request["options"] == {"stop_on_convergence": 0}
    assert doc["result"]["evaluations"] == 3000
    visit.verify()


def test_sign_in_page_names_the_address_and_makes_a_key(browser: Any, tmp_path: Any) -> None:
    """The sign-in page wrote a literal HOST; it names the address the browser used, and
    its button makes a free key through the path of ``POST /v1/keys`` (the same counter
    on the address: two an hour here)."""
    db_url = f"sqlite:///{tmp_path / 'decido.db'}?busy_timeout=5000"
    with live.running(tmp_path, {"DECIDO_KEYS_PER_HOUR": "2"}, db_url=db_url) as srv:
        admin = srv.create_key("free", "free")["key"]
        visit = Visit(browser, srv, admin)
        try:
            page = visit.go("/dashboard/sign-in")
            assert page.inner_text("#curl-line") == f"curl -X POST {visit.origin}/v1/keys"
            page.click("#new-key")
            page.wait_for_selector("#new-secret")
            secret = page.input_value("#new-secret")
            assert re.fullmatch(r"dk_[A-Za-z0-9_-]{43}", secret)
            assert "only time it is shown" in page.inner_text(".created-key")
            usage = srv.request("GET", "/v1/usage", headers=auth(secret)).json()
            assert usage["decision"]["plan"] == "free" and usage["optimization"]["tier"] == "free"
            # shown once: the page again has no secret, and a second key is another one
            page = visit.go("/dashboard/sign-in")
            assert page.locator("#new-secret").count() == 0
            page.click("#new-key")
            page.wait_for_selector("#new-secret")
            assert page.input_value("#new-secret") != secret
            page = visit.go("/dashboard/sign-in")
            page.click("#new-key")  # the third in the hour: refused as POST /v1/keys
            page.wait_for_selector("#signin-error")
            assert page.locator("#new-secret").count() == 0
            visit.errors = [e for e in visit.errors if "429" not in e]  # that refusal
            refused = srv.request("POST", "/v1/keys")
            assert refused.status == 429, refused.body
            # the key made here signs in
            visit.sign_in(secret)
            visit.verify()
        finally:
            visit.close()


def test_the_new_forms_need_their_token_and_this_origin(server: Any, key: str) -> None:
    """The sign-in page's key button and the new-run form are CSRF-safe as the others:
    without the token, or from another origin, nothing is made (403)."""
    form = server.request("GET", "/dashboard/sign-in")
    nonce, token = cookie_of(form, "decido_signin"), csrf_of(form.body)
    for fields, extra in [({}, {}), ({"csrf": "0" * 64}, {}),
                          ({"csrf": token}, {"Origin": "http://evil.example"})]:
        refused = server.request("POST", "/dashboard/sign-in/new-key",
                                 raw=urlencode(fields).encode(),
                                 headers={**FORM, "Cookie": f"decido_signin={nonce}", **extra})
        assert refused.status == 403 and b'id="new-secret"' not in refused.body
        assert b"dk_" not in refused.body.replace(b"dk_\xe2\x80\xa6", b"")
    session = sign_in(server, key)
    cookie = {"Cookie": f"decido_session={session}"}
    token = csrf_of(get(server, "/dashboard/runs/new", session).body)
    before = server.request("GET", "/v1/runs", headers=auth(key)).json()["data"]
    fields = {"expression": "sum(x**2)", "bounds": "-1:1", "dims": "2", "engine": "de",
              "goal": "minimize", "max_evaluations": "100"}
    for sent, extra in [(fields, {}), ({**fields, "csrf": token},
                                       {"Origin": "http://evil.example"})]:
        refused = server.request("POST", "/dashboard/runs/new", raw=urlencode(sent).encode(),
                                 headers={**FORM, **cookie, **extra})
        assert refused.status == 403, refused.status
    assert server.request("GET", "/v1/runs", headers=auth(key)).json()["data"] == before
