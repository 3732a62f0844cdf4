"""Dashboard sessions: sign-in with a key, a signed cookie, CSRF tokens, sign-out.

Signing in posts the key once, in a form. The server finds the key and opens a session: a
row of the store's ``sessions`` table (a random 128-bit id, the key's public id, its
expiry) and the cookie ``decido_session`` = ``<id>.<expires>.<mac>``, ``mac`` being
HMAC-SHA256 of id and expiry under the service's session secret. The cookie is
``HttpOnly``, ``SameSite=Strict``, ``Path=/dashboard``, lives as long as the session
(``DECIDO_SESSION_HOURS``, 8) and is ``Secure`` when ``DECIDO_TLS=1`` or the request came
over HTTPS. The key itself is never stored, echoed, put in a URL or a page, or logged:
only its public id is on the session row.

Every dashboard request: the cookie's MAC and expiry are checked first (a forged or
expired cookie never reaches the store and leads to the sign-in page), then the store
gives the session's key; a session that is gone (sign-out, expiry) or whose key is revoked
leads to the sign-in page too, and a revoked key's session is deleted.

CSRF: every POST form carries ``csrf`` = HMAC of the session id under the secret
(sign-in: of a random nonce in the short-lived ``decido_signin`` cookie), checked in
constant time; a request whose ``Origin`` header names another origin is refused as well.

The secret is ``DECIDO_SESSION_SECRET`` or, when it is not set, one made once and kept
in the store (:meth:`Store.service_secret`), so every worker and node shares it.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from sanic.response import HTTPResponse

from decido_service.http.context import ApiRequest
from decido_service.http.problems import ApiError
from decido_service.store import KeyRecord

__all__ = ["COOKIE", "SIGNIN_COOKIE", "Session", "check_csrf", "check_signin", "clear_cookies",
           "current", "end", "open_session", "set_signin_cookie", "signin_token"]

COOKIE = "decido_session"
SIGNIN_COOKIE = "decido_signin"
PATH = "/dashboard"
#: seconds the sign-in form's nonce cookie lives
SIGNIN_SECONDS = 3600
_SECRET_NAME = "dashboard_session"
_NONCE_SHAPE = re.compile(r"[0-9a-f]{32}")
#: a session cookie's value: id (32 hex), expiry (epoch seconds), MAC (64 hex)
_COOKIE_SHAPE = re.compile(r"[0-9a-f]{32}\.[0-9]{1,12}\.[0-9a-f]{64}")


class Session(NamedTuple):
    """A signed-in session: its id, its key (public record) and its CSRF token."""

    id: str
    key: KeyRecord
    csrf: str


async def _secret(request: ApiRequest) -> bytes:
    """The HMAC secret (``DECIDO_SESSION_SECRET``, else the store's), once per worker."""
    ctx = request.app.ctx
    if ctx.dashboard_secret is None:
        configured = ctx.settings.session_secret or await ctx.store.accounts.service_secret(
            _SECRET_NAME, secrets.token_urlsafe(48))
        ctx.dashboard_secret = configured.encode()
    return ctx.dashboard_secret


def _mac(secret: bytes, purpose: str, text: str) -> str:
    return hmac.new(secret, f"{purpose}:{text}".encode(), hashlib.sha256).hexdigest()


def _cookie(request: ApiRequest, name: str, value: str, max_age: int) -> str:
    secure = request.app.ctx.settings.tls == 1 or request.scheme in ("https", "wss")
    return (f"{name}={value}; Path={PATH}; Max-Age={max_age}; HttpOnly; SameSite=Strict"
            + ("; Secure" if secure else ""))


async def current(request: ApiRequest) -> Session | None:
    """The request's live session, else ``None`` (no cookie, forged, expired, ended, or a
    revoked key: that session is deleted)."""
    raw = request.cookies.get(COOKIE)
    if not raw or _COOKIE_SHAPE.fullmatch(raw) is None:
        return None
    session_id, expires_text, mac = raw.split(".")
    secret = await _secret(request)
    if not hmac.compare_digest(mac, _mac(secret, "session", f"{session_id}.{expires_text}")):
        return None
    now = request.app.ctx.settings.now()
    if int(expires_text) <= now:
        return None
    store = request.app.ctx.store
    key = await store.accounts.session_key(session_id, now)
    if key is None:
        return None
    if key["revoked_at"] is not None:
        await store.accounts.close_session(session_id)
        return None
    request.ctx.key = key  # the access log names the key's id
    return Session(session_id, key, _mac(secret, "csrf", session_id))


async def open_session(request: ApiRequest, key: KeyRecord) -> str:
    """Open a session for ``key``; the ``Set-Cookie`` value that carries it."""
    settings = request.app.ctx.settings
    now = settings.now()
    life = settings.session_hours * 3600
    expires = int(now) + life
    session_id = secrets.token_hex(16)
    await request.app.ctx.store.accounts.open_session(session_id, key["id"], float(expires), now)
    secret = await _secret(request)
    value = f"{session_id}.{expires}.{_mac(secret, 'session', f'{session_id}.{expires}')}"
    return _cookie(request, COOKIE, value, life)


async def end(request: ApiRequest, session: Session) -> None:
    """Sign out: the session's row goes (its cookie no longer opens anything)."""
    await request.app.ctx.store.accounts.close_session(session.id)


def clear_cookies(request: ApiRequest, response: HTTPResponse) -> HTTPResponse:
    """``response`` with both dashboard cookies deleted in the browser."""
    for name in (COOKIE, SIGNIN_COOKIE):
        response.headers.add("Set-Cookie", _cookie(request, name, "", 0))
    return response


def _same_origin(request: ApiRequest) -> bool:
    origin: str | None = request.headers.get("origin")
    if origin is None:
        return True  # not sent (older browsers on same-origin POSTs): the token decides
    host: str = request.headers.get("host", "")
    try:
        return urlsplit(origin).netloc == host and origin != "null"
    except ValueError:  # not a URL at all
        return False


def _token_matches(token: object, expected: str) -> bool:
    """Constant-time comparison of a submitted token (any text) with ``expected``."""
    return isinstance(token, str) and hmac.compare_digest(token.encode(), expected.encode())


def check_csrf(request: ApiRequest, session: Session, form: Any) -> None:
    """403 ``csrf_failed`` unless the form's ``csrf`` is the session's token and the
    request comes from this origin."""
    token = form.get("csrf") if form is not None else None
    if not _token_matches(token, session.csrf) or not _same_origin(request):
        raise ApiError("csrf_failed", "the form is stale or came from another site; "
                                      "reload the page and try again")


async def signin_token(request: ApiRequest) -> tuple[str, str | None]:
    """The sign-in form's token and, when the browser has no nonce cookie yet, the
    ``Set-Cookie`` value that gives it one."""
    nonce = request.cookies.get(SIGNIN_COOKIE)
    cookie = None
    if not nonce or _NONCE_SHAPE.fullmatch(nonce) is None:
        nonce = secrets.token_hex(16)
        cookie = _cookie(request, SIGNIN_COOKIE, nonce, SIGNIN_SECONDS)
    return _mac(await _secret(request), "signin", nonce), cookie


async def check_signin(request: ApiRequest, form: Any) -> None:
    """403 ``csrf_failed`` unless the sign-in form carries the token of its nonce cookie."""
    nonce = request.cookies.get(SIGNIN_COOKIE) or ""
    token = form.get("csrf") if form is not None else None
    expected = _mac(await _secret(request), "signin", nonce)
    if (_NONCE_SHAPE.fullmatch(nonce) is None or not _token_matches(token, expected)
            or not _same_origin(request)):
        raise ApiError("csrf_failed", "the sign-in form is stale; reload the page and try again")


def set_signin_cookie(response: HTTPResponse, cookie: str | None) -> HTTPResponse:
    """``response`` giving the browser the sign-in nonce cookie when it needs one."""
    if cookie is not None:
        response.headers.add("Set-Cookie", cookie)
    return response
