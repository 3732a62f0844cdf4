"""The dashboard's study pages in headless chromium against a live server (see conftest):
studies made and driven through the API (``/v1/studies``), shown in the list and on their
pages: the counts, the trials table and its pages, the best-so-far chart and the parallel
coordinates (SVG, counted by their elements), a trial completed through the API appearing
while the page is open, "choose from this front" into the decide page, stop and delete,
and hostile text (labels, categorical values, client ids) shown as text."""

from __future__ import annotations

import re
from typing import Any

from browser_support import WAIT_MS, Visit, auth

HOSTILE = '<img src=x onerror="window.__pwned=1">'
SVG_HOSTILE = '</text><script>window.__pwned=2</script>'


def api(server: Any, key: str, method: str, path: str, body: Any = None,
        status: int = 200) -> Any:
    answer = server.request(method, path, body, headers=auth(key))
    assert answer.status == status, (method, path, answer.status, answer.body[:500])
    return answer.json() if answer.body else None


def make_study(server: Any, key: str, body: dict[str, Any]) -> str:
    study_id: str = api(server, key, "POST", "/v1/studies", body, 201)["id"]
    return study_id


def suggest(server: Any, key: str, study_id: str, count: int,
            client: str | None = None) -> list[dict[str, Any]]:
    body: dict[str, Any] = {"count": count}
    if client is not None:
        body["client_id"] = client
    trials: list[dict[str, Any]] = api(server, key, "POST",
                                       f"/v1/studies/{study_id}/suggest", body)["trials"]
    return trials


def complete(server: Any, key: str, study_id: str, number: int, body: dict[str, Any]) -> None:
    api(server, key, "POST", f"/v1/studies/{study_id}/trials/{number}/complete", body)


def study_doc(server: Any, key: str, study_id: str) -> dict[str, Any]:
    doc: dict[str, Any] = api(server, key, "GET", f"/v1/studies/{study_id}")
    return doc


def sphere(variables: dict[str, Any]) -> float:
    return float(sum((v - 1) ** 2 for v in variables.values() if isinstance(v, (int, float))))


ONE = {"variables": [{"name": "a", "lower": -3, "upper": 3},
                     {"name": "b", "lower": 1, "upper": 100, "log": True},
                     {"name": "n", "lower": 0, "upper": 10, "type": "integer"}],
       "engine": "random", "seed": 4, "metadata": {"project": "dash"}}


def test_a_study_page_shows_counts_trials_and_charts(visit: Visit, server: Any,
                                                     key: str) -> None:
    study_id = make_study(server, key, ONE)
    warm = [{"variables": {"a": round(0.09 * k - 2, 3), "b": 1 + k, "n": k % 11},
             "value": float((k * 7) % 23)} for k in range(55)]
    api(server, key, "POST", f"/v1/studies/{study_id}/trials", {"trials": warm})
    asked = suggest(server, key, study_id, 3, client="worker-1")
    complete(server, key, study_id, asked[0]["number"], {"value": -1.5})
    complete(server, key, study_id, asked[1]["number"], {"state": "failed", "reason": "crash"})
    doc = study_doc(server, key, study_id)
    assert doc["trials"]["completed"] == 56 and doc["trials"]["active"] == 1

    visit.sign_in()
    page = visit.go("/dashboard")
    page.click("nav >> text=Studies")
    page.wait_for_url("**/dashboard/studies")
    row = page.locator(f'tr[data-study="{study_id}"]')
    assert row.locator('[data-col="total"]').inner_text() == "58"
    assert row.locator('[data-col="completed"]').inner_text() == "56"
    assert row.locator('[data-col="best"]').inner_text() == "-1.5"
    assert row.locator('[data-col="labels"]').inner_text() == "project=dash"
    row.locator("a").click()
    page.wait_for_url(f"**/dashboard/studies/{study_id}")
    page.wait_for_function("() => window.decidoDash && window.decidoDash.loads > 0")
    for state, count in doc["trials"].items():
        assert page.inner_text(f"#count-{state}") == str(count), state
    assert page.inner_text("#study-best") == "-1.5"
    assert page.inner_text("#study-best-trial") == str(asked[0]["number"])
    # the best-so-far chart: one dot per completed trial, the line ends at the best
    chart = page.locator("#best-chart svg")
    assert chart.count() == 1 and chart.get_attribute("data-points") == "56"
    assert page.locator("#best-chart circle.trial").count() == 56
    assert page.evaluate("window.decidoDash.best[0].best") == -1.5
    # the parallel coordinates: one line per completed trial over 3 variables + 1 objective
    parallel = page.locator("#parallel svg")
    assert parallel.get_attribute("data-lines") == "56"
    assert parallel.get_attribute("data-axes") == "4"
    assert page.locator("#parallel polyline").count() == 56
    colours = set(page.eval_on_selector_all("#parallel polyline",
                                            "ls => ls.map(l => l.getAttribute('stroke'))"))
    assert len(colours) > 5  # coloured by value
    # the trials table: pages of 50, a state filter
    assert page.locator("#trials tbody tr").count() == 50
    page.click("#next-trials")
    page.wait_for_url("**starting_after=49**")
    assert page.locator("#trials tbody tr").count() == 8
    active = page.locator('#trials tr[data-state="active"]')
    assert active.count() == 1 and "worker-1" in active.inner_text()
    assert "crash" in page.locator('#trials tr[data-state="failed"]').inner_text()
    page.select_option("#f-state", "failed")
    page.click("#trials-part button[type=submit]")
    page.wait_for_url("**state=failed**")
    assert page.locator("#trials tbody tr").count() == 1
    assert page.locator("#variables li").count() == 3
    visit.verify()


