"""PostgreSQL store URLs: ``postgresql://user[:password]@host[:port]/db?options``.

The query takes asyncpg's DSN parameters (``host=/var/run/postgresql`` for a Unix socket,
``port``, ``sslmode``, ``passfile``, ``target_session_attrs``, ...; any other name is sent
to the server as a setting, e.g. ``application_name``), plus these, which are taken out
before the rest goes to asyncpg:

- ``pool_min`` (default :data:`POOL_MIN`), ``pool_max`` (default :data:`POOL_MAX`):
  connections each worker process keeps open / may open;
- ``pool_timeout`` (seconds, default :data:`POOL_TIMEOUT`): how long a call waits for a
  free connection before it fails with ``StoreError`` (the app's 503);
- ``connect_timeout`` (seconds, default :data:`CONNECT_TIMEOUT`): how long opening a
  connection may take, so an unreachable server is reported in seconds, not after the TCP
  timeout;
- ``command_timeout`` (seconds, default :data:`COMMAND_TIMEOUT`): how long one statement
  may take (a server that stopped answering mid-connection is a 503 then, not a request
  that hangs).
"""

from __future__ import annotations

from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["POOL_MAX", "POOL_MIN", "POOL_TIMEOUT", "PostgresOptions", "is_postgres_url",
           "parse_postgres_url", "redact_url"]

SCHEMES = ("postgresql", "postgres")
POOL_MIN = 1
POOL_MAX = 4
POOL_TIMEOUT = 5.0
CONNECT_TIMEOUT = 5.0
COMMAND_TIMEOUT = 10.0


class PostgresOptions(NamedTuple):
    """A parsed PostgreSQL store URL: the DSN asyncpg is given and the store's options."""

    dsn: str
    pool_min: int = POOL_MIN
    pool_max: int = POOL_MAX
    pool_timeout: float = POOL_TIMEOUT
    connect_timeout: float = CONNECT_TIMEOUT
    command_timeout: float = COMMAND_TIMEOUT


def is_postgres_url(url: Any) -> bool:
    """True for ``postgresql://...`` and ``postgres://...`` URLs."""
    return isinstance(url, str) and url.split("://", 1)[0].lower() in SCHEMES and "://" in url


def parse_postgres_url(url: str) -> PostgresOptions:
    """The :class:`PostgresOptions` of ``url``; ``ValueError`` naming what is wrong."""
    if not is_postgres_url(url):
        raise ValueError(f"store URL {redact_url(url)!r} is not a postgresql:// URL")
    parts = urlsplit(url)
    query: list[tuple[str, str]] = []
    values: dict[str, Any] = {}
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name in ("pool_min", "pool_max"):
            values[name] = _number(url, name, value, int, 0 if name == "pool_min" else 1)
        elif name in ("pool_timeout", "connect_timeout", "command_timeout"):
            values[name] = _number(url, name, value, float, 0.001)
        else:
            query.append((name, value))
    options = PostgresOptions(urlunsplit(("postgresql", parts.netloc, parts.path,
                                          urlencode(query), parts.fragment)), **values)
    if options.pool_min > options.pool_max:
        raise ValueError(f"store URL {redact_url(url)!r}: pool_min ({options.pool_min}) is "
                         f"above pool_max ({options.pool_max})")
    return options


def _number(url: str, name: str, text: str, kind: type[int] | type[float],
            least: float) -> Any:
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or value < least:
        raise ValueError(f"store URL {redact_url(url)!r}: {name} must be a number >= {least}, "
                         f"got {text!r}")
    return value


def redact_url(url: str) -> str:
    """``url`` with its password (in the user part or a ``password=`` option) as ``***``:
    what logs, banners and error messages show."""
    if not isinstance(url, str) or "://" not in url:
        return url
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        if ":" in user:
            user = user.split(":", 1)[0] + ":***"
        netloc = f"{user}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, "***" if k == "password" else v) for k, v in pairs], safe="*/")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
