"""``Idempotency-Key`` on ``POST /v1/runs`` and ``POST /v1/optimize``.

A client that may retry a submission sends a key of its choice (1 to
:data:`~decido_service.types.params.MAX_IDEMPOTENCY_KEY` characters; longer, or empty: 400
``invalid_parameter``). The
record is the API key's, kept :data:`TTL` seconds (24 h) in the store, and holds a
fingerprint of the request (method, path and body bytes):

- the first request with the key is checked as usual (credentials, validation, caps:
  nothing about the key is stored for a request refused there); right before it is
  counted its record is written *pending*; the run is admitted and the record gets its
  outcome (the run id, and for ``/v1/runs`` the 202 answer) in one store transaction;
  when the admission is refused (429, 503) the pending record is forgotten, so a retry
  is a new request. A client that cuts its connection cannot stop this half-way
  (:func:`once`): a resend gets the same run, or makes the only one;
- a retry with the same request gets the first answer again and counts nothing:
  ``/v1/runs`` the same 202 body, ``/v1/optimize`` the run's answer once it has ended
  (rebuilt from the run; while it runs, 409), with :data:`REPLAYED` ``: true``;
- the key with another request: 422 ``idempotency_key_reused``; while the first request
  is being admitted (or, ``/v1/optimize``, while its run lasts): 409
  ``idempotency_key_in_use`` with ``Retry-After: 1``.

The header (read with the body), the fingerprint and the answers are the HTTP layer's
(:mod:`decido_service.http.idempotency`); this module keeps the records.
"""

from __future__ import annotations

import contextlib

import msgspec

from decido_service.errors import ServiceError
from decido_service.runs import front
from decido_service.runs.api import run_view
from decido_service.runs.execution import cancelled_before_start, optimize_result
from decido_service.store import FINISHED_STATES, RunRow, Store
from decido_service.types import encode

__all__ = ["TTL", "Claim", "Outcome", "begin", "replay"]

#: seconds an idempotency record is kept
TTL = 86400.0


class Outcome(msgspec.Struct):
    """What the record of an admitted request keeps: its run, and (to be replayed as is)
    the answer's status and body; a ``/v1/optimize`` answer is rebuilt from its run."""

    run_id: str
    status: int
    body: str | None = None


_OUTCOME = msgspec.json.Decoder(Outcome)


class Claim:
    """The record of this request's key (:func:`begin`), pending: :meth:`record` gives
    the answer the admission stores with the run (``status``; the answer itself too when
    ``keep_answer``)."""

    def __init__(self, idem_key: str, status: int, keep_answer: bool) -> None:
        self.idem_key, self.status, self.keep_answer = idem_key, status, keep_answer
        self.outcome: Outcome | None = None

    def record(self, run_id: str, row: RunRow) -> tuple[str, str]:
        """``(idem_key, response)`` for :meth:`Runs.enqueue
        <decido_service.store.runs.Runs.enqueue>`, from the run ``row`` as admitted."""
        body = encode(run_view(row)).decode() if self.keep_answer else None
        self.outcome = Outcome(run_id, self.status, body)
        return self.idem_key, encode(self.outcome).decode()

    def answer(self, resource_id: str, body: bytes) -> tuple[str, str]:
        """``(idem_key, response)`` recording ``body`` (with this claim's status) as the
        answer of the request that made ``resource_id`` (a study), for the store call
        that makes it (:meth:`Studies.create <decido_service.store.studies.Studies.create>`):
        a resend gets it as it was."""
        self.outcome = Outcome(resource_id, self.status, body.decode())
        return self.idem_key, encode(self.outcome).decode()

    async def forget(self, store: Store, key_id: str) -> None:
        """Forget the pending record of a request that was not admitted (refused, failed),
        so a retry is a new request (a record answered with its run is kept); a lost
        call: it expires in 24 h."""
        with contextlib.suppress(Exception):
            await store.runs.idempotency_end(key_id, self.idem_key, None)


async def begin(store: Store, key_id: str, claim: Claim, fingerprint: str, now: float,
                ) -> Outcome | None:
    """Look ``claim``'s key of ``key_id`` up for a request of ``fingerprint``: the outcome
    of an earlier request with the same key and request (:func:`replay` answers it again),
    else ``None``: the record is now pending (422 ``idempotency_key_reused`` for another
    request, 409 ``idempotency_key_in_use`` while the first is being answered)."""
    state, stored = await store.runs.idempotency_begin(key_id, claim.idem_key, fingerprint,
                                                        now, TTL)
    if state == "mismatch":
        raise ServiceError("idempotency_key_reused", "this Idempotency-Key was used with "
                           "another request in the last 24 h; use a new key")
    if state == "pending":
        raise _in_use()
    return None if stored is None else _OUTCOME.decode(stored)


async def replay(store: Store, key_id: str, outcome: Outcome) -> tuple[int, bytes]:
    """The status and body of a repeated request: the stored answer, or (``/v1/optimize``)
    the answer rebuilt from its run (and its front) once it has ended."""
    if outcome.body is not None:
        return outcome.status, outcome.body.encode()
    run_id = outcome.run_id
    row = await store.runs.get(key_id, run_id)
    if row is None:
        raise ServiceError("not_found",
                           f"the run of this Idempotency-Key, {run_id}, was deleted")
    if row.state not in FINISHED_STATES:
        raise _in_use()
    pareto = await front.points(store, row)
    run = run_view(row)
    if run.problem is not None:
        return run.problem.status, encode(run.problem)
    if run.result is None:
        raise cancelled_before_start(run_id)
    history: list[list[float | None]] = [[e, b] for e, _, b in row.document.trace]
    result = run.result if pareto is None else msgspec.structs.replace(run.result,
                                                                         pareto=pareto)
    return 200, encode(optimize_result(run_id, run.request, result, history))


def _in_use() -> ServiceError:
    return ServiceError("idempotency_key_in_use", "a request with this Idempotency-Key is "
                        "still being answered; retry shortly", headers={"Retry-After": "1"})
