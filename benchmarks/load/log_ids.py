"""Decision-log inserts on the real SQLite schema: random ids beside time-ordered ids.

    python benchmarks/load/log_ids.py [--batches 2000] [--batch 10] [--rounds 3]

Each round writes ``--batches`` group-commit batches of ``--batch`` decision-log rows (the
load test's request and an answer and summary of its sizes) through
``store.admissions.admit_many``, once with ids of 96 random bits (as ids were) and once with
:func:`decido_service.store.ordered_id`, each into a new file; rounds interleave the two.
Reports the process CPU and wall time per row (medians of the rounds) and their ratio.
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import DECIDE  # noqa: E402

from decido_service.store import DecisionEntry, iso_utc, ordered_id  # noqa: E402
from decido_service.store.blocking import open_blocking  # noqa: E402

REQUEST = orjson.dumps(DECIDE).decode()
ANSWER = "a" * 560  # the load test's answer is about this long
SUMMARY = "s" * 330


def _random_id(prefix: str, epoch: float) -> str:
    return prefix + secrets.token_hex(12)


def _round(make_id: Callable[[str, float], str], batches: int, batch: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        db = open_blocking(str(Path(tmp) / "log.db"))
        keys = [f"key{i:02d}" for i in range(50)]
        wall, cpu = time.perf_counter(), time.process_time()
        for b in range(batches):
            now = time.time()
            rows = [DecisionEntry(make_id("dec_", now), keys[(b * batch + j) % 50],
                                  iso_utc(now), now, SUMMARY, REQUEST, ANSWER)
                    for j in range(batch)]
            db.admissions.admit_many([], rows)
        rows_written = batches * batch
        return ((time.process_time() - cpu) / rows_written * 1e6,
                (time.perf_counter() - wall) / rows_written * 1e6)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batches", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    found: dict[str, list[tuple[float, float]]] = {"random": [], "ordered": []}
    for _ in range(args.rounds):
        found["random"].append(_round(_random_id, args.batches, args.batch))
        found["ordered"].append(_round(ordered_id, args.batches, args.batch))
    cpu = {k: statistics.median(c for c, _ in v) for k, v in found.items()}
    wall = {k: statistics.median(w for _, w in v) for k, v in found.items()}
    print(f"{args.rounds} rounds of {args.batches} batches of {args.batch} rows")
    for k in found:
        print(f"{k:8} cpu {cpu[k]:6.1f} us/row  wall {wall[k]:6.1f} us/row")
    print(f"ordered / random: cpu {cpu['ordered'] / cpu['random']:.2f}, "
          f"wall {wall['ordered'] / wall['random']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
