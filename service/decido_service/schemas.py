"""Request bodies -> typed objects, with every fault as a field-level error.

:func:`json_body` enforces the media type (415) and parses with orjson (400
``malformed_json``). :func:`parse_optimize` checks a ``POST /v1/optimize`` body against the
engine metadata of :func:`decido.engines` and compiles the objective once, collecting every
error (``bounds[3]``, ``options.popsize``, ``objective_expression`` with its ``position``)
into one 422, so that nothing is counted or run for an invalid request. The library checks
the same things again when the run starts; it stays the final word.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import orjson
from sanic import Request

import decido
from decido_service.errors import ApiError, field_error, validation_error

__all__ = [
    "OPTIMIZE_FIELDS",
    "KeyRequest",
    "OptimizeRequest",
    "batch_size",
    "engine_table",
    "json_body",
    "parse_key_request",
    "parse_optimize",
]

OPTIMIZE_FIELDS = (
    "bounds", "objective_expression", "engine", "goal", "max_evaluations", "time_limit",
    "target", "seed", "options",
)
MAX_LABEL = 200
_SEED_END = 2**64


def json_body(request: Request, *, optional: bool = False) -> Any:
    """The request's JSON body; 415 for another media type, 400 for bytes that are not JSON.

    ``optional``: an empty body (with any or no content type) is ``None``."""
    body = request.body
    if optional and not body:
        return None
    media = (request.headers.get("content-type") or "").split(";", 1)[0].strip().lower()
    if media != "application/json" and not (media.startswith("application/") and
                                             media.endswith("+json")):
        raise ApiError("unsupported_media_type",
                       f"send the body as application/json, not {media or 'no content type'}")
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ApiError("malformed_json", f"the body is not valid JSON: {exc}") from None


@dataclass(frozen=True)
class KeyRequest:
    """``POST /v1/keys``: an optional label."""

    label: str | None = None


def parse_key_request(body: Any) -> KeyRequest:
    """Validate the (optional) body of ``POST /v1/keys``: ``{"label": str}``."""
    if body is None:
        return KeyRequest()
    if not isinstance(body, dict):
        raise validation_error([field_error("", "invalid_type", "the body must be an object")])
    errors = [field_error(k, "unknown_field", f"unknown field {k!r} (label)")
              for k in body if k != "label"]
    label = body.get("label")
    if label is not None and (not isinstance(label, str) or len(label) > MAX_LABEL):
        errors.append(field_error("label", "invalid_type",
                                  f"label must be a string of at most {MAX_LABEL} characters"))
    if errors:
        raise validation_error(errors)
    return KeyRequest(label)


@lru_cache(maxsize=1)
def engine_table() -> dict[str, dict[str, Any]]:
    """``{engine id: metadata}`` from :func:`decido.engines` (read once per process)."""
    return {e["id"]: e for e in decido.engines()}


@dataclass(frozen=True)
class OptimizeRequest:
    """A valid ``POST /v1/optimize`` body; ``objective`` is compiled for ``dims``."""

    bounds: list[list[float]]
    objective: decido.Expression
    engine: str
    goal: str = "minimize"
    max_evaluations: int | None = None
    time_limit: float | None = None
    target: float | None = None
    seed: int | None = None
    options: dict[str, float] = field(default_factory=dict)

    @property
    def dims(self) -> int:
        """Number of dimensions (= number of bounds)."""
        return len(self.bounds)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _bounds(value: Any, errors: list[dict[str, Any]]) -> list[list[float]] | None:
    if not isinstance(value, list) or not value:
        errors.append(field_error("bounds", "invalid_bounds",
                                  "bounds must be a non-empty list of [lower, upper] pairs"))
        return None
    out: list[list[float]] = []
    for j, pair in enumerate(value):
        if not (isinstance(pair, list) and len(pair) == 2 and all(map(_is_number, pair))):
            errors.append(field_error(f"bounds[{j}]", "invalid_bounds",
                                      "each bound is a pair of numbers [lower, upper]"))
        elif not all(math.isfinite(v) for v in pair) or not math.isfinite(pair[1] - pair[0]):
            errors.append(field_error(f"bounds[{j}]", "invalid_bounds",
                                      "bounds must be finite numbers"))
        elif pair[0] > pair[1]:
            errors.append(field_error(
                f"bounds[{j}]", "invalid_bounds",
                f"the lower bound {pair[0]} is above the upper bound {pair[1]}"))
        else:
            out.append([float(pair[0]), float(pair[1])])
    return out if len(out) == len(value) else None


def _options(engine: dict[str, Any], value: Any, errors: list[dict[str, Any]]) -> dict[str, float]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        errors.append(field_error("options", "invalid_option", "options must be an object"))
        return {}
    specs = {o["name"]: o for o in engine["options"]}
    out: dict[str, float] = {}
    for name, v in value.items():
        spec, where = specs.get(name), f"options.{name}"
        if spec is None:
            known = ", ".join(specs) or "none"
            errors.append(field_error(where, "invalid_option",
                                      f"unknown option for engine {engine['id']!r} ({known})"))
        elif not _is_number(v) or not spec["min"] <= v <= spec["max"] or (
                spec["integer"] and v != int(v)):
            kind = "an integer" if spec["integer"] else "a number"
            errors.append(field_error(where, "invalid_option",
                                      f"must be {kind} between {spec['min']} and {spec['max']}"))
        else:
            out[name] = float(v)
    return out


def _scalars(body: Mapping[str, Any], errors: list[dict[str, Any]]) -> dict[str, Any]:
    goal = body.get("goal", "minimize")
    if goal not in ("minimize", "maximize"):
        errors.append(field_error("goal", "invalid_argument", "goal is minimize or maximize"))
    checks = {
        "max_evaluations": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
                            "a positive integer"),
        "time_limit": (lambda v: _is_number(v) and math.isfinite(v) and v > 0,
                       "a positive number of seconds"),
        "target": (_is_number, "a number"),
        "seed": (lambda v: isinstance(v, int) and not isinstance(v, bool) and
                 0 <= v < _SEED_END, "an integer in [0, 2**64)"),
    }
    out: dict[str, Any] = {"goal": goal}
    for name, (ok, what) in checks.items():
        value = body.get(name)
        if value is not None and not ok(value):
            errors.append(field_error(name, "invalid_argument", f"{name} must be {what}"))
        out[name] = value
    return out


def _objective(text: Any, dims: int | None, errors: list[dict[str, Any]]) -> Any:
    if not isinstance(text, str):
        errors.append(field_error("objective_expression", "invalid_type",
                                  "objective_expression must be a string, e.g. \"sum(x**2)\""))
        return None
    if dims is None:
        return None
    try:
        return decido.Expression(text, n=dims)
    except decido.ExpressionError as exc:
        errors.append(field_error("objective_expression", exc.code, exc.message, exc.position))
        return None


def parse_optimize(body: Any) -> OptimizeRequest:
    """Validate a ``POST /v1/optimize`` body; raise a 422 listing every faulty field."""
    if not isinstance(body, dict):
        raise validation_error([field_error("", "invalid_type", "the body must be an object")])
    errors = [field_error(k, "unknown_field", f"unknown field {k!r}")
              for k in body if k not in OPTIMIZE_FIELDS]
    for name in ("bounds", "objective_expression"):
        if name not in body:
            errors.append(field_error(name, "required", f"{name} is required"))
    bounds = _bounds(body["bounds"], errors) if "bounds" in body else None
    engine_id = body.get("engine")
    engine_id = decido.default_engine() if engine_id is None else engine_id
    engine = engine_table().get(engine_id) if isinstance(engine_id, str) else None
    if engine is None:
        errors.append(field_error("engine", "unknown_engine",
                                  f"unknown engine; engines: {', '.join(engine_table())}"))
    elif bounds is not None and engine["max_dims"] is not None and len(bounds) > engine[
            "max_dims"]:
        errors.append(field_error("bounds", "invalid_argument",
                                  f"engine {engine_id!r} handles at most {engine['max_dims']} "
                                  f"dimensions, got {len(bounds)}"))
    options = _options(engine, body.get("options"), errors) if engine else {}
    scalars = _scalars(body, errors)
    objective = _objective(body.get("objective_expression"),
                           len(bounds) if bounds else None, errors)
    if errors:
        raise validation_error(errors)
    return OptimizeRequest(bounds=bounds, objective=objective, engine=engine_id,
                           options=options, **scalars)


def batch_size(body: Any) -> int:
    """The number of decisions in a ``POST /v1/batch`` body (0 when the envelope is not
    a list: :func:`decido.decide_batch` then names the fault)."""
    items = body.get("decisions") if isinstance(body, dict) else None
    return len(items) if isinstance(items, list) else 0
