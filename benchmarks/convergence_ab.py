#!/usr/bin/env python3
"""Two builds of decido side by side on the engine benchmarks, at equal budgets.

Made for changes to when engines stop (docs/optimization.md, "Convergence"): an engine that
stops earlier must not end worse.  The same ``compare_engines.py`` runs (the suite with no
peers, and with ``--bbob`` the COCO bbob suite through Python callables) are made once with
a baseline build -- a directory holding an older ``decido`` package, put first on
``PYTHONPATH`` -- and once with the installed build, in this one command; the table puts
each engine's median error and median evaluations used before and after next to each other.

A row counts as *worse* when the median error after is above the median error before and
above 1e-8 (both below 1e-8: solved, equal); BBOB counts the (function, instance) pairs
solved to 1e-8, 1e-2 and 1e0 per engine.

Usage::

    pip wheel --no-deps <old checkout> -w /tmp/w
    pip install --no-deps --target /tmp/old /tmp/w/*.whl
    python benchmarks/convergence_ab.py --baseline /tmp/old --dims 10,30 --seeds 1,2,3
    python benchmarks/convergence_ab.py --baseline /tmp/old --bbob
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
SOLVED = 1e-8
TARGETS = (1e-8, 1e-2, 1e0)


def run_build(baseline: str | None, extra: list[str]) -> list[dict]:
    """compare_engines.py's runs with one build (``baseline``: its package directory, or
    None for the installed build)."""
    env = dict(os.environ)
    if baseline:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [baseline, env.get("PYTHONPATH")]))
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
        path = fh.name
    try:
        cmd = [sys.executable, os.path.join(HERE, "compare_engines.py"), "--peers", "none",
               "--no-floors", "--save", path, *extra]
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        with open(path) as fh:
            return list(json.load(fh))
    finally:
        os.unlink(path)


def fmt(v: float) -> str:
    return "0" if v <= 0 else f"{v:.2e}"


def medians(runs: list[dict]) -> dict[tuple[str, str, int], tuple[float, float]]:
    """(solver, problem, d) -> (median error, median evaluations)."""
    groups: dict[tuple[str, str, int], list[dict]] = defaultdict(list)
    for r in runs:
        groups[r["solver"], r["problem"], r["d"]].append(r)
    return {k: (statistics.median(max(r["error"], 0.0) for r in rs),
                statistics.median(r["evaluations"] for r in rs)) for k, rs in groups.items()}


def suite_table(before: list[dict], after: list[dict]) -> str:
    b, a = medians(before), medians(after)
    solvers = sorted({k[0] for k in b})
    lines = ["| engine | rows | worse | better | median error before → after (worst row) "
             "| rows that stopped earlier | evaluations used, after / before (mean over rows) |",
             "|---|---:|---:|---:|---|---:|---:|"]
    detail = []
    for s in solvers:
        keys = sorted(k for k in b if k[0] == s and k in a)
        worse = [k for k in keys if a[k][0] > b[k][0] and a[k][0] > SOLVED]
        better = [k for k in keys if b[k][0] > a[k][0] and b[k][0] > SOLVED]
        ratio = statistics.mean(a[k][1] / b[k][1] for k in keys)
        earlier = sum(a[k][1] < b[k][1] for k in keys)
        worst = max(keys, key=lambda k: (a[k][0] - b[k][0]) / max(b[k][0], SOLVED))
        lines.append(f"| {s} | {len(keys)} | {len(worse)} | {len(better)} | {worst[1]} "
                     f"d={worst[2]}: {fmt(b[worst][0])} → {fmt(a[worst][0])} | {earlier} "
                     f"| {ratio:.2f} |")
        for k in worse:
            detail.append(f"| {s} | {k[1]} | {k[2]} | {fmt(b[k][0])} | {fmt(a[k][0])} | "
                          f"{b[k][1]:.0f} | {a[k][1]:.0f} |")
    if detail:
        lines += ["", "Rows worse after:", "", "| engine | problem | d | error before "
                  "| error after | evaluations before | after |",
                  "|---|---|---:|---:|---:|---:|---:|", *detail]
    return "\n".join(lines)


def bbob_table(before: list[dict], after: list[dict]) -> str:
    solvers = sorted({r["solver"] for r in before})
    lines = ["| engine | " + " | ".join(f"< {t:g} before → after" for t in TARGETS)
             + " | runs that stopped earlier | evaluations before → after (median) |",
             "|---|" + "---:|" * (len(TARGETS) + 2)]
    for s in solvers:
        rb = [r for r in before if r["solver"] == s]
        ra = [r for r in after if r["solver"] == s]
        cells = [f"{sum(r['error'] < t for r in rb)} → {sum(r['error'] < t for r in ra)}"
                 for t in TARGETS]
        used = {(r["problem"], r["seed"]): r["evaluations"] for r in rb}
        earlier = sum(r["evaluations"] < used[r["problem"], r["seed"]] for r in ra)
        evals = (f"{earlier}/{len(ra)} | "
                 f"{statistics.median(r['evaluations'] for r in rb):.0f} → "
                 f"{statistics.median(r['evaluations'] for r in ra):.0f}")
        lines.append(f"| {s} | " + " | ".join(cells) + f" | {evals} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", required=True, help="directory holding the older decido")
    ap.add_argument("--bbob", action="store_true", help="the COCO bbob comparison")
    ap.add_argument("--dims", help="suite dimensions (compare_engines.py's default otherwise)")
    ap.add_argument("--seeds", help="suite seeds")
    ap.add_argument("--problems", help="suite problems")
    ap.add_argument("--engines", help="decido engines (default: all)")
    args = ap.parse_args(argv)
    extra = ["--bbob"] if args.bbob else []
    for name in ("dims", "seeds", "problems", "engines"):
        if getattr(args, name):
            extra += [f"--{name}", getattr(args, name)]
    before = run_build(args.baseline, extra)
    after = run_build(None, extra)
    print("Command: `python benchmarks/convergence_ab.py " + " ".join(argv or sys.argv[1:]) + "`\n")
    print(bbob_table(before, after) if args.bbob else suite_table(before, after))
    return 0


if __name__ == "__main__":
    sys.exit(main())
