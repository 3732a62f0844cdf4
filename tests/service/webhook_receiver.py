"""A webhook receiver for the tests, run as a process of its own on 127.0.0.1:

    python webhook_receiver.py PORT DIR

It verifies every request with the ``standardwebhooks`` package (the specification's
own library, not code of ours) against each secret listed in ``DIR/secrets.json`` (written
by the test once it knows them), and appends one JSON line per request to
``DIR/received.jsonl``: path, ``webhook-id``, the secrets that verified it, the body.
Its answers: ``DIR/plan.json`` holds ``{"statuses": [...]}`` (answered in order, then
200; afresh when the plan changes) or ``{"fail_first": true}`` (500 to the first request
of each ``webhook-id``, 200 to the next); a 302 is sent with ``Location`` pointing back
at this receiver's ``/redirected``; a 503 carries ``Retry-After: 1``.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

PORT, DIR = int(sys.argv[1]), Path(sys.argv[2])
LOCK = threading.Lock()
SEEN: dict[str, int] = {}
ANSWERED: dict[str, int] = {}  # plan.json's text -> requests answered under it


def _json(name: str, default: object) -> object:
    path = DIR / name
    return json.loads(path.read_text()) if path.exists() else default


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        headers = {k.lower(): v for k, v in self.headers.items()}
        verified = []
        for secret in _json("secrets.json", []):  # type: ignore[union-attr]
            try:
                Webhook(secret).verify(body, headers)
                verified.append(secret)
            except WebhookVerificationError:
                pass
        msg_id = headers.get("webhook-id", "")
        plan: dict = _json("plan.json", {})  # type: ignore[assignment]
        key = json.dumps(plan, sort_keys=True)
        with LOCK:
            SEEN[msg_id] = SEEN.get(msg_id, 0) + 1
            statuses = plan.get("statuses", [])
            if plan.get("fail_first"):
                status = 500 if SEEN[msg_id] == 1 else 200
            else:
                done = ANSWERED.get(key, 0)
                status = statuses[done] if done < len(statuses) else 200
            ANSWERED[key] = ANSWERED.get(key, 0) + 1
            with open(DIR / "received.jsonl", "a") as out:
                out.write(json.dumps({"path": self.path, "id": msg_id, "verified": verified,
                                      "headers": headers, "body": body.decode(),
                                      "status": status}) + "\n")
        self.send_response(status)
        if status == 302:
            self.send_header("Location", f"http://127.0.0.1:{PORT}/redirected")
        if status == 503:
            self.send_header("Retry-After", "1")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
