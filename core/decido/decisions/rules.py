"""What a member of a request or an answer holds besides its Python type: ``Rule``, read from
``Annotated[...]`` by :mod:`decido.decisions.schema` (the JSON Schema) and, for the member
names, by the validation.

A rule's limits may name a row of ``decido.DECISION_LIMITS`` (``Limit("max_criteria")``):
the schema reads the limit at each call, as the validation does.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

__all__ = ["Limit", "Rule", "members"]


@dataclass(frozen=True)
class Limit:
    """The value of ``decido.DECISION_LIMITS[name]`` when the schema is written."""

    name: str


#: JSON Schema keywords of the fields of :class:`Rule`
_KEYWORDS = {
    "enum": "enum", "minimum": "minimum", "maximum": "maximum",
    "exclusive_minimum": "exclusiveMinimum", "min_items": "minItems", "max_items": "maxItems",
    "min_length": "minLength", "max_length": "maxLength", "pattern": "pattern",
    "max_properties": "maxProperties", "default": "default", "description": "description",
}


@dataclass(frozen=True)
class Rule:
    """A member's limits, choices, default and description (None: not said)."""

    enum: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    min_items: int | None = None
    max_items: int | Limit | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    max_properties: int | None = None
    default: Any = None
    description: str | None = None

    def keywords(self, limits: dict[str, int]) -> dict[str, Any]:
        """The JSON Schema keywords this rule adds (limits resolved in ``limits``)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if isinstance(value, Limit):
                value = limits[value.name]
            elif isinstance(value, tuple):
                value = list(value)
            out[_KEYWORDS[f.name]] = value
        return out


def members(kind: Any) -> tuple[str, ...]:
    """The member names of a TypedDict, in their order (a base's first)."""
    return tuple(kind.__annotations__)
