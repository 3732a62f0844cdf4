"""API keys: generation, format check, hashing and constant-time verification.

A secret is ``"dk_" + secrets.token_urlsafe(32)``: 256 random bits, 46 characters of the
URL-safe base64 alphabet. The store keeps only ``hash_secret(secret)`` (SHA-256, hex) and
the public :func:`key_prefix` (the first 11 characters, e.g. ``dk_AbCdEfGh``) that lets a
person recognise a key in listings. A presented key that is not well formed is rejected by
:func:`is_well_formed` before any store lookup.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

PREFIX = "dk_"
TOKEN_BYTES = 32
PREFIX_LENGTH = 11
SECRET_LENGTH = len(PREFIX) + 43  # token_urlsafe(32): 43 base64url characters, no padding

_SECRET_RE = re.compile(r"dk_[A-Za-z0-9_-]{43}")


def generate_secret() -> str:
    """A new random secret (never stored, never logged; shown once to its owner)."""
    return PREFIX + secrets.token_urlsafe(TOKEN_BYTES)


def is_well_formed(secret: object) -> bool:
    """True when ``secret`` has the shape of a decido key (``dk_`` + 43 base64url chars)."""
    return isinstance(secret, str) and _SECRET_RE.fullmatch(secret) is not None


def hash_secret(secret: str) -> str:
    """SHA-256 of the secret, lowercase hex: what the store keeps and looks keys up by.

    A plain (unsalted) hash is right here: the secret has 256 bits of entropy, so it cannot
    be guessed from its hash, and a deterministic hash allows an indexed lookup."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def key_prefix(secret: str) -> str:
    """The public, displayable start of a key (first 11 characters)."""
    return secret[:PREFIX_LENGTH]


def verify(secret: str, stored_hash: str) -> bool:
    """Constant-time check that ``secret`` hashes to ``stored_hash``."""
    if not is_well_formed(secret) or not isinstance(stored_hash, str):
        return False
    return hmac.compare_digest(hash_secret(secret).encode("ascii"), stored_hash.encode("ascii"))


def new_key_material() -> tuple[str, str, str]:
    """``(secret, prefix, hash)`` for a new key."""
    secret = generate_secret()
    return secret, key_prefix(secret), hash_secret(secret)
