"""Standard Webhooks v1 signing (https://www.standardwebhooks.com/).

A secret is ``whsec_`` + base64 of :data:`SECRET_BYTES` random bytes; the signature of a
delivery is ``v1,`` + base64 of HMAC-SHA256, keyed with the secret's bytes, of
``"{webhook-id}.{webhook-timestamp}.{body}"``. While a rotated-out secret still signs
(24 h after a rotation), the ``webhook-signature`` header carries both signatures,
separated by a space, as the specification allows; a receiver holding either secret
verifies the delivery.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Iterable

__all__ = ["PREFIX", "SECRET_BYTES", "new_secret", "signature_header"]

PREFIX = "whsec_"
#: random bytes of a signing secret (the specification asks for 24 to 64)
SECRET_BYTES = 32


def new_secret() -> str:
    """A fresh signing secret."""
    return PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def _key(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix(PREFIX))


def signature_header(signing_secrets: Iterable[str], msg_id: str, timestamp: int,
                     body: bytes) -> str:
    """The ``webhook-signature`` header: one ``v1,<base64>`` per secret, space-separated."""
    content = f"{msg_id}.{timestamp}.".encode() + body
    return " ".join(
        "v1," + base64.b64encode(hmac.new(_key(s), content, hashlib.sha256).digest()).decode()
        for s in signing_secrets)
