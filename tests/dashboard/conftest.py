"""Fixtures of the dashboard's browser tests: one chromium and one live server per
module, a fresh key and browser context per test (see ``browser_support``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import Visit, ensure_chromium, live, playwright_api


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless chromium for the module of browser tests (not the session:
    Playwright's sync API keeps an event loop running in this thread while it is open,
    and the store tests' ``asyncio.run`` cannot run beside it)."""
    path = ensure_chromium()
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, headless=True,
                              args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A live server for the module (2 workers: the session secret must be shared)."""
    workdir = tmp_path_factory.mktemp("dashboard")
    db_url = f"sqlite:///{workdir / 'decido.db'}?busy_timeout=5000"
    with live.running(workdir, {}, db_url=db_url) as srv:
        yield srv


@pytest.fixture
def key(server: Any) -> str:
    """A fresh key with room for the scenarios (decisions plan sdk, tier team)."""
    secret: str = server.create_key("sdk", "team", label="dashboard")["key"]
    return secret


@pytest.fixture
def visit(browser: Any, server: Any, key: str) -> Iterator[Visit]:
    """A fresh browser context for ``key`` (not yet signed in)."""
    v = Visit(browser, server, key)
    yield v
    v.close()
