"""Request bodies -> the typed objects of :mod:`decido_service.types`, every fault listed.

(The media type and the parsing of a request's body are
:func:`decido_service.http.params.json_bytes` and ``json_body``.)
:func:`decode_optimize` and :func:`decode_key_request` decode with msgspec, which checks
structure, types, ranges and lengths in one pass; ``decode_optimize`` then checks what the
types cannot say with the library's own :func:`decido.optimize.problems` (bounds finite and
ordered, options within the engine's ranges, dimensions within the engine's ``max_dims``).
Neither compiles anything: :func:`decido_service.runs.objective.compile_objective` is a
separate step, run once the tier's caps have passed.

msgspec stops at the first fault. Only when it refuses a body, the body is validated again
against the JSON Schema generated from the same types (:func:`request_schema`, Draft
2020-12, every fault) and the semantic checks run on what can be read, so that one 422
lists every fault with its JSON pointer. A body the schema accepts and msgspec still refuses
is located by converting its members one by one down the type (:func:`_converted_fault`):
the place of a fault is never read out of msgspec's message.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from functools import lru_cache
from itertools import chain
from types import UnionType
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

import msgspec
import numpy as np
import orjson
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import ValidationError, best_match  # type: ignore[import-untyped]
from msgspec import UNSET

import decido
from decido.metadata import metadata_faults
from decido.objectives import objective_problems
from decido.optimize import Problem, problems
from decido.run_spec import front_problems, keyword_names, only_for_several
from decido_service.errors import ServiceError, field_error, validation_error
from decido_service.types import REQUEST_TYPES, KeyRequest, OptimizeRequest, with_extras
from decido_service.types.fields import NOT_BLANK

__all__ = [
    "batch_size",
    "decode_body",
    "decode_key_request",
    "decode_optimize",
    "engine_table",
    "request_schema",
]

T = TypeVar("T")
Path = tuple[str | int, ...]

_DECODERS: dict[type[Any], msgspec.json.Decoder[Any]] = {
    kind: msgspec.json.Decoder(kind) for kind in REQUEST_TYPES.values()}
_ANY = msgspec.json.Decoder()
_COMPONENTS = "#/components/schemas/{name}"
#: decoded bounds of at least this many pairs are read into an (n, 2) array in one pass
#: for the library's check (NumPy's fixed cost, ~10 µs, against ~0.3 µs a pair checked in
#: Python; 174,000 pairs: 24 ms against 85 ms)
_ARRAY_FROM = 32

#: JSON Schema keyword -> the ``code`` of its error entries
SCHEMA_CODES: dict[str, str] = {
    "type": "invalid_type", "required": "required", "additionalProperties": "unknown_field",
    "enum": "not_allowed", "const": "not_allowed", "minimum": "out_of_range",
    "maximum": "out_of_range", "exclusiveMinimum": "out_of_range",
    "exclusiveMaximum": "out_of_range", "minLength": "invalid_length",
    "maxLength": "invalid_length", "minItems": "invalid_length", "maxItems": "invalid_length",
    "items": "invalid_length", "pattern": "invalid_format",
}


@lru_cache(maxsize=1)
def engine_table() -> dict[str, dict[str, Any]]:
    """``{engine id: metadata}`` from :func:`decido.engines` (read once per process)."""
    return {e["id"]: e for e in decido.engines()}


# ---------------------------------------------------------------- decoding

def decode_key_request(body: bytes) -> KeyRequest:
    """A ``POST /v1/keys`` body (empty: no label); 400 or a 422 listing every fault."""
    return decode_body(KeyRequest, body) if body else KeyRequest()


def decode_optimize(body: bytes) -> OptimizeRequest:
    """A ``POST /v1/optimize`` body, checked in full but not compiled; 400 for bytes that
    are not JSON, else a 422 listing every fault (with its JSON pointer)."""
    req = decode_body(OptimizeRequest, body)
    found = _semantic(req)
    if found:
        raise validation_error([_entry(p) for p in found])
    return req


def batch_size(body: Any) -> int:
    """The number of decisions in a ``POST /v1/batch`` body (0 when the envelope is not
    a list: :func:`decido.decide_batch` then names the fault)."""
    items = body.get("decisions") if isinstance(body, dict) else None
    return len(items) if isinstance(items, list) else 0


def decode_body(kind: type[T], body: bytes) -> T:
    """A body of one of the request types (:data:`~decido_service.types.REQUEST_TYPES`),
    checked for what its type says: the fast path (msgspec), then, for a body it refuses,
    the slow path (every fault): 400 or a 422 listing every fault."""
    try:
        value: T = _DECODERS[kind].decode(body)
    except msgspec.ValidationError:
        return _decode_slowly(kind, body)
    except msgspec.DecodeError as exc:
        raise ServiceError("malformed_json", f"the body is not valid JSON: {exc}") from None
    return value


def _semantic(req: Any) -> list[Problem]:
    """The library's checks of what the types cannot say (``req``: an
    :class:`OptimizeRequest`, or a raw body's dict on the slow path)."""
    if isinstance(req, dict):
        get, bounds = req.get, req.get("bounds")
    else:
        get = lambda name, default=None: getattr(req, name)  # noqa: E731
        bounds = None if not req.bounds else req.bounds if req.dims < _ARRAY_FROM else \
            np.fromiter(chain.from_iterable(req.bounds), np.float64, 2 * req.dims
                        ).reshape(req.dims, 2)
    keywords = {name: get(name) for name in keyword_names(several=False, wire=True)}
    seed = keywords["seed"]
    if isinstance(seed, float) and seed.is_integer():  # JSON Schema's integers admit 7.0
        keywords["seed"] = int(seed)
    return _objective_problems(get) + problems(bounds, goal=get("goal", "minimize"),
                                               **keywords)


