"""A run's request compiled: its objective (or each of its ``objectives``) and its
constraints, once the body is decoded (:func:`decido_service.schemas.decode_optimize`) and
the tier's caps have passed; a 422 naming each text that does not compile."""

from __future__ import annotations

from typing import Any

from msgspec import UnsetType

import decido
from decido.design import compile_constraints, design_problems
from decido.pareto import reference_problems
from decido_service.errors import field_error, validation_error
from decido_service.types import OptimizeRequest

__all__ = ["Compiled", "compile_objective", "constraint_faults"]

#: a request's compiled objective: one, or one per item of ``objectives``
Compiled = decido.Expression | list[decido.Expression]


def compile_objective(req: OptimizeRequest) -> Compiled:
    """The request's objective (or each of its ``objectives``) compiled for its dimensions;
    a 422 whose entries have the pointer ``/objective_expression`` (or
    ``/objectives/<k>/expression``) and the fault's ``position`` when one does not compile,
    or ``/reference_point/<k>`` when the compiled objectives prove that no point can be
    better than a given reference point (:func:`decido.pareto.reference_problems`).

    The cost grows with the expression's length and the dimensions (8 ms for a short
    objective over 174,000 dimensions on the development VM): call it after the cheap caps,
    off the event loop."""
    names = [v.name for v in req.variables] if req.variables is not None else None
    texts = [(f"objectives[{k}].expression", o.expression) for k, o in enumerate(
        req.objectives)] if not isinstance(req.objectives, UnsetType) else [
        ("objective_expression", req.objective_expression)]
    compiled: list[decido.Expression] = []
    faults: list[dict[str, Any]] = []
    for field, text in texts:
        assert isinstance(text, str)  # decode_optimize: exactly one of the two
        try:
            compiled.append(decido.Expression(text, n=None if names else req.dims,
                                              variables=names))
        except decido.ExpressionError as exc:
            faults.append(field_error(field, exc.code, exc.message, exc.position))
    if faults:
        raise validation_error(faults)
    objective: Compiled = compiled if req.several else compiled[0]
    if req.reference_point is not None and not isinstance(req.objectives, UnsetType):
        _, design = design_problems(req.bounds or None, variables=req.variables,
                                    integers=req.integers)
        assert design is not None  # decode_optimize checked the bounds or variables
        faults = [field_error(p.field, p.code, p.message, pointer=p.pointer)
                  for p in reference_problems(
                      [e._program for e in compiled], [o.name for o in req.objectives],
                      [o.goal or req.goal for o in req.objectives], design,
                      req.reference_point)]
        if faults:
            raise validation_error(faults)
    if req.constraints:
        faults = constraint_faults(req)
        if faults:
            raise validation_error(faults)
    return objective


def constraint_faults(req: OptimizeRequest) -> list[dict[str, Any]]:
    """The 422 entries (pointer ``/constraints/<k>``, ``position`` in its text) of every
    constraint that does not compile, is NaN at every point tried or reuses a name."""
    _, design = design_problems(req.bounds or None, variables=req.variables,
                                integers=req.integers)
    if design is None or not req.constraints:
        return []
    found: list[dict[str, Any]] = []
    for k, text in enumerate(req.constraints):
        try:
            compile_constraints([text], design)
        except decido.ConstraintError as exc:
            found.append(_constraint_entry(k, exc))
    if not found:
        try:
            compile_constraints(req.constraints, design)
        except decido.ConstraintError as exc:
            found.append(_constraint_entry(exc.index, exc))
    return found


def _constraint_entry(k: int, exc: decido.ConstraintError) -> dict[str, Any]:
    return field_error(f"constraints[{k}]", exc.code, exc.message, exc.position)
