"""Several nodes on one PostgreSQL database, through real servers: three ``decido serve``
processes (2 workers each) on three ports. Limits hold exactly across them, the address
throttle of key creation too; killing their database connections under load costs no
500 and no uncounted admission; an outage of the database is a 503 with ``Retry-After``
(health too) and every node recovers by itself. And one store whose server goes away
and comes back (through a TCP proxy the test takes down)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import FAKE_NOW, LiveServer, Response, auth, fake_clock_supported
from pg_server import allow_connections, terminate_backends, throwaway_database
from test_api_decide import DECISION

from decido_service.store import AdmissionRequest, CounterSpec, StoreError, open_store

NODES = 3
#: the plan limits of these tests: free's month and sdk's minute are the ones reached
PLANS = {"free": {"minute": 100_000, "month": 137, "refused": 100_000},
         "sdk": {"minute": 53, "month": 100_000, "refused": 100_000},
         "rtl": {"minute": 100_000, "month": 100_000, "refused": 100_000}}
KEYS_PER_HOUR = 7
PG_SOCKET = "/var/run/postgresql/.s.PGSQL.5432"


@contextlib.contextmanager
def nodes(workdir: Path, url: str, count: int = NODES, env: dict[str, str] | None = None,
          workers: int = 2) -> Iterator[list[LiveServer]]:
    """``count`` servers on one database, started together, stopped on the way out
    (``env``: more settings; ``DECIDO_FAKE_NOW=""`` runs them on the real clock)."""
    base = {"DECIDO_PLANS": json.dumps(PLANS), "DECIDO_KEYS_PER_HOUR": str(KEYS_PER_HOUR)}
    if fake_clock_supported():
        base["DECIDO_FAKE_NOW"] = str(FAKE_NOW)  # no minute rolls over during a test
    env = {**base, **(env or {})}
    servers = []
    for i in range(count):
        folder = workdir / f"node{i}"
        folder.mkdir()
        servers.append(LiveServer(folder, dict(env), workers=workers, db_url=url))
    try:
        with ThreadPoolExecutor(count) as pool:
            list(pool.map(LiveServer.start, servers))
        yield servers
    finally:
        for server in servers:
            server.stop()


@pytest.fixture
def database() -> Iterator[tuple[str, str]]:
    with throwaway_database() as found:
        yield found


def spread(servers: list[LiveServer], n: int, send: Callable[[LiveServer], Response],
           threads: int = 64) -> list[Response]:
    """``n`` requests sent at once, request ``i`` to node ``i % len(servers)``."""
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(lambda i: send(servers[i % len(servers)]), range(n)))


def decide(key: str) -> Callable[[LiveServer], Response]:
    return lambda server: server.request("POST", "/v1/decide", DECISION, headers=auth(key),
                                         timeout=60)


def used(server: LiveServer, key: str) -> dict[str, int]:
    """The key's decisions this minute and this month, as ``/v1/usage`` reports them."""
    r = server.request("GET", "/v1/usage", headers=auth(key))
    assert r.status == 200, r.body
    decision = r.json()["decision"]
    minute = decision["minute"]
    return {"minute": minute["limit"] - minute["remaining"], "month": decision["month"]["used"]}


def test_limits_are_exact_across_nodes(tmp_path: Path, database: tuple[str, str]) -> None:
    _, url = database
    with nodes(tmp_path, url) as servers:
        monthly = servers[0].create_key(plan="free")["key"]  # 137 a month
        per_minute = servers[1].create_key(plan="sdk")["key"]  # 53 a minute
        for key, limit, window in ((monthly, 137, "month"), (per_minute, 53, "minute")):
            statuses = Counter(r.status for r in spread(servers, 400, decide(key)))
            assert statuses == {200: limit, 429: 400 - limit}, statuses
            for server in servers:
                assert used(server, key)[window] == limit
        # the address throttle of key creation is one counter for every node
        created = spread(servers, 20, lambda s: s.request("POST", "/v1/keys"))
        assert Counter(r.status for r in created) == {201: KEYS_PER_HOUR, 429: 20 - KEYS_PER_HOUR}


