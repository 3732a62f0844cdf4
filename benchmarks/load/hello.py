"""The baseline: a bare Sanic hello-world, run the way ``decido serve`` runs (factory, workers).

``python benchmarks/load/hello.py PORT WORKERS`` serves ``GET /`` -> ``{"hello": "world"}``
with orjson and no access log (and ``GET /headers``: the same with decido's four required
response headers, as a second reference; ``GET /headers-encoded``: those again, in
decido's :class:`~decido_service.http.responses.Response`, whose header encoding skips Sanic's
sanitiser when there is nothing to strip), so the load script can measure decido against
the framework itself, and that encoding against Sanic's, in the same run on the same
machine.
"""

from __future__ import annotations

import sys

import orjson
from sanic import Request, Sanic
from sanic.response import HTTPResponse, raw
from sanic.worker.loader import AppLoader

from decido_service.http.responses import Response

HEADERS = {"X-Request-Id": "0123456789abcdef0123456789abcdef", "X-RateLimit-Limit": "120",
           "X-RateLimit-Remaining": "119", "X-RateLimit-Reset": "1767225600"}


def create_app() -> Sanic:
    """The hello-world app."""
    app = Sanic("hello", dumps=orjson.dumps, loads=orjson.loads)

    @app.get("/")
    async def hello(request: Request) -> HTTPResponse:
        return raw(orjson.dumps({"hello": "world"}), content_type="application/json")

    @app.get("/headers")
    async def hello_with_headers(request: Request) -> HTTPResponse:
        """The same answer with the four headers every decido response must carry (fixed
        values): how much of the gap to decido is the headers alone."""
        return raw(orjson.dumps({"hello": "world"}), content_type="application/json",
                   headers=HEADERS)

    @app.get("/headers-encoded")
    async def hello_with_headers_encoded(request: Request) -> HTTPResponse:
        """The same as ``/headers`` in decido's response class."""
        return Response(orjson.dumps({"hello": "world"}), content_type="application/json",
                        headers=HEADERS)

    return app


def main() -> None:
    port, workers = int(sys.argv[1]), int(sys.argv[2])
    loader = AppLoader(factory=create_app)
    app = loader.load()
    app.prepare(host="127.0.0.1", port=port, workers=workers, access_log=False, motd=False,
                single_process=False)
    Sanic.serve(primary=app, app_loader=loader)


if __name__ == "__main__":
    main()
