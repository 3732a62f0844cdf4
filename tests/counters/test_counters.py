"""decido.counters.SharedCounters: window counters in a shared memory-mapped table.

Semantics through the public API in both modes (lock-free CAS and flock), the file
(creation, re-initialisation of a wrong header or size, reopening), argument checks, and
exactness under a race: threads in several processes against one limit, with idents that
collide in a small table.
"""

from __future__ import annotations

import mmap
import multiprocessing
import os
import stat
import sys
import threading
from pathlib import Path

import pytest

from decido import DecidoError, _counters
from decido.counters import LOCK_FREE, CounterTableError, SharedCounters

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock and fork")

TOP = 2**32 - 2  # counts saturate here
MODES = [None, True] + ([False] if LOCK_FREE else [])


@pytest.fixture(params=MODES, ids=lambda m: {None: "auto", True: "flock", False: "cas"}[m])
def lock(request: pytest.FixtureRequest) -> bool | None:
    return request.param


@pytest.fixture
def table(tmp_path: Path, lock: bool | None):
    with SharedCounters(tmp_path / "counters", slots=16, probes=4, lock=lock) as t:
        yield t


def test_modes(tmp_path: Path, lock: bool | None) -> None:
    with SharedCounters(tmp_path / "c", slots=8, probes=2, lock=lock) as t:
        assert t.lock_free == (LOCK_FREE if lock is None else not lock)
        assert t.slots == 8 and t.probes == 2
        assert "SharedCounters(" in repr(t)
    assert "closed" in repr(t)


def test_counts_until_the_limit(table: SharedCounters) -> None:
    got = [table.admit(7, 0, 60, 1, 3) for _ in range(5)]
    assert got == [(True, 1), (True, 2), (True, 3), (False, 3), (False, 3)]
    assert table.peek(7, 0, 60) == 3
    assert table.peek(7, 60, 120) == 0
    assert table.peek(8, 0, 60) == 0


def test_amounts_and_limits(table: SharedCounters) -> None:
    assert [table.admit(9, 0, 60, 2, 5) for _ in range(3)] == [(True, 2), (True, 4), (False, 4)]
    assert table.admit(9, 0, 60, 1, 5) == (True, 5)
    assert table.admit(10, 0, 60, 6, 5) == (False, 0)  # counts nothing
    assert table.peek(10, 0, 60) == 0
    assert table.admit(11, 0, 60, 1, 0) == (False, 0)
    for limit in (None, 2**32 - 1, 2**40):  # no limit
        assert table.admit(12, 0, 60, 1000, limit)[0]
    assert table.peek(12, 0, 60) == 3000


def test_saturates_instead_of_wrapping(table: SharedCounters) -> None:
    assert table.admit(1, 0, 60, TOP, None) == (True, TOP)
    assert table.admit(1, 0, 60, TOP, None) == (True, TOP)
    assert table.admit(2, 0, 60, TOP - 1, TOP) == (True, TOP - 1)
    assert table.admit(2, 0, 60, 2, TOP) == (False, TOP - 1)
    assert table.admit(2, 0, 60, 1, TOP) == (True, TOP)


def test_windows(table: SharedCounters) -> None:
    for _ in range(3):
        table.admit(7, 0, 60, 1, 3)
    assert table.admit(7, 60, 120, 1, 3) == (True, 1)  # a new window starts from zero
    assert table.peek(7, 0, 60) == 0
    # a late request of the ended window: judged alone, counts nothing
    assert table.admit(7, 0, 60, 2, 3) == (True, 2)
    assert table.admit(7, 0, 60, 5, 3) == (False, 0)
    assert table.peek(7, 60, 120) == 1
    # windows at the top of the range
    assert table.admit(8, 2**32 - 2, 2**32 - 1, 1, 1) == (True, 1)
    assert table.peek(8, 2**32 - 2, 2**32 - 1) == 1


def test_full_table_refuses_then_frees(tmp_path: Path, lock: bool | None) -> None:
    with SharedCounters(tmp_path / "c", slots=4, probes=2, lock=lock) as t:
        assert t.admit(4, 0, 60, 1, 5) == (True, 1)  # idents 4, 8, 12, 16 share slot 0
        assert t.admit(8, 0, 60, 1, 5) == (True, 1)
        assert t.admit(12, 0, 60, 1, 5) == (False, 5)  # the answer of a full counter
        assert t.admit(12, 0, 60, 1, None) == (False, 2**32 - 1)
        assert t.peek(12, 0, 60) == 0
        assert t.admit(8, 0, 60, 1, 5) == (True, 2)
        # a window that starts before the others end may not take their slots ...
        assert t.admit(16, 30, 90, 1, 5) == (False, 5)
        # ... one that starts when they end may
        assert t.admit(16, 60, 120, 1, 5) == (True, 1)
        assert t.admit(12, 60, 120, 1, 5) == (True, 1)
        assert t.peek(4, 0, 60) == 0 and t.peek(8, 0, 60) == 0


