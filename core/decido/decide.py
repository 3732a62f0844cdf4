"""Decisions: choose among a finite set of options under constraints.

The public face of the package :mod:`decido.decisions`: ``decide(request)`` takes the JSON
body of ``POST /v1/decide`` as a mapping and returns the JSON-ready response;
``decide_batch`` does the same for ``POST /v1/batch``; ``decision_methods()`` lists the
method table and ``decision_schemas()`` gives the JSON Schema derived from the request and
result types (:mod:`decido.decisions.types`).  See ``docs/decisions.md``.
"""

from __future__ import annotations

from decido.decisions.faults import DecisionError
from decido.decisions.methods import RANK_TOLERANCE
from decido.decisions.pipeline import decide, decide_batch
from decido.decisions.schema import decision_schemas
from decido.decisions.vocabulary import LIMITS, decision_methods

__all__ = [
    "LIMITS", "RANK_TOLERANCE", "DecisionError", "decide", "decide_batch", "decision_methods",
    "decision_schemas",
]