def _objective_problems(get: Callable[..., Any]) -> list[Problem]:
    """Exactly one of ``objective_expression`` and ``objectives``; the faults of the
    objectives (names against each other and the variables) and of the run's other
    arguments that the library finds for several objectives; the keywords only a run of
    several takes (:func:`decido.run_spec.only_for_several`) only with several."""
    def given(name: str) -> Any:
        value = get(name)
        return None if value is UNSET else value

    expression, objectives = given("objective_expression"), given("objectives")
    if expression is not None and objectives is not None:
        return [Problem(("objectives",), "invalid_argument",
                        "give objective_expression or objectives, not both")]
    if objectives is None:
        found = [] if expression is not None else [Problem(
            ("objective_expression",), "required",
            "objective_expression (or objectives) is required")]
        return found + [Problem((name,), "invalid_argument",
                                f"{name} applies to a run of several objectives (objectives), "
                                "not to objective_expression")
                        for name in only_for_several(given)]
    items = [{k: v for k, v in msgspec.to_builtins(o).items() if v is not None}
             if isinstance(o, (msgspec.Struct, dict)) else o for o in objectives] \
        if isinstance(objectives, list) else objectives
    variables, bounds = get("variables"), get("bounds")
    if isinstance(variables, list):
        names = [v.get("name") if isinstance(v, dict) else getattr(v, "name", None)
                 for v in variables]
    else:
        names = [f"x{j}" for j in range(len(bounds) if isinstance(bounds, list) else 0)]
    found, _ = objective_problems(items, get("goal", "minimize") or "minimize",
                                  [n for n in names if isinstance(n, str)])
    m = len(items) if isinstance(items, list) else 0
    return found + front_problems(m, given)


def _entry(problem: Problem) -> dict[str, Any]:
    return field_error(problem.field, problem.code, problem.message, pointer=problem.pointer)


# ---------------------------------------------------------------- the slow path: every fault

def request_schema(kind: type[Any]) -> dict[str, Any]:
    """The JSON Schema of a request type with its components under ``components``
    (the same text as in the OpenAPI document)."""
    (ref,), components = msgspec.json.schema_components([kind], ref_template=_COMPONENTS)
    return {**ref, "components": {"schemas": with_extras(components)}}


