"""The dashboard's blueprint and the wrappers every dashboard handler goes through.

:func:`html` wraps a page or a form action: no live session → 303 to the sign-in page (a
forged, expired, ended or revoked one included: never a 500); an :class:`ApiError` (or a
capability's :class:`~decido_service.errors.ServiceError`) raised inside → the error page
with its status; a POST's CSRF token is checked before the handler runs. :func:`data`
wraps what the pages' scripts fetch (JSON, CSV, the event stream): no session → 401
problem+json. Every route of the blueprint, these and the others, is wrapped once by
:func:`decido_service.http.endpoint.endpoint` (request id, access log, problem+json for
anything unexpected: :class:`~decido_service.http.routes.Routes`).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from sanic.request import RequestParameters
from sanic.response import HTTPResponse

from decido_service.dashboard import session as sessions
from decido_service.dashboard.render import NOSNIFF, page, redirect
from decido_service.dashboard.summary import label_filters
from decido_service.errors import ServiceError
from decido_service.http.context import ApiRequest
from decido_service.http.params import parse
from decido_service.http.problems import ApiError, as_api_error
from decido_service.http.routes import Routes
from decido_service.types.params import Params

__all__ = ["SIGN_IN", "api", "bp", "data", "form", "html", "list_query", "query_args"]

api = Routes("dashboard", url_prefix="/dashboard")
bp = api.bp
SIGN_IN = "/dashboard/sign-in"
Handler = Callable[..., Awaitable[HTTPResponse | None]]
Q = TypeVar("Q", bound=Params)


def form(request: ApiRequest) -> RequestParameters:
    """The request's form fields (none for a body that is not a form)."""
    return request.form or RequestParameters()


def query_args(request: ApiRequest) -> dict[str, str]:
    """The query's arguments, a blank one (a filter form's "any") left out."""
    return {k: v[0] for k, v in request.get_args(keep_blank_values=True).items() if v[0]}


def list_query(request: ApiRequest, kind: type[Q]) -> tuple[Q, str | None]:
    """A list page's query (``kind``, as the API's list reads it) and the text of its
    labels box (``project=bridge-A, ...``: the ``metadata[key]`` filters)."""
    args = query_args(request)
    labels = args.pop("labels", None)
    return parse(kind, {**args, **label_filters(labels)}), labels


def html(handler: Callable[..., Awaitable[HTTPResponse]]) -> Handler:
    """A page or form action: ``handler(request, session, *args)`` (see the module docs)."""

    @functools.wraps(handler)
    async def wrapped(request: ApiRequest, *args: Any, **kwargs: Any) -> HTTPResponse:
        session = await sessions.current(request)
        if session is None:
            return redirect(SIGN_IN)
        try:
            if request.method == "POST":
                sessions.check_csrf(request, session, form(request))
            return await handler(request, session, *args, **kwargs)
        except (ApiError, ServiceError) as error:  # a capability's refusal as the API's
            refused = as_api_error(error)  # the page of a refused action or missing resource
            return page("error.html", status=refused.status_code, session=session,
                        error=refused)

    return wrapped


def data(handler: Callable[..., Awaitable[HTTPResponse | None]]) -> Handler:
    """A script's fetch: ``handler(request, session, *args)``; 401 without a session. Its
    answer says ``X-Content-Type-Options: nosniff`` as the pages do (a JSON or CSV
    download is never sniffed into something a browser would run)."""

    @functools.wraps(handler)
    async def wrapped(request: ApiRequest, *args: Any, **kwargs: Any) -> HTTPResponse | None:
        session = await sessions.current(request)
        if session is None:
            raise ApiError("missing_credentials", "sign in to the dashboard first")
        response = await handler(request, session, *args, **kwargs)
        if response is not None:
            response.headers["X-Content-Type-Options"] = NOSNIFF
        return response

    return wrapped
