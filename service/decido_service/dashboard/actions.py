"""The dashboard's forms: sign in and out, cancel and replay a run, make and revoke keys,
try a decision. Every state-changing action is a POST form with a CSRF token
(:mod:`decido_service.dashboard.session`); each goes through the same service functions
as the API (admission and counting included) and answers with a redirect or a page.
"""

from __future__ import annotations

import msgspec
import orjson
from sanic.response import HTTPResponse

import decido
from decido.pareto import default_multi_engine
from decido_service import keys, limits
from decido_service.dashboard import decide_form, front, run_form
from decido_service.dashboard import session as sessions
from decido_service.dashboard.render import page, pretty, redirect
from decido_service.dashboard.routes import SIGN_IN, api, form, html
from decido_service.dashboard.session import Session
from decido_service.decisions import bridge, sampling
from decido_service.decisions import decide as decisions
from decido_service.http.admission import issue_free_key, throttle_sign_in
from decido_service.http.context import ApiRequest
from decido_service.http.problems import ApiError, as_api_error
from decido_service.http.submit import enqueue, prepare_body
from decido_service.runs import api as runs
from decido_service.schemas import engine_table
from decido_service.types.fields import MAX_LABEL

__all__: list[str] = []


@api.route("/sign-in", "GET")
async def sign_in_form(request: ApiRequest) -> HTTPResponse:
    """The sign-in form (the overview when already signed in)."""
    if await sessions.current(request) is not None:
        return redirect("/dashboard")
    return await _sign_in_page(request, None)


async def _sign_in_page(request: ApiRequest, error: str | None, created: str | None = None,
                        status: int = 200, headers: dict[str, str] | None = None
                        ) -> HTTPResponse:
    """The sign-in form, with ``error`` above it (200: a form with its message), or a key
    just made (``created``, its secret shown this once); the service's address (as the
    browser reached it) for the ``curl`` line."""
    token, cookie = await sessions.signin_token(request)
    info = request.conn_info
    host = request.host or (info.server if info is not None else "")  # no Host: the socket's
    address = f"{request.scheme}://{host}"
    response = page("sign_in.html", status=status, session=None, csrf=token, error=error,
                    created=created, address=address)
    response.headers.update(headers or {})
    return sessions.set_signin_cookie(response, cookie)


@api.route("/sign-in/new-key", "POST")
async def new_key(request: ApiRequest) -> HTTPResponse:
    """Make a free key from the sign-in page, as ``POST /v1/keys`` does (the same path,
    counted on the address): the page shows its secret once; a refusal (429) above the
    form."""
    try:
        await sessions.check_signin(request, form(request))
        _, secret = await issue_free_key(request, None)
    except ApiError as error:
        return await _sign_in_page(request, error.detail, status=error.status_code)
    return await _sign_in_page(request, None, created=secret)


@api.route("/sign-in", "POST")
async def sign_in(request: ApiRequest) -> HTTPResponse:
    """Sign in with a key: a session cookie, then the overview; the form again with a
    message for a key that is unknown or revoked (the key is never echoed), or with 429
    and ``Retry-After`` past ``sign_ins_per_minute`` tries from the address or at the
    key's prefix."""
    fields = form(request)
    try:
        await sessions.check_signin(request, fields)
    except ApiError as error:
        return await _sign_in_page(request, error.detail)
    secret = (fields.get("key") or "").strip()
    well_formed = keys.is_well_formed(secret)
    try:  # counted per address and per key prefix (429 past sign_ins_per_minute)
        await throttle_sign_in(request, keys.key_prefix(secret) if well_formed else None)
    except ApiError as error:
        return await _sign_in_page(request, error.detail, status=error.status_code,
                                   headers=error.headers)
    key = await request.app.ctx.store.accounts.find_key(secret) if well_formed else None
    if key is None or key["revoked_at"] is not None:
        reason = "this key is revoked" if key else "this is not a key of this service"
        return await _sign_in_page(request, reason)
    return redirect("/dashboard", await sessions.open_session(request, key))


@api.route("/sign-out", "POST")
@html
async def sign_out(request: ApiRequest, session: Session) -> HTTPResponse:
    """End the session; back to the sign-in page."""
    await sessions.end(request, session)
    return sessions.clear_cookies(request, redirect(SIGN_IN))


@api.route("/runs/<run_id:str>/cancel", "POST")
@html
async def cancel(request: ApiRequest, session: Session, run_id: str) -> HTTPResponse:
    """Ask the run to stop (as ``POST /v1/runs/{id}/cancel``); back to its page."""
    await runs.cancel(request.app.ctx.store, session.key["id"], run_id)
    return redirect(f"/dashboard/runs/{run_id}")


@api.route("/runs/<run_id:str>/replay", "POST")
@html
async def replay(request: ApiRequest, session: Session, run_id: str) -> HTTPResponse:
    """Submit the run's request again with its seed (admitted and counted as
    ``POST /v1/runs``); the new run's page."""
    key = session.key
    run = (await runs.find(request.app.ctx.store, key["id"], run_id)).document
    body = msgspec.to_builtins(run.request)
    if run.request.seed is None and run.result is not None:
        body["seed"] = run.result.seed
    req, objective, budget = await prepare_body(request, key, orjson.dumps(body))
    row = await enqueue(request, key, req, objective, budget)
    return redirect(f"/dashboard/runs/{row.id}")


@api.route("/runs/new", "GET")
@html
async def new_run_page(request: ApiRequest, session: Session) -> HTTPResponse:
    """The form that starts a run, filled with a small example."""
    return _new_run(session, run_form.defaults(), {})


