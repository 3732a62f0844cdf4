"""What a delivery sends: its body and its Standard Webhooks headers.

The body is ``{"type", "timestamp", "data"}``: the event's type, when it happened (ISO
8601 UTC), and its data — for a run event the run document as ``GET /v1/runs/{id}``
answers it (without the trace), built from the run's row as it was written with its final
state; for ``study.completed`` the study as ``GET /v1/studies/{id}`` answered it in the
transaction that finished it; for ``webhook.test``, the endpoint's id. It is the same
bytes on every attempt. It is small whatever the run: a run's front is not in its row
(only its size and hypervolume: :mod:`decido_service.runs.front`), and the delivery
worker builds it in a thread, off the event loop.
The headers are ``webhook-id`` (the delivery's id, the same on every attempt: receivers
deduplicate on it), ``webhook-timestamp`` (the attempt's time, epoch seconds) and
``webhook-signature`` (:func:`~.signing.signature_header`; both secrets for 24 h after a
rotation).
"""

from __future__ import annotations

from typing import Any

import orjson

from decido_service import __version__
from decido_service.runs.api import run_view
from decido_service.store import run_row
from decido_service.store.webhooks import RUN_EVENTS
from decido_service.types import encode
from decido_service.webhooks.signing import signature_header

__all__ = ["TEST_EVENT", "USER_AGENT", "event_body", "request_headers", "signing_secrets"]

#: the event ``POST /v1/webhooks/{id}/test`` sends
TEST_EVENT = "webhook.test"
USER_AGENT = f"decido-webhooks/{__version__}"


def event_body(row: dict[str, Any]) -> bytes:
    """The body of a delivery (module docs)."""
    data = orjson.loads(row["payload"])
    if row["event"] in RUN_EVENTS.values():
        data = run_view(run_row(data))  # a Run, encoded as GET /v1/runs/{id} encodes it
    return encode({"type": row["event"], "timestamp": row["created_at"], "data": data})


def signing_secrets(row: dict[str, Any], now: float) -> list[str]:
    """The secrets that sign at ``now``: the current one, and the previous one within its
    24 h after a rotation."""
    out = [row["secret"]]
    if row.get("old_secret") and (row.get("old_secret_until") or 0) > now:
        out.append(row["old_secret"])
    return out


def request_headers(row: dict[str, Any], body: bytes, now: float) -> dict[str, str]:
    """The headers of an attempt at ``now`` (module docs)."""
    timestamp = int(now)
    return {"webhook-id": row["id"], "webhook-timestamp": str(timestamp),
            "webhook-signature": signature_header(signing_secrets(row, now), row["id"],
                                                  timestamp, body),
            "content-type": "application/json", "user-agent": USER_AGENT}
