"""The studies' operations (``/v1/studies``, docs/studies.md "Over HTTP") as generators of
instructions (:mod:`decido.client._protocol`), and what a study or trial handle knows: the
part of :mod:`decido.client.studies` (blocking) and :mod:`decido.client.studies_aio`
(asyncio) that does no I/O."""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from decido.client._ops import _json, filters, pages
from decido.client._protocol import Call, Emit, Op
from decido.errors import StudyError
from decido.status import FINISHED_TRIAL_STATES

__all__ = ["StudyView", "TrialView", "abandon",
           "add_trials", "create", "delete", "get", "heartbeat", "number_of", "report",
           "stop", "study_body", "studies", "suggest", "tell", "tell_body", "tell_many",
           "trial", "trials"]

_BASE = "/v1/studies"
#: the longest ``reason`` the service keeps
_REASON = 1000


def _path(study_id: str, *rest: str | int) -> str:
    return "/".join((_BASE, study_id, *(str(r) for r in rest)))


class TrialView:
    """What a trial handle knows: its study's ``study_id`` and the last ``document`` read
    (the service's ``Trial``), with its members as attributes."""

    def __init__(self, study_id: str, document: dict[str, Any]) -> None:
        self.study_id = study_id
        self.document = document

    @property
    def number(self) -> int:
        """The trial's number in its study (0, 1, ...)."""
        return int(self.document["number"])

    @property
    def state(self) -> str:
        """``queued``, ``active``, ``completed``, ``infeasible``, ``failed``,
        ``early_stopped`` or ``abandoned``."""
        return str(self.document["state"])

    @property
    def finished(self) -> bool:
        """The trial has ended (it takes no more tells)."""
        return self.state in FINISHED_TRIAL_STATES

    @property
    def x(self) -> NDArray[np.float64]:
        """The point (a categorical variable: the index of its value)."""
        return np.asarray(self.document["x"], dtype=np.float64)

    @property
    def variables(self) -> dict[str, Any]:
        """The point by name (a categorical choice as its string, an integer an int)."""
        return dict(self.document["variables"])

    @property
    def value(self) -> float | None:
        """The objective's value (one objective), None until completed."""
        value = self.document.get("value")
        return None if value is None else float(value)

    @property
    def values(self) -> list[float] | None:
        """Every objective's value, None until completed."""
        values = self.document.get("values")
        return None if values is None else [float(v) for v in values]

    @property
    def metrics(self) -> dict[str, float]:
        """The numbers its tell reported besides its values."""
        return dict(self.document.get("metrics") or {})

    @property
    def reason(self) -> str | None:
        """Why it failed, was abandoned or stopped early (``lease_expired``, ...)."""
        reason = self.document.get("reason")
        return None if reason is None else str(reason)

    @property
    def client_id(self) -> str | None:
        """The ``client_id`` of the suggest that handed it out."""
        client_id = self.document.get("client_id")
        return None if client_id is None else str(client_id)

    def __repr__(self) -> str:
        return f"<Trial {self.study_id}#{self.number} {self.state}>"


class StudyView:
    """What a study handle knows: ``id`` and the last ``document`` read (the service's
    ``Study``)."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.id: str = document["id"]
        self.document = document

    @property
    def state(self) -> str:
        """``active``, ``stopped`` or ``completed``."""
        return str(self.document["state"])

    @property
    def spec(self) -> dict[str, Any]:
        """The study's arguments (engine resolved, seed drawn, ``trial_lease``, ...)."""
        return dict(self.document.get("spec") or {})

    @property
    def counts(self) -> dict[str, int]:
        """Its trials by state (``{"completed": 12, "active": 4, ...}``)."""
        return {k: int(v) for k, v in (self.document.get("trials") or {}).items()}

    @property
    def n_trials(self) -> int:
        """Its trials, every state."""
        return sum(self.counts.values())

    @property
    def metadata(self) -> dict[str, str]:
        """Its labels."""
        return dict(self.document.get("metadata") or {})

    @property
    def several(self) -> bool:
        """A study of several objectives (it has a ``pareto`` front, no ``best``)."""
        return self.document.get("pareto") is not None

    @property
    def trial_lease(self) -> float:
        """Seconds an active trial is held without a report or heartbeat."""
        return float(self.spec.get("trial_lease") or 600.0)

    @property
    def finished(self) -> bool:
        """It hands out no more trials and holds none: ``completed``, or ``stopped`` with
        no trial active."""
        return self.state == "completed" or (
            self.state == "stopped" and not self.counts.get("active"))

    def __repr__(self) -> str:
        return f"<Study {self.id} {self.state}>"


def number_of(trial: int | TrialView) -> int:
    """A trial's number: a trial handle's, or the int given."""
    return trial.number if isinstance(trial, TrialView) else int(trial)


def study_body(args: Mapping[str, Any]) -> dict[str, Any]:
    """The body of ``POST /v1/studies``: the given (not None) arguments as JSON."""
    body = {name: _json(value) for name, value in args.items() if value is not None}
    if "bounds" in body:
        body["bounds"] = np.asarray(args["bounds"], dtype=np.float64).tolist()
    return body


def _finite(value: Any, where: str) -> float:
    number = float(value)
    if not math.isfinite(number):
        raise StudyError("invalid_values", f"{where} is {number}: JSON carries finite "
                         "numbers only; tell the trial failed (trial.fail(reason)) instead")
    return number