_VALIDATORS: dict[type[Any], Any] = {
    kind: Draft202012Validator(request_schema(kind)) for kind in REQUEST_TYPES.values()}


def _decode_slowly(kind: type[T], body: bytes) -> T:
    """A body msgspec refused: the schema's faults, then the semantic checks' on what the
    schema did not already fault, all in one 422. A body the schema finds valid (an integer
    written ``7.0``) is converted and accepted, so the service takes what the document
    says it takes."""
    try:
        raw = _ANY.decode(body)
    except msgspec.ValidationError:  # a number beyond float range, which msgspec refuses
        raise validation_error([_entry(p) for p in _out_of_range(body)]) from None
    except msgspec.DecodeError as exc:
        raise ServiceError("malformed_json", f"the body is not valid JSON: {exc}") from None
    found = list(_schema_faults(_VALIDATORS[kind], raw))
    if not found:
        try:
            value: T = msgspec.convert(raw, kind, strict=False)
            return value
        except msgspec.ValidationError:
            found.append(_converted_fault(raw, kind) or Problem((), "invalid_value", "invalid"))
    if kind is OptimizeRequest and isinstance(raw, dict):
        labels = [Problem(("metadata", *where), code, message)
                  for where, code, message in metadata_faults(raw.get("metadata"))]
        semantic = _semantic(raw) + labels
        # where the library says it better (the value sent, the near name, the labels'
        # rules in its words), its fault replaces the schema's; the library reads a null
        # as no labels, which the document (an object) refuses: the schema's fault then
        own = {p.path for p in semantic if p.path[:1] in _LIBRARY_FIRST}
        found = [p for p in found
                 if p.path not in own and not (labels and p.path[:1] == ("metadata",))]
        faulted = [p.path for p in found]
        found += [p for p in semantic if not _related(p.path, faulted)]
    raise validation_error([_entry(p) for p in found])


#: the members whose faults the library words better than the schema: an unknown engine
#: (the value sent, the near name: ``nelder-mead`` -> ``nelder_mead``) and the labels
_LIBRARY_FIRST = (("engine",), ("metadata",))


def _related(path: Path, faulted: list[Path]) -> bool:
    """True when ``path`` is at, above or below a place that already has a fault."""
    return any(path[:len(f)] == f or f[:len(path)] == path for f in faulted)


def _schema_faults(validator: Any, raw: Any) -> Iterator[Problem]:
    seen: set[Path] = set()
    for error in sorted(validator.iter_errors(raw), key=lambda e: [str(p) for p in e.path]):
        for problem in _schema_problems(error):
            if problem.path not in seen:
                seen.add(problem.path)
                yield problem


def _schema_problems(error: ValidationError) -> Iterator[Problem]:
    members = [name for branch in error.validator_value if isinstance(branch, dict)
               for name in branch.get("required", ())] if error.validator == "oneOf" else []
    if members and not error.context:  # several of the exclusive members (or no object)
        if not isinstance(error.instance, dict):
            return  # the type's fault names it
        yield Problem((*error.absolute_path, members[-1]), "invalid_argument",
                      f"give {' or '.join(members)}, not several")
        return
    if error.validator in ("anyOf", "oneOf") and error.context:
        # "must be null" says nothing about an optional member: name the other branch's fault
        error = best_match([e for e in error.context if e.validator_value != "null"]
                           or error.context)
    path: Path = tuple(error.absolute_path)
    keyword, value, instance = str(error.validator), error.validator_value, error.instance
    code = SCHEMA_CODES.get(keyword, "invalid_value")
    if keyword == "required" and isinstance(instance, dict):
        for name in value:
            if name not in instance:
                yield Problem((*path, name), code, f"{name} is required")
    elif keyword == "additionalProperties" and isinstance(instance, dict):
        known = list(error.schema.get("properties", {}))
        for name in instance:
            if name not in known:
                yield Problem((*path, name), code,
                              f"unknown field {name!r} (fields: {', '.join(known)})")
    else:
        yield Problem(path, code, _message(keyword, value))


