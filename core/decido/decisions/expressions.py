"""Constraints and the ``expression`` method: compiled with the language of
``decido.Expression`` over the attributes they use, which the compiler itself finds
(each unknown name that some option has becomes a variable, and the text is compiled
again)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from decido.decisions.decision import Decision
from decido.decisions.faults import Faults, did_you_mean, expression_fault
from decido.decisions.methods import Scored
from decido.decisions.options import attribute_names, locate_attribute
from decido.errors import ExpressionError
from decido.expression import Expression

#: the language's named constants (csrc/expr/resolve.c): an attribute of that name
#: shadows the constant in the expressions that use the name
_CONSTANTS = ("pi", "e")

Array = NDArray[np.float64]


def compile_all(
    texts: list[tuple[tuple[Any, ...], str]], attrs: list[Mapping[str, Any]], faults: Faults
) -> tuple[list[Expression] | None, list[str], list[list[str]]]:
    """Compile the constraints and the expression over the attributes they use.

    Returns the programs (None after a fault), the variables they share (the
    attributes any of them uses, in order of first use) and, per text, the attributes
    it uses."""
    shadow = [name for name in _CONSTANTS if locate_attribute(attrs, name)]
    found: list[tuple[Expression, list[str]] | None] = [
        _names(text, where, attrs, shadow, faults) for where, text in texts
    ]
    uses = [f[1] if f is not None else [] for f in found]
    variables = list(dict.fromkeys(name for names in uses for name in names))
    if faults:
        return None, variables, uses
    programs = []
    for (_, text), f in zip(texts, found, strict=True):
        assert f is not None
        program, names = f
        if names != variables:  # compiled over its own names: again over all of them
            program = Expression(text, variables=variables)
        programs.append(program)
    return programs, variables, uses


def _names(
    text: str,
    where: tuple[Any, ...],
    attrs: list[Mapping[str, Any]],
    shadow: list[str],
    faults: Faults,
) -> tuple[Expression, list[str]] | None:
    """The program of ``text`` and the attributes it uses, as the compiler finds them:
    each name it reports unknown that some option has becomes a variable, and it
    compiles again.  An attribute named like a constant (``pi``, ``e``) shadows it
    where the text uses that name.  Faults go to ``faults`` (None)."""
    names = list(shadow)
    program: Expression | None = None
    while program is None:
        try:
            program = Expression(text, variables=names)
        except ExpressionError as exc:
            name = text[exc.position : exc.position + exc.length]
            if exc.code == "unknown_name" and name not in names and locate_attribute(attrs, name):
                names.append(name)
                continue
            if exc.code == "unknown_name":
                known = attribute_names(attrs, faults)
                if known is None:
                    return None
                faults.add(
                    where,
                    "invalid_expression",
                    f"unknown_name: unknown name {name!r}{did_you_mean(name, known)}",
                    exc.position,
                    exc,
                )
                return None
            expression_fault(faults, exc, where)
            return None
    if shadow:  # keep a shadowing attribute only where the text uses its name
        used = program.structure.used.tolist()
        kept = [n for n, u in zip(names, used, strict=True) if u or n not in shadow]
        if kept != names:
            names = kept
            program = Expression(text, variables=names)
    return program, names


def score_expression(program: Expression, Xv: Array, used: list[int], plan: Decision) -> Scored:
    """Scores of the feasible options; the explanation shows the attributes used."""
    score = program.evaluate_many(Xv)
    if np.isnan(score).any():
        plan.warn(
            "nan_score", "the expression is NaN for some options: they rank last", "expression"
        )
    return Scored(score, {"values": Xv[:, used]})