def tell_body(value: float | None = None, values: ArrayLike | None = None,
              metrics: Mapping[str, float] | None = None, state: str = "completed",
              reason: str | None = None) -> dict[str, Any]:
    """The body of a tell: ``value`` or ``values`` (+ ``metrics``), or ``state`` failed /
    infeasible with a ``reason`` (cut to the 1,000 characters the service keeps). A
    non-finite number raises :class:`decido.StudyError` (``invalid_values``)."""
    body: dict[str, Any] = {}
    if value is not None:
        body["value"] = _finite(value, "value")
    if values is not None:
        body["values"] = [_finite(v, f"values[{k}]")
                          for k, v in enumerate(np.ravel(np.asarray(values, dtype=float)))]
    if metrics:
        body["metrics"] = {str(k): _finite(v, f"metrics[{k!r}]") for k, v in metrics.items()}
    if state != "completed":
        body["state"] = state
    if reason is not None:
        body["reason"] = reason[:_REASON]
    return body


def _item(item: Mapping[str, Any], numbered: bool) -> dict[str, Any]:
    """One item of a batch tell (``numbered``: with its ``number``) or of added trials."""
    given = dict(item)
    out = tell_body(given.pop("value", None), given.pop("values", None),
                    given.pop("metrics", None), given.pop("state", "completed"),
                    given.pop("reason", None))
    if numbered:
        out["number"] = number_of(given.pop("number"))
    out.update({k: _json(v) for k, v in given.items()})
    return out


def create(body: dict[str, Any], idempotency_key: str | None) -> Op[dict[str, Any]]:
    """``POST /v1/studies`` with an ``Idempotency-Key`` (a new one unless given): a resent
    creation never makes a second study."""
    key = idempotency_key or uuid.uuid4().hex
    reply = yield Call("POST", _BASE, json=body, headers={"Idempotency-Key": key},
                       resend=True)
    document: dict[str, Any] = reply.json()
    return document


def get(study_id: str) -> Op[dict[str, Any]]:
    """One study."""
    document: dict[str, Any] = (yield Call("GET", _path(study_id), resend=True)).json()
    return document


def studies(state: str | None, metadata: Mapping[str, str] | None) -> Op[None]:
    """Emit the key's studies, newest first, page after page."""
    return pages(_BASE, filters(metadata, state=state))


def suggest(study_id: str, count: int, client_id: str | None) -> Op[list[dict[str, Any]]]:
    """``count`` trials to evaluate. With a ``client_id`` the call is safe to resend (the
    service hands that client its active trials again)."""
    body: dict[str, Any] = {"count": count}
    if client_id is not None:
        body["client_id"] = client_id
    reply = yield Call("POST", _path(study_id, "suggest"), json=body,
                       resend=client_id is not None)
    found: list[dict[str, Any]] = reply.json()["trials"]
    return found


def trial(study_id: str, number: int) -> Op[dict[str, Any]]:
    """One trial."""
    document: dict[str, Any] = (yield Call("GET", _path(study_id, "trials", number),
                                           resend=True)).json()
    return document


def trials(study_id: str, state: str | None) -> Op[None]:
    """Emit the study's trials by number, page after page (``state``: only those)."""
    query = {} if state is None else {"state": state}
    while True:
        page = (yield Call("GET", _path(study_id, "trials"), params=query,
                           resend=True)).json()
        for item in page["data"]:
            yield Emit(item)
        if not page["has_more"] or not page["data"]:
            return
        query["starting_after"] = str(page["data"][-1]["number"])


def _post(path: str, body: Any = None, resend: bool = False) -> Op[Any]:
    reply = yield Call("POST", path, json=body, resend=resend)
    return reply.json()


def tell(study_id: str, number: int, body: dict[str, Any]) -> Op[dict[str, Any]]:
    """Tell one trial's result (``tell_body``)."""
    document: dict[str, Any] = yield from _post(_path(study_id, "trials", number,
                                                      "complete"), body)
    return document


def tell_many(study_id: str, items: Sequence[Mapping[str, Any]]) -> Op[list[dict[str, Any]]]:
    """Tell several trials at once (one transaction, all or nothing)."""
    body = {"trials": [_item(item, True) for item in items]}
    data: list[dict[str, Any]] = (yield from _post(_path(study_id, "complete"), body))["data"]
    return data


def add_trials(study_id: str, items: Sequence[Mapping[str, Any]]
               ) -> Op[list[dict[str, Any]]]:
    """Add points: told (warm starts) or ``state: "queued"``."""
    body = {"trials": [_item(item, False) for item in items]}
    data: list[dict[str, Any]] = (yield from _post(_path(study_id, "trials"), body))["data"]
    return data


def report(study_id: str, number: int, step: int, value: float) -> Op[bool]:
    """An intermediate value; whether the trial should stop."""
    answer = yield from _post(_path(study_id, "trials", number, "report"),
                              {"step": int(step), "value": _finite(value, "value")})
    return bool(answer["should_stop"])


def heartbeat(study_id: str, number: int) -> Op[dict[str, Any]]:
    """Renew an active trial's lease (safe to resend)."""
    document: dict[str, Any] = yield from _post(
        _path(study_id, "trials", number, "heartbeat"), resend=True)
    return document


def abandon(study_id: str, number: int) -> Op[dict[str, Any]]:
    """Give an active trial up."""
    document: dict[str, Any] = yield from _post(_path(study_id, "trials", number,
                                                      "abandon"))
    return document


def stop(study_id: str) -> Op[dict[str, Any]]:
    """Stop the study: no more suggestions (safe to resend)."""
    document: dict[str, Any] = yield from _post(_path(study_id, "stop"), resend=True)
    return document


def delete(study_id: str) -> Op[None]:
    """Delete a study that is not active."""
    yield Call("DELETE", _path(study_id))
