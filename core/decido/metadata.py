"""Labels for runs and logged decisions (``metadata``), their rules written once.

The service keeps a run's or a logged decision's ``metadata`` and filters lists by it
(``GET /v1/runs?metadata[project]=bridge-A``); the library's decision requests accept the
member (and check it) so that a body valid for ``POST /v1/decide`` is valid for
:func:`decido.decide`. The rules are Stripe's: an object of at most :data:`MAX_KEYS`
members, each key 1 to :data:`MAX_KEY_LENGTH` characters without ``[`` or ``]`` (a filter
writes the key between brackets), each value a string of at most
:data:`MAX_VALUE_LENGTH` characters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["DESCRIPTION", "KEY_PATTERN", "MAX_KEYS", "MAX_KEY_LENGTH", "MAX_VALUE_LENGTH",
           "metadata_faults"]

#: the most keys a ``metadata`` object holds
MAX_KEYS = 20
#: the longest key (characters)
MAX_KEY_LENGTH = 40
#: the longest value (characters)
MAX_VALUE_LENGTH = 500
#: what a key may hold (JSON Schema ``pattern``): anything but square brackets
KEY_PATTERN = r"^[^\[\]]*$"
_KEY = re.compile(KEY_PATTERN)

#: the one description of the member (the library's schema and the service's types)
DESCRIPTION = (f"labels of your own: at most {MAX_KEYS} keys of 1 to {MAX_KEY_LENGTH} "
               f"characters (no square brackets), string values of at most "
               f"{MAX_VALUE_LENGTH} characters; lists filter by them "
               "(?metadata[key]=value)")


def metadata_faults(value: Any) -> list[tuple[tuple[str, ...], str, str]]:
    """Every fault of a ``metadata`` value (``None`` is none): ``(path below the member,
    code, message)``, the path ``()`` for the object itself, ``(key,)`` for one member."""
    if value is None:
        return []
    if not isinstance(value, Mapping):
        return [((), "invalid_metadata",
                 f"metadata is an object of string values, not {_kind(value)}")]
    found: list[tuple[tuple[str, ...], str, str]] = []
    if len(value) > MAX_KEYS:
        found.append(((), "invalid_metadata",
                      f"metadata has {len(value)} keys; at most {MAX_KEYS} are allowed"))
    for key, item in value.items():
        name = str(key)
        if not 1 <= len(name) <= MAX_KEY_LENGTH:
            found.append(((name,), "invalid_metadata",
                          f"a metadata key has 1 to {MAX_KEY_LENGTH} characters, "
                          f"not {len(name)}"))
        elif not _KEY.match(name):
            found.append(((name,), "invalid_metadata",
                          "a metadata key cannot hold '[' or ']'"))
        if not isinstance(item, str):
            found.append(((name,), "invalid_metadata",
                          f"a metadata value is a string, not {_kind(item)}"))
        elif len(item) > MAX_VALUE_LENGTH:
            found.append(((name,), "invalid_metadata",
                          f"a metadata value has at most {MAX_VALUE_LENGTH} characters, "
                          f"not {len(item)}"))
    return found


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {str: "a string", bool: "a boolean", list: "an array", dict: "an object",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)
