"""The studies surface (`/v1/studies`): ask/tell optimization of an objective the caller
computes (docs/studies.md, "Over HTTP").

Handlers are thin: they authenticate and count (creating a study counts one optimization
of the tier; the suggest and tell calls (suggest, complete, batch complete, add trials,
report, heartbeat, abandon) count on the tier's ``study.minute`` allowance of their own,
apart from ``optimize.minute``; every other call is a keyed read of the ``optimize``
surface), decode the body and call :mod:`decido_service.studies.api`, which raises
:class:`~decido_service.errors.ServiceError` (rendered as problem+json like every error).
``Idempotency-Key`` on create replays the first answer.
"""

from __future__ import annotations

from typing import TypeVar

from sanic.response import HTTPResponse

from decido_service.errors import ServiceError
from decido_service.http import idempotency
from decido_service.http.admission import authenticate, gate, read, refusals
from decido_service.http.context import ApiRequest
from decido_service.http.params import headers, read_query
from decido_service.http.responses import Response, answer, json_response
from decido_service.http.routes import READ, READ_PARAMS, Doc, Routes
from decido_service.http.sse import send_study_events
from decido_service.runs.idempotency import Claim
from decido_service.schemas import decode_body
from decido_service.store import KeyRecord
from decido_service.studies import api as studies
from decido_service.types import IdempotencyHeaders
from decido_service.types.studies import (
    StudyCreate,
    StudyEventsHeaders,
    StudyPage,
    StudyPath,
    SuggestRequest,
    TrialPage,
    TrialPath,
    TrialReport,
    TrialsAdd,
    TrialsTell,
    TrialTell,
)

__all__ = ["api"]

api = Routes("studies")
_BODY = (400, 401, 415, 422, 429, 503)
_STUDY = (StudyPath,)
#: the note of every suggest and tell call
_CALL = ("A study call: counted on the tier's study calls per minute (`study.minute`, its "
         "`X-RateLimit-*` headers), apart from the key's requests per minute; beyond it "
         "429 `rate_limited`.")
_TRIAL = (StudyPath, TrialPath)
B = TypeVar("B")


async def _study_call(request: ApiRequest, kind: type[B], empty: B | None = None
                      ) -> tuple[KeyRecord, B]:
    """A suggest or tell call with a body: the key and the body decoded as ``kind`` (a
    fault is a refusal; ``empty``: what an empty body means), counted on the key's
    ``study.minute``."""
    key = await authenticate(request)
    async with refusals(request, key, "study"):
        req = empty if empty is not None and not request.body else \
            decode_body(kind, request.body)
    await gate(request, key, "study").admit()
    return key, req


@api.route("/studies", post=Doc(
    "createStudy", "Create a study (ask/tell optimization)", "studies", (201, "Study"),
    (*_BODY, 403, 409), "StudyCreate", params=(IdempotencyHeaders,),
    description="`variables` or `bounds` as in runs, `objectives`, `goal`, `constraints`, "
                "`engine` (default `auto`), `seed`, `max_trials`, `trial_lease` (seconds, "
                "1 to 86,400, default 600), `early_stopping` (`{\"rule\": \"median\", "
                "\"min_trials\": k}`), `metadata`. Counts one optimization of the tier; "
                "answered with `Location`. Every fault of the spec is listed with its "
                "pointer (422). The tier caps the key's active studies (429 "
                "`too_many_studies`), the trials per study (`max_trials` above "
                "`max_study_trials`: 403 `compute_cap_exceeded`; without `max_trials` the "
                "study gets that cap) and the variables (`max_dims`: 403)."), get=Doc(
    "listStudies", "The key's studies, newest first", "studies", (200, "StudyList"), READ_PARAMS,
    params=(StudyPage,)))
async def studies_root(request: ApiRequest) -> HTTPResponse:
    """POST: create a study (201, ``Location``); GET: a page of the key's studies."""
    ctx = request.app.ctx.studies
    if request.method != "POST":
        key, page = await read_query(request, "optimize", StudyPage)
        return answer(await studies.page(ctx, key["id"], page))
    key = await read(request, "optimize")
    async with refusals(request, key, "optimize"):
        req = decode_body(StudyCreate, request.body)

    async def made(claim: Claim | None) -> HTTPResponse:
        admitted = gate(request, key, "optimize")
        tier = admitted.counters.row
        caps = studies.Caps(tier["max_studies"], tier["max_study_trials"], tier["max_dims"])
        async with refusals(request, key, "optimize"):
            try:  # the cap, the count, the study and its idempotency answer: one transaction
                created = await studies.create(ctx, key["id"], req, caps, admitted.counted(),
                                               None if claim is None else claim.answer)
            except ServiceError as exc:
                if exc.code == "too_many_studies":  # the headers every answer carries
                    await admitted.observe()
                raise
        admitted.settle(created.admission)
        return json_response(created.body, status=201,
                             headers={"Location": f"/v1/studies/{created.study.id}"})

    idem_key = headers(request, IdempotencyHeaders).key
    return await idempotency.once(request, key, idem_key, made, status=201,
                                  keep_answer=True, location="/v1/studies/")


