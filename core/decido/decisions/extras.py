"""The request members of judgments, groups and uncertainty: ``pairwise``,
``ahp_method``, ``decision_makers``, ``aggregation`` and ``uncertainty``, and the
weightings that use them (``ahp``, ``unknown``).

Read only when a request holds one of them (or names one of those weightings), so a
plain request pays one set test.  AHP and group weights do not depend on the options:
they are found here, before any option is read (``Decision.fixed_weights``), with the
answer's ``consistency`` and ``group`` members (``Decision.extra``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from decido.decisions.ahp import ahp, group_weights, pairwise_matrix, parse_members
from decido.decisions.decision import Decision
from decido.decisions.faults import Bad, Faults, Where, choice
from decido.decisions.uncertain import interval, parse_uncertainty
from decido.decisions.vocabulary import AGGREGATIONS, AHP_METHODS, AUTOMATIC_WEIGHTINGS

#: the members read here
EXTRA_FIELDS = frozenset({"pairwise", "ahp_method", "decision_makers", "aggregation",
                          "uncertainty"})
#: weightings that need this module even without those members
EXTRA_WEIGHTINGS = frozenset({"ahp", "unknown"})


def default_weighting(request: Mapping[str, Any]) -> str:
    """``ahp`` when the request gives pairwise judgments (its own or its decision
    makers'), else ``given``."""
    if request.get("pairwise") is not None:
        return "ahp"
    members = request.get("decision_makers")
    if isinstance(members, Sequence) and not isinstance(members, str):
        if any(isinstance(m, Mapping) and m.get("pairwise") is not None for m in members):
            return "ahp"
    return "given"


def parse_uncertain(plan: Decision, request: Mapping[str, Any], faults: Faults) -> None:
    """``uncertainty``; under it, ``explain`` and ``sensitivity`` are ignored."""
    value = request.get("uncertainty")
    if value is None:
        return
    plan.uncertainty = parse_uncertainty(value, faults)
    for name in ("explain", "sensitivity"):
        if getattr(plan, name):
            plan.warn("ignored_field", f"{name} is not used under uncertainty (the answer's "
                      "smaa member explains the ranking)", name)
            setattr(plan, name, False)


def weight_interval(plan: Decision, value: Mapping[str, Any], where: Where,
                    faults: Faults) -> tuple[float, float] | None:
    """A criterion's weight interval: with ``uncertainty`` only; under weighting
    ``unknown`` it bounds the weight's share (<= 1)."""
    if plan.uncertainty is None:
        faults.add(where, "invalid_request",
                   "a weight interval {low, high} needs the member uncertainty")
        return None
    return interval(value, where, faults, share=plan.weighting == "unknown")


def parse_extras(plan: Decision, request: Mapping[str, Any], faults: Faults) -> None:
    """After the criteria: the weightings that need uncertainty or refuse it, and the
    weights of pairwise judgments or of a group (every fault to ``faults``)."""
    get = request.get
    method = _choice(get("ahp_method"), AHP_METHODS, "ahp_method", faults)
    aggregation = _choice(get("aggregation"), AGGREGATIONS, "aggregation", faults)
    weighting = plan.weighting
    if weighting == "unknown" and plan.uncertainty is None:
        faults.add(("weighting",), "invalid_request",
                   "weighting 'unknown' samples the weights: it needs the member uncertainty")
    if weighting in AUTOMATIC_WEIGHTINGS and plan.uncertainty is not None:
        faults.add(("weighting",), "invalid_request",
                   f"weighting {weighting!r} reads exact values: under uncertainty use "
                   "given, equal, unknown or ahp")
    pairwise, members = get("pairwise"), get("decision_makers")
    if pairwise is not None and members is not None:
        faults.add(("pairwise",), "invalid_request", "give pairwise or decision_makers, not both")
        return
    if weighting == "ahp" and pairwise is None and members is None:
        faults.add(("pairwise",), "invalid_request",
                   "weighting 'ahp' needs pairwise (or the decision makers' pairwise)")
        return
    if pairwise is not None and weighting != "ahp":
        plan.warn("ignored_field", "pairwise is only used by weighting 'ahp'", "pairwise")
        return
    names = [c.attribute for c in plan.criteria]
    if not names:  # the criteria are faulty: nothing to size the judgments by
        return
    if weighting == "ahp" and len(names) < 2:
        faults.add(("criteria",), "invalid_request", "weighting 'ahp' needs two criteria or more")
        return
    if pairwise is not None:
        A = pairwise_matrix(pairwise, len(names), ("pairwise",), faults)
        if A is not None:
            judged = ahp(A, method, names)
            plan.fixed_weights = judged.weights.tolist()
            plan.extra = {"consistency": judged.consistency}
            _warn_inconsistent(plan, judged.consistency, "pairwise")
    elif members is not None:
        _group(plan, members, names, method, aggregation, faults)


def _group(plan: Decision, value: Any, names: list[str], method: str, aggregation: str,
           faults: Faults) -> None:
    if plan.weighting not in ("ahp", "given"):
        plan.warn("ignored_field", f"decision_makers are not used by weighting "
                  f"{plan.weighting!r}", "decision_makers")
        return
    members = parse_members(value, names, faults)
    if members is None:
        return
    judged = members[0].pairwise is not None
    if judged != (plan.weighting == "ahp"):
        faults.add(("weighting",), "invalid_request",
                   "the decision makers' pairwise judgments need weighting 'ahp'" if judged else
                   "weighting 'ahp' needs the decision makers' pairwise judgments")
        return
    if not judged and any(c.weight is not None or c.interval is not None
                          for c in plan.criteria):
        plan.warn("ignored_field", "the criteria's weights are replaced by the decision "
                  "makers'", "criteria")
    group = group_weights(members, aggregation, method, names)
    plan.fixed_weights = group.weights.tolist()
    plan.extra = {"group": group.answer}
    if group.consistency is not None:
        plan.extra["consistency"] = group.consistency
        _warn_inconsistent(plan, group.consistency, "decision_makers")
    for d, member in enumerate(group.answer["members"]):
        if member["consistency"] is not None:
            _warn_inconsistent(plan, member["consistency"], f"decision_makers[{d}].pairwise")


def _warn_inconsistent(plan: Decision, consistency: dict[str, Any], path: str) -> None:
    if not consistency["acceptable"]:
        plan.warn("inconsistent_judgments", f"the consistency ratio is "
                  f"{consistency['ratio']:.3f} (above 0.1); most inconsistent: "
                  f"{consistency['most_inconsistent']}", path)


def _choice(value: Any, choices: tuple[str, ...], name: str, faults: Faults) -> str:
    if value is None:
        return choices[0]
    try:
        return choice(value, choices, name)
    except Bad as bad:
        faults.add((name,), "invalid_request", bad.message)
        return choices[0]
