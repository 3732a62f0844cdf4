"""How the dashboard answers: Jinja2 pages, redirects, its static assets, its headers.

Templates are Jinja2 with autoescaping on for every template: labels, expressions, option
ids and problem details are user text, and an engine that escapes by default is the
safest way to put them in HTML (plain string templates would need an escape call at every
insertion, and one forgotten is an XSS hole). Every page is sent with a strict
Content-Security-Policy (:data:`CSP`: only this origin, no inline script or style, no
framing), ``no-store`` and ``nosniff``. Scripts are files under ``static/``; data a
script needs is in ``data-*`` attributes or fetched from the dashboard's JSON endpoints.
"""

from __future__ import annotations

import gzip
from functools import cache
from importlib import resources
from typing import Any

import jinja2
import orjson
from sanic.response import HTTPResponse

from decido_service import __version__
from decido_service.dashboard.summary import excluded_by_constraint, number_text
from decido_service.http.problems import ApiError
from decido_service.http.responses import Response
from decido_service.store import short_id

__all__ = ["ASSETS", "CSP", "NOSNIFF", "asset", "page", "pretty", "redirect"]

#: ``X-Content-Type-Options`` of everything the dashboard answers: never sniffed
NOSNIFF = "nosniff"
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
       "form-action 'self'; frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": NOSNIFF,
           "Referrer-Policy": "same-origin", "X-Frame-Options": "DENY",
           "Cache-Control": "no-store"}
#: an asset's content type by the end of its name (after its last dot)
_TYPES = {"js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
          "LICENSE": "text/plain; charset=utf-8", "svg": "image/svg+xml"}
#: file name -> content type of every asset /dashboard/static/<name> serves
ASSETS = {name: _TYPES[name.rpartition(".")[2]] for name in (
    "uPlot.iife.min.js", "uPlot.min.css", "uPlot.LICENSE", "dash.css", "dash.js", "run.js",
    "compare.js", "front.js", "front_compare.js", "decide.js", "study.js", "favicon.svg")}

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("decido_service.dashboard", "templates"),
    autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
_ENV.globals["version"] = __version__
_ENV.filters["short"] = short_id
_ENV.filters["number_text"] = number_text
_ENV.filters["by_constraint"] = excluded_by_constraint


def page(template: str, status: int = 200, **context: Any) -> HTTPResponse:
    """The page ``template`` rendered with ``context``, with the dashboard's headers."""
    html = _ENV.get_template(template).render(**context)
    return Response(html, status=status, content_type="text/html; charset=utf-8",
                    headers=dict(HEADERS))


def pretty(value: Any) -> str:
    """``value`` as indented JSON, as the pages show a request, an answer or a result."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


def redirect(location: str, *cookies: str | None) -> HTTPResponse:
    """303 See Other to ``location`` (a path of this origin), setting ``cookies``."""
    response = Response(status=303, headers={"Location": location, **HEADERS})
    for cookie in cookies:
        if cookie is not None:
            response.headers.add("Set-Cookie", cookie)
    return response


@cache
def _asset_bytes(name: str, gzipped: bool) -> bytes:
    data = resources.files("decido_service.dashboard").joinpath("static", name).read_bytes()
    return gzip.compress(data, 9, mtime=0) if gzipped else data


def asset(name: str, accept_encoding: str) -> HTTPResponse:
    """One of :data:`ASSETS`, gzip-compressed (once per process) when the client accepts
    it, cached a day by the browser; 404 for any other name."""
    if name not in ASSETS:
        raise ApiError("not_found", f"no dashboard asset {name!r}")
    gzipped = "gzip" in accept_encoding.lower()
    headers = {"Cache-Control": "public, max-age=86400", "X-Content-Type-Options": NOSNIFF,
               "Vary": "Accept-Encoding"}
    if gzipped:
        headers["Content-Encoding"] = "gzip"
    return Response(_asset_bytes(name, gzipped), content_type=ASSETS[name], headers=headers)
