"""The decision log's byte cap (``DECIDO_DECISION_LOG_BYTES``) and cursors that outlive their
item, through a real server of their own (a small cap, the real clock: ids carry their
creation time)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import LiveServer, auth, running
from test_api_decision_log import DECISION
from test_api_runs import SPHERE, submit, wait_for

from decido_service.store import open_store
from decido_service.store.decisions import KEEP

CAP = 40_000
#: an option id that makes an entry a few KB (the request and answer keep it whole)
LONG = "o" * 1500


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    workdir = tmp_path_factory.mktemp("capped")
    with running(workdir, {"DECIDO_DECISION_LOG_BYTES": str(CAP)}, workers=1) as server:
        yield server


def _stored(db: Path, key_id: str) -> tuple[int, int]:
    """The key's running total and the sum of its rows' sizes, read from the store."""
    async def main() -> tuple[int, int]:
        store = await open_store(str(db), create=False)
        try:
            row = await store.database.read(lambda tx: tx.fetchrow(
                "SELECT COALESCE(SUM(size), 0) FROM decisions WHERE key_id = ?", key_id))
            assert row is not None
            return await store.decisions.stored_bytes(key_id), int(row[0])
        finally:
            await store.close()

    return asyncio.run(main())


def _listed(server: LiveServer, key: str) -> list[str]:
    r = server.request("GET", "/v1/decisions?limit=100", headers=auth(key))
    assert r.status == 200 and r.json()["has_more"] is False
    return [e["id"] for e in r.json()["data"]]


def test_a_key_s_log_keeps_its_newest_entries_within_the_cap(capped: LiveServer) -> None:
    created = capped.create_key(plan="sdk")
    key, key_id = created["key"], created["id"]
    body = {**DECISION, "options": [{**DECISION["options"][0], "id": LONG},
                                    *DECISION["options"][1:]]}
    logged = []
    for i in range(30):
        r = capped.request("POST", "/v1/decide", {**body, "id": f"d{i:02d}"}, headers=auth(key))
        assert r.status == 200, r.body
        logged.append(_listed(capped, key)[0])
    kept = _listed(capped, key)
    total, rows = _stored(capped.db, key_id)
    mean = total / len(kept)  # the entries differ only in a few bytes (elapsed_ms)
    assert total == rows <= CAP and 1_000 < mean < CAP / 4
    # over the cap, the log went back to KEEP of it: at most one entry less than that
    assert CAP * KEEP - mean - 32 < total and len(kept) < 30
    assert kept == logged[::-1][:len(kept)]
    gone = capped.request("GET", f"/v1/decisions/{logged[0]}", headers=auth(key))
    assert gone.status == 404
    newest = capped.request("GET", f"/v1/decisions/{logged[-1]}", headers=auth(key))
    assert newest.status == 200 and newest.json()["request"]["id"] == "d29"
    # a cursor whose entry the cap deleted still pages: the entries older than it (none)
    r = capped.request("GET", f"/v1/decisions?starting_after={logged[0]}", headers=auth(key))
    assert r.status == 200 and r.json() == {"data": [], "has_more": False}
    r = capped.request("GET", f"/v1/decisions?starting_after={logged[-1]}&limit=2",
                       headers=auth(key))
    assert [e["id"] for e in r.json()["data"]] == kept[1:3]


def test_a_list_goes_on_after_a_run_deleted_while_paging(capped: LiveServer) -> None:
    key = capped.create_key(tier="pro")["key"]
    ids = []
    for seed in range(4):
        ids.append(submit(capped, key, {**SPHERE, "seed": seed})["id"])
        wait_for(capped, key, ids[-1], "succeeded")
        ids.sort()  # ids begin with their creation time: this is their order
    page = capped.request("GET", "/v1/runs?limit=2", headers=auth(key)).json()
    assert [r["id"] for r in page["data"]] == ids[:1:-1] and page["has_more"] is True
    cursor = page["data"][-1]["id"]
    assert capped.request("DELETE", f"/v1/runs/{cursor}", headers=auth(key)).status == 204
    rest = capped.request("GET", f"/v1/runs?limit=2&starting_after={cursor}", headers=auth(key))
    assert rest.status == 200, rest.body
    assert [r["id"] for r in rest.json()["data"]] == ids[1::-1]
    assert rest.json()["has_more"] is False
