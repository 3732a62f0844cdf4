"""Shared helpers for the decision tests: generated problems and request builders."""

from __future__ import annotations

import numpy as np

import decido


def problem(seed: int, m: int = 7, k: int = 4, low: float = 1.0, high: float = 100.0):
    """A random m x k matrix of positive values, goals with at least one of each
    kind (when k > 1), and positive weights summing to 1."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(low, high, (m, k))
    benefit = rng.random(k) < 0.5
    if k > 1:
        benefit[0], benefit[1] = True, False
    w = rng.uniform(0.5, 3.0, k)
    return X, benefit, w / w.sum()


def names(k: int) -> list[str]:
    return [f"c{j}" for j in range(k)]


def request(X, benefit, w=None, method="wsm", **fields):
    """A decide() request over the rows of X (ids o0, o1, ...)."""
    X = np.asarray(X, dtype=float)
    cols = names(X.shape[1])
    criteria = []
    for j, name in enumerate(cols):
        c = {"attribute": name, "goal": "maximize" if benefit[j] else "minimize"}
        if w is not None:
            c["weight"] = float(w[j])
        criteria.append(c)
    req = {
        "options": [
            {"id": f"o{i}", "attributes": dict(zip(cols, row, strict=True))}
            for i, row in enumerate(X.tolist())
        ],
        "method": method,
        "criteria": criteria,
    }
    if w is None:
        req["weighting"] = "equal"
    req.update(fields)
    return req


def scores(result) -> np.ndarray:
    """Scores in option order o0, o1, ... (None -> NaN)."""
    by_id = {e["id"]: e["score"] for e in result["ranking"]}
    return np.array(
        [np.nan if by_id[f"o{i}"] is None else by_id[f"o{i}"] for i in range(len(by_id))],
        dtype=float,
    )


def ranks(result) -> dict:
    return {e["id"]: e["rank"] for e in result["ranking"]}


def run(X, benefit, w=None, method="wsm", **fields):
    return decido.decide(request(X, benefit, w, method, **fields))
