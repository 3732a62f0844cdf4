"""Unauthenticated endpoints: health, engines, the OpenAPI document and the docs page.

None of them is counted or rate-limited: they are public, read-only and cheap, so no
client can make them refuse another (put a reverse proxy in front for connection-level
protection, see docs/service.md). Health reports the store's readiness as last checked,
at most a second ago. The docs page and its assets
are served from ``decido_service/static`` (vendored Swagger UI); a Content-Security-Policy
of ``'self'`` keeps the browser from loading anything from elsewhere.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Literal

import msgspec
from sanic.response import HTTPResponse

import decido
from decido_service import __version__
from decido_service.http.context import ApiRequest
from decido_service.http.problems import ApiError
from decido_service.http.responses import Response, answer, encode, json_response
from decido_service.http.routes import Doc, Routes
from decido_service.schemas import engine_table
from decido_service.types import Engine, Engines, Health

__all__ = ["api"]

api = Routes("meta")

#: file name -> content type of every asset /v1/docs/<name> serves
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "docs-init.js": "text/javascript; charset=utf-8",
    "LICENSE": "text/plain; charset=utf-8",
    "NOTICE": "text/plain; charset=utf-8",
    "swagger-ui-bundle.js.LICENSE.txt": "text/plain; charset=utf-8",
}
CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
       "script-src 'self'; connect-src 'self'; frame-ancestors 'none'")


@cache
def static_file(name: str) -> bytes:
    """The bytes of a file in ``decido_service/static`` (read once per process)."""
    return resources.files("decido_service").joinpath("static", name).read_bytes()


@cache
def health_bytes(ok: bool) -> bytes:
    """The health answer, encoded once for each state of the store."""
    state: Literal["ok", "unavailable"] = "ok" if ok else "unavailable"
    return encode(Health(state, __version__, state, len(engine_table())))


@cache
def engines() -> Engines:
    """Every engine (read from the library once per process)."""
    return Engines(default=decido.default_engine(),
                   engines=[msgspec.convert(e, Engine) for e in engine_table().values()])


@api.route("/health", get=Doc("health", "Liveness and readiness (store reachable)", "meta",
                              (200, "Health"), keyed=False))
async def health(request: ApiRequest) -> HTTPResponse:
    """Liveness and readiness: 200 when the store answers, else 503 with ``Retry-After``
    (as the other 503s)."""
    ok = await request.app.ctx.readiness.ok()
    return json_response(health_bytes(ok), status=200 if ok else 503,
                         headers=None if ok else {"Retry-After": "1"})


@api.route("/engines", get=Doc("engines", "The optimization engines and their options", "meta",
                               (200, "Engines"), keyed=False))
async def engine_list(request: ApiRequest) -> HTTPResponse:
    """Every engine with its options; ``default`` names the default engine."""
    return answer(engines())


@api.route("/openapi.json", get=Doc("openapi", "This document", "meta", (200, "object"),
                                    keyed=False))
async def openapi(request: ApiRequest) -> HTTPResponse:
    """The OpenAPI 3.1 document of this service."""
    return json_response(request.app.ctx.openapi)


@api.route("/docs", get=Doc("docs", "Interactive documentation (vendored Swagger UI)", "meta",
                            (200, "html"), keyed=False))
async def docs(request: ApiRequest) -> HTTPResponse:
    """Interactive documentation (Swagger UI from vendored assets; no CDN)."""
    return Response(static_file("docs.html"), content_type="text/html; charset=utf-8",
                    headers={"Content-Security-Policy": CSP})


@api.route("/docs/<name:str>", "GET")
async def docs_asset(request: ApiRequest, name: str) -> HTTPResponse:
    """One of the docs page's vendored assets (and their licenses)."""
    if name not in ASSETS:
        raise ApiError("not_found", f"no docs asset {name!r}")
    return Response(static_file(name), content_type=ASSETS[name],
                    headers={"Cache-Control": "public, max-age=86400",
                             "Content-Security-Policy": CSP})