def test_a_large_study_is_drawn_whole_its_best_over_every_trial(visit: Visit, server: Any,
                                                                  key: str) -> None:
    """12,000 completed trials, the best the 11,500th: the line of the best so far reaches
    it (the charts drew only the first 10,000), the dots and lines are a bounded sample
    that holds it, and the notes say what is drawn."""
    study_id = make_study(server, key, {"bounds": [[-5, 5]], "engine": "random", "seed": 2})
    for start in range(0, 12_000, 4_000):
        warm = [{"x": [((k * 37) % 1000) / 100 - 5], "value": 50.0 + (k * 7919) % 1000}
                for k in range(start, start + 4_000)]
        if start == 8_000:
            warm[3_500]["value"] = -3.0
        api(server, key, "POST", f"/v1/studies/{study_id}/trials", {"trials": warm})
    visit.sign_in()
    page = visit.go(f"/dashboard/studies/{study_id}")
    page.wait_for_function("() => window.decidoDash && window.decidoDash.loads > 0",
                           timeout=WAIT_MS)
    assert page.evaluate("window.decidoDash.best[0].best") == -3.0
    assert page.evaluate("window.decidoDash.data.completed") == 12_000
    dots = int(page.get_attribute("#best-chart svg", "data-points") or "0")
    assert 1_000 < dots <= 2_001
    assert page.locator('#best-chart circle[data-trial="11500"]').count() == 1
    assert page.locator('#parallel polyline[data-trial="11500"]').count() == 1
    assert int(page.get_attribute("#parallel svg", "data-lines") or "0") == dots
    note = page.inner_text("#best-note")
    assert "over all 12000 completed trials" in note and "a sample of" in note, note
    assert "a sample of" in page.inner_text("#parallel-note")
    visit.verify()


def test_a_trial_completed_through_the_api_appears_live(visit: Visit, server: Any,
                                                         key: str) -> None:
    study_id = make_study(server, key, {**ONE, "seed": 9})
    first = suggest(server, key, study_id, 2)
    complete(server, key, study_id, first[0]["number"], {"value": sphere(first[0]["variables"])})
    visit.sign_in()
    page = visit.go(f"/dashboard/studies/{study_id}")
    page.wait_for_function("() => window.decidoDash && window.decidoDash.loads > 0")
    assert page.get_attribute("#best-chart svg", "data-points") == "1"
    assert page.inner_text("#count-completed") == "1"
    page.wait_for_function("() => window.decidoDash.live.source.readyState === 1")
    assert page.evaluate("window.decidoDash.live.mode") == "events"
    complete(server, key, study_id, first[1]["number"], {"value": -7.25})
    page.wait_for_function(
        "() => document.querySelector('#best-chart svg').dataset.points === '2'",
        timeout=WAIT_MS)
    page.wait_for_function("() => document.getElementById('count-completed')"
                           ".textContent === '2'", timeout=WAIT_MS)
    assert page.inner_text("#study-best") == "-7.25"
    assert page.locator("#parallel polyline").count() == 2
    assert page.locator('#trials tr[data-state="completed"]').count() == 2
    # a trial suggested then completed while the page is open: a new row, a new point
    more = suggest(server, key, study_id, 1)
    page.wait_for_function("() => document.getElementById('count-active').textContent === '1'",
                           timeout=WAIT_MS)
    complete(server, key, study_id, more[0]["number"], {"value": 100.0})
    page.wait_for_function(
        "() => document.querySelector('#best-chart svg').dataset.points === '3'",
        timeout=WAIT_MS)
    assert page.locator(f'#trials tr[data-trial="{more[0]["number"]}"]').count() == 1
    assert page.evaluate("window.decidoDash.live.events") >= 4  # over the event stream
    assert page.evaluate("window.decidoDash.live.mode") == "events"
    visit.verify()


