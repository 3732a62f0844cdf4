"""What keeping the best archive costs (issue 43 item 6): runs of several objectives with a
baseline build (a directory holding an older ``decido`` package, put first on
``PYTHONPATH``) and with the installed build, side by side.

Each round runs every case once with each build, in a fresh process per build and round
(the builds in turn, their order alternating from round to round), so the shared machine's
load falls on both alike.  The table gives each build's median CPU time of a run (the
process's: other jobs' load counts less than in a wall time), the ratio of the medians and
the median of the per-round ratios, and the hypervolume of the returned
front at a fixed reference point (the same for both builds: the runs are the same, only the
front returned may differ) with how many rounds returned an earlier, better archive.

    python benchmarks/best_front_overhead.py --baseline /tmp/old_site --rounds 7
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

G = "(1 + 9 * sum(x[1:]) / (n - 1))"
DG = "sum((x[2:] - 0.5)**2)"
ZDT1 = ["x[0]", f"{G} * (1 - sqrt(x[0] / {G}))"]
DTLZ2 = [f"(1 + {DG}) * cos(x[0] * pi / 2) * cos(x[1] * pi / 2)",
         f"(1 + {DG}) * cos(x[0] * pi / 2) * sin(x[1] * pi / 2)",
         f"(1 + {DG}) * sin(x[0] * pi / 2)"]
BNH = ["4 * x[0]**2 + 4 * x[1]**2", "(x[0] - 5)**2 + (x[1] - 5)**2"]

# name: (objectives, bounds, evaluations, keywords, fixed reference point of the table)
CASES: dict[str, tuple[list[str], list[list[float]], int, dict[str, Any], list[float]]] = {
    "zdt1": (ZDT1, [[0, 1]] * 30, 20_000, {}, [1.1, 1.1]),
    "zdt1 ref": (ZDT1, [[0, 1]] * 30, 20_000, {"reference_point": [1.1, 1.1]}, [1.1, 1.1]),
    "zdt1 ref archive 20": (ZDT1, [[0, 1]] * 30, 20_000,
                            {"reference_point": [1.1, 1.1], "archive_size": 20}, [1.1, 1.1]),
    "dtlz2": (DTLZ2, [[0, 1]] * 12, 36_800, {}, [1.1, 1.1, 1.1]),
    "bnh": (BNH, [[0, 5], [0, 3]], 10_000,
            {"constraints": ["(x[0] - 5)**2 + x[1]**2 <= 25",
                             "(x[0] - 8)**2 + (x[1] + 3)**2 >= 7.7"]}, [140.0, 55.0]),
}


def child(seed: int) -> None:
    """One run of every case (after a warm-up run); JSON on stdout."""
    import decido

    out = {}
    decido.minimize(ZDT1, [[0, 1]] * 30, max_evaluations=2_000, seed=seed)
    for name, (objectives, bounds, budget, kw, ref) in CASES.items():
        t = time.process_time()
        r = decido.minimize(objectives, bounds, max_evaluations=budget, seed=seed, **kw)
        wall = time.process_time() - t
        front = [q["f"] for q in r.pareto if q["feasible"]]
        out[name] = {"wall": wall, "hv": decido.hypervolume(front, ref) if front else 0.0,
                     "kept": "the front is the archive held after" in r.message}
    print(json.dumps(out))


def run(baseline: str | None, seed: int) -> dict[str, dict[str, Any]]:
    env = dict(os.environ)
    if baseline:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [baseline, env.get("PYTHONPATH")]))
    got = subprocess.run([sys.executable, __file__, "--child", str(seed)], env=env, check=True,
                         capture_output=True, text=True)
    result: dict[str, dict[str, Any]] = json.loads(got.stdout)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", help="directory holding the older decido package")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        child(args.child)
        return
    if not args.baseline:
        ap.error("--baseline is required")
    before: list[dict[str, dict[str, Any]]] = []
    after: list[dict[str, dict[str, Any]]] = []
    for k in range(args.rounds):
        if k % 2:
            after.append(run(None, k))
            before.append(run(args.baseline, k))
        else:
            before.append(run(args.baseline, k))
            after.append(run(None, k))
    print("| case | baseline median CPU s | this build median CPU s | ratio of medians | "
          "median of ratios | hypervolume before → after (median) | rounds kept |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in CASES:
        b = [r[name]["wall"] for r in before]
        a = [r[name]["wall"] for r in after]
        ratios = [y / x for x, y in zip(b, a, strict=True)]
        hb = statistics.median(r[name]["hv"] for r in before)
        ha = statistics.median(r[name]["hv"] for r in after)
        kept = sum(r[name]["kept"] for r in after)
        print(f"| {name} | {statistics.median(b):.4f} | {statistics.median(a):.4f} | "
              f"{statistics.median(a) / statistics.median(b):.3f} | "
              f"{statistics.median(ratios):.3f} | {hb:.6f} → {ha:.6f} | "
              f"{kept}/{args.rounds} |")


if __name__ == "__main__":
    main()
