"""JSON Schema (2020-12, OpenAPI 3.1) of the decision requests and answers, derived from
their types (:mod:`decido.decisions.types`).

A member's Python type gives its shape (``str``, ``int``, ``float``, ``bool``, ``None``,
``Literal``, ``list``, ``tuple``, ``dict``, unions, TypedDicts) and its ``Annotated``
:class:`~decido.decisions.rules.Rule` the keywords beside it (limits, choices, default,
description).  A type named in :data:`COMPONENTS` is referenced
(``#/components/schemas/<Name>``), any other is written in place; request types are
closed (``additionalProperties: false``).  The schema checks shapes, and that a decision
names its criteria unless its method is ``expression``; rules that need the values (an
attribute every option has, weights required by weighting ``given``, positivity, bounds)
are ``decide``'s alone.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from decido.decisions import types as t
from decido.decisions.rules import Rule
from decido.decisions.vocabulary import LIMITS

__all__ = ["COMPONENTS", "decision_schemas"]

REF = "#/components/schemas/"

#: the components, by name: the types a schema references rather than repeats
COMPONENTS: dict[str, Any] = {
    "DecideRequest": t.DecideRequest,
    "DecisionOption": t.DecisionOption,
    "DecisionCriterion": t.DecisionCriterion,
    "DecisionParams": t.DecisionParams,
    "BatchRequest": t.BatchRequest,
    "DecideResult": t.DecideResult,
    "DecisionSensitivity": t.DecisionSensitivity,
    "DecisionErrorDetail": t.DecisionErrorDetail,
    "DecisionItemError": t.DecisionItemError,
    "BatchResult": t.BatchResult,
    "DecisionMaker": t.DecisionMaker,
    "DecisionUncertainty": t.DecisionUncertainty,
    "DecisionInterval": t.DecisionInterval,
    "DecisionUncertainValue": t.DecisionUncertainValue,
    "DecisionConsistency": t.DecisionConsistency,
    "DecisionGroup": t.DecisionGroup,
    "DecisionSmaa": t.DecisionSmaa,
}
_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean",
                            type(None): "null"}
_NULL = {"type": "null"}
#: the keywords of a shape (no limit, no description)
_SHAPE = frozenset({"type", "items", "additionalProperties", "propertyNames"})


class _Writer:
    """Writes the schema of a type, limits read from ``limits``."""

    def __init__(self, limits: dict[str, int]) -> None:
        self.limits = limits
        self.refs = {id(kind): name for name, kind in COMPONENTS.items()}
        self.closed = {id(kind) for kind in t.REQUEST_TYPES}

    def of(self, kind: Any, top: bool = False) -> dict[str, Any]:
        """The schema of ``kind``; a component is referenced unless ``top``."""
        name = self.refs.get(id(kind))
        if name is not None and not top:
            return {"$ref": REF + name}
        origin, args = get_origin(kind), get_args(kind)
        if origin is Annotated:
            out = self.of(args[0])
            for rule in args[1:]:
                if isinstance(rule, Rule):
                    out.update(rule.keywords(self.limits))
                    if rule.enum is not None:  # the values say the type
                        out.pop("type", None)
            return out
        if kind in _SCALARS:
            return {"type": _SCALARS[kind]}
        if kind is Any:
            return {}
        if origin is Union or origin is types.UnionType:
            return _union([self.of(a) for a in args])
        if origin is Literal:
            return {"const": args[0]} if len(args) == 1 else {"enum": list(args)}
        if origin is list:
            return {"type": "array", "items": self.of(args[0])}
        if origin is tuple:
            return {"type": "array", "items": self.of(args[0]), "minItems": len(args),
                    "maxItems": len(args)}
        if origin is dict:
            out = {"type": "object"}
            if args[1] is not Any:
                out["additionalProperties"] = self.of(args[1])
            names = self.of(args[0])
            names.pop("type")  # a member's name is a string
            if names:
                out["propertyNames"] = names
            return out
        if isinstance(kind, type) and hasattr(kind, "__required_keys__"):
            return self._object(kind)
        raise TypeError(f"no JSON Schema for {kind!r}")  # pragma: no cover - a new type

    def _object(self, kind: Any) -> dict[str, Any]:
        """A TypedDict: its members, those required, closed if a request's."""
        hints = get_type_hints(kind, include_extras=True)
        out: dict[str, Any] = {"type": "object"}
        required = [name for name in hints if name in kind.__required_keys__]
        if required:
            out["required"] = required
        out["properties"] = {name: self.of(hint) for name, hint in hints.items()}
        if id(kind) in self.closed:
            out["additionalProperties"] = False
        return out


def _union(members: list[dict[str, Any]]) -> dict[str, Any]:
    """One of ``members``: one enum of enums (null joining); one schema of several types
    when every member is a plain type but one, which may give its items or members but no
    limit (a limit on the union is the Rule around it); else ``anyOf``."""
    rest = [m for m in members if m != _NULL]
    null = len(rest) < len(members)
    if rest and all(set(m) == {"enum"} for m in rest):
        return {"enum": [v for m in rest for v in m["enum"]] + ([None] if null else [])}
    if all(isinstance(m.get("type"), str) and set(m) <= _SHAPE for m in rest) and sum(
            len(m) > 1 for m in rest) <= 1:
        out: dict[str, Any] = {}
        for m in rest:
            out.update(m)
        out["type"] = [m["type"] for m in members]
        return out
    return {"anyOf": members}


def decision_schemas() -> dict[str, dict[str, Any]]:
    """JSON Schema components of the decision API, by name: ``DecideRequest``,
    ``BatchRequest``, ``DecideResult``, ``BatchResult`` and the sub-schemas they
    reference (``DecisionOption``, ``DecisionCriterion``, ``DecisionParams``,
    ``DecisionItem``, ``DecisionSensitivity``, ``DecisionItemError``,
    ``DecisionErrorDetail``...).  References are ``#/components/schemas/<Name>``, as an
    OpenAPI 3.1 document holds them.  Limits are read from ``decido.DECISION_LIMITS``
    at the call."""
    writer = _Writer(LIMITS)
    out = {name: writer.of(kind, top=True) for name, kind in COMPONENTS.items()}
    request = out["DecideRequest"]
    # a batch item: a decision whose members may all come from the batch's defaults
    out["DecisionItem"] = {key: value for key, value in request.items() if key != "required"}
    request.update(t.DECIDE_REQUEST_CONDITIONS)
    return out
