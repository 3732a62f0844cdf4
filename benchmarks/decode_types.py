#!/usr/bin/env python3
"""Decode + validate request bodies: msgspec Structs vs pydantic v2 vs orjson + hand checks.

The choice of :mod:`decido_service.types` (msgspec) rests on this measurement. For a
``POST /v1/optimize`` body of d = 10 and d = 1000 dimensions (engine, options, seed and a
budget set) and a ``POST /v1/keys`` body, in the same process and run:

* ``hand``: orjson + the hand-written checks the service had before the types (the
  ``parse_optimize`` / ``parse_key_request`` of that version, without the compile; kept
  below as ``_hand_*`` for this comparison only);
* ``pydantic``: ``model_validate_json`` of pydantic v2 models equivalent to the Structs
  (``extra="forbid"``, ``strict=True``, the same constraints);
* ``msgspec``: ``msgspec.json.Decoder(OptimizeRequest).decode`` (structure, types, ranges,
  lengths, engine id);
* ``service``: what the service runs, :func:`decido_service.schemas.decode_optimize`
  (msgspec, then the library's :func:`decido.optimize.problems`: bounds, options within
  the engine's ranges). ``pydantic+checks`` is pydantic followed by the same checks.

Timing: wall time per call; each sample repeats the call enough times to take ~20 ms,
samples are taken in interleaved rounds (every implementation once per round), and the
median is reported with its ratio to ``hand``. A last line times a body with five faults
(the 422 path, which lists every fault against the JSON Schema).

Usage::

    python benchmarks/decode_types.py [--rounds 15] [--markdown]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable
from itertools import chain
from typing import Annotated, Any, Literal

import msgspec
import numpy as np
import orjson
import pydantic
from pydantic import BaseModel, ConfigDict, Field

import decido
from decido.optimize import SEED_END, problems
from decido_service.http.problems import ApiError
from decido_service.schemas import decode_key_request, decode_optimize
from decido_service.types import KeyRequest, OptimizeRequest

ENGINES = tuple(e["id"] for e in decido.engines())
TABLE = {e["id"]: e for e in decido.engines()}


# ---------------------------------------------------------------- pydantic equivalents

class PydanticOptimize(BaseModel):
    """OptimizeRequest as a pydantic v2 model (same fields and constraints)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    bounds: Annotated[list[tuple[float, float]], Field(min_length=1)]
    objective_expression: Annotated[str, Field(
        min_length=1, max_length=decido.DEFAULT_LIMITS["max_length"])]
    engine: Literal[ENGINES] = decido.default_engine()  # type: ignore[valid-type]
    goal: Literal["minimize", "maximize"] = "minimize"
    max_evaluations: Annotated[int, Field(ge=1)] | None = None
    time_limit: Annotated[float, Field(gt=0)] | None = None
    target: float | None = None
    seed: Annotated[int, Field(ge=0, lt=SEED_END)] | None = None
    options: dict[str, float] = {}


class PydanticKey(BaseModel):
    """KeyRequest as a pydantic v2 model."""

    model_config = ConfigDict(extra="forbid", strict=True)
    label: Annotated[str, Field(max_length=200)] = ""


# ---------------------------------------------------------------- the hand-written baseline

_FIELDS = ("bounds", "objective_expression", "engine", "goal", "max_evaluations",
           "time_limit", "target", "seed", "options")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _hand_bounds(value: Any, errors: list[str]) -> list[list[float]] | None:
    if not isinstance(value, list) or not value:
        errors.append("bounds")
        return None
    out: list[list[float]] = []
    for pair in value:
        if not (isinstance(pair, list) and len(pair) == 2 and all(map(_is_number, pair))):
            errors.append("bounds[j]")
        elif not all(math.isfinite(v) for v in pair) or not math.isfinite(pair[1] - pair[0]):
            errors.append("bounds[j]")
        elif pair[0] > pair[1]:
            errors.append("bounds[j]")
        else:
            out.append([float(pair[0]), float(pair[1])])
    return out if len(out) == len(value) else None


def _hand_optimize(body: bytes) -> dict[str, Any]:
    """The service's parse_optimize before the types, without the compile."""
    data = orjson.loads(body)
    if not isinstance(data, dict):
        raise ValueError("body")
    errors = [k for k in data if k not in _FIELDS]
    errors += [k for k in ("bounds", "objective_expression") if k not in data]
    bounds = _hand_bounds(data["bounds"], errors) if "bounds" in data else None
    engine = TABLE.get(data.get("engine") or decido.default_engine())
    if engine is None:
        errors.append("engine")
    elif bounds and engine["max_dims"] is not None and len(bounds) > engine["max_dims"]:
        errors.append("bounds")
    specs = {o["name"]: o for o in engine["options"]} if engine else {}
    options = data.get("options") or {}
    for name, v in options.items():
        spec = specs.get(name)
        if spec is None or not _is_number(v) or not spec["min"] <= v <= spec["max"] or (
                spec["integer"] and v != int(v)):
            errors.append(f"options.{name}")
    if data.get("goal", "minimize") not in ("minimize", "maximize"):
        errors.append("goal")
    checks = {
        "max_evaluations": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
        "time_limit": lambda v: _is_number(v) and math.isfinite(v) and v > 0,
        "target": _is_number,
        "seed": lambda v: isinstance(v, int) and not isinstance(v, bool) and
        0 <= v < SEED_END,
    }
    for name, ok in checks.items():
        value = data.get(name)
        if value is not None and not ok(value):
            errors.append(name)
    if not isinstance(data.get("objective_expression"), str):
        errors.append("objective_expression")
    if errors:
        raise ValueError(errors)
    return data


