"""A digest of seeded runs of every engine, to check that a change of the C code that should
not change any result (a restructuring) does not: run it on the build before and after and
compare the digests (and, with a file argument, diff the JSON of every run).

    .venv/bin/python benchmarks/replay_digest.py [OUT.json]

Each run records x, fun, evaluations, iterations, status, message, gradients, the history,
feasibility and the largest violation, floats as their exact hex form. Cases: a coupled
4-D objective, Rastrigin in 3 and 10 dimensions, a 1-D objective, a constraint, integers, a
start point, a target; with stop_on_convergence off too (restarts); and a Python callable.
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

import numpy as np

import decido

CASES: list[tuple[str, str, list[list[float]], dict[str, Any]]] = [
    ("coupled", "sum(x**2) + 3*x[0]*x[1] + (x[0]-1)**4 + x[3]*sin(x[2])", [[-5, 5]] * 4, {}),
    ("rastrigin", "10*n + sum(x**2 - 10*cos(2*pi*x))", [[-5.12, 5.12]] * 3, {}),
    ("sphere1d", "(x[0]-1.3)**2 + 0.1*sin(5*x[0])", [[-4, 4]], {}),
    ("constraint", "(x[0]-2)**2 + (x[1]-1)**2", [[-5, 5]] * 2,
     {"constraints": ["x[0] + x[1] <= 1"]}),
    ("integers", "(x[0]-2.4)**2 + (x[1]+1.6)**2 + x[2]**2", [[-5, 5]] * 3, {"integers": [0, 1]}),
    ("x0", "(x[0]-0.5)**2 + abs(x[1])", [[-5, 5]] * 2, {"x0": [1.0, 1.0]}),
    ("rastrigin10", "10*n + sum(x**2 - 10*cos(2*pi*x))", [[-5.12, 5.12]] * 10,
     {"max_evaluations": 20000}),
    ("target", "x[0]**2 + x[1]**2", [[-5, 5]] * 2, {"target": 1e-3}),
]
_NEEDS = {"constraints": "constraints", "integers": "integers", "x0": "x0"}


def _record(r: decido.OptimizeResult) -> dict[str, Any]:
    return {"x": [float(v).hex() for v in r.x], "fun": float(r.fun).hex(),
            "evaluations": r.evaluations, "iterations": r.iterations, "status": r.status,
            "message": r.message, "gradients": r.gradients,
            "history": [(e, float(v).hex()) for e, v in r.history], "feasible": r.feasible,
            "max_violation": float(r.max_violation).hex()}


def runs() -> dict[str, Any]:
    """Every run's record, by engine/case/seed/stop_on_convergence."""
    out: dict[str, Any] = {}
    for engine in decido.engines():
        supports, max_dims = engine["supports"], engine["max_dims"]
        for name, expression, bounds, extra in CASES:
            if any(key in extra and not supports[flag] for key, flag in _NEEDS.items()):
                continue
            if max_dims is not None and len(bounds) > max_dims:
                continue
            for seed in (1, 12345):
                for stop in (None, False) if name in ("coupled", "sphere1d") else (None,):
                    kwargs = dict(extra)
                    budget = kwargs.pop("max_evaluations", 3000)
                    r = decido.minimize(expression, bounds, engine=engine["id"], seed=seed,
                                        max_evaluations=budget, stop_on_convergence=stop,
                                        **kwargs)
                    out[f"{engine['id']}/{name}/{seed}/{stop}"] = _record(r)
        r = decido.minimize(lambda x: float(np.sum((np.asarray(x) - 0.3) ** 2)),
                            [[-2, 2]] * 2, engine=engine["id"], seed=7, max_evaluations=800)
        out[f"{engine['id']}/callable"] = _record(r)
    return out


def main() -> None:
    text = json.dumps(runs(), sort_keys=True, indent=1)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            f.write(text)
    print(len(json.loads(text)), "runs, sha256", hashlib.sha256(text.encode()).hexdigest())


if __name__ == "__main__":
    main()
