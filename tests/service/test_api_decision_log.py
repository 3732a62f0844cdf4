"""The decision log through a real server: recorded, listed a page at a time, read back,
private to its key, skipped with "log": false, and every bad parameter named."""

from __future__ import annotations

from conftest import LiveServer, auth
from test_api_meta import assert_problem

DECISION = {"options": [{"id": "a", "attributes": {"price": 10, "quality": 7}},
                        {"id": "b", "attributes": {"price": 12, "quality": 9}},
                        {"id": "c", "attributes": {"price": 10, "quality": 7}}],
            "method": "wsm",
            "criteria": [{"attribute": "price", "goal": "minimize", "weight": 1},
                         {"attribute": "quality", "weight": 1}]}


def _log(server: LiveServer, key: str, query: str = "") -> dict:
    r = server.request("GET", f"/v1/decisions{query}", headers=auth(key))
    assert r.status == 200, r.body
    return r.json()


def test_decisions_are_logged_listed_and_read_back(server: LiveServer) -> None:
    key = server.create_key(plan="sdk")["key"]
    answers = []
    for i in range(3):
        r = server.request("POST", "/v1/decide", {**DECISION, "id": f"d{i}"}, headers=auth(key))
        assert r.status == 200
        answers.append(r.json())
    batch = {"defaults": DECISION, "decisions": [{"id": "x"}, {"id": "y", "method": "nope"}]}
    assert server.request("POST", "/v1/batch", batch, headers=auth(key)).status == 200

    page = _log(server, key, "?limit=2")
    assert page["has_more"] is True
    newest, second = page["data"]
    assert newest["kind"] == "batch" and (newest["n_ok"], newest["n_error"]) == (1, 1)
    assert second["kind"] == "decide" and second["method"] == "wsm"
    assert second["best"] == answers[2]["best"]
    assert second["best_is_tied"] == answers[2]["best_is_tied"]
    assert [t["id"] for t in second["top"]] == [r["id"] for r in answers[2]["ranking"]]
    rest = _log(server, key, f"?limit=100&starting_after={second['id']}")
    assert rest["has_more"] is False and len(rest["data"]) == 2
    assert all(e["id"].startswith("dec_") for e in rest["data"])

    r = server.request("GET", f"/v1/decisions/{second['id']}", headers=auth(key))
    assert r.status == 200
    record = r.json()
    assert record["request"] == {**DECISION, "id": "d2"}
    assert record["answer"] == answers[2] and record["answer_truncated"] is False


def test_a_logged_request_reads_back_as_the_service_read_it(server: LiveServer) -> None:
    """A number past 64 bits is a double to the service (orjson): the log keeps the body as
    sent and reads it back the same way (it was a 500: read back as a Python int, which
    orjson cannot write)."""
    key = server.create_key(plan="sdk")["key"]
    raw = (b'{"options": [{"id": "a", "attributes": {"price": 123456789012345678901234567890}},'
           b' {"id": "b", "attributes": {"price": 2}}], "method": "wsm",'
           b' "criteria": [{"attribute": "price", "weight": 1}]}')
    r = server.request("POST", "/v1/decide", raw=raw,
                       headers={**auth(key), "Content-Type": "application/json"})
    assert r.status == 200, r.body
    entry = _log(server, key)["data"][0]
    r = server.request("GET", f"/v1/decisions/{entry['id']}", headers=auth(key))
    assert r.status == 200, r.body
    assert r.json()["request"]["options"][0]["attributes"]["price"] == 1.2345678901234568e29


def test_log_false_keeps_a_call_out_of_the_log(server: LiveServer) -> None:
    key = server.create_key()["key"]
    assert server.request("POST", "/v1/decide", {**DECISION, "log": False},
                          headers=auth(key)).status == 200
    batch = {"defaults": {**DECISION, "log": False}, "decisions": [{"id": 1}]}
    assert server.request("POST", "/v1/batch", batch, headers=auth(key)).status == 200
    assert _log(server, key) == {"data": [], "has_more": False}
    r = server.request("POST", "/v1/decide", {**DECISION, "log": "no"}, headers=auth(key))
    body = assert_problem(r, 400, "invalid_parameter")
    assert "log" in body["detail"]


