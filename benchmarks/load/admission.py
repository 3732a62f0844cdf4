"""Instructions per admission on the store's admission path (SQLite), counted by callgrind.

    python benchmarks/load/admission.py [--batch 8] [--batches 600] [--rounds 1]
                                        [--tree DIR ...]

What a worker's group commit hands the store: batches of ``--batch`` logged ``/v1/decide``
requests of one key (its minute and month counters, the refused-budget gate, the key's
revocation checked, a decision-log entry each) through ``admit_many``, one transaction per
batch, in the store's write thread. Each ``--tree`` (a checkout whose ``service/`` goes
first on ``PYTHONPATH``; default this one) runs in a process under ``valgrind
--tool=callgrind`` twice, with a sixth of ``--batches`` and with ``--batches``: the
difference over the extra batches is the instructions per batch (start-up and imports
cancel out). Trees are measured in turn, ``--rounds`` times. Needs valgrind.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = """
import asyncio, sys, tempfile, time
from decido_service.store import (AdmissionRequest, CounterSpec, DecisionEntry, iso_utc,
                                  open_store, ordered_id)

async def main(batch: int, batches: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = await open_store(tmp + "/admission.db")
        # the store of a tree from before the split by concern had these on itself
        accounts = getattr(store, "accounts", store)
        admit_many = getattr(store, "admissions", store).admit_many
        key = (await accounts.create_key("sdk", "team"))[0]["id"]
        specs = [CounterSpec("decide.minute", key, "minute", 10**9, 1),
                 CounterSpec("decide.month", key, "month", 10**9, 1),
                 CounterSpec("decide.refused", key, "minute", 100, 0, gate=True)]
        for _ in range(batches):
            now = time.time()
            await admit_many([AdmissionRequest(specs, now, key, DecisionEntry(
                ordered_id("dec_", now), key, iso_utc(now), now, '{"best": "a"}', "{}", "{}"))
                for _ in range(batch)])
        await store.close()

asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
"""


def instructions(tree: Path, batch: int, batches: int) -> int:
    """The instructions of one child process (callgrind's total)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(tree / "service"), os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
             sys.executable, "-c", CHILD, str(batch), str(batches)],
            env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count from valgrind:\n{done.stderr}")
    return int(found.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=8, help="requests per batch")
    ap.add_argument("--batches", type=int, default=600)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--tree", type=Path, action="append",
                    help="a checkout to measure (repeat to compare); default: this one")
    args = ap.parse_args()
    trees = args.tree or [HERE.parents[1]]
    few = max(args.batches // 6, 1)
    print(f"instructions per batch of {args.batch} logged admissions "
          f"({args.batches} - {few} batches)")
    for _ in range(args.rounds):
        for tree in trees:
            extra = instructions(tree, args.batch, args.batches) - instructions(
                tree, args.batch, few)
            per_batch = extra / (args.batches - few)
            print(f"  {str(tree):40s} {per_batch:12,.0f} per batch "
                  f"{per_batch / args.batch:10,.0f} per admission")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
