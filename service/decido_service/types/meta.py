"""The service's health and its engines (`/v1/health`, `/v1/engines`)."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct

from decido_service.types.fields import EngineId

__all__ = ["Engine", "EngineOption", "Engines", "Health"]


class Health(Struct, forbid_unknown_fields=True):
    """Liveness and readiness."""

    status: Literal["ok", "unavailable"]
    version: str
    store: Literal["ok", "unavailable"]
    engines: Annotated[int, Meta(ge=0, description="number of engines")]


class EngineOption(Struct, forbid_unknown_fields=True):
    """One option of an engine, its default and its range."""

    name: str
    default: float
    min: float
    max: float
    integer: bool
    description: str


class Engine(Struct, forbid_unknown_fields=True):
    """An optimization engine."""

    id: EngineId
    name: str
    summary: str
    kind: str
    max_dims: Annotated[int | None, Meta(description="null: no limit of the engine's own")]
    typical_budget: Annotated[Annotated[int, Meta(ge=1)] | None, Meta(
        description="the number of evaluations the engine is built for (a model-based "
                    "engine's suggestions cost more with every point it has seen, so a run "
                    "far beyond it is slow); null: any budget")]
    options: list[EngineOption]
    supports: Annotated[dict[str, bool], Meta(
        description="what it takes besides a box: constraints, integers (integer and "
                    "discrete variables), x0 (start points), objectives (several objectives)")]


class Engines(Struct, forbid_unknown_fields=True):
    """Every engine; `default` is used when a request names none."""

    default: EngineId
    engines: list[Engine]
