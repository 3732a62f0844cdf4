"""Per-call cost of ``decido.decide`` on small requests (the service's load-test size).

Run: ``.venv/bin/python benchmarks/decide_small.py`` from the repository root.
Warms up 200 calls, then times 5,000 calls with ``time.perf_counter`` and
prints microseconds per call, best of 5 repeats: first the load-test payload
(TOPSIS over 5 options x 2 criteria), then every method at 5 options and a
request with one constraint.
"""

from __future__ import annotations

import sys
import time

import decido

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


def per_call(request: dict, calls: int = 5_000, repeats: int = 5, warmup: int = 200) -> float:
    """Microseconds per ``decido.decide(request)``, best of ``repeats``."""
    decide = decido.decide
    for _ in range(warmup):
        decide(request)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            decide(request)
        best = min(best, time.perf_counter() - t0)
    return best / calls * 1e6


def main(argv: list[str]) -> None:
    calls = int(argv[1]) if len(argv) > 1 else 5_000
    for name, request in cases().items():
        print(f"{name:28s} {per_call(request, calls):8.1f} us/call")


if __name__ == "__main__":
    main(sys.argv)
