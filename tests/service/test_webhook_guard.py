"""The webhook address guard as a function of resolved addresses (a stub resolver stands
in for DNS: no lookup and no traffic leaves the test), the retry schedule, and the
signature checked with the ``standardwebhooks`` package."""

from __future__ import annotations

import asyncio
import ipaddress
import random
import time

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from decido_service.webhooks import delivery, guard
from decido_service.webhooks.signing import new_secret, signature_header

#: names of the stub resolver
NAMES = {
    "loopback.stub.net": ["127.0.0.1"],
    "metadata.stub.net": ["169.254.169.254"],
    "mixed.stub.net": ["93.184.215.14", "10.0.0.1"],  # one public, one private: refused
    "mapped.stub.net": ["::ffff:192.168.1.1"],
    "v6-local.stub.net": ["fe80::1"],
    "public.stub.net": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "nowhere.stub.net": [],
}

HOSTILE = [
    # loopback, in every spelling
    "https://127.0.0.1/", "https://127.1/", "https://2130706433/", "https://0x7f000001/",
    "https://0x7f.0.0.1/", "https://0177.0.0.1/", "https://017700000001/",
    "https://[::1]/", "https://[::ffff:127.0.0.1]/", "https://[::ffff:7f00:1]/",
    "https://[0:0:0:0:0:ffff:127.0.0.1]/", "https://[::127.0.0.1]/",
    "https://localhost.stub.net/", "https://loopback.stub.net/",
    # private, CGNAT, link-local and metadata, unspecified, multicast, reserved
    "https://10.1.2.3/", "https://172.16.0.1/", "https://192.168.0.1/", "https://0xc0a80001/",
    "https://100.64.0.1/", "https://100.100.100.200/", "https://169.254.169.254/",
    "https://metadata.stub.net/", "https://[fd00:ec2::254]/", "https://[fe80::1]/",
    "https://v6-local.stub.net/", "https://0.0.0.0/", "https://0/", "https://[::]/",
    "https://224.0.0.1/", "https://[ff02::1]/", "https://[ff0e::1]/", "https://240.0.0.1/",
    "https://255.255.255.255/", "https://192.0.2.1/", "https://198.18.0.1/",
    "https://[2001:db8::1]/", "https://[fc00::1]/", "https://[64:ff9b::a00:1]/",
    "https://[2002:7f00:1::]/", "https://[2001:0:4136:e378::1]/",
    "https://mapped.stub.net/", "https://mixed.stub.net/", "https://nowhere.stub.net/",
    # not https, credentials, no host, another scheme
    "http://public.stub.net/", "https://user:pw@public.stub.net/", "https:///x",
    "ftp://public.stub.net/", "gopher://public.stub.net/", "not a url",
]


async def stub(host: str, port: int) -> list[str]:
    if host == "localhost.stub.net":
        return ["127.0.0.1", "::1"]
    if host not in NAMES:
        raise OSError(-2, "Name or service not known")
    return NAMES[host]


def destination(url: str, allowed: tuple = ()) -> guard.Destination:
    return asyncio.run(guard.destination(url, allowed, stub))


@pytest.mark.parametrize("url", HOSTILE)
def test_hostile_urls_are_refused(url: str) -> None:
    with pytest.raises(guard.GuardError):
        destination(url)


def test_a_public_name_goes_to_the_address_checked() -> None:
    dest = destination("https://public.stub.net:8443/hook?x=1")
    assert dest.address == "93.184.215.14"
    assert dest.url == "https://93.184.215.14:8443/hook?x=1"
    assert dest.host_header == "public.stub.net:8443"
    assert destination("https://public.stub.net/").host_header == "public.stub.net"
    assert destination("https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/").url == \
        "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:443/"


SPECIAL_USE_URLS = [
    "https://hooks.example/decido", "https://a.b.test/", "https://x.invalid:8443/",
    "https://EXAMPLE/", "https://hooks.example./", "https://test/", "https://invalid/"]


