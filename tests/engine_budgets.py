"""The budgets of the tests that run every engine: a test's own budget, at most the number of
evaluations the engine is built for (``decido.engines()[i]["typical_budget"]``, from
csrc/engine/engines.def).  A model-based engine (``bo``, ``tpe``) pays for every point it has
seen in each suggestion, so a run of tens of thousands would take minutes; an engine built
for any budget (``typical_budget`` None) gets the test's budget unchanged."""

from __future__ import annotations

import decido

#: engine id -> the evaluations it is built for (None: any budget)
TYPICAL = {e["id"]: e["typical_budget"] for e in decido.engines()}


def capped(engine: str, budget: int) -> int:
    """``budget``, at most ``engine``'s budget class."""
    typical = TYPICAL[engine]
    return budget if typical is None else min(budget, typical)


def small(engine: str) -> bool:
    """True for an engine built for a budget smaller than ``any``: bo, tpe."""
    return TYPICAL[engine] is not None
