"""The SQL cost of bounding a study's events on SQLite (WAL, the ``study_events`` table of
``store/studies.py``): one transaction per change writing 3 events (a suggest or a tell
writes 1-3), with the DELETE of those beyond the newest 10,000 (as ``StudyTx.add_events``
does, ``DECIDO_STUDY_EVENTS``) or without it; interleaved rounds of 2,000 changes, CPU
time per change. ``python benchmarks/study_events_prune.py [ROUNDS]``.
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import sys
import tempfile
import time

KEEP = 10_000
CHANGES = 2_000
DATA = ('{"number": 1234, "state": "completed", "x": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, '
        '0.8, 0.9, 1.0], "value": 1.5}')


def _db(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE study_events (study_id TEXT NOT NULL, seq BIGINT NOT NULL, "
               "kind TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (study_id, seq)) "
               "WITHOUT ROWID")
    return db


def _change(db: sqlite3.Connection, last: int, keep: int | None) -> int:
    """One change's events (and, with ``keep``, the DELETE); the last number after."""
    db.execute("BEGIN IMMEDIATE")
    db.executemany("INSERT INTO study_events (study_id, seq, kind, data) VALUES (?, ?, ?, ?)",
                   [("st_x", last + k + 1, "trial", DATA) for k in range(3)])
    if keep is not None and last + 3 > keep:
        db.execute("DELETE FROM study_events WHERE study_id = ? AND seq <= ?",
                   ("st_x", last + 3 - keep))
    db.execute("COMMIT")
    return last + 3


def _round(db: sqlite3.Connection, last: int, keep: int | None) -> tuple[int, float]:
    """``CHANGES`` changes; the last number and the CPU microseconds per change."""
    start = time.process_time()
    for _ in range(CHANGES):
        last = _change(db, last, keep)
    return last, (time.process_time() - start) / CHANGES * 1e6


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    folder = tempfile.mkdtemp()
    bounded, unbounded = _db(os.path.join(folder, "a.db")), _db(os.path.join(folder, "b.db"))
    a = b = 0
    for _ in range(KEEP // 3 + 100):  # beyond the events kept
        a, b = _change(bounded, a, KEEP), _change(unbounded, b, None)
    ratios = []
    for r in range(rounds):
        a, with_delete = _round(bounded, a, KEEP)
        b, without = _round(unbounded, b, None)
        ratios.append(with_delete / without)
        print(f"round {r}: bounded {with_delete:.1f} us, unbounded {without:.1f} us per "
              f"change, ratio {with_delete / without:.3f}", flush=True)
    kept = [db.execute("SELECT count(*) FROM study_events").fetchone()[0]
            for db in (bounded, unbounded)]
    print(f"median ratio {statistics.median(ratios):.3f}; events kept {kept[0]} vs {kept[1]}")


if __name__ == "__main__":
    main()