def test_file_is_created_private_and_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "c"
    with SharedCounters(path, slots=32, probes=8) as t:
        t.admit(5, 0, 60, 3, None)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert os.path.getsize(path) == 16 + 32 * 16
    with SharedCounters(path, slots=32, probes=8, lock=True) as t:
        assert t.peek(5, 0, 60) == 3
        assert t.admit(5, 0, 60, 1, 4) == (True, 4)
    with SharedCounters(str(path), slots=32, probes=32) as t:  # probes may differ
        assert t.peek(5, 0, 60) == 4


@pytest.mark.parametrize(
    "content",
    [b"", b"junk", b"\0" * (16 + 32 * 16), b"DCCNT001" + (33).to_bytes(8, "little") + b"\0" * 512,
     b"DCCNT001" + (32).to_bytes(8, "little") + b"\0" * 500, b"DCADDR01" + b"\1" * 520],
    ids=["empty", "short", "zeros", "wrong-count", "truncated", "other-format"],
)
def test_wrong_header_or_size_is_reinitialised(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "c"
    path.write_bytes(content)
    with SharedCounters(path, slots=32, probes=8) as t:
        assert t.peek(5, 0, 60) == 0
        assert t.admit(5, 0, 60, 1, 2) == (True, 1)
    data = path.read_bytes()
    assert len(data) == 16 + 32 * 16
    assert data[:16] == b"DCCNT001" + (32).to_bytes(8, sys.byteorder)


def test_another_slot_count_reinitialises(tmp_path: Path) -> None:
    path = tmp_path / "c"
    with SharedCounters(path, slots=32, probes=8) as t:
        t.admit(5, 0, 60, 1, None)
    with SharedCounters(path, slots=64, probes=8) as t:
        assert t.peek(5, 0, 60) == 0
    assert os.path.getsize(path) == 16 + 64 * 16


@pytest.mark.parametrize(
    ("ident", "start", "end"),
    [(0, 0, 60), (-1, 0, 60), (2**64, 0, 60), (1, -1, 60), (1, 60, 60), (1, 61, 60),
     (1, 0, 2**32)],
)
def test_bad_window_or_ident(table: SharedCounters, ident: int, start: int, end: int) -> None:
    with pytest.raises(ValueError):
        table.admit(ident, start, end, 1, 10)
    with pytest.raises(ValueError):
        table.peek(ident, start, end)


def test_bad_amount_or_limit(table: SharedCounters) -> None:
    for amount in (0, -1, 2**32 - 1, 2**40):
        with pytest.raises(ValueError, match="amount"):
            table.admit(1, 0, 60, amount, 10)
    with pytest.raises(ValueError, match="limit"):
        table.admit(1, 0, 60, 1, -1)
    assert table.admit(1, 0, 2**32 - 1, 1, 10) == (True, 1)
    assert table.admit(2**64 - 1, 0, 60, 1, 10) == (True, 1)


def test_bad_construction(tmp_path: Path) -> None:
    path = tmp_path / "c"
    for slots, probes in ((0, 1), (2**32 + 1, 1), (8, 0), (8, 9)):
        with pytest.raises(ValueError):
            SharedCounters(path, slots=slots, probes=probes)
    assert not path.exists()
    if not LOCK_FREE:
        with pytest.raises(ValueError, match="compare-and-swap"):
            SharedCounters(path, lock=False)


def test_closed_table(tmp_path: Path, lock: bool | None) -> None:
    t = SharedCounters(tmp_path / "c", slots=8, probes=2, lock=lock)
    t.close()
    t.close()  # idempotent
    with pytest.raises(ValueError, match="closed"):
        t.admit(1, 0, 60, 1, 10)
    with pytest.raises(ValueError, match="closed"):
        t.peek(1, 0, 60)


def test_binding_raises_typed_errors() -> None:
    assert issubclass(CounterTableError, DecidoError) and issubclass(CounterTableError, ValueError)
    with mmap.mmap(-1, 48) as memory:  # page-aligned, as the file mapping is
        bad = _counters.Table(memory)
        with pytest.raises(CounterTableError) as info:
            bad.check()
        assert info.value.code == "invalid_counter_table"
        with pytest.raises(CounterTableError) as info:
            bad.admit(1, 0, 60, 1, 10, 1)
        assert info.value.code == "invalid_counter_table"
        bad.release()
    with mmap.mmap(-1, _counters.table_size(2)) as memory:
        good = _counters.Table(memory)
        good.init(2)
        good.check()
        with pytest.raises(CounterTableError) as info:
            good.admit(1, 0, 60, 1, 10, 3)  # more probes than slots
        assert info.value.code == "invalid_argument"
        good.release()
    with pytest.raises(BufferError):
        _counters.Table(b"DCCNT001" + bytes(24))  # read-only


# ------------------------------------------------------------------ the race

PROCS, THREADS, ATTEMPTS, LIMIT = 4, 4, 12, 100
# 6 idents over 2 home slots of an 8-slot table: their probes collide
IDENTS = [1 + 8 * k for k in range(1, 4)] + [2 + 8 * k for k in range(1, 4)]


def _racer(path: str, lock: bool | None, start: int, barrier, results) -> None:
    """One process: THREADS threads, each ATTEMPTS calls per ident, idents interleaved."""
    admitted = dict.fromkeys(IDENTS, 0)
    bad = []
    counted = threading.Lock()
    with SharedCounters(path, slots=8, probes=8, lock=lock) as table:

        def work(n: int) -> None:
            order = IDENTS if n % 2 else IDENTS[::-1]
            mine = dict.fromkeys(IDENTS, 0)
            for _ in range(ATTEMPTS):
                for ident in order:
                    ok, used = table.admit(ident, start, start + 60, 1, LIMIT)
                    mine[ident] += ok
                    if (ok and not 1 <= used <= LIMIT) or (not ok and used != LIMIT):
                        bad.append((ident, ok, used))
            with counted:
                for ident, n_ok in mine.items():
                    admitted[ident] += n_ok

        threads = [threading.Thread(target=work, args=(n,)) for n in range(THREADS)]
        barrier.wait(timeout=30)  # every process opened the table: go
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    results.put((admitted, bad))


def _context() -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def test_exact_across_processes_and_threads(tmp_path: Path, lock: bool | None) -> None:
    path = str(tmp_path / "race")
    ctx = _context()
    with SharedCounters(path, slots=8, probes=8) as table:
        for window, start in enumerate((1000, 1060)):  # the second window resets the slots
            barrier = ctx.Barrier(PROCS)
            results = ctx.Queue()
            procs = [ctx.Process(target=_racer, args=(path, lock, start, barrier, results))
                     for _ in range(PROCS)]
            for p in procs:
                p.start()
            try:
                outcomes = [results.get(timeout=60) for _ in procs]
            finally:
                for p in procs:
                    p.join(timeout=60)
                    if p.is_alive():
                        p.kill()
            assert all(p.exitcode == 0 for p in procs)
            assert [bad for _, bad in outcomes] == [[]] * PROCS
            total = {i: sum(admitted[i] for admitted, _ in outcomes) for i in IDENTS}
            assert PROCS * THREADS * ATTEMPTS > LIMIT
            assert total == dict.fromkeys(IDENTS, LIMIT), f"window {window}"
            assert all(table.peek(i, start, start + 60) == LIMIT for i in IDENTS)


def test_threads_share_one_instance(tmp_path: Path, lock: bool | None) -> None:
    with SharedCounters(tmp_path / "c", slots=4, probes=4, lock=lock) as table:
        admitted = []

        def work() -> None:
            admitted.append(sum(table.admit(i, 0, 60, 1, 50)[0] for i in (4, 8) for _ in
                                range(40)))

        threads = [threading.Thread(target=work) for _ in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert sum(admitted) == 100
        assert table.peek(4, 0, 60) == 50 and table.peek(8, 0, 60) == 50


def _use_inherited(table: SharedCounters, results) -> None:
    try:
        results.put(("ok", table.admit(3, 0, 60, 1, None)))
    except RuntimeError as e:
        results.put(("error", str(e)))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="fork")
def test_fork_inheritance(tmp_path: Path, lock: bool | None) -> None:
    ctx = multiprocessing.get_context("fork")
    with SharedCounters(tmp_path / "c", slots=8, probes=2, lock=lock) as table:
        results = ctx.Queue()
        p = ctx.Process(target=_use_inherited, args=(table, results))
        p.start()
        kind, value = results.get(timeout=30)
        p.join(timeout=30)
        if table.lock_free:  # the mapping is shared with the child
            assert (kind, value) == ("ok", (True, 1))
            assert table.peek(3, 0, 60) == 1
        else:  # a flock would not exclude the parent: refused
            assert kind == "error" and "fork" in value
            assert table.peek(3, 0, 60) == 0
