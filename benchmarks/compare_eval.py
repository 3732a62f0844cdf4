#!/usr/bin/env python3
"""Compare decido's evaluation speed with NumPy, numexpr and hand-written C.

One script, one run.  It compiles ``reference/objectives.c`` twice with the
system C compiler (``-O2``: the reference; ``-O3 -ffast-math -march=native``:
the limit), loads both with ctypes, and measures the CPU time per point (one
row of length n) of every implementation of the six objectives in
``benchmarks/problems.py``, for n in {10, 100, 1000} and populations of P in
{1, 64} points:

* decido: ``Expression.evaluate`` for P = 1, ``Expression.evaluate_many`` for P = 64
  (both include the Python call; the C reference does not);
* NumPy: the objective vectorized over the (P, n) array;
* numexpr: the reductions in ``numexpr.evaluate(..., axis=1)`` with one thread, the
  O(P) scalar remainder in NumPy;
* C -O2 and C -O3 -ffast-math -march=native: plain scalar loops, timed inside C.

Timing: process CPU time; every sample repeats the call enough times to take
about 20 ms; samples are taken in interleaved rounds (each round takes one
sample of every implementation, in a rotating order) and the median of the
samples is reported, with its ratio to the C -O2 median of the same run.

Usage::

    python benchmarks/compare_eval.py                 # full run (a few minutes at most)
    python benchmarks/compare_eval.py --quick         # under a minute
    python benchmarks/compare_eval.py --problems rastrigin,rosenbrock --dims 1000
    python benchmarks/compare_eval.py --markdown      # table for benchmarks/README.md
"""

from __future__ import annotations

import argparse
import ctypes
import itertools
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from benchmarks.problems import PROBLEMS, Problem, get

HERE = Path(__file__).resolve().parent
C_SOURCE = HERE / "reference" / "objectives.c"

DECIDO = "decido"
NUMPY = "NumPy"
NUMEXPR = "numexpr"
C_O2 = "C -O2"
C_FAST = "C -O3 fast-math"
LABELS = [DECIDO, NUMPY, NUMEXPR, C_O2, C_FAST]
C_VARIANTS = {
    C_O2: ["-O2"],
    C_FAST: ["-O3", "-ffast-math", "-march=native"],
}

DIMS = (10, 100, 1000)
POPULATIONS = (1, 64)
REL_TOL = 1e-9
# issue 31's goal: decido evaluate_many (P = 64) at most this times C -O3 fast-math, n >= 100
FAST_GOAL = 1.5
FAST_GOAL_DIMS = (100, 1000)

# (problem, n, P, maximum ratio of decido evaluate_many to C -O2)
FLOORS = [
    ("rastrigin", 1000, 64, 1.0),
    ("rosenbrock", 1000, 64, 2.0),
    ("rastrigin", 10, 64, 2.0),
]

clock_ns = time.process_time_ns


# --------------------------------------------------------------------------
# Implementations
# --------------------------------------------------------------------------


@dataclass
class Impl:
    """One implementation of one case, ready to time."""

    label: str
    run: Callable[[int], float]  # reps -> CPU nanoseconds for reps calls
    values: np.ndarray  # its values for the P points
    reps: int = 1
    samples: list[float] = field(default_factory=list)  # ns per point


def python_runner(fn: Callable, arg) -> Callable[[int], float]:
    def run(reps: int) -> float:
        loop = itertools.repeat(None, reps)
        t0 = clock_ns()
        for _ in loop:
            fn(arg)
        return float(clock_ns() - t0)

    return run


