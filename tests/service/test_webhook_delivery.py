"""One delivery attempt (:func:`decido_service.webhooks.delivery.post`) against servers
on 127.0.0.1: over https it connects to the address the guard checked and sends the name
as the TLS server name and the Host header, the certificate verified against the name
(a certificate of another name fails); an answer that never comes is a timeout; a huge
answer is read up to the cap and only an excerpt kept. A stub resolver maps the names."""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
import subprocess
from pathlib import Path

import httpx
import pytest

from decido_service.webhooks import delivery

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)


async def stub(host: str, port: int) -> list[str]:
    assert host in ("receiver.hooks.lan", "other.hooks.lan")
    return ["127.0.0.1"]


def certificate(folder: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for ``name`` (openssl), and its key."""
    cert, key = folder / f"{name}.pem", folder / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", f"/CN={name}", "-addext", f"subjectAltName=DNS:{name}",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return cert, key


class Server:
    """An HTTP(S) server on 127.0.0.1 that records the TLS server name and the request
    head, and answers ``answer`` (or nothing at all)."""

    def __init__(self, answer: bytes | None, tls: ssl.SSLContext | None = None) -> None:
        self.answer = answer
        self.tls = tls
        self.sni: list[str | None] = []
        self.heads: list[bytes] = []
        if tls is not None:
            tls.sni_callback = self._server_name

    def _server_name(self, sock: object, name: str | None, ctx: object) -> None:
        self.sni.append(name)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        self.heads.append(head)
        if self.answer is None:
            await asyncio.sleep(3600)
        writer.write(self.answer)
        await writer.drain()
        writer.close()

    async def __aenter__(self) -> int:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0, ssl=self.tls)
        return int(self.server.sockets[0].getsockname()[1])

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()


def client(trust: Path | None = None) -> httpx.AsyncClient:
    """:func:`delivery.client`'s settings, trusting ``trust`` (the test's certificate)."""
    verify: ssl.SSLContext | bool = True
    if trust is not None:
        verify = ssl.create_default_context(cafile=str(trust))
    return httpx.AsyncClient(follow_redirects=False, trust_env=False, verify=verify,
                             limits=httpx.Limits(max_keepalive_connections=0))


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"


def test_https_goes_to_the_checked_address_under_the_name(tmp_path: Path) -> None:
    cert, key = certificate(tmp_path, "receiver.hooks.lan")
    other_cert, other_key = certificate(tmp_path, "other.hooks.lan")

    async def main() -> None:
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(cert, key)
        server = Server(OK, tls)
        async with server as port, client(cert) as http:
            got = await delivery.post(http, f"https://receiver.hooks.lan:{port}/hook", {}, b"{}",
                                      LOOPBACK, stub)
        assert got.ok and got.response == "ok", got
        assert server.sni == ["receiver.hooks.lan"]
        assert b"\r\nhost: receiver.hooks.lan:%d\r\n" % port in server.heads[0].lower()
        # a certificate of another name: refused, whatever the address
        wrong = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        wrong.load_cert_chain(other_cert, other_key)
        async with Server(OK, wrong) as port, client(other_cert) as http:
            got = await delivery.post(http, f"https://receiver.hooks.lan:{port}/hook", {}, b"{}",
                                      LOOPBACK, stub)
        assert got.status is None and got.error and "certificate" in got.error.lower(), got

    asyncio.run(main())


def test_a_silent_receiver_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(delivery, "TIMEOUT", 0.3)

    async def main() -> None:
        async with Server(None) as port, client() as http:
            got = await delivery.post(http, f"http://127.0.0.1:{port}/", {}, b"{}", LOOPBACK)
        assert got.status is None and got.error == "timeout after 0.3 s", got

    asyncio.run(main())


def test_a_huge_answer_is_cut_to_an_excerpt() -> None:
    body = b"x" * (4 << 20)
    answer = b"HTTP/1.1 500 Oops\r\nContent-Length: %d\r\n\r\n" % len(body) + body

    async def main() -> None:
        async with Server(answer) as port, client() as http:
            got = await delivery.post(http, f"http://127.0.0.1:{port}/", {}, b"{}", LOOPBACK)
        assert got.status == 500 and got.response == "x" * delivery.EXCERPT, got

    asyncio.run(main())


def test_the_guard_refuses_before_any_connection() -> None:
    async def main() -> None:
        async with client() as http:
            got = await delivery.post(http, "http://127.0.0.1:9/", {}, b"{}", ())
        assert got.status is None and got.error is not None
        assert got.error.startswith("address refused"), got

    asyncio.run(main())
