"""Unauthenticated endpoints: health, engines, the OpenAPI document and the docs page.

None of them is counted or rate-limited: they are public, read-only and cheap, so no
client can make them refuse another (put a reverse proxy in front for connection-level
protection, see docs/service.md). Health reports the store's readiness as last checked,
at most a second ago. The docs page and its assets
are served from ``decido_service/static`` (vendored Swagger UI); a Content-Security-Policy
of ``'self'`` keeps the browser from loading anything from elsewhere.
"""

from __future__ import annotations

from functools import cache, lru_cache
from importlib import resources

import orjson
from sanic import Blueprint, Request
from sanic.response import HTTPResponse

import decido
from decido_service import __version__
from decido_service.http.endpoint import endpoint
from decido_service.http.openapi import openapi_document
from decido_service.http.problems import ApiError
from decido_service.http.responses import Response, json_response, read_route
from decido_service.schemas import engine_table

__all__ = ["bp"]

bp = Blueprint("meta")

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
_HEALTHY = orjson.dumps({"status": "ok", "version": __version__, "store": "ok",
                         "engines": len(engine_table())})


@cache
def static_file(name: str) -> bytes:
    """The bytes of a file in ``decido_service/static`` (read once per process)."""
    return resources.files("decido_service").joinpath("static", name).read_bytes()


@lru_cache(maxsize=1)
def openapi_bytes() -> bytes:
    """The OpenAPI document, serialized once."""
    return orjson.dumps(openapi_document())


@read_route(bp, "/health")
@endpoint
async def health(request: Request) -> HTTPResponse:
    """Liveness and readiness: 200 when the store answers, else 503 with ``Retry-After``
    (as the other 503s)."""
    if await request.app.ctx.readiness.ok():
        return json_response(_HEALTHY)
    body = {"status": "unavailable", "version": __version__, "store": "unavailable",
            "engines": len(engine_table())}
    return json_response(orjson.dumps(body), status=503, headers={"Retry-After": "1"})


@read_route(bp, "/engines")
@endpoint
async def engines(request: Request) -> HTTPResponse:
    """Every engine with its options; ``default`` names the default engine."""
    body = {"default": decido.default_engine(), "engines": list(engine_table().values())}
    return json_response(orjson.dumps(body))


@read_route(bp, "/openapi.json")
@endpoint
async def openapi(request: Request) -> HTTPResponse:
    """The OpenAPI 3.1 document of this service."""
    return json_response(openapi_bytes())


@read_route(bp, "/docs")
@endpoint
async def docs(request: Request) -> HTTPResponse:
    """Interactive documentation (Swagger UI from vendored assets; no CDN)."""
    return Response(static_file("docs.html"), content_type="text/html; charset=utf-8",
                    headers={"Content-Security-Policy": CSP})


@read_route(bp, "/docs/<name:str>")
@endpoint
async def docs_asset(request: Request, name: str) -> HTTPResponse:
    """One of the docs page's vendored assets (and their licenses)."""
    if name not in ASSETS:
        raise ApiError("not_found", f"no docs asset {name!r}")
    return Response(static_file(name), content_type=ASSETS[name],
                    headers={"Cache-Control": "public, max-age=86400",
                             "Content-Security-Policy": CSP})