class CReference:
    """objectives.c built with one set of flags, loaded with ctypes."""

    def __init__(self, cc: str, flags: list[str], workdir: Path, tag: str) -> None:
        obj = workdir / f"objectives_{tag}.o"
        lib = workdir / f"objectives_{tag}.so"
        compile_cmd = [cc, "-std=c11", *flags, "-fPIC", "-c", str(C_SOURCE), "-o", str(obj)]
        # Link without -ffast-math so crtfastmath.o (which sets FTZ/DAZ for the
        # whole process) is not pulled into the shared object.
        link_cmd = [cc, "-shared", str(obj), "-o", str(lib), "-lm"]
        for cmd in (compile_cmd, link_cmd):
            subprocess.run(cmd, check=True)
        self.flags = " ".join(flags)
        self.lib = ctypes.CDLL(str(lib))
        dbl_p = ctypes.POINTER(ctypes.c_double)
        self.lib.ref_count.restype = ctypes.c_int
        self.lib.ref_name.restype = ctypes.c_char_p
        self.lib.ref_name.argtypes = [ctypes.c_int]
        self.lib.ref_eval_many.restype = ctypes.c_int
        self.lib.ref_eval_many.argtypes = [ctypes.c_int, dbl_p, ctypes.c_long, ctypes.c_long, dbl_p]
        self.lib.ref_time.restype = ctypes.c_double
        self.lib.ref_time.argtypes = [
            ctypes.c_int,
            dbl_p,
            ctypes.c_long,
            ctypes.c_long,
            ctypes.c_long,
            dbl_p,
        ]
        self.ids = {self.lib.ref_name(k).decode(): k for k in range(self.lib.ref_count())}

    def impl(self, label: str, problem: Problem, X: np.ndarray) -> Impl:
        ident = self.ids[problem.name]
        P, n = X.shape
        dbl_p = ctypes.POINTER(ctypes.c_double)
        xp = X.ctypes.data_as(dbl_p)
        out = np.empty(P)
        if self.lib.ref_eval_many(ident, xp, P, n, out.ctypes.data_as(dbl_p)) != 0:
            raise RuntimeError(f"objectives.c does not know {problem.name}")
        checksum = ctypes.c_double()
        ref_time = self.lib.ref_time

        def run(reps: int) -> float:
            return ref_time(ident, xp, P, n, reps, ctypes.byref(checksum))

        return Impl(label, run, out)


def decido_impl(decido, problem: Problem, X: np.ndarray) -> Impl:
    P, n = X.shape
    expr = decido.Expression(problem.expression, n=n)
    if P == 1:
        x = np.ascontiguousarray(X[0])
        values = np.array([expr.evaluate(x)], dtype=np.float64)
        return Impl(DECIDO, python_runner(expr.evaluate, x), values)
    values = np.asarray(expr.evaluate_many(X), dtype=np.float64)
    return Impl(DECIDO, python_runner(expr.evaluate_many, X), values)


def numpy_impl(problem: Problem, X: np.ndarray) -> Impl:
    fn = problem.numpy
    return Impl(NUMPY, python_runner(fn, X), np.asarray(fn(X), dtype=np.float64))


TWO_PI = repr(2 * np.pi)


def numexpr_functions(ne) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """numexpr versions: numexpr reductions must be the outermost operation, so
    each sum/prod over a row is one numexpr.evaluate(..., axis=1) and the O(P)
    scalar remainder is done in NumPy; slices are passed in as strided views."""

    def ev(text: str, **arrays: np.ndarray) -> np.ndarray:
        return ne.evaluate(text, local_dict=arrays)

    def rastrigin(X):
        s = ev(f"sum(X**2 - 10*cos({TWO_PI}*X), axis=1)", X=X)
        return 10 * X.shape[1] + s

    def ackley(X):
        n = X.shape[1]
        s2 = ev("sum(X**2, axis=1)", X=X)
        sc = ev(f"sum(cos({TWO_PI}*X), axis=1)", X=X)
        return -20 * np.exp(-0.2 * np.sqrt(s2 / n)) - np.exp(sc / n) + 20 + np.e

    def rosenbrock(X):
        return ev("sum(100*(B - A**2)**2 + (1 - A)**2, axis=1)", A=X[:, :-1], B=X[:, 1:])

    def griewank(X):
        i = np.arange(1, X.shape[1] + 1, dtype=np.float64)
        s = ev("sum(X**2, axis=1)", X=X)
        p = ev("prod(cos(X/sqrt(I)), axis=1)", X=X, I=i)
        return 1 + s / 4000 - p

    def schwefel(X):
        s = ev("sum(X*sin(sqrt(abs(X))), axis=1)", X=X)
        return 418.9828872724338 * X.shape[1] - s

    def styblinski_tang(X):
        return ev("sum(X**4 - 16*X**2 + 5*X, axis=1)", X=X) / 2

    return {
        "rastrigin": rastrigin,
        "ackley": ackley,
        "rosenbrock": rosenbrock,
        "griewank": griewank,
        "schwefel": schwefel,
        "styblinski_tang": styblinski_tang,
    }


