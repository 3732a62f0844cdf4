#!/usr/bin/env python3
"""pso at short budgets: the automatic swarm size against SPSO-2011's fixed 40 (the old
default); the median and the worst over seeds 1-10 of f - f*.

Usage: python benchmarks/pso_budget.py (about 10 s)
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engines_suite import SUITE  # noqa: E402

import decido  # noqa: E402

PROBLEMS = ("sphere_shifted", "rastrigin_shifted", "ackley_shifted", "rosenbrock",
            "griewank_shifted", "ellipsoid_shifted", "alpine_shifted")
CASES = ((2, 1000), (6, 3000), (10, 5000))  # (dimensions, evaluations)


def errors(name: str, n: int, budget: int, swarm: int) -> list[float]:
    p = SUITE[name]
    return [decido.minimize(p.expression, p.bounds(n), engine="pso", max_evaluations=budget,
                            seed=s, options={"swarm_size": swarm}).fun for s in range(1, 11)]


def main() -> None:
    for name in PROBLEMS:
        for n, budget in CASES:
            cells = []
            for swarm in (40, 0):
                v = errors(name, n, budget, swarm)
                cells.append(f"{statistics.median(v):9.2e} {max(v):9.2e}")
            print(f"{name:18s} d={n:2d} {budget:5d}  40: {cells[0]}   auto: {cells[1]}")


if __name__ == "__main__":
    main()