def test_terminated_connections_under_load(tmp_path: Path, database: tuple[str, str]) -> None:
    """``pg_terminate_backend`` on every connection, five times while 600 requests run:
    no 500; every 200 counted (the count may exceed the 200s only by 503s whose commit
    was lost); every node serves again afterwards."""
    name, url = database
    with nodes(tmp_path, url) as servers:
        key = servers[0].create_key(plan="rtl")["key"]
        assert decide(key)(servers[0]).status == 200
        with ThreadPoolExecutor(1) as killer:
            def kill() -> int:
                killed = 0
                for _ in range(5):
                    time.sleep(0.3)
                    killed += terminate_backends(name)
                return killed

            killing = killer.submit(kill)
            answers = spread(servers, 600, decide(key), threads=32)
            assert killing.result() > 0
        statuses = Counter(r.status for r in answers)
        assert set(statuses) <= {200, 503}, statuses
        assert all(r.header("retry-after") for r in answers if r.status == 503)
        deadline = time.monotonic() + 30
        for server in servers:
            while decide(key)(server).status != 200:
                assert time.monotonic() < deadline, f"{server.port} does not serve again"
                time.sleep(0.2)
        counted = used(servers[1], key)["month"]
        served = 1 + statuses[200] + NODES  # the first one, the load, one per node after
        assert served <= counted <= served + statuses[503]


def test_an_outage_is_503_and_the_nodes_recover(tmp_path: Path,
                                                database: tuple[str, str]) -> None:
    name, url = database
    with nodes(tmp_path, url) as servers:
        key = servers[0].create_key(plan="rtl")["key"]
        before = spread(servers, 30, decide(key))
        assert {r.status for r in before} == {200}
        allow_connections(name, False)
        terminate_backends(name)
        try:
            time.sleep(1.1)  # past the health check's cache
            during = spread(servers, 30, decide(key), threads=30)
            assert {r.status for r in during} == {503}, Counter(r.status for r in during)
            for r in during:
                assert r.json()["code"] == "store_unavailable" and r.header("retry-after")
            for server in servers:
                health = server.request("GET", "/v1/health")
                assert health.status == 503 and health.json()["store"] == "unavailable"
                assert health.header("retry-after") == "1"
        finally:
            allow_connections(name, True)
        deadline = time.monotonic() + 30
        for server in servers:
            while (server.request("GET", "/v1/health").status != 200
                   or decide(key)(server).status != 200):
                assert time.monotonic() < deadline, f"{server.port} did not recover"
                time.sleep(0.2)
        assert used(servers[2], key)["month"] == 30 + NODES  # nothing counted in the outage


class _Proxy:
    """A TCP front of the local PostgreSQL socket that can be taken down (every connection
    cut, the port closed: as a stopped server looks to its clients) and brought back on the
    same port."""

    def __init__(self) -> None:
        self.port = 0
        self.server: asyncio.base_events.Server | None = None
        self.writers: list[asyncio.StreamWriter] = []

    async def up(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", self.port,
                                                 reuse_address=True)
        self.port = self.server.sockets[0].getsockname()[1]

    async def down(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in self.writers:
            writer.transport.abort()
        self.writers.clear()
        await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_unix_connection(PG_SOCKET)
        self.writers += [writer, up_writer]

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, asyncio.CancelledError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


def test_a_store_survives_its_server_going_away(database: tuple[str, str]) -> None:
    """The server goes away (connections cut, port closed): calls fail fast with
    ``StoreError``, ping says False, nothing is counted; it comes back: the same store
    object admits again, no reopening."""
    if os.environ.get("DECIDO_TEST_POSTGRES") or not os.path.exists(PG_SOCKET):
        pytest.skip(f"the proxy fronts the local server's socket {PG_SOCKET} only")
    name, _ = database
    spec = CounterSpec("t.month", "k", "month", None)

    async def scenario() -> list[int]:
        proxy = _Proxy()
        await proxy.up()
        store = await open_store(f"postgresql://postgres@127.0.0.1:{proxy.port}/{name}"
                                 "?pool_max=2&connect_timeout=2")
        try:
            request = AdmissionRequest([spec], FAKE_NOW)
            assert (await store.admissions.admit_many([request]))[0].admitted
            await proxy.down()
            started = time.monotonic()
            with pytest.raises(StoreError):
                await store.admissions.admit_many([request])
            assert time.monotonic() - started < 5
            assert await store.ping() is False
            with pytest.raises(StoreError):  # at once, within the fail-fast second
                await store.accounts.find_key("dk_" + "a" * 43)
            await proxy.up()
            await asyncio.sleep(1.1)
            assert await store.ping() is True
            assert (await store.admissions.admit_many([request]))[0].admitted
            return [s.used for s in await store.admissions.peek([spec], FAKE_NOW)]
        finally:
            await store.close()
            await proxy.down()

    assert asyncio.run(scenario()) == [2]
