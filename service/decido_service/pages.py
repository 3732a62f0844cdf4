"""Pages of a key's resources (``GET /v1/runs``, ``GET /v1/decisions``): their size.

Lists are pages in the Stripe manner: newest first, ``limit`` items (1 to :data:`MAX_PAGE`,
default :data:`DEFAULT_PAGE`), the cursor ``starting_after=<id>``, ``{"data": [...],
"has_more": bool}``. The OpenAPI document's ``limit`` parameter is written from these.
"""

from __future__ import annotations

from decido_service.http.problems import ApiError

__all__ = ["DEFAULT_PAGE", "MAX_PAGE", "page_limit"]

DEFAULT_PAGE, MAX_PAGE = 20, 100


def page_limit(text: str | None) -> int:
    """The page size asked for by a ``limit`` query parameter (``None``: absent); 400
    ``invalid_parameter`` unless it is an integer from 1 to :data:`MAX_PAGE` written in
    digits (``limit=`` with no value included: read the query with blank values kept)."""
    if text is None:
        return DEFAULT_PAGE
    if not text.isdigit() or not 1 <= int(text) <= MAX_PAGE:
        raise ApiError("invalid_parameter",
                       f"limit: expected an integer from 1 to {MAX_PAGE}, not {text!r}")
    return int(text)
