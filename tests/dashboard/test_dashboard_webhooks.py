"""The dashboard's webhooks page in chromium: add an endpoint (its secret shown once),
send a test event to a real receiver on 127.0.0.1 (which verifies it with the
``standardwebhooks`` package) and see the delivery with its attempt, rotate the secret,
disable, delete."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import Visit, live

RECEIVER = Path(__file__).parents[1] / "service" / "webhook_receiver.py"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A live server that may deliver to loopback receivers."""
    workdir = tmp_path_factory.mktemp("dashboard-webhooks")
    with live.running(workdir, {"DECIDO_WEBHOOK_ALLOW_NETWORKS": "127.0.0.0/8"},
                      workers=1) as srv:
        yield srv


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    port = live.free_port()
    proc = subprocess.Popen([sys.executable, str(RECEIVER), str(port), str(tmp_path)])
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        yield port, tmp_path
    finally:
        proc.terminate()
        proc.wait(10)


def test_add_test_rotate_disable_delete(visit: Visit, receiver: tuple[int, Path]) -> None:
    port, folder = receiver
    url = f"http://127.0.0.1:{port}/hook"
    visit.sign_in()
    page = visit.go("/dashboard/webhooks")
    assert page.locator("text=No endpoint yet.").is_visible()
    page.fill("#url", url)
    page.check("input[name=events][value='run.succeeded']")
    page.click("#add-webhook")
    secret = page.input_value("#new-secret")
    assert secret.startswith("whsec_")
    (folder / "secrets.json").write_text(json.dumps([secret]))
    row = page.locator("#webhooks tbody tr")
    assert row.count() == 1 and "run.succeeded" in row.inner_text()

    page.click(f"button[aria-label='Test {url}']")
    page.wait_for_url("**/dashboard/webhooks/wh_*")
    for _ in range(100):  # the page shows the delivery once its attempt is recorded
        state = page.locator("#deliveries [data-col=state]")
        if state.count() and state.first.inner_text() == "delivered":
            break
        time.sleep(0.2)
        page.reload()
    delivery = page.locator("#deliveries tbody tr").first
    assert "webhook.test" in delivery.inner_text() and "HTTP 200" in delivery.inner_text()
    received = [json.loads(line) for line in (folder / "received.jsonl").read_text().splitlines()]
    assert received[0]["verified"] == [secret]  # standardwebhooks accepted it
    assert received[0]["id"] in delivery.inner_text()

    page = visit.go("/dashboard/webhooks")
    page.click(f"button[aria-label='Rotate the secret of {url}']")
    rotated = page.input_value("#new-secret")
    assert rotated.startswith("whsec_") and rotated != secret
    page.click(f"button[aria-label='Disable {url}']")
    page.wait_for_url("**/dashboard/webhooks")
    assert page.locator("#webhooks [data-col=state]").inner_text() == "disabled"
    assert page.locator(f"button[aria-label='Test {url}']").is_disabled()
    page.click(f"button[aria-label='Delete {url}']")
    page.wait_for_url("**/dashboard/webhooks")
    assert page.locator("text=No endpoint yet.").is_visible()
    visit.verify()


def test_a_refused_url_is_named_next_to_the_form(visit: Visit) -> None:
    visit.sign_in()
    page = visit.go("/dashboard/webhooks")
    page.fill("#url", "https://10.0.0.1/hook")
    page.click("#add-webhook")
    problems = page.locator("#webhook-problems").inner_text()
    assert "10.0.0.1" in problems and "not a public address" in problems
    assert page.input_value("#url") == "https://10.0.0.1/hook"  # kept
    visit.verify()
