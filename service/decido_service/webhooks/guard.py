"""The address guard: where a webhook may be delivered.

A destination is refused when one of the addresses its host resolves to is not a public
unicast address: private (RFC 1918, ULA), loopback, link-local (which holds the cloud
metadata address 169.254.169.254), CGNAT (100.64.0.0/10, holding 100.100.100.200),
multicast, unspecified, documentation, benchmarking and other reserved ranges, IPv4-mapped
and IPv4-translated IPv6 addresses whose IPv4 address is one of those, and the 6to4 and
Teredo tunnels. IP literals are read in every spelling the system's resolver accepts
(``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``[::ffff:127.0.0.1]``). ``https`` is
required, and a port other than 0. Networks the operator lists in
``DECIDO_WEBHOOK_ALLOW_NETWORKS`` are exempt from both rules (on-premises receivers, tests).

Special-use names (RFC 6761) are never looked up: a name under ``.invalid``, ``.test`` or
``.example`` (:data:`SPECIAL_USE`) is refused at once, and ``localhost`` and the names
under it are the loopback addresses (``127.0.0.1``, ``::1``), checked like any other, so a
client posting an example URL makes no DNS query.

:func:`check` is a function of the resolved addresses (tested as one); :func:`resolve`
resolves a host once, and the delivery connects to an address :func:`check` passed,
never looking the name up again (so DNS rebinding cannot change where it goes).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["BLOCKED_NETWORKS", "LOOPBACK_NAMES", "SPECIAL_USE", "Destination", "GuardError",
           "Network", "Resolver", "check", "destination", "resolve", "system_resolver"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
#: host, port -> the addresses it resolves to
Resolver = Callable[[str, int], Awaitable[list[str]]]

#: ranges refused besides what :mod:`ipaddress` calls non-global (listed for clarity and
#: for Python versions whose tables lag the IANA registries)
BLOCKED_NETWORKS: tuple[Network, ...] = tuple(ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
    "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    "::/128", "::1/128", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32",
    "2002::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
))
#: top-level special-use names (RFC 6761) a resolver must not be asked about: no address
#: is ever theirs
SPECIAL_USE = frozenset({"invalid", "test", "example"})
#: the addresses of ``localhost`` and the names under it (RFC 6761 6.3), never looked up
LOOPBACK_NAMES = ("127.0.0.1", "::1")
#: IPv6 prefixes that carry an IPv4 address in their last 32 bits (IPv4-mapped,
#: IPv4-translated, NAT64's well-known prefix): the IPv4 address is checked too
_EMBEDDING: tuple[Network, ...] = tuple(ipaddress.ip_network(n) for n in (
    "::ffff:0:0/96", "::ffff:0:0:0/96", "64:ff9b::/96", "::/96"))


class GuardError(ValueError):
    """A destination refused; ``str()`` says why, for the API user."""


@dataclass(frozen=True)
class Destination:
    """Where one delivery goes: the URL's parts and the checked address to connect to."""

    scheme: str
    host: str
    port: int
    target: str
    address: str

    @property
    def url(self) -> str:
        """The URL with the checked address in place of the host name."""
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{self.scheme}://{host}:{self.port}{self.target}"

    @property
    def host_header(self) -> str:
        """The ``Host`` header: the name, with the port when it is not the scheme's."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


def _refused(address: Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id is not None:
            return True
        for prefix in _EMBEDDING:
            if address in prefix:
                return _refused(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if any(address in net for net in BLOCKED_NETWORKS if net.version == address.version):
        return True
    return not address.is_global or address.is_multicast or address.is_reserved


def check(scheme: str, addresses: Sequence[str], allowed: Sequence[Network] = ()) -> list[str]:
    """The addresses a delivery may connect to, in order, when every one of
    ``addresses`` may be reached with ``scheme``; else :class:`GuardError` naming the first
    one refused. An address in ``allowed`` passes both rules; any other must be a public
    unicast address reached over https."""
    if not addresses:
        raise GuardError("the host resolves to no address")
    out = []
    for text in addresses:
        address = ipaddress.ip_address(text)
        if any(address in net for net in allowed if net.version == address.version):
            out.append(str(address))
            continue
        if _refused(address):
            raise GuardError(f"the host resolves to {address}, which is not a public address")
        if scheme != "https":
            raise GuardError("the URL must use https")
        out.append(str(address))
    return out


def _split(url: str) -> tuple[str, str, int, str]:
    """``(scheme, host, port, target)`` of a webhook URL; :class:`GuardError` if malformed."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise GuardError(f"not a valid URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise GuardError("the URL must use https")
    if parts.username is not None or parts.password is not None:
        raise GuardError("the URL must not carry credentials")
    host = (parts.hostname or "").rstrip(".")
    if not host or any(c.isspace() for c in url):
        raise GuardError("not a valid URL: no host")
    if port == 0:
        raise GuardError("not a valid URL: port 0 cannot be connected to")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return scheme, host, port or (443 if scheme == "https" else 80), target


def _literal(host: str) -> str | None:
    """The address an IP literal means in any spelling the resolver reads (dotted,
    decimal, hex, octal, short forms; IPv6), else ``None`` (a name)."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    if all(c in "0123456789abcdefxABCDEFX." for c in host) and host[:1].isdigit():
        try:
            return socket.inet_ntoa(socket.inet_aton(host))
        except OSError:
            return None
    return None


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses of ``host`` from the system's resolver (one lookup)."""
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def resolve(host: str, port: int, resolver: Resolver = system_resolver) -> list[str]:
    """The addresses of ``host``: an IP literal itself, ``localhost`` (and a name under
    it) the loopback addresses, another name through ``resolver``; :class:`GuardError`
    when it does not resolve, or is a special-use name (:data:`SPECIAL_USE`: never
    looked up)."""
    literal = _literal(host)
    if literal is not None:
        return [literal]
    top = host.lower().rsplit(".", 1)[-1]
    if top == "localhost":
        return list(LOOPBACK_NAMES)
    if top in SPECIAL_USE:
        raise GuardError(f"the host {host!r} is a special-use name (RFC 6761, .{top}), "
                         "which has no address")
    try:
        return await resolver(host, port)
    except OSError as exc:
        raise GuardError(f"the host {host!r} does not resolve ({exc.strerror or exc})") from None


async def destination(url: str, allowed: Sequence[Network] = (),
                      resolver: Resolver = system_resolver) -> Destination:
    """Resolve ``url``'s host once and check every address (:func:`check`); the
    destination with the first checked address. :class:`GuardError` when refused."""
    scheme, host, port, target = _split(url)
    addresses = check(scheme, await resolve(host, port, resolver), allowed)
    return Destination(scheme, host, port, target, addresses[0])
