"""The method parameters: one row each (:data:`PARAMS`: kind, default and range), and the
readers of the parameters that hold one value per criterion, which a method's row names
(``Method.read_params``).  Faults go to a ``Faults`` (``decido.decisions.faults``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from decido.decisions.faults import Bad, Faults, Where, choice, did_you_mean, kind_of, number
from decido.decisions.methods import PREFERENCES


@dataclass(frozen=True)
class Param:
    """A method parameter: ``kind`` is ``"unit"`` (a number in [low, high]),
    ``"choice"`` (one of ``choices``), ``"per_criterion"`` (an object {attribute:
    number}, ``low`` the least value, ``open_low`` whether it is excluded) or
    ``"bounds"`` ({attribute: [low, high]})."""

    name: str
    kind: str
    description: str
    default: Any = None
    low: float = -math.inf
    high: float = math.inf
    open_low: bool = False
    choices: tuple[str, ...] = ()


PARAMS: dict[str, Param] = {
    p.name: p
    for p in (
        Param("v", "unit", "weight of the group utility S against the regret R", 0.5, 0.0, 1.0),
        Param("lambda", "unit", "share of WSM in the WASPAS score", 0.5, 0.0, 1.0),
        Param("preference", "choice", "the preference function", PREFERENCES[0],
              choices=PREFERENCES),
        Param("q", "per_criterion", "indifference threshold per criterion, in its units",
              low=0.0),
        Param("p", "per_criterion", "preference threshold per criterion, in its units",
              low=0.0, open_low=True),
        Param("bounds", "bounds", "[low, high] per criterion (default: the feasible "
              "options' min and max)"),
    )
}
#: per-criterion parameters (PROMETHEE II) each preference function needs
PREFERENCE_NEEDS = {
    "usual": (),
    "u_shape": ("q",),
    "v_shape": ("p",),
    "level": ("q", "p"),
    "linear": ("q", "p"),
}
#: the parameters that are one number between fixed bounds
UNIT_PARAMS = {p.name: p for p in PARAMS.values() if p.kind == "unit"}


def _per_criterion(value: Any, names: list[str], where: Where, faults: Faults) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        faults.add(
            where,
            "invalid_params",
            f"expected an object {{attribute: value}}, not {kind_of(value)}",
        )
        return {}
    for key in value:
        if key not in names:
            hint = did_you_mean(key, names) if isinstance(key, str) else ""
            faults.add((*where, str(key)), "invalid_params", f"{key!r} is not a criterion{hint}")
    return dict(value)


def preference_params(value: Mapping[str, Any], names: list[str], faults: Faults
                      ) -> dict[str, Any]:
    """PROMETHEE II's ``preference`` and the thresholds ``q`` and ``p`` it needs, one per
    criterion (arrays in the order of ``names``)."""
    try:
        pref = choice(value.get("preference", PARAMS["preference"].default),
                      PARAMS["preference"].choices, "params.preference")
    except Bad as bad:
        faults.add(("params", "preference"), "invalid_params", bad.message)
        pref = "usual"
    arrays = {}
    for key in ("q", "p"):
        given = value.get(key)
        if key not in PREFERENCE_NEEDS[pref]:
            arrays[key] = np.zeros(len(names)) if key == "q" else np.ones(len(names))
            continue
        table = _per_criterion(given if given is not None else {}, names, ("params", key), faults)
        row = []
        for name in names:
            here = ("params", key, name)
            if name not in table:
                faults.add(
                    here, "invalid_params", f"preference {pref!r} needs {key} for every criterion"
                )
                row.append(1.0)
                continue
            try:
                x = number(table[name])
            except Bad as bad:
                faults.add(here, "invalid_params", bad.message)
                x = 1.0
            low, strict = PARAMS[key].low, PARAMS[key].open_low
            if x < low or (strict and x == low):
                sign = ">" if strict else ">="
                faults.add(here, "invalid_params", f"{key} must be {sign} {low:g}")
            row.append(x)
        arrays[key] = np.array(row)
    if pref in ("level", "linear"):
        for j in np.flatnonzero(arrays["q"] >= arrays["p"]).tolist():
            faults.add(("params", "q", names[j]), "invalid_params", "q must be smaller than p")
    return {"preference": pref, **arrays}


def bounds_params(value: Mapping[str, Any], names: list[str], faults: Faults
                  ) -> dict[str, Any]:
    """SPOTIS's ``bounds``: {attribute: (low, high)} for the criteria given."""
    given = value.get("bounds")
    if given is None:
        return {"bounds": {}}
    table = _per_criterion(given, names, ("params", "bounds"), faults)
    out = {}
    for name, pair in table.items():
        here = ("params", "bounds", str(name))
        if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
            faults.add(here, "invalid_params", "bounds are [low, high]")
            continue
        try:
            lo, hi = number(pair[0]), number(pair[1])
        except Bad as bad:
            faults.add(here, "invalid_params", bad.message)
            continue
        if not lo < hi:
            faults.add(here, "invalid_params", f"low must be < high, got [{lo}, {hi}]")
            continue
        out[name] = (lo, hi)
    return {"bounds": out}
