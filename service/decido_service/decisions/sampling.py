"""The cost of a decision under uncertainty (SMAA), checked against the plan before any
sampling.

A sampled decision draws, for each of its ``samples``, a value of every attribute it reads
for every option: its cost grows with **samples × options × values**, where the values
are the attributes read per option — its criteria and the names its constraints and
expression use (each such name counted once; a plain multi-criteria decision reads just
its criteria, so this is samples × options × criteria). The library caps the product at
``decido.DECISION_LIMITS["max_smaa_values"]``; each plan caps it lower
(``max_smaa_values`` in the plan table, :mod:`decido_service.config`). The count here is
read off the body without compiling anything (the names of an expression are its
identifiers, functions and keywords included), so it is never below the library's own.

A batch is checked per item (``defaults`` merged into each, as the library merges them)
and as a whole: the sum of its items' values is under the same cap, so a batch costs no
more than one decision may.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import decido
from decido import DecisionError

__all__ = ["Fault", "default_samples", "refuse_over_cap", "sampled_values", "sampling_faults"]

#: an identifier of the expression language (docs/expression-language.md, "Names")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Fault:
    """A sampled decision above the plan's cap: where (a JSON pointer) and why."""

    pointer: str
    message: str


@lru_cache(maxsize=1)
def default_samples() -> int:
    """The samples of an ``uncertainty`` that does not say (the library's default, read
    from the request schema it publishes)."""
    schema = decido.decision_schemas()["DecisionUncertainty"]
    return int(schema["properties"]["samples"]["default"])


def sampled_values(body: Any) -> int | None:
    """samples × options × values of one decision body (module docs), or ``None`` when it
    is not under uncertainty or too malformed to count (the library then names the
    fault)."""
    if not isinstance(body, dict):
        return None
    uncertainty, options = body.get("uncertainty"), body.get("options")
    if not isinstance(uncertainty, dict) or not isinstance(options, list):
        return None
    samples = uncertainty.get("samples", default_samples())
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        return None
    names: set[str] = set()
    criteria = body.get("criteria")
    if isinstance(criteria, list):
        names.update(str(c.get("attribute")) for c in criteria if isinstance(c, dict))
    texts = body.get("constraints")
    texts = list(texts) if isinstance(texts, list) else []
    texts.append(body.get("expression"))
    for text in texts:
        if isinstance(text, str):
            names.update(_NAME.findall(text))
    return samples * len(options) * max(len(names), 1)


def sampling_faults(body: Any, cap: int | None, *, batch: bool) -> list[Fault]:
    """Every place where ``body`` (a ``/v1/decide`` body, or a ``/v1/batch`` one) asks for
    more sampled values than ``cap`` (``None``: no cap): the decision, each item, and a
    batch's total."""
    if cap is None or not isinstance(body, dict):
        return []
    if not batch:
        values = sampled_values(body)
        return [] if values is None or values <= cap else [Fault(
            _samples_pointer(body), _too_many(values, cap, "this decision"))]
    defaults, items = body.get("defaults"), body.get("decisions")
    defaults = defaults if isinstance(defaults, dict) else {}
    if not isinstance(items, list):
        return []
    faults: list[Fault] = []
    total = 0
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        merged = {**defaults, **item}
        values = sampled_values(merged)
        if values is None:
            continue
        total += values
        if values > cap:
            own = item.get("uncertainty")
            pointer = f"/decisions/{i}/uncertainty/samples" if isinstance(own, dict) \
                and "samples" in own else f"/decisions/{i}"
            faults.append(Fault(pointer, _too_many(values, cap, f"decision {i}")))
    if total > cap:
        faults.append(Fault("/decisions", _too_many(total, cap, "the batch's decisions")))
    return faults


def refuse_over_cap(body: Any, cap: int | None, *, batch: bool) -> None:
    """:func:`sampling_faults` as the library's :class:`decido.DecisionError` (code
    ``too_many``, every fault with its pointer), for the callers that show the library's
    faults (the dashboard's decide form); nothing when there is none."""
    faults = sampling_faults(body, cap, batch=batch)
    if faults:
        first = faults[0]
        raise DecisionError("too_many", first.message, first.pointer.lstrip("/").replace(
            "/", "."), errors=[{"pointer": f.pointer, "code": "too_many",
                                "message": f.message} for f in faults])


def _samples_pointer(body: Mapping[str, Any]) -> str:
    uncertainty = body.get("uncertainty")
    if isinstance(uncertainty, dict) and "samples" in uncertainty:
        return "/uncertainty/samples"
    return "/uncertainty"


def _too_many(values: int, cap: int, what: str) -> str:
    return (f"{what} would draw {values:,} sampled values (samples x options x the "
            f"attributes read per option), above the plan's cap of {cap:,}: ask for fewer "
            "samples or options")
