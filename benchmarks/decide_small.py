"""Per-call cost of ``decido.decide`` on small requests (the service's load-test size).

Run: ``.venv/bin/python benchmarks/decide_small.py`` from the repository root.
Warms up 200 calls, then times 5,000 calls with ``time.perf_counter`` and
prints microseconds per call, best of 5 repeats: first the load-test payload
(TOPSIS over 5 options x 2 criteria), then every method at 5 options and a
request with one constraint.

Two columns: ``loop`` calls ``decide`` back to back, with its code and data hot in the
caches; ``between`` times each call after other work (a walk over 4 MiB of Python
objects and a JSON encoding) has pushed them out, as a server's other requests do, which
is what a call costs in the service. Each is given for the direct path (``rank_values``,
no NumPy array) and, for the requests it takes, for the general path in the same run
(``decide.DIRECT_MAX_OPTIONS`` = 0) with their ratio.
"""

from __future__ import annotations

import json
import sys
import time

import decido

DECIDE_MODULE = sys.modules["decido.decide"]
#: other work between two timed calls: lists of ints totalling about 4 MiB
_OTHER = [list(range(1000)) for _ in range(128)]

OPTIONS = [
    {"id": f"o{i}", "attributes": {"price": 10 + 3 * i, "quality": 5 + (i * 7) % 5}}
    for i in range(5)
]
DECIDE = {
    "options": OPTIONS,
    "method": "topsis",
    "criteria": [
        {"attribute": "price", "goal": "minimize", "weight": 2},
        {"attribute": "quality", "weight": 1},
    ],
}
METHODS = (
    "wsm", "wpm", "topsis", "vikor", "promethee2", "waspas",
    "copras", "moora", "edas", "aras", "spotis",
)  # fmt: skip


def cases() -> dict[str, dict]:
    out = {"load-test payload (topsis)": DECIDE}
    for method in METHODS:
        out[method] = {**DECIDE, "method": method}
    out["expression"] = {
        "options": OPTIONS,
        "expression": "quality / price",
        "goal": "maximize",
    }
    out["topsis + 1 constraint"] = {**DECIDE, "constraints": ["price < 20"]}
    return out


def _evict(turn: int) -> None:
    """Other work, as a server does between two decisions."""
    total = 0
    for block in _OTHER[turn % 2::2]:
        total += sum(block)
    json.dumps({"turn": turn, "total": total, "pad": [turn] * 64})


def per_call(request: dict, calls: int = 5_000, repeats: int = 5, warmup: int = 200,
             between: bool = False) -> float:
    """Microseconds per ``decido.decide(request)``, best of ``repeats``; with
    ``between``, each call is timed alone after :func:`_evict`."""
    decide = decido.decide
    for _ in range(warmup):
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


def _direct_taken(request: dict) -> bool:
    kernel = DECIDE_MODULE._direct_kernel
    plan = sys.modules["decido._mcdm_request"].parse_plan(request)
    return not (plan.constraints or plan.expression) and kernel(
        plan, len(request["options"])) is not None


def main(argv: list[str]) -> None:
    calls = int(argv[1]) if len(argv) > 1 else 5_000
    print(f"{'request':28s} {'loop':>8s} {'general':>8s} {'ratio':>6s}   "
          f"{'between':>8s} {'general':>8s} {'ratio':>6s}   (us/call)")
    limit = DECIDE_MODULE.DIRECT_MAX_OPTIONS
    for name, request in cases().items():
        row = []
        for between in (False, True):
            fast = per_call(request, calls, between=between)
            if _direct_taken(request):
                DECIDE_MODULE.DIRECT_MAX_OPTIONS = 0
                try:
                    slow = per_call(request, calls, between=between)
                finally:
                    DECIDE_MODULE.DIRECT_MAX_OPTIONS = limit
                row.append(f"{fast:8.1f} {slow:8.1f} {slow / fast:6.2f}")
            else:
                row.append(f"{fast:8.1f} {'-':>8s} {'-':>6s}")
        print(f"{name:28s} {row[0]}   {row[1]}")


if __name__ == "__main__":
    main(sys.argv)
