"""Pages bounded in bytes: the one rule of every list whose items can be large (the
decision log's entries, a run's front).

A page holds at most its ``limit`` of items and about ``max_bytes`` bytes of their JSON:
fewer items when they are large, but always at least one, so a client paging on always
moves forward; the page says ``has_more`` when any item was left for the next one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

import msgspec

__all__ = ["within"]

T = TypeVar("T")


def within(items: Iterable[T], max_bytes: int) -> tuple[list[T], bool]:
    """The first of ``items`` whose JSON adds up to at most ``max_bytes`` bytes (at least
    one, however large), and whether any item was left out for that."""
    shown: list[T] = []
    size = 0
    for item in items:
        size += len(msgspec.json.encode(item))
        if shown and size > max_bytes:
            return shown, True
        shown.append(item)
    return shown, False
