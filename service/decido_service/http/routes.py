"""A blueprint group's routes: every handler wrapped once, every operation documented where
it is routed.

``api = Routes("runs")`` holds a Sanic blueprint and the wrapper its handlers get
(:func:`decido_service.http.endpoint.endpoint` unless told otherwise); ``@api.route(uri,
get=Doc(...), delete=Doc(...))`` routes the handler for those methods (``get`` brings
``HEAD``), wrapped, and records one :class:`Operation` per method for the OpenAPI document
(:mod:`decido_service.http.openapi` reads them: there is no second list of the paths).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple, TypeVar

from sanic import Blueprint

from decido_service.http.endpoint import endpoint
from decido_service.types.params import Params

__all__ = ["API_VERSION", "READ", "READ_PARAMS", "Doc", "Operation", "Routes"]

H = TypeVar("H", bound=Callable[..., Awaitable[Any]])
Wrapper = Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[Any]]]
_PATH_PARAM = re.compile(r"<([A-Za-z_]+)(?::[^>]*)?>")
#: the API's version: its routes are mounted under ``/v1`` (the blueprint group's ``version``)
API_VERSION = 1
#: the problem statuses of a keyed read (:func:`decido_service.http.admission.read`)
READ = (401, 503)
#: those of a read with parameters: a refused one is charged to the refused budget (429 once spent)
READ_PARAMS = (400, 401, 429, 503)


class Doc(NamedTuple):
    """The OpenAPI operation of one method of a route."""

    operation_id: str
    summary: str
    tag: str
    ok: tuple[int, str]
    """status and component (or ``"html"``, ``"object"``, ``"empty"``, ``"events"``,
    ``"study_events"``)"""
    errors: tuple[int, ...] = ()
    """the statuses of its problem answers besides ``default``"""
    body: str | None = None
    """the request body's component"""
    body_required: bool = True
    keyed: bool = True
    description: str | None = None
    params: tuple[type[Params], ...] = ()
    """its parameter Structs (:mod:`decido_service.types.params`)"""


class Operation(NamedTuple):
    """One row of the paths of the OpenAPI document."""

    path: str
    method: str
    doc: Doc


class Routes:
    """A blueprint whose handlers are wrapped by ``wrap`` and whose operations are kept."""

    def __init__(self, name: str, *, wrap: Wrapper = endpoint,
                 url_prefix: str | None = None) -> None:
        self.bp = Blueprint(name, url_prefix=url_prefix)
        self.wrap = wrap
        self.operations: list[Operation] = []

    def route(self, uri: str, *methods: str, head: bool = True,
              **docs: Doc) -> Callable[[H], H]:
        """Route ``uri`` for ``methods`` and the methods of ``docs`` (``get=Doc(...)``:
        GET, and HEAD unless ``head`` is false) to the wrapped handler."""
        names = [*methods, *(m.upper() for m in docs)]
        routed = {*names, *(["HEAD"] if head and "GET" in names else [])}

        def register(handler: H) -> H:
            self.bp.route(uri, methods=sorted(routed), name=handler.__name__)(
                self.wrap(handler))
            path = f"/v{API_VERSION}" + _PATH_PARAM.sub(r"{\1}", uri)
            self.operations += [Operation(path, method, doc) for method, doc in docs.items()]
            return handler

        return register
