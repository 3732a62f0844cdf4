"""The shared per-address counters (``ip.minute``): limits, windows, slots, processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_store_processes import _env

from decido_service import addresses
from decido_service.addresses import AddressCounters, table_path
from decido_service.store import Admission, CounterSpec, CounterState, window_bounds

NOW = 1_750_000_000.0  # 2025-06-15T15:06:40Z; the minute is [..:06:00, ..:07:00)
MINUTE_END = 1_750_000_020


def ip(subject: str = "10.0.0.1", limit: int | None = 3, amount: int = 1) -> CounterSpec:
    return CounterSpec("ip.minute", subject, "minute", limit, amount)


@pytest.fixture
def table(tmp_path: Path):
    t = AddressCounters(table_path(str(tmp_path / "decido.db")))
    yield t
    t.close()


def test_table_lives_beside_the_database(tmp_path: Path) -> None:
    assert table_path(str(tmp_path / "d.db")) == str(tmp_path / "d.db") + "-addresses"


def test_counts_until_the_limit_then_refuses(table: AddressCounters) -> None:
    results = [table.admit(ip(), NOW) for _ in range(5)]
    assert [r.admitted for r in results] == [True, True, True, False, False]
    assert [r.counters[0].used for r in results] == [1, 2, 3, 3, 3]
    assert [r.counters[0].remaining for r in results] == [2, 1, 0, 0, 0]
    refused = results[3]
    assert refused.refused == refused.counters[0]
    assert refused.refused.reset == MINUTE_END and refused.refused.name == "ip.minute"
    assert table.peek(ip(), NOW).used == 3


def test_unlimited_and_amounts(table: AddressCounters) -> None:
    for _ in range(4):
        assert table.admit(ip(limit=None, amount=5), NOW).admitted
    state = table.peek(ip(limit=None), NOW)
    assert state.used == 20 and state.remaining is None and state.limit is None
    assert not table.admit(ip("10.0.0.9", limit=2, amount=3), NOW).admitted  # too big at once


def test_subjects_names_and_windows_are_separate(table: AddressCounters) -> None:
    table.admit(ip("a"), NOW)
    table.admit(ip("a"), NOW)
    table.admit(ip("b"), NOW)
    table.admit(CounterSpec("keys.hour", "a", "hour", 5, 1), NOW)
    assert table.peek(ip("a"), NOW).used == 2
    assert table.peek(ip("b"), NOW).used == 1
    assert table.peek(CounterSpec("keys.hour", "a", "hour", 5, 1), NOW).used == 1
    assert table.peek(ip("c"), NOW).used == 0


def test_the_next_window_starts_from_zero(table: AddressCounters) -> None:
    for _ in range(3):
        table.admit(ip(), NOW)
    assert not table.admit(ip(), NOW + 10).admitted  # same minute
    fresh = table.admit(ip(), MINUTE_END)  # the next minute
    assert fresh.admitted and fresh.counters[0].used == 1
    assert fresh.counters[0].window_start == MINUTE_END


@pytest.mark.parametrize("window", ["minute", "hour"])
@pytest.mark.parametrize("now", [0.0, 59.999, 60.0, 3599.5, 3600.0, NOW, MINUTE_END - 0.001,
                                 float(MINUTE_END), 4_294_963_199.0])
def test_windows_and_states_agree_with_the_store(table: AddressCounters, window: str,
                                                 now: float) -> None:
    """admit computes its window inline: the same window as window_bounds (what the
    store and peek use), and the same state as peek reports."""
    spec = CounterSpec("x", f"{window}-{now}", window, 2, 1)
    first, second, refused = (table.admit(spec, now) for _ in range(3))
    start, end = window_bounds(window, now)
    assert first.counters == [CounterState("x", 2, 1, 1, end, start, end)]
    assert second.counters == [CounterState("x", 2, 2, 0, end, start, end)]
    assert refused.refused == refused.counters[0] == CounterState("x", 2, 2, 0, end, start, end)
    assert (first.refused, first.revoked_at, refused.admitted) == (None, None, False)
    assert all(type(a) is Admission and type(a.counters[0]) is CounterState
               for a in (first, refused))
    assert table.peek(spec, now) == second.counters[0]


def test_month_windows_are_not_for_this_table(table: AddressCounters) -> None:
    with pytest.raises(ValueError, match="windows"):
        table.admit(CounterSpec("x", "a", "month", 1, 1), NOW)


def test_slots_of_ended_windows_are_reused(table: AddressCounters) -> None:
    # fill every slot around one address's hash with other counters, live this minute
    target = ip("203.0.113.7")
    ident = addresses._hash(target.name, target.window, target.subject)
    home = ident % addresses.SLOTS
    shared = table._table  # the decido.counters.SharedCounters underneath
    for probe in range(addresses.PROBES):
        other = (home + probe) % addresses.SLOTS + addresses.SLOTS * (probe + 1)
        assert other != ident and other % addresses.SLOTS == (home + probe) % addresses.SLOTS
        assert shared.admit(other, MINUTE_END - 60, MINUTE_END, 1, None) == (True, 1)
    # full: refused, nothing counted anywhere (the answer is a 429, never an overshoot)
    full = table.admit(target, NOW)
    assert not full.admitted and full.refused is not None
    assert full.refused.used == target.limit and full.refused.remaining == 0
    assert table.peek(target, NOW).used == 0
    # in the next minute those slots have ended and are free again
    later = table.admit(target, MINUTE_END + 1)
    assert later.admitted and later.counters[0].used == 1


def test_a_foreign_or_truncated_file_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "decido.db-addresses"
    path.write_bytes(b"not a table")
    t = AddressCounters(path)
    try:
        assert t.admit(ip(), NOW).counters[0].used == 1
    finally:
        t.close()
    assert path.stat().st_size == 16 + 16 * addresses.SLOTS  # header + slots


def test_two_handles_share_counts(tmp_path: Path) -> None:
    path = tmp_path / "decido.db-addresses"
    one, two = AddressCounters(path), AddressCounters(path)
    try:
        one.admit(ip(), NOW)
        two.admit(ip(), NOW)
        assert one.peek(ip(), NOW).used == 2
        assert two.admit(ip(), NOW).admitted
        assert not one.admit(ip(), NOW).admitted
    finally:
        one.close()
        two.close()


RACER = """
    import sys
    from decido_service.addresses import AddressCounters
    from decido_service.store import Admission, CounterSpec, CounterState, window_bounds
    path, limit, attempts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    table = AddressCounters(path)
    spec = CounterSpec("ip.minute", "198.51.100.1", "minute", limit, 1)
    table.peek(spec, 1_750_000_000.0)         # warm: the first call does the imports' work
    print("ready", flush=True)
    sys.stdin.readline()                      # start together
    print(sum(table.admit(spec, 1_750_000_000.0).admitted for _ in range(attempts)), flush=True)
"""


def test_exact_across_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "decido.db-addresses")
    limit, procs_n, attempts = 50_000, 4, 20_000
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(RACER), path, str(limit),
                               str(attempts)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=_env())
             for _ in range(procs_n)]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready"
        for p in procs:  # every child is ready and waiting: release them together
            p.stdin.write("go\n")
            p.stdin.flush()
        outs = [p.communicate(timeout=60) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    assert sum(int(out) for out, _ in outs) == limit  # 80,000 attempts, exactly 50,000
    t = AddressCounters(path)
    try:
        assert t.peek(ip("198.51.100.1", limit), 1_750_000_000.0).used == limit
    finally:
        t.close()
