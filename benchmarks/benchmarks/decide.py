"""asv benchmarks of decido.decide and decido.decide_batch.

A decision is timed end to end, as the service calls it: from the request
mapping (options as dicts of attributes) to the JSON-ready response, with
validation, one constraint evaluated by the VM, normalization, scoring, ranking
and output.  Requests are built once per process and cached (``setup`` only
looks them up), so the timed function is one ``decide`` call.

The issue's floor is a 1,000 x 8 TOPSIS decision in under 1 ms of CPU, so the
timer is CPU time of this process (``time.process_time``), not wall time: on a
shared machine wall time mostly measures the other tenants.
"""

from __future__ import annotations

import numpy as np

import decido

from .cpu import CpuTimer

K = 8
SEED = 4
_CACHE: dict[tuple, dict] = {}


#: the one constraint of most benchmarks (it holds for about 99 % of the options)
ONE = ("c0 < 99.5",)
#: three constraints that leave about half of the options infeasible, in several patterns
THREE = ("c0 < 80", "c1 + c2 > 60", "c3 <= c4 or c5 > 50")


def decision(m: int, method: str, k: int = K, seed: int = SEED,
             constraints: tuple[str, ...] = ONE) -> dict:
    """A request over m options x k criteria (every third criterion minimized)."""
    key = (m, method, k, seed, constraints)
    if key not in _CACHE:
        rng = np.random.default_rng(seed)
        names = [f"c{j}" for j in range(k)]
        X = rng.uniform(1.0, 100.0, (m, k))
        _CACHE[key] = {
            "options": [
                {"id": f"o{i}", "attributes": dict(zip(names, row, strict=True))}
                for i, row in enumerate(X.tolist())
            ],
            "method": method,
            "criteria": [
                {"attribute": n, "goal": "minimize" if j % 3 == 0 else "maximize", "weight": j + 1}
                for j, n in enumerate(names)
            ],
            "constraints": list(constraints),
            "top_k": 10,
        }
    return _CACHE[key]


class Decide(CpuTimer):
    """One decision, m options x 8 criteria, one constraint, top 10 returned."""

    params = (["wsm", "topsis"], [10, 1_000, 100_000])
    param_names = ["method", "options"]
    timeout = 120

    def setup(self, method, m):
        self.request = decision(m, method)

    def time_decide(self, method, m):
        decido.decide(self.request)


class DecideConstraints(CpuTimer):
    """WSM on m options x 8 criteria under three constraints (about half infeasible): the
    constraints' compilation and evaluation and the infeasible options' report."""

    params = ([200, 10_000],)
    param_names = ["options"]

    def setup(self, m):
        self.request = decision(m, "wsm", constraints=THREE)

    def time_decide(self, m):
        decido.decide(self.request)


class DecideMethods(CpuTimer):
    """Every method on 1,000 options x 8 criteria (promethee2: 200 options)."""

    params = (
        ["wpm", "vikor", "promethee2", "waspas", "copras", "moora", "edas", "aras", "spotis"],
    )
    param_names = ["method"]

    def setup(self, method):
        self.request = decision(200 if method == "promethee2" else 1_000, method)

    def time_decide(self, method):
        decido.decide(self.request)


class Sensitivity(CpuTimer):
    """The weight intervals of the top choice: wsm (solved exactly) and topsis (scanned
    and bisected) on 1,000 options x 8 criteria, one constraint."""

    params = (["wsm", "topsis"],)
    param_names = ["method"]
    timeout = 120

    def setup(self, method):
        self.request = {**decision(1_000, method), "sensitivity": True}

    def time_decide(self, method):
        decido.decide(self.request)


class Batch(CpuTimer):
    """decide_batch over 1,000 small decisions (10 options x 4 criteria each)."""

    timeout = 120

    def setup(self):
        self.request = {
            "defaults": {"method": "topsis"},
            "decisions": [{"id": s, **decision(10, "topsis", k=4, seed=s)} for s in range(1_000)],
        }

    def time_batch(self):
        decido.decide_batch(self.request)


class DecideSmaa(CpuTimer):
    """SMAA-2: 10,000 samples of 20 options x 6 criteria, every value uncertain (uniform
    +-20 %), weighting 'unknown', one constraint (benchmarks/decide_smaa.py builds the same
    request and prints it beside the plain decision's time)."""

    params = (["topsis", "wsm", "edas"],)
    param_names = ["method"]
    timeout = 120

    def setup(self, method):
        import sys  # noqa: PLC0415
        from pathlib import Path  # noqa: PLC0415

        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        import decide_smaa  # noqa: PLC0415

        self.request = decide_smaa.body(method, uncertain=True)

    def time_decide(self, method):
        decido.decide(self.request)