def _hand_key(body: bytes) -> dict[str, Any]:
    data = orjson.loads(body)
    if not isinstance(data, dict) or any(k != "label" for k in data):
        raise ValueError("body")
    label = data.get("label")
    if label is not None and (not isinstance(label, str) or len(label) > 200):
        raise ValueError("label")
    return data


# ---------------------------------------------------------------- the runs

def _optimize_body(dims: int) -> bytes:
    return orjson.dumps({
        "bounds": [[-5.12, 5.12]] * dims, "objective_expression": "sum(x**2)",
        "engine": "de", "goal": "minimize", "max_evaluations": 50_000, "seed": 12345,
        "options": {"popsize_factor": 10, "pbest_rate": 0.11},
    })


def _with_checks(decode: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    def run(body: bytes) -> Any:
        req = decode(body)
        n = len(req.bounds)  # as the service does for long bounds: an (n, 2) array
        bounds = req.bounds if n < 32 else np.fromiter(
            chain.from_iterable(req.bounds), np.float64, 2 * n).reshape(n, 2)
        found = problems(bounds, goal=req.goal, engine=req.engine,
                         max_evaluations=req.max_evaluations, time_limit=req.time_limit,
                         target=req.target, seed=req.seed, options=req.options)
        if found:
            raise ValueError(found)
        return req
    return run


def _sample(fn: Callable[[bytes], Any], body: bytes, budget: float = 0.02) -> float:
    """Seconds per call, over enough calls to take about ``budget`` seconds."""
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn(body)
        elapsed = time.perf_counter() - start
        if elapsed >= budget:
            return elapsed / n
        n *= 2


def _refused(body: bytes) -> None:
    try:
        decode_optimize(body)
    except ApiError:
        return
    raise AssertionError("the faulty body was accepted")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    opt_msgspec = msgspec.json.Decoder(OptimizeRequest).decode
    key_msgspec = msgspec.json.Decoder(KeyRequest).decode
    cases: dict[str, tuple[bytes, dict[str, Callable[[bytes], Any]]]] = {}
    for dims in (10, 1000):
        cases[f"optimize d={dims}"] = (_optimize_body(dims), {
            "hand": _hand_optimize,
            "pydantic": PydanticOptimize.model_validate_json,
            "msgspec": opt_msgspec,
            "pydantic+checks": _with_checks(PydanticOptimize.model_validate_json),
            "service": decode_optimize,
        })
    cases["keys"] = (orjson.dumps({"label": "acme production"}), {
        "hand": _hand_key, "pydantic": PydanticKey.model_validate_json,
        "msgspec": key_msgspec, "service": decode_key_request})
    faulty = orjson.dumps({"bounds": [[0, 1], [2, 1], "x"], "objective_expression": "",
                           "seed": -1, "colour": 1})
    cases["optimize, 5 faults (422)"] = (faulty, {"service": _refused})
    for body, fns in cases.values():  # every implementation accepts (or refuses) the body
        for fn in fns.values():
            fn(body)
    samples: dict[tuple[str, str], list[float]] = {
        (case, name): [] for case, (_, fns) in cases.items() for name in fns}
    for _ in range(args.rounds):
        for case, (body, fns) in cases.items():
            for name, fn in fns.items():
                samples[case, name].append(_sample(fn, body))
    names = ["hand", "pydantic", "msgspec", "pydantic+checks", "service"]
    print(f"msgspec {msgspec.__version__}, pydantic {pydantic.VERSION}, orjson "
          f"{orjson.__version__}; median of {args.rounds} rounds, µs per call "
          "(ratio to hand)")
    head = ["body", *names]
    rows = []
    for case, (body, fns) in cases.items():
        base = statistics.median(samples[case, "hand"]) if "hand" in fns else None
        row = [f"{case} ({len(body):,} B)"]
        for name in names:
            if name not in fns:
                row.append("")
                continue
            t = statistics.median(samples[case, name])
            row.append(f"{t * 1e6:.2f}" + (f" ({t / base:.2f}x)" if base else ""))
        rows.append(row)
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        for row in [head, *rows]:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
