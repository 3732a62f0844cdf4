"""The dashboard's blueprint and the wrappers every dashboard handler goes through.

:func:`html` wraps a page or a form action: no live session → 303 to the sign-in page (a
forged, expired, ended or revoked one included: never a 500); an :class:`ApiError` raised
inside → the error page with its status; a POST's CSRF token is checked before the
handler runs. :func:`data` wraps what the pages' scripts fetch (JSON, CSV, the event
stream): no session → 401 problem+json. Both sit inside
:func:`decido_service.http.endpoint.endpoint` (request id, access log, problem+json for
anything unexpected).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from sanic import Blueprint, Request
from sanic.request import RequestParameters
from sanic.response import HTTPResponse

from decido_service.dashboard import session as sessions
from decido_service.dashboard.render import page, redirect
from decido_service.dashboard.session import Session
from decido_service.http.endpoint import endpoint
from decido_service.http.problems import ApiError

__all__ = ["SIGN_IN", "bp", "data", "form", "html", "route"]

bp = Blueprint("dashboard", url_prefix="/dashboard")
SIGN_IN = "/dashboard/sign-in"
Handler = Callable[..., Awaitable[HTTPResponse | None]]
H = TypeVar("H", bound=Callable[..., Awaitable[Any]])


def route(uri: str, methods: tuple[str, ...] = ("GET", "HEAD")) -> Callable[[H], H]:
    """Sanic's ``Blueprint.route`` on the dashboard's blueprint, typed."""
    return cast(Callable[[H], H], bp.route(uri, methods=methods))


def form(request: Request) -> RequestParameters:
    """The request's form fields (none for a body that is not a form)."""
    return request.form or RequestParameters()


def html(handler: Callable[..., Awaitable[HTTPResponse]]) -> Handler:
    """A page or form action: ``handler(request, session, *args)`` (see the module docs)."""

    @endpoint
    @functools.wraps(handler)
    async def wrapped(request: Request, *args: Any, **kwargs: Any) -> HTTPResponse:
        session = await sessions.current(request)
        if session is None:
            return redirect(SIGN_IN)
        try:
            if request.method == "POST":
                sessions.check_csrf(request, session, form(request))
            return await handler(request, session, *args, **kwargs)
        except ApiError as error:
            return error_page(session, error)

    return wrapped


def error_page(session: Session | None, error: ApiError) -> HTTPResponse:
    """The page that shows a refused action or a missing resource."""
    return page("error.html", status=error.status_code, session=session, error=error)


def data(handler: Callable[..., Awaitable[HTTPResponse | None]]) -> Handler:
    """A script's fetch: ``handler(request, session, *args)``; 401 without a session."""

    @endpoint
    @functools.wraps(handler)
    async def wrapped(request: Request, *args: Any, **kwargs: Any) -> HTTPResponse | None:
        session = await sessions.current(request)
        if session is None:
            raise ApiError("missing_credentials", "sign in to the dashboard first")
        return await handler(request, session, *args, **kwargs)

    return wrapped
