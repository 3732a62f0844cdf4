"""Limits of a request's head: 414 ``uri_too_long`` and 431 ``headers_too_large``.

Sanic reads a request head (request line and header fields) into a buffer of at most
:data:`HEAD_BUFFER` bytes (``REQUEST_MAX_HEADER_SIZE``, set to Sanic's ceiling). A head that
fits is checked by :func:`head_error`: a request target above :data:`MAX_TARGET` bytes is
414, a header block above :data:`MAX_HEADER_BLOCK` bytes is 431, with the Bearer challenge
when the block would have fit without its credentials (``Authorization``, ``X-API-Key``).
A head that does not fit is refused by Sanic before anything in it is parsed
(``PayloadTooLarge("Request header exceeds the size limit")``); :func:`overflow_error`
then reads what was received (the connection's receive buffer, which Sanic's protocol
keeps as ``recv_buffer`` until the connection is closed) and applies the same two rules to
it: a request line with no end within the buffer, or a target above the limit, is 414,
else 431 with the same challenge rule. The two limits together fit in the buffer, so a
head over the buffer breaks at least one of them.
"""

from __future__ import annotations

from typing import Any

from sanic import Request

from decido_service.admission import CHALLENGE
from decido_service.errors import ServiceError as ApiError

__all__ = ["HEAD_BUFFER", "MAX_HEADER_BLOCK", "MAX_TARGET", "head_error", "overflow_error"]

#: bytes of a whole request head Sanic reads at most (its ceiling: 16 KiB)
HEAD_BUFFER = 16_384
#: bytes of the request target (path and query) at most; 414 above
MAX_TARGET = 8_000
#: bytes of the header fields (the head without its request line) at most; 431 above
MAX_HEADER_BLOCK = 8_000
#: a head this short is within both limits: one length check per request
_WITHIN_BOTH = min(MAX_TARGET, MAX_HEADER_BLOCK)
_CREDENTIALS = (b"authorization:", b"x-api-key:")


def head_error(request: Request[Any, Any]) -> ApiError | None:
    """The 414 or 431 for ``request``'s head, or ``None`` when it is within the limits."""
    head = request.head
    if len(head) <= _WITHIN_BOTH:
        return None
    target = len(request.raw_url)
    if target > MAX_TARGET:
        return _too_long(str(target))
    _, _, block = head.partition(b"\r\n")
    return _block_error(block, str(len(block)))


def overflow_error(request: Request[Any, Any], exc: BaseException) -> ApiError | None:
    """The 414 or 431 for a head that overflowed Sanic's buffer (``exc`` is Sanic's
    ``PayloadTooLarge`` about the header), judged from the bytes received; else ``None``."""
    if request.head or "header" not in str(exc).lower() or request.transport is None:
        return None
    received = bytes(getattr(request.transport.get_protocol(), "recv_buffer", b""))
    line, found, block = received.partition(b"\r\n")
    parts = line.split(b" ")
    if not found or len(parts) != 3 or len(parts[1]) > MAX_TARGET:
        return _too_long(f"more than {MAX_TARGET}" if not found else str(len(parts[1])))
    return _block_error(block.partition(b"\r\n\r\n")[0], f"more than {MAX_HEADER_BLOCK}")


def _too_long(size: str) -> ApiError:
    return ApiError("uri_too_long", f"the request target is {size} bytes; the limit is "
                                    f"{MAX_TARGET}")


def _block_error(block: bytes, size: str) -> ApiError | None:
    """431 for a header block above the limit (with the challenge when the credentials made
    it so), else ``None``."""
    if len(block) <= MAX_HEADER_BLOCK:
        return None
    lines = block.split(b"\r\n")
    credentials = sum(len(line) + 2 for line in lines if line.lower().startswith(_CREDENTIALS))
    return ApiError(
        "headers_too_large",
        f"the header fields are {size} bytes; the limit is {MAX_HEADER_BLOCK}",
        headers=CHALLENGE if credentials and len(block) - credentials <= MAX_HEADER_BLOCK
        else None)