def test_the_page_polls_when_its_stream_is_refused(visit: Visit, server: Any) -> None:
    """A key at its cap of event streams (here 0) gets 429 for the page's stream: the page
    follows the study by polling ``study.json`` instead."""
    key = server.create_key("sdk", "team", limits={"optimization": {"max_streams": 0}})["key"]
    visit.key = key
    study_id = make_study(server, key, {**ONE, "seed": 10})
    asked = suggest(server, key, study_id, 1)
    visit.sign_in()
    page = visit.go(f"/dashboard/studies/{study_id}")
    page.wait_for_function("() => window.decidoDash && window.decidoDash.live.mode === 'polling'")
    complete(server, key, study_id, asked[0]["number"], {"value": 2.5})
    page.wait_for_function(
        "() => document.querySelector('#best-chart svg').dataset.points === '1'",
        timeout=WAIT_MS)
    # the status part is fetched beside the charts' data: it may come a moment later
    page.wait_for_function("() => document.getElementById('study-best')"
                           ".textContent === '2.5'", timeout=WAIT_MS)
    assert visit.errors and all("429" in e for e in visit.errors), visit.errors
    visit.errors.clear()  # the refused stream is the case under test
    visit.verify()


TWO = {"bounds": [[0, 1], [0, 1]], "engine": "moea", "seed": 2,
       "objectives": [{"name": "cost", "goal": "minimize"},
                      {"name": "quality", "goal": "maximize"}]}


def test_choose_from_the_front_prefills_the_decide_page(visit: Visit, server: Any,
                                                        key: str) -> None:
    study_id = make_study(server, key, TWO)
    for trial in suggest(server, key, study_id, 12):
        x0, x1 = trial["x"]
        complete(server, key, study_id, trial["number"],
                 {"values": [x0 + 0.1 * x1, x0 * (1 - 0.2 * x1)]})
    front = sorted(t["number"] for t in study_doc(server, key, study_id)["pareto"])
    assert len(front) >= 2
    visit.sign_in()
    page = visit.go(f"/dashboard/studies/{study_id}")
    page.wait_for_function("() => window.decidoDash && window.decidoDash.loads > 0")
    assert page.inner_text("#study-front-size") == str(len(front))
    scatter = page.locator("#front-chart svg")
    assert scatter.get_attribute("data-points") == "12"
    assert scatter.get_attribute("data-front") == str(len(front))
    assert page.locator("#front-chart circle.front").count() == len(front)
    assert page.locator("#parallel polyline.front").count() == len(front)
    assert page.locator("#best-chart svg").count() == 2  # one per objective
    shown = sorted(int(n) for n in page.eval_on_selector_all(
        "#front-table tbody tr", "rs => rs.map(r => r.dataset.trial)"))
    assert shown == front
    page.click("#choose-front")
    page.wait_for_url(f"{visit.origin}/dashboard/decide?from_study={study_id}")
    assert page.input_value('input[name="from_study"]') == study_id
    options = page.input_value("#options").splitlines()
    assert options[0].startswith("id,cost,quality")
    assert sorted(int(line.split(",")[0]) for line in options[1:]) == front
    assert page.input_value("#criteria").splitlines() == ["cost minimize 1",
                                                          "quality maximize 1"]
    page.click("#decide-submit")
    page.wait_for_selector("#ranking")
    ranked = page.locator('#ranking [data-col="id"]').all_inner_texts()
    assert sorted(int(r) for r in ranked) == front
    assert page.locator("#from-study a").first.get_attribute("href") == \
        f"/dashboard/studies/{study_id}"
    visit.verify()