def _message(keyword: str, value: Any) -> str:
    if keyword == "type":
        types = [value] if isinstance(value, str) else list(value)
        return "must be " + " or ".join(
            {"integer": "an integer", "object": "an object", "array": "an array",
             "null": "null"}.get(t, f"a {t}") for t in types)
    if keyword in ("enum", "const"):
        choices = value if keyword == "enum" else [value]
        return "must be one of " + ", ".join(orjson.dumps(c).decode() for c in choices)
    bound = orjson.dumps(value).decode() if not isinstance(value, bool) else ""
    return {
        "minimum": f"must be at least {bound}", "maximum": f"must be at most {bound}",
        "exclusiveMinimum": f"must be above {bound}",
        "exclusiveMaximum": f"must be below {bound}",
        "minLength": f"must have at least {bound} character{_s(value)}",
        "maxLength": f"must have at most {bound} character{_s(value)}",
        "minItems": f"must have at least {bound} item{_s(value)}",
        "maxItems": f"must have at most {bound} item{_s(value)}",
        "items": "has too many items",
        "pattern": "must hold something besides white space" if value == NOT_BLANK
        else f"must match {value}",
    }.get(keyword, f"is not valid ({keyword})")


def _s(count: Any) -> str:
    return "" if count == 1 else "s"


def _out_of_range(body: bytes) -> list[Problem]:
    """The places of the numbers beyond float range in ``body``: the standard library reads
    them as infinities, and a walk over what it read names each place."""
    found: list[Problem] = []

    def walk(value: Any, path: Path) -> None:
        if isinstance(value, float) and math.isinf(value):
            found.append(Problem(path, "out_of_range", "Number out of range"))
        elif isinstance(value, dict):
            for name, item in value.items():
                walk(item, (*path, name))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, (*path, index))

    walk(json.loads(body), ())
    return found or [Problem((), "out_of_range", "Number out of range")]


def _converted_fault(raw: Any, kind: Any, path: Path = ()) -> Problem | None:
    """The deepest place where ``raw`` does not convert to ``kind`` (``None``: it does):
    each member is converted on its own down the type (``msgspec.convert``), so the place
    is known without reading msgspec's message for it."""
    try:
        msgspec.convert(raw, kind, strict=False)
        return None
    except msgspec.ValidationError as exc:
        message = str(exc)  # at the top of this conversion: no place in it
    for key, item, item_kind in _members(raw, kind):
        found = _converted_fault(item, item_kind, (*path, key))
        if found is not None:
            return found
    return Problem(path, "out_of_range" if "range" in message else "invalid_value", message)


def _members(raw: Any, kind: Any) -> Iterator[tuple[str | int, Any, Any]]:
    """``(key, value, type)`` of each member of ``raw`` that ``kind`` types."""
    for option in _options(kind):
        origin, args = get_origin(option), get_args(option)
        if isinstance(option, type) and issubclass(option, msgspec.Struct):
            if isinstance(raw, dict):
                for field in msgspec.structs.fields(option):
                    if field.encode_name in raw:
                        yield field.encode_name, raw[field.encode_name], field.type
        elif origin is list and isinstance(raw, list):
            yield from ((i, item, args[0]) for i, item in enumerate(raw))
        elif origin is tuple and isinstance(raw, list):
            yield from ((i, item, t) for i, (item, t) in enumerate(zip(raw, args, strict=False)))
        elif origin is dict and isinstance(raw, dict):
            yield from ((k, v, args[1]) for k, v in raw.items())


def _options(kind: Any) -> list[Any]:
    """The types ``kind`` allows, their ``Annotated`` constraints taken off."""
    while get_origin(kind) is Annotated:
        kind = get_args(kind)[0]
    if get_origin(kind) in (Union, UnionType):
        return [option for arg in get_args(kind) for option in _options(arg)]
    return [kind]
