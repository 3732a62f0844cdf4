"""keys.py: generation, format check, hashing, constant-time verify."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from decido_service import keys


def test_generated_secrets_have_the_documented_shape() -> None:
    made = {keys.generate_secret() for _ in range(200)}
    assert len(made) == 200
    for secret in made:
        assert secret.startswith("dk_")
        assert len(secret) == keys.SECRET_LENGTH == 46
        assert keys.is_well_formed(secret)


def test_entropy_is_at_least_256_bits() -> None:
    # 43 base64url characters carry 258 bits, of which token_urlsafe(32) fills 256
    assert keys.TOKEN_BYTES * 8 >= 256
    alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    seen = set("".join(keys.generate_secret()[3:] for _ in range(300)))
    assert seen == alphabet  # the whole alphabet shows up: no accidental narrowing


def test_hash_prefix_and_material() -> None:
    secret, prefix, digest = keys.new_key_material()
    assert prefix == secret[:11] == keys.key_prefix(secret)
    assert digest == hashlib.sha256(secret.encode()).hexdigest() == keys.hash_secret(secret)
    assert len(digest) == 64


def test_verify() -> None:
    secret = keys.generate_secret()
    digest = keys.hash_secret(secret)
    assert keys.verify(secret, digest)
    assert not keys.verify(keys.generate_secret(), digest)
    assert not keys.verify(secret, digest.upper())
    assert not keys.verify(secret[:-1], keys.hash_secret(secret[:-1]))  # malformed: refused
    assert not keys.verify(secret, None)  # type: ignore[arg-type]


def test_verify_uses_compare_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    original = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return original(a, b)

    monkeypatch.setattr(keys.hmac, "compare_digest", spy)
    secret = keys.generate_secret()
    assert keys.verify(secret, keys.hash_secret(secret))
    assert len(calls) == 1


@pytest.mark.parametrize(
    "presented",
    [
        "", "dk_", "dk_abc", "DK_" + "a" * 43, "dk-" + "a" * 43, "dk_" + "a" * 42,
        "dk_" + "a" * 44, "dk_" + "a" * 42 + "=", "dk_" + "a" * 42 + "+", "dk_" + "a" * 42 + " ",
        " dk_" + "a" * 43, "dk_" + "a" * 42 + "\n", "dk_" + "é" * 43, None, 7, b"dk_" + b"a" * 43,
    ],
)
def test_malformed_keys_are_rejected(presented: object) -> None:
    assert not keys.is_well_formed(presented)