# --------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------


def calibrate(impl: Impl, target_ns: float) -> None:
    """Pick reps so that one sample takes about target_ns of CPU time."""
    impl.run(1)  # warm-up (first-call allocations, caches)
    reps = 1
    while True:
        t = impl.run(reps)
        if t >= target_ns / 16 or reps >= 1 << 28:
            break
        reps *= 8 if t < target_ns / 256 else 4
    impl.reps = max(1, round(reps * target_ns / max(t, 1.0)))


def measure(impls: list[Impl], P: int, samples: int, target_ns: float) -> None:
    for impl in impls:
        calibrate(impl, target_ns)
    for k in range(samples):
        shift = k % len(impls)
        for impl in impls[shift:] + impls[:shift]:  # round-robin, rotating order
            impl.samples.append(impl.run(impl.reps) / (impl.reps * P))


def max_rel_diff(values: np.ndarray, ref: np.ndarray) -> float:
    values = np.asarray(values, dtype=np.float64).reshape(ref.shape)
    if not np.all(np.isfinite(values)):
        return float("inf")
    return float(np.max(np.abs(values - ref) / np.maximum(np.abs(ref), 1.0)))


@dataclass
class CaseResult:
    problem: str
    n: int
    P: int
    median: dict[str, float]  # label -> ns per point
    ratios: dict[str, float]  # label -> median over rounds of (sample / C -O2 sample)
    spread: dict[str, float]  # label -> IQR / median of the per-round ratios
    diff: dict[str, float]  # label -> max relative difference to C -O2
    missing: dict[str, str]  # label -> why there is no number
    vs_fast: float | None = None  # decido / C fast-math: median of the paired ratios

    def ratio(self, label: str) -> float | None:
        return self.ratios.get(label)


def run_case(problem, n, P, refs, decido, ne_funcs, samples, target_ns, seed) -> CaseResult:
    X = problem.population(n, P, seed=seed)
    missing: dict[str, str] = {}
    impls: list[Impl] = []
    if decido is None:
        missing[DECIDO] = "decido not importable"
    else:
        try:
            impls.append(decido_impl(decido, problem, X))
        except Exception as exc:  # noqa: BLE001 - report any failure as n/a
            missing[DECIDO] = f"{type(exc).__name__}: {exc}"
    impls.append(numpy_impl(problem, X))
    if ne_funcs is None:
        missing[NUMEXPR] = "numexpr not importable"
    else:
        fn = ne_funcs[problem.name]
        try:
            impls.append(Impl(NUMEXPR, python_runner(fn, X), np.asarray(fn(X), np.float64)))
        except Exception as exc:  # noqa: BLE001
            missing[NUMEXPR] = f"{type(exc).__name__}: {exc}"
    for label, ref in refs.items():
        impls.append(ref.impl(label, problem, X))

    measure(impls, P, samples, target_ns)

    ref = next(i for i in impls if i.label == C_O2)
    median, ratios, spread, diff = {}, {}, {}, {}
    for impl in impls:
        # Paired ratio: both samples of a round ran within ~0.1 s of each other,
        # so slow drifts of the machine's speed cancel.
        ratios[impl.label] = statistics.median(
            a / b for a, b in zip(impl.samples, ref.samples, strict=True)
        )
        median[impl.label] = statistics.median(impl.samples)
        q = statistics.quantiles(
            [a / b for a, b in zip(impl.samples, ref.samples, strict=True)], n=4
        )
        spread[impl.label] = (q[2] - q[0]) / ratios[impl.label]
        diff[impl.label] = max_rel_diff(impl.values, ref.values)
    by_label = {impl.label: impl for impl in impls}
    vs_fast = None
    if DECIDO in by_label and C_FAST in by_label:
        pairs = zip(by_label[DECIDO].samples, by_label[C_FAST].samples, strict=True)
        vs_fast = statistics.median(a / b for a, b in pairs)
    return CaseResult(problem.name, n, P, median, ratios, spread, diff, missing, vs_fast)


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------


