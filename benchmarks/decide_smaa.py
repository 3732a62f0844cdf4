"""Time of one SMAA-2 decision in process: 10,000 samples of 20 options x 6 criteria.

Run: ``.venv/bin/python benchmarks/decide_smaa.py [rounds]`` from the repository root.
Every value is uncertain (uniform, +-20 % around a random center), the weights are
``unknown`` (uniform on the simplex) and there is one constraint; for each method of a
C kernel and of NumPy it prints the median CPU time (``time.process_time``) of ``rounds``
interleaved rounds (default 7) and, as the reference measured in the same run, the time of
the same decision with fixed values and weights (one plain ``decido.decide``).
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any

import numpy as np

import decido

M, K, SAMPLES = 20, 6, 10_000


def body(method: str, uncertain: bool) -> dict[str, Any]:
    """The decision (seeded: the same every run)."""
    rng = np.random.default_rng(0)
    centers = rng.uniform(10, 100, size=(M, K))
    options = []
    for i in range(M):
        values = {f"c{j}": ({"low": 0.8 * x, "high": 1.2 * x} if uncertain else x)
                  for j, x in enumerate(centers[i].tolist())}
        options.append({"id": f"o{i}", "attributes": values})
    out: dict[str, Any] = {
        "options": options, "method": method, "constraints": ["c0 > 15"],
        "criteria": [{"attribute": f"c{j}", "goal": "minimize" if j % 2 else "maximize",
                      "weight": 1} for j in range(K)],
    }
    if uncertain:
        out["weighting"] = "unknown"
        for c in out["criteria"]:
            del c["weight"]
        out["uncertainty"] = {"samples": SAMPLES, "seed": 1}
    return out


def cpu(request: dict[str, Any]) -> float:
    t0 = time.process_time()
    decido.decide(request)
    return time.process_time() - t0


def main(argv: list[str]) -> None:
    rounds = int(argv[1]) if len(argv) > 1 else 7
    methods = argv[2].split(",") if len(argv) > 2 else ["topsis", "wsm", "vikor", "wpm",
                                                        "edas", "promethee2"]
    print(f"{SAMPLES} samples of {M} options x {K} criteria, median CPU of {rounds} rounds")
    print(f"{'method':12s} {'smaa ms':>9s} {'plain ms':>9s}")
    for method in methods:
        sampled, plain = body(method, True), body(method, False)
        decido.decide(sampled)  # warm up
        times: list[float] = []
        refs: list[float] = []
        for _ in range(rounds):
            times.append(cpu(sampled))
            refs.append(cpu(plain))
        print(f"{method:12s} {statistics.median(times) * 1e3:9.1f} "
              f"{statistics.median(refs) * 1e3:9.3f}", flush=True)


if __name__ == "__main__":
    main(sys.argv)
