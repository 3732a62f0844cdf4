"""Parameters of a request read into their Struct (:mod:`decido_service.types.params`), and
the OpenAPI ``parameters`` written from the same Structs.

Each field is converted on its own (``msgspec.convert``, text to its type), so a refused
value is named by its parameter without reading msgspec's message for a path: 400
``invalid_parameter``, ``"<name>: <what was expected>"``. Parameters a Struct does not
know are ignored; a query parameter given twice counts once (its first value). An object
parameter (``Params.deep``) is read from ``name[member]=value`` pairs, each member
converted on its own (a refused one is named ``name[member]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec
import orjson

from decido_service.http.admission import read, refusals
from decido_service.http.context import ApiRequest
from decido_service.http.problems import ApiError
from decido_service.limits import Surface
from decido_service.store import KeyRecord
from decido_service.types.params import Params

__all__ = ["headers", "json_body", "json_bytes", "openapi_parameters", "parse", "query",
           "read_query"]

P = TypeVar("P", bound=Params)


def parse(kind: type[P], values: Mapping[str, str]) -> P:
    """``kind`` from ``values`` (text by parameter name); 400 ``invalid_parameter``
    naming the first parameter whose value does not convert."""
    found: dict[str, Any] = {}
    for field in msgspec.structs.fields(kind):
        name = field.encode_name
        if name in kind.deep:
            members = _deep(name, values)
            if members:
                found[field.name] = {member: _converted(f"{name}[{member}]", {member: text},
                                                        field.type)[member]
                                     for member, text in members.items()}
            continue
        text = values.get(name)
        if text is not None:
            found[field.name] = _converted(name, text, field.type)
    return kind(**found)


def _converted(name: str, value: Any, kind: Any) -> Any:
    """``value`` converted to ``kind``; 400 ``invalid_parameter`` naming ``name``."""
    try:
        return msgspec.convert(value, kind, strict=False)
    except msgspec.ValidationError as exc:
        what = str(exc).split(" - at ", 1)[0]  # the place is the parameter's name
        raise ApiError("invalid_parameter", f"{name}: {what}") from None


def _deep(name: str, values: Mapping[str, str]) -> dict[str, str]:
    """The members of the object parameter ``name`` (``name[member]=value``); 400 for
    ``name`` given without a member."""
    if name in values:
        raise ApiError("invalid_parameter",
                       f"{name}: give each member as {name}[member]=value")
    start = name + "["
    return {param[len(start):-1]: text for param, text in values.items()
            if param.startswith(start) and param.endswith("]")}


def query(request: ApiRequest, kind: type[P]) -> P:
    """``kind`` from the request's query (``limit=`` with no value is a value: refused)."""
    args = request.get_args(keep_blank_values=True)
    return parse(kind, {name: values[0] for name, values in args.items()})


async def read_query(request: ApiRequest, surface: Surface, kind: type[P]) -> tuple[KeyRecord, P]:
    """A keyed read's key, checked under the read policy on ``surface`` (:func:`read`), and
    its query as ``kind``; a refused value is charged to the refused budget (:func:`refusals`)."""
    key = await read(request, surface)
    async with refusals(request, key, surface):
        return key, query(request, kind)


def headers(request: ApiRequest, kind: type[P]) -> P:
    """``kind`` from the request's header fields."""
    return parse(kind, request.headers)


def openapi_parameters(kind: type[Params]) -> list[dict[str, Any]]:
    """The OpenAPI parameter objects of ``kind``'s fields, in their order."""
    _, components = msgspec.json.schema_components([kind])
    schema = components[kind.__name__]
    required = set(schema.get("required", ()))
    out = []
    for name, prop in schema["properties"].items():
        branches = [b for b in prop.get("anyOf", [prop]) if b != {"type": "null"}]
        value = dict(branches[0]) if len(branches) == 1 else {"anyOf": branches}
        if prop.get("default") is not None:
            value["default"] = prop["default"]
        description = value.pop("description", "")
        parameter = {"name": name, "in": kind.location, "required": name in required,
                     "description": description, "schema": value}
        if name in kind.deep:
            parameter.update(style="deepObject", explode=True)
        out.append(parameter)
    return out


def json_bytes(request: ApiRequest, *, optional: bool = False) -> bytes:
    """The request's body after the media-type check (415 unless ``application/json`` or
    ``application/*+json``). ``optional``: an empty body passes with any or no type."""
    body: bytes = request.body
    if optional and not body:
        return body
    media = (request.headers.get("content-type") or "").split(";", 1)[0].strip().lower()
    if media != "application/json" and not (media.startswith("application/") and
                                             media.endswith("+json")):
        raise ApiError("unsupported_media_type",
                       f"send the body as application/json, not {media or 'no content type'}")
    return body


def json_body(request: ApiRequest, *, optional: bool = False) -> Any:
    """The request's JSON body; 415 for another media type, 400 for bytes that are not JSON.

    ``optional``: an empty body (with any or no content type) is ``None``."""
    body = json_bytes(request, optional=optional)
    if optional and not body:
        return None
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ApiError("malformed_json", f"the body is not valid JSON: {exc}") from None