def fmt_ns(v: float) -> str:
    if v < 10:
        return f"{v:.2f}"
    if v < 100:
        return f"{v:.1f}"
    return f"{v:,.0f}"


def cell(res: CaseResult, label: str) -> str:
    if label not in res.median:
        return "n/a"
    return f"{fmt_ns(res.median[label])} ({res.ratio(label):.2f}x)"


def _text_line(cells: list[str], widths: list[int]) -> str:
    """First column left-aligned, the others right-aligned."""
    first = cells[0].ljust(widths[0])
    rest = (c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
    return "  ".join([first, *rest])


def print_text_table(results: list[CaseResult], labels: list[str]) -> None:
    headers = ["problem", "n", "P", *labels]
    rows = [[r.problem, str(r.n), str(r.P), *(cell(r, lb) for lb in labels)] for r in results]
    widths = [max(len(h), *(len(row[k]) for row in rows)) for k, h in enumerate(headers)]
    print("ns per point, median of the samples (ratio to C -O2: median of the paired ratios)")
    print(_text_line(headers, widths))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(_text_line(row, widths))


def print_markdown_table(results: list[CaseResult], labels: list[str]) -> None:
    print("| problem | n | P | " + " | ".join(labels) + " |")
    print("|---|---:|---:|" + "---:|" * len(labels))
    for r in results:
        cells = " | ".join(cell(r, lb) for lb in labels)
        print(f"| {r.problem} | {r.n} | {r.P} | {cells} |")


def check_floors(results: list[CaseResult], markdown: bool) -> bool:
    by_key = {(r.problem, r.n, r.P): r for r in results}
    print()
    print("Floors (decido evaluate_many vs C -O2, same run):")
    all_met = True
    for name, n, P, limit in FLOORS:
        what = f"{name} n={n} P={P}: ratio <= {limit:.1f}x"
        res = by_key.get((name, n, P))
        ratio = res.ratio(DECIDO) if res is not None else None
        if ratio is None:
            status = "not measured"
            all_met = False
        else:
            met = ratio <= limit
            all_met &= met
            status = f"{ratio:.2f}x {'MET' if met else 'NOT MET'}"
        print(f"{'- ' if markdown else '  '}{what} -> {status}")
    return all_met


def check_fast_goal(results: list[CaseResult], markdown: bool) -> None:
    """decido against the C limit, paired per round (issue 31: <= FAST_GOAL x)."""
    cases = [r for r in results if r.P > 1 and r.n in FAST_GOAL_DIMS and r.vs_fast is not None]
    if not cases:
        return
    print()
    print(f"Goal (decido evaluate_many / C -O3 fast-math, same rounds, <= {FAST_GOAL}x):")
    for r in cases:
        met = "MET" if r.vs_fast <= FAST_GOAL else "NOT MET"
        print(f"{'- ' if markdown else '  '}{r.problem} n={r.n} P={r.P}: {r.vs_fast:.2f}x {met}")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cc_version(cc: str) -> str:
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, check=True)
        return out.stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown"


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def parse_list(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for v in values or []:
        out.extend(s for s in v.replace(",", " ").split() if s)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short samples (about 5 ms), 7 rounds")
    ap.add_argument(
        "--problems", nargs="+", help="problem names, comma- or space-separated (default: all)"
    )
    ap.add_argument("--dims", nargs="+", help="dimensions n (default: 10,100,1000)")
    ap.add_argument("--populations", nargs="+", help="population sizes P (default: 1,64)")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    ap.add_argument("--samples", type=int, help="rounds (samples per implementation, >= 7)")
    ap.add_argument("--sample-ms", type=float, help="CPU milliseconds per sample")
    ap.add_argument("--seed", type=int, default=12345, help="seed of the random points")
    args = ap.parse_args(argv)

    problems = [get(p) for p in parse_list(args.problems)] or list(PROBLEMS.values())
    dims = [int(d) for d in parse_list(args.dims)] or list(DIMS)
    pops = [int(p) for p in parse_list(args.populations)] or list(POPULATIONS)
    samples = max(7, args.samples or (7 if args.quick else 15))
    sample_ms = args.sample_ms or (5.0 if args.quick else 20.0)
    target_ns = sample_ms * 1e6

    try:
        import decido
    except Exception as exc:  # noqa: BLE001 - any import failure means "not available"
        decido = None
        decido_note = f"not importable ({type(exc).__name__}: {exc})"
    else:
        decido_note = getattr(decido, "__version__", "?")
    try:
        import numexpr as ne
    except ImportError:
        ne = None
        ne_funcs = None
        ne_note = "not installed"
    else:
        ne.set_num_threads(1)
        ne_funcs = numexpr_functions(ne)
        ne_note = f"{ne.__version__} (1 thread)"

    cc = os.environ.get("CC", "cc")
    started = time.perf_counter()
    results: list[CaseResult] = []
    with tempfile.TemporaryDirectory(prefix="decido-compare-") as tmp:
        try:
            refs = {
                label: CReference(cc, flags, Path(tmp), f"v{k}")
                for k, (label, flags) in enumerate(C_VARIANTS.items())
            }
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"error: cannot build {C_SOURCE} with {cc!r}: {exc}", file=sys.stderr)
            return 2
        for problem, n, P in itertools.product(problems, dims, pops):
            res = run_case(problem, n, P, refs, decido, ne_funcs, samples, target_ns, args.seed)
            results.append(res)
            print(
                f"  measured {problem.name:<16} n={n:<5} P={P:<3} "
                + " ".join(f"{lb}={fmt_ns(v)}" for lb, v in res.median.items()),
                file=sys.stderr,
                flush=True,
            )
    elapsed = time.perf_counter() - started

    env = (
        f"CPU: {cpu_model()}; {cc_version(cc)}; Python {platform.python_version()}; "
        f"NumPy {np.__version__}; numexpr {ne_note}; decido {decido_note}"
    )
    method = (
        f"process CPU time; {samples} interleaved rounds of ~{sample_ms:g} ms samples; "
        f"ns/point = median sample, ratio = median of the per-round ratios to C -O2; "
        f"decido P=1 is evaluate() (includes the Python call), P>1 is evaluate_many(); "
        f"C is timed inside C; wall time {elapsed:.0f} s"
    )
    print()
    if args.markdown:
        print(f"{env}  ")
        print(f"Method: {method}.  ")
        print(f"C flags: reference `{refs[C_O2].flags}`, limit `{refs[C_FAST].flags}`.")
        print()
        print_markdown_table(results, LABELS)
    else:
        print(env)
        print(f"Method: {method}")
        print(f"C flags: reference {refs[C_O2].flags!r}, limit {refs[C_FAST].flags!r}")
        print()
        print_text_table(results, LABELS)

    # Spread and agreement.
    print()
    print("Noise: largest IQR/median of the per-round ratios to C -O2 over all cases:")
    print(
        "  "
        + ", ".join(
            f"{lb} {max((r.spread[lb] for r in results if lb in r.spread), default=0) * 100:.1f}%"
            for lb in LABELS
            if lb != C_O2 and any(lb in r.spread for r in results)
        )
    )
    print("Agreement: largest |f - f_C-O2| / max(|f_C-O2|, 1) over all points:")
    print(
        "  "
        + ", ".join(
            f"{lb} {max((r.diff[lb] for r in results if lb in r.diff), default=0):.1e}"
            for lb in LABELS
            if lb != C_O2 and any(lb in r.diff for r in results)
        )
    )
    for r in results:
        for lb, d in r.diff.items():
            if d > REL_TOL:
                print(
                    f"WARNING: {lb} disagrees with C -O2 on {r.problem} n={r.n} P={r.P}: "
                    f"max relative difference {d:.2e} > {REL_TOL:g}"
                )
    notes = sorted({(lb, why) for r in results for lb, why in r.missing.items()})
    for lb, why in notes:
        print(f"note: {lb} n/a: {why}")

    check_floors(results, args.markdown)
    check_fast_goal(results, args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