@api.route("/studies/<study_id:str>", get=Doc(
    "getStudy", "One study: its spec, trial counts and best (or front)", "studies",
    (200, "Study"), (404, *READ), params=_STUDY), delete=Doc(
    "deleteStudy", "Delete a stopped or completed study", "studies", (204, "empty"),
    (404, 409, *READ), params=_STUDY, description="An active study is 409 "
                                                   "`study_not_stopped` (stop it first)."))
async def one_study(request: ApiRequest, study_id: str) -> HTTPResponse:
    """GET (HEAD): one study; DELETE: delete a study that is not active (204)."""
    key = await read(request, "optimize")
    ctx = request.app.ctx.studies
    if request.method == "DELETE":
        await studies.delete(ctx, key["id"], study_id)
        return Response(status=204)
    return answer(await studies.find(ctx, key["id"], study_id))


@api.route("/studies/<study_id:str>/suggest", post=Doc(
    "suggestTrials", "Trials to evaluate next", "studies", (200, "SuggestAnswer"),
    (404, 409, *_BODY), "SuggestRequest", body_required=False, params=_STUDY,
    description="`count` (1 to 1,000) trials, each held by the caller for the study's "
                "`trial_lease`: queued points first, then the engine's. A `client_id` that "
                "still holds active trials gets them back (leases renewed) instead of new "
                "ones. 409 `study_finished` once `max_trials` were suggested or the study "
                "is stopped. " + _CALL))
async def suggest(request: ApiRequest, study_id: str) -> HTTPResponse:
    """Hand out trials."""
    key, req = await _study_call(request, SuggestRequest, SuggestRequest())
    return answer(await studies.suggest(request.app.ctx.studies, key["id"], study_id, req))


@api.route("/studies/<study_id:str>/trials", post=Doc(
    "addTrials", "Add trials: warm starts or queued points", "studies", (200, "TrialList"),
    (404, 409, *_BODY), "TrialsAdd", params=_STUDY,
    description="Up to 10,000 points (`variables` by name or `x`): with `value`/`values` "
                "(completed: a warm start), `state: failed | infeasible`, or `state: "
                "queued` (suggested before the engine's own points, told to the engine as "
                "warm starts when completed; 409 `study_finished` for a study that is not "
                "active). One transaction: every bad item is named by "
                "its pointer and nothing is applied. " + _CALL), get=Doc(
    "listTrials", "A page of a study's trials, by number", "studies", (200, "TrialList"),
    (404, *READ_PARAMS), params=(StudyPath, TrialPage)))
async def study_trials(request: ApiRequest, study_id: str) -> HTTPResponse:
    """POST: add trials (a study call); GET: a page of trials (``state=`` filter)."""
    ctx = request.app.ctx.studies
    if request.method == "POST":
        key, req = await _study_call(request, TrialsAdd)
        return answer(await studies.add_trials(ctx, key["id"], study_id, req))
    key, page = await read_query(request, "optimize", TrialPage)
    return answer(await studies.trials(ctx, key["id"], study_id, page))


@api.route("/studies/<study_id:str>/trials/<number:int>", get=Doc(
    "getTrial", "One trial of a study", "studies", (200, "Trial"), (404, *READ),
    params=_TRIAL))
async def one_trial(request: ApiRequest, study_id: str, number: int) -> HTTPResponse:
    """One trial."""
    key = await read(request, "optimize")
    return answer(await studies.trial(request.app.ctx.studies, key["id"], study_id, number))


@api.route("/studies/<study_id:str>/trials/<number:int>/complete", post=Doc(
    "completeTrial", "Tell a trial's result", "studies", (200, "Trial"), (404, 409, *_BODY),
    "TrialTell", params=_TRIAL,
    description="`value` (one objective) or `values` (+ `metrics`), or `state: failed | "
                "infeasible` with a `reason`. 409 `trial_finished` for a trial already "
                "finished. " + _CALL))
async def complete(request: ApiRequest, study_id: str, number: int) -> HTTPResponse:
    """Tell one trial."""
    key, req = await _study_call(request, TrialTell)
    return answer(await studies.tell(request.app.ctx.studies, key["id"], study_id, number,
                                     req))


