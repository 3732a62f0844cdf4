"""The client's exceptions: a problem document (RFC 9457) becomes one typed exception.

Every class derives from :class:`ClientError` (a :class:`decido.DecidoError`). A problem
answered by the service is an :class:`ApiError` with its ``status``, stable ``code``,
``detail``, ``request_id`` and the whole ``problem`` document; its subclass is picked by
status and code (:func:`error_from_problem`). Transport failures are :class:`Timeout` and
:class:`ConnectionFailed`; a run that ended ``failed`` is :class:`RunFailed`. A study that
makes no more suggestions is :class:`StudyFinished`, a trial told or renewed after it ended
:class:`TrialFinished` (both 409, :class:`Conflict`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from decido.errors import DecidoError

__all__ = [
    "ApiError",
    "ClientError",
    "Conflict",
    "ConnectionFailed",
    "FieldError",
    "Forbidden",
    "InvalidRequest",
    "KeyInUse",
    "MissingDependency",
    "MissingKey",
    "NotFound",
    "Overloaded",
    "QuotaExceeded",
    "RateLimited",
    "Retryable",
    "RunFailed",
    "StudyFinished",
    "Timeout",
    "TrialFinished",
    "Unauthorized",
    "error_from_problem",
]


class ClientError(DecidoError):
    """Base class of every error of :mod:`decido.client`."""


class MissingDependency(ClientError, ImportError):
    """The client needs httpx: ``pip install 'decido[client]'``."""


class Timeout(ClientError, TimeoutError):
    """A call (or :meth:`Run.wait`) did not finish within its timeout."""


class ConnectionFailed(ClientError, ConnectionError):
    """The service could not be reached (refused, reset, name not resolved)."""


class FieldError(NamedTuple):
    """One fault of a refused request: where (``pointer``, RFC 6901, ``""`` for the whole
    body), what (``message``), its stable ``code`` and, for expressions, ``position``."""

    pointer: str
    message: str
    code: str = ""
    position: int | None = None


class ApiError(ClientError):
    """A problem document answered by the service.

    Attributes:
        status: the HTTP status.  code: the stable machine code (``rate_limited``, ...).
        detail: the human explanation.  request_id: the ``X-Request-Id`` of the answer.
        problem: the whole problem document (a dict).
    """

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        self.status = status
        self.problem = problem
        self.code = str(problem.get("code", "http_error"))
        self.detail = str(problem.get("detail", problem.get("title", f"HTTP {status}")))
        self.request_id = problem.get("request_id")
        super().__init__(f"{status} {self.code}: {self.detail}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.status, self.problem))


class InvalidRequest(ApiError, ValueError):
    """400 or 422: the request was refused; ``errors`` lists every fault found."""

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        super().__init__(status, problem)
        self.errors = [FieldError(str(e.get("pointer", "")), str(e.get("message", "")),
                                  str(e.get("code", "")), e.get("position"))
                       for e in problem.get("errors", []) if isinstance(e, dict)]
        if self.errors:
            lines = "".join(f"\n  {e.pointer or '(body)'}: {e.message}" for e in self.errors)
            self.args = (f"{status} {self.code}:{lines}",)


class Unauthorized(ApiError):
    """401: missing, unknown, conflicting or revoked credentials."""


class MissingKey(Unauthorized):
    """401 ``missing_credentials``: the client has no key (neither ``key=`` nor
    ``DECIDO_KEY``); the message says so, not in HTTP's words."""

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        super().__init__(status, problem)
        self.args = ("no API key: pass key=... to decido.Client (or AsyncClient), or set "
                     "DECIDO_KEY; Client(url).create_key() makes a free one",)


class Forbidden(ApiError):
    """403: above a per-run cap of the tier (``field``, ``limit_value``, ``requested`` in
    :attr:`problem`) or a batch too large for the plan."""


class NotFound(ApiError, LookupError):
    """404: no such resource for this key (another key's run is not found either)."""


class Conflict(ApiError):
    """409: the resource is not in a state that allows this (a finished run's cancel)."""


class StudyFinished(Conflict):
    """409 ``study_finished``: the study makes no more suggestions (it suggested its
    ``max_trials`` and nothing is queued, or it is stopped or completed)."""


class TrialFinished(Conflict):
    """409 ``trial_finished``: the trial has already ended (completed, failed, infeasible,
    early-stopped, abandoned, or failed ``lease_expired`` when its lease ran out), so it
    cannot be told, reported on, renewed or abandoned again."""


class Retryable(ApiError):
    """An answer worth retrying later (429, 503); ``retry_after`` is the service's
    ``Retry-After`` in seconds (None when it sent none)."""

    def __init__(self, status: int, problem: dict[str, Any],
                 retry_after: float | None = None) -> None:
        super().__init__(status, problem)
        self.retry_after = retry_after

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.status, self.problem, self.retry_after))


class KeyInUse(Conflict, Retryable):
    """409 ``idempotency_key_in_use``: a request with this ``Idempotency-Key`` is still being
    answered (a resent submission); retried after its ``Retry-After`` like a 429."""


class RateLimited(Retryable):
    """429: a per-minute limit or the cap of a key's concurrent runs (``too_many_runs``)."""


class QuotaExceeded(RateLimited):
    """429 ``monthly_quota_exceeded``: the month's allowance is used (not retried)."""


class Overloaded(Retryable):
    """503: the service (its run queue or its store) is busy."""


class RunFailed(ClientError):
    """A run ended ``failed``; ``run`` is its document, ``problem`` why it failed."""

    def __init__(self, run: dict[str, Any]) -> None:
        self.run = run
        self.problem: dict[str, Any] = run.get("problem") or {}
        self.code = str(self.problem.get("code", "failed"))
        super().__init__(f"run {run.get('id')} failed: "
                         f"{self.problem.get('detail', 'no detail')} ({self.code})")


_BY_STATUS: dict[int, type[ApiError]] = {400: InvalidRequest, 401: Unauthorized,
                                         403: Forbidden, 404: NotFound, 409: Conflict,
                                         422: InvalidRequest}
_CONFLICTS: dict[str, type[Conflict]] = {"study_finished": StudyFinished,
                                         "trial_finished": TrialFinished}


def error_from_problem(status: int, problem: Any, retry_after: float | None) -> ApiError:
    """The exception for an error answer of ``status`` with body ``problem`` (a problem
    document; anything else is wrapped as ``{"detail": ...}``)."""
    if not isinstance(problem, dict):
        problem = {"code": "http_error", "detail": str(problem)[:500] or f"HTTP {status}"}
    if status == 429:
        cls = QuotaExceeded if problem.get("code") == "monthly_quota_exceeded" else RateLimited
        return cls(status, problem, retry_after)
    if status == 503:
        return Overloaded(status, problem, retry_after)
    if status == 409 and problem.get("code") in _CONFLICTS:
        return _CONFLICTS[str(problem["code"])](status, problem)
    if status == 409 and problem.get("code") == "idempotency_key_in_use":
        return KeyInUse(status, problem, retry_after)
    if status == 401 and problem.get("code") == "missing_credentials":
        return MissingKey(status, problem)
    return _BY_STATUS.get(status, ApiError)(status, problem)
