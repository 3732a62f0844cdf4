#!/usr/bin/env python3
"""One point from Python: ``Expression.evaluate`` against a ctypes call of the same C function.

Rastrigin at n = 100 (``benchmarks/reference/objectives.c``, built with ``cc -O2`` and
with ``cc -O3 -ffast-math -march=native``, called through ``ref_eval_many`` for one row with
argtypes set, as a user would wrap a C objective) and decido's compiled expression, each
called in a Python loop on the same point.  Process CPU time, interleaved rounds (one
sample of each per round, ~20 ms each), median ns per call and the median of the
per-round ratios.  Issue 31: decido <= 1.0x.

    python benchmarks/call_overhead.py [--n 100] [--rounds 15]
"""

from __future__ import annotations

import argparse
import ctypes
import itertools
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import decido

HERE = Path(__file__).resolve().parent
RASTRIGIN = "10*n + sum(x**2 - 10*cos(2*pi*x))"


C_FLAGS = {"ctypes C -O2": ["-O2"], "ctypes C fast": ["-O3", "-ffast-math", "-march=native"]}


def c_rastrigin(workdir: Path, tag: str, flags: list[str]):
    obj, lib = workdir / f"{tag}.o", workdir / f"{tag}.so"
    subprocess.run(["cc", "-std=c11", *flags, "-fPIC", "-c",
                    str(HERE / "reference" / "objectives.c"), "-o", str(obj)], check=True)
    # linked without -ffast-math: no flush-to-zero for the whole process
    subprocess.run(["cc", "-shared", str(obj), "-o", str(lib), "-lm"], check=True)
    dll = ctypes.CDLL(str(lib))
    dll.ref_name.restype = ctypes.c_char_p
    ident = next(k for k in range(dll.ref_count()) if dll.ref_name(k) == b"rastrigin")
    dbl_p = ctypes.POINTER(ctypes.c_double)
    fn = dll.ref_eval_many
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_int, dbl_p, ctypes.c_long, ctypes.c_long, dbl_p]
    return fn, ident


def per_call(call, reps: int) -> float:
    loop = itertools.repeat(None, reps)
    t0 = time.process_time_ns()
    for _ in loop:
        call()
    return (time.process_time_ns() - t0) / reps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    x = np.random.default_rng(1).uniform(-5.12, 5.12, args.n)
    expr = decido.Expression(RASTRIGIN, n=args.n)
    dbl_p = ctypes.POINTER(ctypes.c_double)
    out = np.empty(1)
    xp, op = x.ctypes.data_as(dbl_p), out.ctypes.data_as(dbl_p)
    calls = {"decido evaluate": lambda: expr.evaluate(x)}
    with tempfile.TemporaryDirectory() as tmp:
        for k, (label, flags) in enumerate(C_FLAGS.items()):
            fn, ident = c_rastrigin(Path(tmp), f"v{k}", flags)
            calls[label] = lambda fn=fn, ident=ident: fn(ident, xp, 1, args.n, op)
            calls[label]()
            assert abs(out[0] - expr.evaluate(x)) <= 1e-9 * max(1.0, abs(out[0]))
        reps = max(1, int(20e6 / per_call(calls["decido evaluate"], 2000)))
        samples: dict[str, list[float]] = {label: [] for label in calls}
        order = list(calls.items())
        for k in range(args.rounds):
            shift = k % len(order)
            for label, call in order[shift:] + order[:shift]:
                samples[label].append(per_call(call, reps))
    mine = samples["decido evaluate"]
    for label, values in samples.items():
        line = f"{label:16} {statistics.median(values):8.0f} ns per call"
        if label != "decido evaluate":
            ratio = statistics.median(a / b for a, b in zip(mine, values, strict=True))
            line += f"   decido / this: {ratio:.2f}x (median of the per-round ratios)"
        print(line)
    print(f"n = {args.n}, {args.rounds} interleaved rounds; issue 31: decido <= 1.0x")


if __name__ == "__main__":
    main()
