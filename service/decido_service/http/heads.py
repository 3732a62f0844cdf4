"""Limits of a request's head: 414 ``uri_too_long`` and 431 ``headers_too_large``.

Sanic reads a request head (request line and header fields) into a buffer of at most
:data:`HEAD_BUFFER` bytes (``REQUEST_MAX_HEADER_SIZE``, set to Sanic's ceiling). A head that
does not fit is refused by Sanic before anything in it is parsed
(``PayloadTooLarge("Request header exceeds the size limit")``), so its cause cannot be told:
it is answered 431 (:func:`decido_service.http.problems.as_api_error`). A head that fits is checked
here, by :func:`head_error`: a request target above :data:`MAX_TARGET` bytes is 414, a
header block above :data:`MAX_HEADER_BLOCK` bytes is 431, with the Bearer challenge when the
block would have fit without its credentials (``Authorization``, ``X-API-Key``). The two
limits together fit in the buffer, so a head over the buffer breaks at least one of them.
"""

from __future__ import annotations

from decido_service.admission import CHALLENGE
from decido_service.http.context import ApiRequest
from decido_service.http.problems import ApiError

__all__ = ["HEAD_BUFFER", "MAX_HEADER_BLOCK", "MAX_TARGET", "head_error"]

#: bytes of a whole request head Sanic reads at most (its ceiling: 16 KiB)
HEAD_BUFFER = 16_384
#: bytes of the request target (path and query) at most; 414 above
MAX_TARGET = 8_000
#: bytes of the header fields (the head without its request line) at most; 431 above
MAX_HEADER_BLOCK = 8_000
#: a head this short is within both limits: one length check per request
_WITHIN_BOTH = min(MAX_TARGET, MAX_HEADER_BLOCK)
_CREDENTIALS = (b"authorization:", b"x-api-key:")


def head_error(request: ApiRequest) -> ApiError | None:
    """The 414 or 431 for ``request``'s head, or ``None`` when it is within the limits."""
    head = request.head
    if len(head) <= _WITHIN_BOTH:
        return None
    target = len(request.raw_url)
    if target > MAX_TARGET:
        return ApiError("uri_too_long",
                        f"the request target is {target} bytes; the limit is {MAX_TARGET}")
    _, _, block = head.partition(b"\r\n")
    if len(block) <= MAX_HEADER_BLOCK:
        return None
    lines = block.split(b"\r\n")
    credentials = sum(len(line) + 2 for line in lines if line.lower().startswith(_CREDENTIALS))
    return ApiError(
        "headers_too_large",
        f"the header fields are {len(block)} bytes; the limit is {MAX_HEADER_BLOCK}",
        headers=CHALLENGE if credentials and len(block) - credentials <= MAX_HEADER_BLOCK
        else None)