def test_stop_then_delete_a_study(visit: Visit, server: Any, key: str) -> None:
    study_id = make_study(server, key, {**ONE, "seed": 21})
    suggest(server, key, study_id, 2)
    visit.sign_in()
    page = visit.go(f"/dashboard/studies/{study_id}")
    assert page.locator("#delete").count() == 0
    page.click("#stop")
    page.wait_for_url(visit.origin + f"/dashboard/studies/{study_id}")
    assert study_doc(server, key, study_id)["state"] == "stopped"
    assert page.inner_text("#study-state") == "stopped"
    assert page.locator("#stop").count() == 0
    refused = server.request("POST", f"/v1/studies/{study_id}/suggest", {"count": 1},
                             headers=auth(key))
    assert refused.status == 409 and refused.json()["code"] == "study_finished"
    page.click("#delete")
    page.wait_for_url(visit.origin + "/dashboard/studies")
    assert page.locator(f'tr[data-study="{study_id}"]').count() == 0
    assert server.request("GET", f"/v1/studies/{study_id}", headers=auth(key)).status == 404
    visit.verify()


def test_an_active_study_is_not_deleted_and_forms_need_their_token(
        visit: Visit, server: Any, key: str) -> None:
    study_id = make_study(server, key, {**ONE, "seed": 22})
    visit.sign_in()
    cookies = "; ".join(f"{c['name']}={c['value']}" for c in visit.context.cookies())
    form = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookies}
    for action in ("stop", "delete"):
        refused = server.request("POST", f"/dashboard/studies/{study_id}/{action}",
                                 raw=b"csrf=0", headers=form)
        assert refused.status == 403, (action, refused.status)
    assert study_doc(server, key, study_id)["state"] == "active"
    page = visit.go(f"/dashboard/studies/{study_id}")
    token = page.input_value("#stop-form input[name=csrf]")
    refused = server.request("POST", f"/dashboard/studies/{study_id}/delete",
                             raw=f"csrf={token}".encode(), headers=form)
    assert refused.status == 409 and b"stop it, then delete it" in refused.body
    # the scripts' data need a session; another key's study is not found
    assert server.request("GET", f"/dashboard/studies/{study_id}/trials.json").status == 401
    other = server.create_key("sdk", "team")["key"]
    theirs = make_study(server, other, ONE)
    assert visit.go(f"/dashboard/studies/{theirs}").locator("h1").inner_text() != \
        f"Study {theirs}"
    visit.errors.clear()  # that 404 page is the answer under test
    visit.verify()


def test_hostile_labels_values_and_clients_are_text(visit: Visit, server: Any,
                                                    key: str) -> None:
    study_id = make_study(server, key, {
        "variables": [{"name": "opt", "values": [HOSTILE, SVG_HOSTILE, "adam"]},
                      {"name": "lr", "lower": 0.001, "upper": 1, "log": True}],
        "engine": "random", "seed": 3, "metadata": {HOSTILE: SVG_HOSTILE}})
    for trial in suggest(server, key, study_id, 6, client=HOSTILE):
        complete(server, key, study_id, trial["number"], {"value": trial["variables"]["lr"]})
    suggest(server, key, study_id, 1, client=SVG_HOSTILE)
    visit.sign_in()
    page = visit.go("/dashboard/studies")
    assert page.locator(f'tr[data-study="{study_id}"] [data-col="labels"]').inner_text() == \
        f"{HOSTILE}={SVG_HOSTILE}"
    page = visit.go(f"/dashboard/studies/{study_id}")
    page.wait_for_function("() => window.decidoDash && window.decidoDash.loads > 0")
    assert page.inner_text("#study-labels") == f"{HOSTILE}={SVG_HOSTILE}"
    assert page.locator("#parallel polyline").count() == 6
    ticks = page.eval_on_selector_all("#parallel text", "ts => ts.map(t => t.textContent)")
    assert HOSTILE in ticks and "adam" in ticks  # the categorical axis's ends, as text
    assert HOSTILE in page.inner_text("#trials") and SVG_HOSTILE in page.inner_text("#trials")
    assert page.locator("img").count() == 0
    assert page.locator("script:not([src])").count() == 0
    assert page.evaluate("window.__pwned") is None
    html = page.content()
    assert not re.search(r"<img src=x", html) and "<script>window.__pwned" not in html
    visit.verify()  # an inline handler refused by the policy would be a console error
