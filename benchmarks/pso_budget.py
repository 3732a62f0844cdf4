#!/usr/bin/env python3
"""pso at short budgets: the automatic swarm against SPSO-2011's fixed 40 (the old default),
median and worst over seeds 1-10 of f - f*.

Usage: python benchmarks/pso_budget.py (about 10 s)
"""
import statistics, sys
sys.path.insert(0, "benchmarks")
import decido
from engines_suite import SUITE
for name in ("sphere_shifted", "rastrigin_shifted", "ackley_shifted", "rosenbrock", "griewank_shifted", "ellipsoid_shifted", "alpine_shifted"):
    p = SUITE[name]
    for n, budget in ((2, 1000), (6, 3000), (10, 5000)):
        row = []
        for swarm in (40, 0):
            v = [decido.minimize(p.expression, p.bounds(n), engine="pso", max_evaluations=budget, seed=s,
                                 options={"swarm_size": swarm}).fun for s in range(1, 11)]
            row.append(f"{statistics.median(v):9.2e} {max(v):9.2e}")
        print(f"{name:18s} d={n:2d} {budget:5d}  40: {row[0]}   auto: {row[1]}")