@api.route("/runs/new", "POST")
@html
async def new_run(request: ApiRequest, session: Session) -> HTTPResponse:
    """Start a run as ``POST /v1/runs`` does (checked, admitted and counted the same way):
    the new run's page, or the form again with each fault next to its field."""
    sent = form(request)
    fields = {name: sent.get(name) or "" for name in run_form.FIELDS}
    try:
        body = run_form.body_of(fields)
    except run_form.FormFaults as exc:
        return _new_run(session, fields, exc.faults)
    try:
        req, objective, budget = await prepare_body(request, session.key, orjson.dumps(body))
        run_id = (await enqueue(request, session.key, req, objective, budget)).id
    except (ApiError, decido.ExpressionError, decido.EngineError) as exc:
        return _new_run(session, fields, run_form.faults_of(as_api_error(exc)))
    return redirect(f"/dashboard/runs/{run_id}")


def _new_run(session: Session, fields: dict[str, str],
             faults: dict[str, list[str]]) -> HTTPResponse:
    """The new-run page (shown again with its faults: 200, as the decide form)."""
    return page("run_new.html", session=session, fields=fields, faults=faults,
                engines=sorted(engine_table()), default_engine=decido.default_engine(),
                default_multi_engine=default_multi_engine())


@api.route("/keys", "POST")
@html
async def create_key(request: ApiRequest, session: Session) -> HTTPResponse:
    """Make a key in the signed-in key's account (free plan and tier, as ``POST
    /v1/keys``, throttled per address the same way); its secret is shown once."""
    label = (form(request).get("label") or "").strip() or None
    if label is not None and len(label) > MAX_LABEL:
        raise ApiError("invalid_parameter", f"label: at most {MAX_LABEL} characters")
    record, secret = await issue_free_key(request, label, owner=session.key["id"])
    return page("keys.html", session=session,
                keys=await request.app.ctx.store.accounts.account_keys(session.key["id"]),
                created={"secret": secret, "record": record})


@api.route("/keys/<key_id:str>/revoke", "POST")
@html
async def revoke_key(request: ApiRequest, session: Session, key_id: str) -> HTTPResponse:
    """Revoke a key of the account (the signed-in one too: that ends the session)."""
    store = request.app.ctx.store
    if key_id not in {k["id"] for k in await store.accounts.account_keys(session.key["id"])}:
        raise ApiError("not_found", f"no key {key_id!r} in this account")
    await store.accounts.revoke_key(key_id)
    revoked = await store.accounts.get_key(key_id)
    if revoked is not None and revoked["revoked_at"] is not None:  # its streams here end now
        request.app.ctx.streams.revoked(key_id, revoked["revoked_at"])
    if key_id == session.key["id"]:
        await sessions.end(request, session)
        return sessions.clear_cookies(request, redirect(SIGN_IN))
    return redirect("/dashboard/keys")


@api.route("/decide", "GET")
@html
async def decide_page(request: ApiRequest, session: Session) -> HTTPResponse:
    """The decide form, empty (its example greyed in the boxes), filled with the example
    (``example=1``: "Use the example" without script), or with the front of the run
    named by ``from_run`` or of the study named by ``from_study`` ("choose from this
    front")."""
    named = [(m, v) for m in decide_form.SOURCES if (v := request.args.get(m))]
    if named:
        fields = await front.decide_fields(request, session.key, *named[0])
    else:
        fields = decide_form.example() if request.args.get("example") else decide_form.defaults()
    return _decide(session, fields, None, None, [])


@api.route("/decide", "POST")
@html
async def decide(request: ApiRequest, session: Session) -> HTTPResponse:
    """Decide as ``POST /v1/decide`` does (counted and logged); the ranking, or the
    faults next to the form, which keeps what was typed."""
    sent = form(request)
    fields = {name: sent.get(name) or "" for name in decide_form.FIELDS}
    upload = request.files.get("options_file") if request.files else None
    named = [m for m in decide_form.SOURCES if fields[m]]
    if named:  # the options are the front named (the form shows a preview)
        fields = await front.decide_fields(request, session.key, named[0], fields[named[0]],
                                           fields)
    elif upload is not None and upload.body:
        fields["options"] = upload.body.decode("utf-8", errors="replace")
    try:
        body = decide_form.body_of(fields)
    except decide_form.FormError as exc:
        return _decide(session, fields, None, None, exc.problems)
    try:  # counted and logged as a /v1/decide call with this body (as sent)
        resolved, points = await bridge.resolve(front.source(request, session.key), body)
        sampling.refuse_over_cap(resolved, limits.plan_limits(
            session.key, settings=request.app.ctx.settings)["max_smaa_values"], batch=False)
        result, _ = await decisions.decide(
            request.app.ctx, request.ctx, session.key, "decide",
            bridge.with_points(decido.decide, points, batch=False), resolved,
            orjson.dumps(body), log=True, heavy=resolved is not body)  # heavy: on a front
    except decido.DecisionError as exc:
        problems = [f"{e.get('pointer') or 'body'}: {e.get('message')}" for e in exc.errors]
        return _decide(session, fields, body, None, problems)
    return _decide(session, fields, body, result, [])


def _decide(session: Session, fields: dict[str, str], body: object, result: object,
            problems: list[str]) -> HTTPResponse:
    """The decide page (a form shown again with its faults is a page like any other: 200,
    as the sign-in form with its message)."""
    shown = None if body is None else pretty(body)
    return page("decide.html", session=session, fields=fields,
                methods=decide_form.METHODS, weightings=decide_form.WEIGHTINGS,
                aggregations=decide_form.AGGREGATIONS, example=decide_form.EXAMPLE,
                body=shown, result=result, problems=problems)