@api.route("/studies/<study_id:str>/complete", post=Doc(
    "completeTrials", "Tell several trials' results at once", "studies", (200, "TrialList"),
    (404, *_BODY), "TrialsTell", params=_STUDY,
    description="`{\"trials\": [{\"number\", ...as completeTrial}]}` in one transaction: "
                "every bad item is named by its pointer and nothing is applied. " + _CALL))
async def complete_many(request: ApiRequest, study_id: str) -> HTTPResponse:
    """Tell several trials."""
    key, req = await _study_call(request, TrialsTell)
    return answer(await studies.tell_many(request.app.ctx.studies, key["id"], study_id, req))


@api.route("/studies/<study_id:str>/trials/<number:int>/report", post=Doc(
    "reportTrial", "An intermediate value of an active trial", "studies",
    (200, "ReportAnswer"), (404, 409, *_BODY), "TrialReport", params=_TRIAL,
    description="`{\"step\", \"value\"}`: stored, and the lease renewed. With the study's "
                "`early_stopping` (median rule), `should_stop` is true when the value is "
                "worse than the median of the other trials' values at that step and at "
                "least `min_trials` reported there; the trial is then `early_stopped`. "
                + _CALL))
async def report(request: ApiRequest, study_id: str, number: int) -> HTTPResponse:
    """Report an intermediate value."""
    key, req = await _study_call(request, TrialReport)
    return answer(await studies.report(request.app.ctx.studies, key["id"], study_id, number,
                                       req))


@api.route("/studies/<study_id:str>/trials/<number:int>/heartbeat", post=Doc(
    "heartbeatTrial", "Renew an active trial's lease", "studies", (200, "Trial"),
    (404, 409, 429, *READ), params=_TRIAL, body_required=False,
    description=_CALL))
async def heartbeat(request: ApiRequest, study_id: str, number: int) -> HTTPResponse:
    """Renew a lease."""
    key = await authenticate(request)
    await gate(request, key, "study").admit()
    return answer(await studies.heartbeat(request.app.ctx.studies, key["id"], study_id,
                                          number))


@api.route("/studies/<study_id:str>/trials/<number:int>/abandon", post=Doc(
    "abandonTrial", "Give an active trial up (never suggested again)", "studies",
    (200, "Trial"), (404, 409, 429, *READ), params=_TRIAL, body_required=False,
    description=_CALL))
async def abandon(request: ApiRequest, study_id: str, number: int) -> HTTPResponse:
    """Abandon a trial."""
    key = await authenticate(request)
    await gate(request, key, "study").admit()
    return answer(await studies.abandon(request.app.ctx.studies, key["id"], study_id, number))


@api.route("/studies/<study_id:str>/stop", post=Doc(
    "stopStudy", "Stop a study: no more suggestions", "studies", (200, "Study"),
    (404, *READ), params=_STUDY, body_required=False,
    description="Active trials can still complete; queued points are abandoned."))
async def stop(request: ApiRequest, study_id: str) -> HTTPResponse:
    """Stop a study."""
    key = await read(request, "optimize")
    return answer(await studies.stop(request.app.ctx.studies, key["id"], study_id))


@api.route("/studies/<study_id:str>/events", head=False, get=Doc(
    "studyEvents", "Watch a study: Server-Sent Events until it is finished", "studies",
    (200, "study_events"), (404, *READ_PARAMS), params=(StudyPath, StudyEventsHeaders),
    description="`text/event-stream`. Each event has `id:` (the study's event number: 1, "
                "2, ... in the order of the changes, on every node), `event:` and one "
                "`data:` line of JSON: `trial` (data: the Trial in its new state: "
                "`active` when suggested, `queued`, `completed`, `failed` (with reason "
                "`lease_expired` when its lease ran out), `infeasible`, `early_stopped`, "
                "`abandoned`), `best` (the best so far changed; data `{\"best\": Trial}`, "
                "or `{\"front_size\", \"hypervolume\"}` for several objectives), `state` "
                "(the study was `stopped` or `completed`; data `{\"id\", \"state\", "
                "\"trials\"}`) and `finished` (no more suggestions and every trial "
                "finished; the same data), after which the stream ends. A new watcher is "
                "first sent a `study` event (data: the Study; id: the last event number so "
                "far). Send the last id seen as `Last-Event-ID` to resume with no duplicate "
                "and no missed event (an id this stream has not sent is 400). A `: "
                "heartbeat` comment every 15 s. A key's open streams (runs' and studies' "
                "together) per worker are capped by its tier (429 `too_many_streams`)."))
async def events(request: ApiRequest, study_id: str) -> None:
    """The study's Server-Sent Events (:mod:`decido_service.studies.events`), resumed
    after ``Last-Event-ID``; the stream ends once the study is finished."""
    key = await read(request, "optimize")
    async with refusals(request, key, "optimize"):  # a bad Last-Event-ID is a refusal
        await send_study_events(request, key, study_id)
