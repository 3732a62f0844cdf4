"""The study page's charts over a whole study (``dashboard/study_charts.py``): the best so
far over every completed trial, a bounded sample that always holds the best and the
front, and thinned lines; no trial past any count is left out of the best."""

from __future__ import annotations

import random
from typing import Any

import orjson

from decido_service.dashboard.study_charts import BEST_POINTS, CHART_SAMPLE, Charts, thin


def row(number: int, values: list[float]) -> dict[str, Any]:
    return {"number": number, "state": "completed", "x": orjson.dumps([0.5]).decode(),
            "variables": orjson.dumps({"x0": 0.5}).decode(),
            "vals": orjson.dumps(values).decode(), "metrics": None, "client_id": None,
            "lease_until": None, "created_at": "2026-01-01T00:00:00Z",
            "completed_at": "2026-01-01T00:00:01Z", "reason": None}


def run(charts: Charts, rows: list[dict[str, Any]], page: int = 700) -> dict[str, Any]:
    for start in range(0, len(rows), page):
        charts.take(rows[start:start + page])
    return charts.data()


def test_the_best_so_far_is_over_every_trial_and_the_sample_is_bounded() -> None:
    n = 25_000  # beyond the old 10,000 first trials; the best comes late
    rng = random.Random(3)
    values = [rng.uniform(1.0, 100.0) for _ in range(n)]
    values[21_345] = 0.25
    rows = [row(k, [v]) for k, v in enumerate(values)]
    data = run(Charts(n, ["minimize"], keep=[21_345]), rows)
    assert data["completed"] == n and data["sampled"] and data["every"] == 13
    numbers = [t["number"] for t in data["trials"]]
    assert len(numbers) <= CHART_SAMPLE + 1 and 21_345 in numbers
    assert numbers == sorted(numbers) and numbers[0] == 0
    line = data["best_lines"][0]
    assert line[-1] == [n - 1, 0.25]  # the line goes on to the last trial
    assert [21_345, 0.25] in line
    best = [p[1] for p in line]
    assert best == sorted(best, reverse=True)  # never worse
    assert line[0] == [0, values[0]]


def test_several_objectives_keep_the_front_and_each_goal() -> None:
    rows = [row(k, [float(k % 50), float(-k)]) for k in range(6_000)]
    front = [7, 4_321, 5_999]
    data = run(Charts(6_000, ["minimize", "maximize"], keep=front), rows)
    numbers = {t["number"] for t in data["trials"]}
    assert set(front) <= numbers and len(numbers) <= CHART_SAMPLE + len(front)
    assert data["best_lines"][0] == [[0, 0.0], [5_999, 0.0]]
    assert data["best_lines"][1] == [[0, 0.0], [5_999, 0.0]]  # -k: 0 is its best


def test_a_small_study_is_drawn_whole() -> None:
    rows = [row(k, [float(10 - k)]) for k in range(10)]
    data = run(Charts(10, ["minimize"], keep=[]), rows, page=3)
    assert not data["sampled"] and [t["number"] for t in data["trials"]] == list(range(10))
    assert data["best_lines"][0] == [[k, float(10 - k)] for k in range(10)]
    assert run(Charts(0, ["minimize"], keep=[]), []) == {
        "trials": [], "best_lines": [[]], "completed": 0, "sampled": False, "every": 1}


def test_a_line_of_many_improvements_is_thinned_to_its_ends() -> None:
    rows = [row(k, [float(-k)]) for k in range(10_000)]  # every trial improves
    line = run(Charts(10_000, ["minimize"], keep=[]), rows)["best_lines"][0]
    assert len(line) == BEST_POINTS and line[0] == [0, 0.0] and line[-1] == [9_999, -9_999.0]
    assert thin([[1, 1.0], [2, 0.5]], 5) == [[1, 1.0], [2, 0.5]]