def test_another_keys_log_is_not_found(server: LiveServer) -> None:
    mine, theirs = server.create_key()["key"], server.create_key()["key"]
    assert server.request("POST", "/v1/decide", DECISION, headers=auth(mine)).status == 200
    entry = _log(server, mine)["data"][0]
    assert _log(server, theirs)["data"] == []
    r = server.request("GET", f"/v1/decisions/{entry['id']}", headers=auth(theirs))
    assert_problem(r, 404, "not_found")
    # another key's entry as a cursor is only a position: none of this key's is there
    r = server.request("GET", f"/v1/decisions?starting_after={entry['id']}", headers=auth(theirs))
    assert r.status == 200 and r.json() == {"data": [], "has_more": False}


def test_bad_page_parameters_are_named(server: LiveServer) -> None:
    key = server.create_key()["key"]
    # "limit=" with no value is not the default page: the document says an integer
    for query in ("?limit=0", "?limit=101", "?limit=x", "?limit=-1", "?limit=2.5", "?limit=",
                  "?limit=%201"):
        r = server.request("GET", f"/v1/decisions{query}", headers=auth(key))
        body = assert_problem(r, 400, "invalid_parameter")
        assert body["detail"].startswith("limit"), query
    for query in ("?starting_after=", "?starting_after=dec_nope",
                  f"?starting_after=dec_{'0' * 23}", f"?starting_after=run_{'0' * 24}"):
        r = server.request("GET", f"/v1/decisions{query}", headers=auth(key))
        body = assert_problem(r, 400, "invalid_parameter")
        assert body["detail"].startswith("starting_after"), query
    assert_problem(server.request("GET", "/v1/decisions/dec_nope", headers=auth(key)),
                   404, "not_found")
    assert_problem(server.request("GET", "/v1/decisions"), 401, "missing_credentials")


def test_long_option_ids_are_cut_in_summaries(server: LiveServer) -> None:
    """100 decisions whose option id was 1 MB made one list page answer 190 MiB: a summary
    keeps ids of at most ID_CAP characters; the entry's request keeps the id whole."""
    from decido_service.decisions.log import ID_CAP

    key = server.create_key(plan="sdk")["key"]
    long_id = "o" * 300_000
    body = {**DECISION, "options": [{**DECISION["options"][1], "id": long_id},
                                    *DECISION["options"][:1]]}
    assert server.request("POST", "/v1/decide", body, headers=auth(key)).status == 200
    batch = {"defaults": body, "decisions": [{"id": long_id}]}
    assert server.request("POST", "/v1/batch", batch, headers=auth(key)).status == 200
    r = server.request("GET", "/v1/decisions", headers=auth(key))
    assert len(r.body) < 10_000, len(r.body)
    batch_entry, entry = r.json()["data"]
    cut = long_id[:ID_CAP - 1] + "…"
    assert entry["best"] == cut and entry["top"][0]["id"] == cut
    assert batch_entry["top"][0]["id"] == cut and batch_entry["top"][0]["best"] == cut
    whole = _log(server, key, "")["data"][1]["id"]
    full = server.request("GET", f"/v1/decisions/{whole}", headers=auth(key)).json()
    assert full["request"]["options"][0]["id"] == long_id


def test_a_page_is_bounded_by_bytes(tmp_path) -> None:
    """Summaries can be large (an explained ranking keeps its items whole; entries logged
    before ids were cut): a page stops at about PAGE_BYTES (at least one entry), and
    has_more says the rest follows."""
    import asyncio
    import json

    import msgspec

    from decido_service.decisions.log import PAGE_BYTES, page
    from decido_service.store import DecisionEntry, open_store

    async def scenario() -> None:
        store = await open_store(str(tmp_path / "log.db"))
        try:
            big = json.dumps({"kind": "decide", "status": "ok", "best": "b" * 300_000,
                              "top": [{"id": "b" * 300_000, "rank": 1, "score": 1.0,
                                       "explanation": "e" * 300_000}],
                              "elapsed_ms": 1.0, "answer_truncated": False})
            entries = [DecisionEntry(f"dec_{i:024x}", "k1", "2026-01-01T00:00:00Z", 1.0 + i,
                                     big, "{}", None) for i in range(8)]
            await store.admissions.admit_many([], entries)
            seen, after, pages = [], None, 0
            while True:
                found = await page(store, "k1", 100, after)
                assert 1 <= len(found.data)
                assert len(msgspec.json.encode(found.data)) <= PAGE_BYTES + 1000
                seen += [e.id for e in found.data]
                pages += 1
                if not found.has_more:
                    break
                after = found.data[-1].id
            assert sorted(seen) == sorted(e.id for e in entries)  # every one, once
            assert pages >= 3  # about 300 kB each: three to a page
        finally:
            await store.close()

    asyncio.run(scenario())