@pytest.mark.parametrize("url", SPECIAL_USE_URLS)
def test_special_use_names_are_refused_without_a_lookup(url: str) -> None:
    """RFC 6761 names (.example, .test, .invalid) are never handed to a resolver."""
    async def no_lookup(host: str, port: int) -> list[str]:
        raise AssertionError(f"{host} was looked up")

    allowed = (ipaddress.ip_network("0.0.0.0/0"),)  # even where every address is allowed
    with pytest.raises(guard.GuardError, match="special-use name"):
        asyncio.run(guard.destination(url, allowed, no_lookup))


def test_localhost_is_loopback_without_a_lookup() -> None:
    async def no_lookup(host: str, port: int) -> list[str]:
        raise AssertionError(f"{host} was looked up")

    for url in ("https://localhost/", "https://api.localhost:8443/", "https://LOCALHOST./"):
        with pytest.raises(guard.GuardError, match="127.0.0.1"):
            asyncio.run(guard.destination(url, (), no_lookup))
    allowed = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))
    dest = asyncio.run(guard.destination("http://localhost:9000/h", allowed, no_lookup))
    assert dest.address == "127.0.0.1" and dest.host_header == "localhost:9000"


@pytest.mark.parametrize("url", ["https://public.stub.net:0/", "https://93.184.215.14:0/",
                                 "https://[2606:2800:21f:cb07::1]:00/"])
def test_port_0_is_refused(url: str) -> None:
    with pytest.raises(guard.GuardError, match="port 0"):
        destination(url)


def test_allowed_networks_pass_both_rules() -> None:
    allowed = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))
    assert destination("http://127.0.0.1:9000/h", allowed).address == "127.0.0.1"
    assert destination("http://localhost.stub.net/", allowed).address == "127.0.0.1"
    assert destination("http://[::1]/", allowed).address == "::1"
    with pytest.raises(guard.GuardError):  # 10/8 is not allowed
        destination("http://10.0.0.1/", allowed)
    with pytest.raises(guard.GuardError):  # public, but not https
        destination("http://public.stub.net/", allowed)


def test_check_names_the_refused_address() -> None:
    with pytest.raises(guard.GuardError, match="10.0.0.1"):
        guard.check("https", ["93.184.215.14", "10.0.0.1"])
    with pytest.raises(guard.GuardError, match="https"):
        guard.check("http", ["93.184.215.14"])
    assert guard.check("https", ["93.184.215.14"]) == ["93.184.215.14"]


def test_schedule_jitter_and_retry_after() -> None:
    rng = random.Random(1)
    schedule = delivery.SCHEDULE
    assert schedule == (0, 5, 300, 1800, 7200, 18000, 36000, 36000)
    for i in range(1, len(schedule)):
        d = delivery.next_delay(i, schedule, rng=rng)
        assert d is not None and 0.9 * schedule[i] <= d <= 1.1 * schedule[i]
    assert delivery.next_delay(len(schedule), schedule) is None
    assert delivery.next_delay(1, schedule, 120, rng) == 120  # postponed
    assert delivery.next_delay(1, schedule, 10**9, rng) == 36000  # within the range
    assert delivery.next_delay(3, schedule, 1, rng) >= 1620  # never brought forward
    assert delivery.retry_after("120", 0) == 120
    assert delivery.retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 1445412470) == 10
    assert delivery.retry_after("soon", 0) is None


def test_signature_verifies_with_standardwebhooks() -> None:
    old, new = new_secret(), new_secret()
    body = b'{"type": "webhook.test"}'
    ts = int(time.time())
    headers = {"webhook-id": "msg_1", "webhook-timestamp": str(ts),
               "webhook-signature": signature_header([new, old], "msg_1", ts, body)}
    for secret in (old, new):
        assert Webhook(secret).verify(body, headers) == {"type": "webhook.test"}
    with pytest.raises(WebhookVerificationError):
        Webhook(new_secret()).verify(body, headers)
