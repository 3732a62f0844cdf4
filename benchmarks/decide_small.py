"""Per-call cost of ``decido.decide``, and what the C kernels earn, side by side.

Run: ``.venv/bin/python benchmarks/decide_small.py [calls]`` from the repository root.
For instruction counts, ``benchmarks/decide_small.py --calls METHOD kernel|numpy N`` only
makes 20 + N calls on the 5 x 2 payload with METHOD; run it under ``valgrind
--tool=callgrind --callgrind-out-file=/dev/null`` for N = 50 and N = 550 and divide the
difference of the "Collected" totals by 500.

For each request (the service's load-test payload, TOPSIS over 5 options x 2 criteria;
every method at 5 options; a request with one constraint; then the kernel methods at
200 x 8 and 1,000 x 8), it warms up, then times ``calls`` calls (default 2,000; fewer
for the large requests) with ``time.perf_counter`` and prints microseconds per call,
best of 3 repeats.

The methods that run as C kernels (``decido.decisions._kernels``: topsis, wsm, moora, vikor, spotis)
are timed twice in the same run: as shipped, and with the method swapped for the plain
NumPy implementation below (the code the kernels replaced, kept here only to measure
them), with the ratio numpy / kernel.  Two columns each: ``loop`` calls ``decide``
back to back (code and data hot in the caches); ``between`` times each call after other
work (a walk over 4 MiB of Python objects and a JSON encoding) has pushed them out, as
a server's other requests do.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from typing import Any

import numpy as np

import decido

METHODS_MODULE = sys.modules["decido.decisions.methods"]
#: the method table (one row per method, decido.decisions.vocabulary)
TABLE = sys.modules["decido.decisions.vocabulary"].METHODS
Scored = METHODS_MODULE.Scored
#: other work between two timed calls: lists of ints totalling about 4 MiB
_OTHER = [list(range(1000)) for _ in range(128)]


# ---------------------------------------------------------------- plain NumPy references
def _safe(div: np.ndarray) -> np.ndarray:
    return div + (div == 0)


def _np_normalize(X: np.ndarray, benefit: np.ndarray, name: str) -> np.ndarray:
    cost = ~benefit
    if name == "minmax":
        lo, hi = X.min(axis=0), X.max(axis=0)
        R = X - lo
        np.subtract(hi, X, out=R, where=cost)
        span = hi - lo
        R /= _safe(span)
        R[:, span == 0] = 1.0
        return R
    if name == "vector":
        norm = np.sqrt(np.einsum("ij,ij->j", X, X))
        R = X / _safe(norm)
        np.subtract(1.0, R, out=R, where=cost)
        R[:, norm == 0] = 1.0
        return R
    return METHODS_MODULE.normalize(X, benefit, name)


def _np_wsm(X, benefit, w, p):
    R = _np_normalize(X, benefit, p["normalization"])
    C = R * w
    return Scored(C.sum(axis=1), {"normalized": R, "contribution": C})


def _np_topsis(X, benefit, w, p):
    R = _np_normalize(X, benefit, p["normalization"])
    V = R * w
    dp, dm = V - V.max(axis=0), V - V.min(axis=0)
    d_best = np.sqrt(np.einsum("ij,ij->i", dp, dp))
    d_worst = np.sqrt(np.einsum("ij,ij->i", dm, dm))
    denom = d_best + d_worst
    score = np.ones(X.shape[0])
    np.divide(d_worst, denom, out=score, where=denom > 0)
    return Scored(score, {"normalized": R, "weighted": V}, {"d_best": d_best, "d_worst": d_worst})


def _np_moora(X, benefit, w, p):
    R = X / _safe(np.sqrt(np.einsum("ij,ij->j", X, X)))
    C = R * np.where(benefit, w, -w)
    return Scored(C.sum(axis=1), {"normalized": R, "contribution": C})


def _spread(v: np.ndarray) -> np.ndarray:
    lo, hi = v.min(), v.max()
    flat = not hi - lo > METHODS_MODULE.RANK_TOLERANCE * max(abs(lo), abs(hi))
    return np.zeros_like(v) if flat else (v - lo) / (hi - lo)


def _np_vikor(X, benefit, w, p):
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = hi - lo
    T = w * np.abs(np.where(benefit, hi, lo) - X) / _safe(span)
    T[:, span == 0] = 0.0
    S, Rr = T.sum(axis=1), T.max(axis=1)
    Q = p["v"] * _spread(S) + (1.0 - p["v"]) * _spread(Rr)
    return Scored(Q, {"regret": T}, {"S": S, "R": Rr}, METHODS_MODULE._compromise(Q, S, Rr))


def _np_spotis(X, benefit, w, p):
    lo, hi = p["bounds"][:, 0], p["bounds"][:, 1]
    span = hi - lo
    D = np.abs(X - np.where(benefit, hi, lo)) / _safe(span)
    D[:, span == 0] = 0.0
    C = D * w
    return Scored(C.sum(axis=1), {"distance": D, "contribution": C})


NUMPY = {"topsis": _np_topsis, "wsm": _np_wsm, "moora": _np_moora, "vikor": _np_vikor,
         "spotis": _np_spotis}  # fmt: skip


# ---------------------------------------------------------------- requests
def _options(m: int, k: int) -> list[dict[str, Any]]:
    if k == 2:
        return [{"id": f"o{i}", "attributes": {"price": 10 + 3 * i, "quality": 5 + (i * 7) % 5}}
                for i in range(m)]  # fmt: skip
    rng = np.random.default_rng(4)
    X = rng.uniform(1.0, 100.0, (m, k))
    return [{"id": f"o{i}", "attributes": {f"c{j}": X[i, j] for j in range(k)}}
            for i in range(m)]  # fmt: skip


def _criteria(k: int) -> list[dict[str, Any]]:
    if k == 2:
        return [{"attribute": "price", "goal": "minimize", "weight": 2},
                {"attribute": "quality", "weight": 1}]  # fmt: skip
    return [{"attribute": f"c{j}", "goal": "minimize" if j % 3 == 0 else "maximize",
             "weight": j + 1} for j in range(k)]  # fmt: skip


DECIDE = {"options": _options(5, 2), "method": "topsis", "criteria": _criteria(2)}
METHODS = ("wsm", "wpm", "topsis", "vikor", "promethee2", "waspas", "copras", "moora", "edas",
           "aras", "spotis")  # fmt: skip


def cases() -> dict[str, tuple[dict[str, Any], int]]:
    """name -> (request, divisor of the number of calls)."""
    out = {"load-test payload (topsis)": (DECIDE, 1)}
    for method in METHODS:
        out[method] = ({**DECIDE, "method": method}, 1)
    out["expression"] = ({"options": DECIDE["options"], "expression": "quality / price"}, 1)
    out["topsis + 1 constraint"] = ({**DECIDE, "constraints": ["price < 20"]}, 1)
    for m, div in ((200, 10), (1000, 40)):
        for method in NUMPY:
            request = {"options": _options(m, 8), "method": method, "criteria": _criteria(8),
                       "top_k": 10}  # fmt: skip
            out[f"{method} {m} x 8"] = (request, div)
    return out


def _evict(turn: int) -> None:
    """Other work, as a server does between two decisions."""
    total = 0
    for block in _OTHER[turn % 2 :: 2]:
        total += sum(block)
    json.dumps({"turn": turn, "total": total, "pad": [turn] * 64})


def per_call(request: dict, calls: int, repeats: int = 3, between: bool = False) -> float:
    """Microseconds per ``decido.decide(request)``, best of ``repeats``; with
    ``between``, each call is timed alone after :func:`_evict`."""
    decide = decido.decide
    for _ in range(max(10, calls // 20)):
        decide(request)
    best = float("inf")
    for _ in range(repeats):
        if between:
            spent = 0.0
            for turn in range(calls):
                _evict(turn)
                t0 = time.perf_counter()
                decide(request)
                spent += time.perf_counter() - t0
        else:
            t0 = time.perf_counter()
            for _ in range(calls):
                decide(request)
            spent = time.perf_counter() - t0
        best = min(best, spent)
    return best / calls * 1e6


def calls_only(method: str, impl: str, n: int) -> None:
    """20 + n calls of ``decide`` on the 5 x 2 payload (for an instruction count)."""
    request = {**DECIDE, "method": method}
    if impl == "numpy":
        TABLE[method] = dataclasses.replace(TABLE[method], score=NUMPY[method])
    for _ in range(20 + n):
        decido.decide(request)


def main(argv: list[str]) -> None:
    if len(argv) > 1 and argv[1] == "--calls":
        calls_only(argv[2], argv[3], int(argv[4]))
        return
    calls = int(argv[1]) if len(argv) > 1 else 2_000
    print(f"{'request':28s} {'loop':>8s} {'numpy':>8s} {'ratio':>6s}   "
          f"{'between':>8s} {'numpy':>8s} {'ratio':>6s}   (us/call)")  # fmt: skip
    table = TABLE
    for name, (request, div) in cases().items():
        n = max(20, calls // div)
        method = request.get("method")
        row = []
        for between in (False, True):
            fast = per_call(request, n, between=between)
            if method in NUMPY:
                kernel = table[method]
                table[method] = dataclasses.replace(kernel, score=NUMPY[method])
                try:
                    slow = per_call(request, n, between=between)
                finally:
                    table[method] = kernel
                row.append(f"{fast:8.1f} {slow:8.1f} {slow / fast:6.2f}")
            else:
                row.append(f"{fast:8.1f} {'-':>8s} {'-':>6s}")
        print(f"{name:28s} {row[0]}   {row[1]}", flush=True)


if __name__ == "__main__":
    main(sys.argv)
