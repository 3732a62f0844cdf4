#!/usr/bin/env python3
"""What a study costs per trial in process: ``study.ask()`` + ``study.tell()`` (the objective
excluded), for the engines of the registry on a 10-D sphere, one trial at a time.

Each engine runs ``--trials`` trials (default 10,000); the times of the asks and tells of
the last 1,000 trials (a study of about 9,000-10,000 completed trials) are pooled over
``--rounds`` interleaved rounds (one study of each engine per round) and reported as the
median and the 99th percentile in microseconds.  Then, for a study of two objectives
(``moea``) of the same size: ``study.pareto`` (front and hypervolume), and for the
single-objective ``cmaes`` study the replay of its state (``Study.from_dict(to_dict())``).
Process CPU time (``time.process_time``): the machine is shared, wall time is not the study's.

    python benchmarks/study_overhead.py [--trials 10000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import decido

ENGINES = ["cmaes", "de", "pso", "random", "nelder_mead", "dss", "moea"]
DIMS = 10


def one_study(engine: str, trials: int, seed: int) -> tuple[list[float], decido.Study]:
    several = engine == "moea"
    study = decido.Study(bounds=[(-5, 5)] * DIMS, engine=engine, seed=seed,
                         objectives=["a", "b"] if several else None)
    tail: list[float] = []
    for k in range(trials):
        t0 = time.process_time()
        (trial,) = study.ask()
        x = trial.x
        t1 = time.process_time()
        if several:
            values = [float(np.sum(x * x)), float(np.sum((x - 1) ** 2))]
        else:
            values = [float(np.sum((x - 0.3) ** 2))]
        t2 = time.process_time()
        study.tell(trial, values=values)
        t3 = time.process_time()
        if k >= trials - 1000:
            tail.append((t1 - t0) + (t3 - t2))
    return tail, study


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    samples: dict[str, list[float]] = {e: [] for e in ENGINES}
    pareto_s: list[float] = []
    replay_s: list[float] = []
    for r in range(args.rounds):
        for engine in ENGINES:
            tail, study = one_study(engine, args.trials, seed=r + 1)
            samples[engine] += tail
            if engine == "moea":
                t0 = time.process_time()
                front = study.pareto
                pareto_s.append(time.process_time() - t0)
                assert front.hypervolume > 0
            if engine == "cmaes":
                state = study.to_dict()
                t0 = time.process_time()
                decido.Study.from_dict(state)
                replay_s.append(time.process_time() - t0)
    print(f"ask + tell per trial at {args.trials - 1000}-{args.trials} trials, {DIMS}-D "
          f"({args.rounds} rounds x 1,000 trials):")
    print(f"{'engine':<12} {'median us':>10} {'p99 us':>10}")
    for engine in ENGINES:
        s = sorted(samples[engine])
        p99 = s[min(len(s) - 1, int(0.99 * len(s)))]
        print(f"{engine:<12} {statistics.median(s) * 1e6:>10.1f} {p99 * 1e6:>10.1f}")
    print(f"study.pareto (moea, {args.trials} trials): median "
          f"{statistics.median(pareto_s) * 1e3:.1f} ms")
    print(f"Study.from_dict (cmaes, {args.trials} trials replayed): median "
          f"{statistics.median(replay_s) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
