"""The key cache (``decido_service.admission.KeyCache``) on a real SQLite store: requests that
miss the same key together share one store lookup."""

from __future__ import annotations

import asyncio
from pathlib import Path

from decido_service.admission import KeyCache
from decido_service.store import open_store


def test_concurrent_misses_of_one_key_share_one_lookup(tmp_path: Path) -> None:
    async def main() -> None:
        store = await open_store(f"sqlite:///{tmp_path / 'keys.db'}")
        try:
            record, secret = await store.accounts.create_key("sdk", "pro", "acme")
            other, other_secret = await store.accounts.create_key("free", "free")
            cache = KeyCache(store, ttl=0.0)  # every find misses the cache
            found = await asyncio.gather(*(cache.find(secret) for _ in range(16)),
                                         cache.find(other_secret))
            assert [f["id"] for f in found if f] == [record["id"]] * 16 + [other["id"]]
            assert cache.lookups == 2  # one per key, not one per request
            assert await cache.find(secret) == found[0]  # expired: looked up again
            assert cache.lookups == 3
            assert await cache.find("dk_" + "x" * 43) is None  # unknown: a lookup, not cached
            assert cache.lookups == 4
        finally:
            await store.close()

    asyncio.run(main())
