"""Support of the dashboard's browser tests: the live server, chromium, :class:`Visit`.

The server is :class:`LiveServer` of ``tests/service/conftest.py`` (``decido serve``, two
workers, a temporary SQLite store). The browser is Debian's ``chromium`` driven by
Playwright for Python through ``executable_path`` (never Playwright's own browser
download); when ``/usr/bin/chromium`` is missing the session installs it with
``apt-get install -y chromium`` (``apt-get update`` first when that fails), as CI runs as
root from a clean clone.

:class:`Visit` is one browser context signed in (or not) with a key; every scenario ends
with :meth:`Visit.verify`: no console error and no failed request (a missing favicon
counts), every request to the service's own origin, the key absent from every page's
source, from ``localStorage``/``sessionStorage`` and from the cookies.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
from debian import ensure_package

pytest.importorskip("sanic")
playwright_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = "/usr/bin/chromium"
#: generous waits for a loaded 2-core machine (milliseconds, Playwright's unit)
WAIT_MS = 60_000


def _service_conftest() -> Any:
    """``tests/service/conftest.py`` as a module of its own (its LiveServer, auth)."""
    path = Path(__file__).parents[1] / "service" / "conftest.py"
    spec = importlib.util.spec_from_file_location("service_live_server", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


live = _service_conftest()
LiveServer = live.LiveServer
auth = live.auth


def ensure_chromium() -> str:
    """``/usr/bin/chromium``, installed with apt when missing (CI runs as root)."""
    return ensure_package(CHROMIUM, "chromium")


class Visit:
    """A browser context on the dashboard, recording what the checks need."""

    def __init__(self, browser: Any, server: Any, key: str, width: int = 1280) -> None:
        self.server = server
        self.key = key
        self.origin = f"http://127.0.0.1:{server.port}"
        self.context = browser.new_context(viewport={"width": width, "height": 900},
                                           accept_downloads=True)
        self.context.set_default_timeout(WAIT_MS)
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.sources: list[str] = []
        self.context.on("request", lambda r: self.requests.append(r.url))
        self.context.on("requestfailed", lambda r: self._request_failed(r))
        self.page = self.context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("response", self._response)

    def _request_failed(self, request: Any) -> None:
        # an EventSource the page closes itself, or a navigation away, aborts a request
        if "ERR_ABORTED" not in (request.failure or ""):
            self.errors.append(f"{request.url}: {request.failure}")

    def _response(self, response: Any) -> None:
        if response.status >= 400:
            self.errors.append(f"{response.status} {response.url}")
        kind = response.headers.get("content-type", "")
        if kind.startswith(("text/html", "application/json", "text/csv")):
            try:
                self.sources.append(response.text())
            except Exception:  # noqa: BLE001 - a body gone with its page (a redirect)
                pass

    def go(self, path: str) -> Any:
        """Open ``path`` of the dashboard and wait until the page is quiet."""
        self.page.goto(self.origin + path)
        self.page.wait_for_load_state("load")
        return self.page

    def sign_in(self, key: str | None = None) -> None:
        """Sign in through the form (with the keyboard: the form is usable without a
        mouse)."""
        page = self.go("/dashboard/sign-in")
        for _ in range(10):
            if page.evaluate("document.activeElement && document.activeElement.id") == "key":
                break
            page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "key"
        page.keyboard.type(key or self.key)
        page.keyboard.press("Enter")
        page.wait_for_url(self.origin + "/dashboard")

    def verify(self) -> None:
        """The checks every scenario ends with (see the module docs)."""
        assert not self.errors, self.errors
        foreign = [u for u in self.requests if not u.startswith(self.origin + "/")]
        assert not foreign, foreign
        self.sources.append(self.page.content())
        for source in self.sources:
            assert self.key not in source
        storage = self.page.evaluate(
            "JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage)])")
        assert self.key not in storage
        assert all(self.key not in c["value"] for c in self.context.cookies())

    def close(self) -> None:
        self.context.close()
