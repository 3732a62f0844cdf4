"""UTC windows (minute, hour, calendar month) and rollover with an injected ``now``."""

from __future__ import annotations

import calendar
from datetime import datetime, timezone
from pathlib import Path

import pytest

from decido_service.store import CounterSpec, iso_utc, window_bounds
from decido_service.store.blocking import open_blocking


def ts(text: str) -> float:
    """Epoch seconds of a UTC ``YYYY-MM-DDTHH:MM:SS`` text."""
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


@pytest.mark.parametrize(
    ("now", "start", "end"),
    [
        ("2024-12-31T23:59:59", "2024-12-01T00:00:00", "2025-01-01T00:00:00"),
        ("2025-01-01T00:00:00", "2025-01-01T00:00:00", "2025-02-01T00:00:00"),
        ("2024-02-29T12:00:00", "2024-02-01T00:00:00", "2024-03-01T00:00:00"),  # leap year
        ("2023-02-28T23:59:59", "2023-02-01T00:00:00", "2023-03-01T00:00:00"),
        ("2100-02-28T00:00:00", "2100-02-01T00:00:00", "2100-03-01T00:00:00"),  # not leap
        ("2000-02-29T00:00:00", "2000-02-01T00:00:00", "2000-03-01T00:00:00"),  # leap
        ("2025-04-30T23:59:59", "2025-04-01T00:00:00", "2025-05-01T00:00:00"),
    ],
)
def test_month_window_is_the_calendar_month(now: str, start: str, end: str) -> None:
    assert window_bounds("month", ts(now)) == (ts(start), ts(end))
    assert window_bounds("month", ts(now) + 0.999)[0] == ts(start)


def test_month_lengths_over_four_years() -> None:
    t = ts("2024-01-15T00:00:00")
    lengths = []
    for _ in range(48):
        start, end = window_bounds("month", t)
        lengths.append((end - start) // 86_400)
        t = end + 1
    year_month = [(2024 + i // 12, i % 12 + 1) for i in range(48)]
    assert lengths == [calendar.monthrange(y, m)[1] for y, m in year_month]


def test_minute_and_hour_windows() -> None:
    t = ts("2025-03-09T10:59:59") + 0.5
    assert window_bounds("minute", t) == (ts("2025-03-09T10:59:00"), ts("2025-03-09T11:00:00"))
    assert window_bounds("hour", t) == (ts("2025-03-09T10:00:00"), ts("2025-03-09T11:00:00"))
    assert window_bounds("minute", ts("2025-03-09T11:00:00"))[0] == ts("2025-03-09T11:00:00")
    with pytest.raises(ValueError):
        window_bounds("day", t)


def test_iso_utc() -> None:
    assert iso_utc(ts("2024-02-29T23:59:59") + 0.9) == "2024-02-29T23:59:59Z"


def test_month_rollover_december_to_january(tmp_path: Path) -> None:
    store = open_blocking(str(tmp_path / "roll.db"))
    month = CounterSpec("decide.month", "key", "month", 3, 1)
    minute = CounterSpec("decide.minute", "key", "minute", 100, 1)
    last_second = ts("2024-12-31T23:59:59")
    for _ in range(3):
        assert store.admit([minute, month], now=last_second).admitted
    refused = store.admit([minute, month], now=last_second + 0.9)
    assert not refused.admitted and refused.refused.name == "decide.month"
    assert refused.refused.reset == ts("2025-01-01T00:00:00")
    new_year = store.admit([minute, month], now=ts("2025-01-01T00:00:00"))
    assert new_year.admitted
    assert [c.used for c in new_year.counters] == [1, 1]
    assert new_year.counters[1].window_start == ts("2025-01-01T00:00:00")
    assert new_year.counters[1].window_end == ts("2025-02-01T00:00:00")
    # December is still there, untouched by January
    assert store.admissions.peek([month], now=ts("2024-12-15T00:00:00"))[0].used == 3
    store.close()


def test_minute_rollover(tmp_path: Path) -> None:
    store = open_blocking(str(tmp_path / "minute.db"))
    spec = CounterSpec("optimize.minute", "key", "minute", 2, 1)
    t = ts("2025-06-01T12:00:59")
    assert [store.admit([spec], now=t).admitted for _ in range(3)] == [True, True, False]
    assert store.admit([spec], now=t + 1).admitted
    store.close()
