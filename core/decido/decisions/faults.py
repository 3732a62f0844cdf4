"""Paths and faults of decision requests: dotted paths and JSON pointers, the collected
faults of one request, ``DecisionError``, and the field checks every parser shares.

Nothing here knows the vocabulary of a request (``decido.decisions.vocabulary``) or how it
is parsed (``decido.decisions.request``, ``decido.decisions.options``).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from decido.errors import DecidoError, ExpressionError

#: a ``DecisionError`` lists at most this many faults
MAX_FAULTS = 50
# a member name written plainly in a dotted path (anything else is quoted)
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

Where = tuple[Any, ...]


# ---------------------------------------------------------------- paths
def dotted(where: Where) -> str:
    """``("options", 3, "attributes", "lead time")`` -> ``options[3].attributes["lead time"]``."""
    out = ""
    for seg in where:
        if isinstance(seg, int):
            out += f"[{seg}]"
        elif not out or _PLAIN_KEY.match(seg):
            out += f".{seg}" if out else seg
        else:
            out += f"[{_quote(seg)}]"
    return out


def pointer(where: Where) -> str:
    """The JSON pointer (RFC 6901) of a path: ``/options/3/attributes/lead time``."""
    return "".join("/" + str(seg).replace("~", "~0").replace("/", "~1") for seg in where)


def _segments(path: str) -> Where:
    """The segments of a dotted path (the inverse of :func:`dotted`)."""
    out: list[Any] = []
    i, n = 0, len(path)
    while i < n:
        ch = path[i]
        if ch == ".":
            i += 1
        elif ch == "[" and i + 1 < n and path[i + 1] == '"':
            j, name = i + 2, []
            while j < n and path[j] != '"':
                if path[j] == "\\" and j + 1 < n:
                    j += 1
                name.append(path[j])
                j += 1
            out.append("".join(name))
            i = j + 2
        elif ch == "[":
            j = path.find("]", i)
            j = n if j < 0 else j
            out.append(int(path[i + 1 : j]) if path[i + 1 : j].isdigit() else path[i + 1 : j])
            i = j + 1
        else:
            j = i
            while j < n and path[j] not in ".[":
                j += 1
            out.append(path[i:j])
            i = j
    return tuple(out)


def attr_path(prefix: str, name: str) -> str:
    """``prefix.name``, or ``prefix["name"]`` when the name is not plain."""
    if _PLAIN_KEY.match(name):
        return f"{prefix}.{name}"
    return f"{prefix}[{_quote(name)}]"


def _quote(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ---------------------------------------------------------------- errors
class DecisionError(DecidoError, ValueError):
    """An invalid decision request.

    Attributes:
        code: stable machine code of the first fault (``"unknown_method"``,
            ``"unknown_attribute"``, ``"missing_attribute"``, ``"duplicate_option_id"``,
            ``"non_finite_value"``, ``"non_positive_value"``, ``"out_of_bounds"``,
            ``"missing_weight"``, ``"invalid_params"``, ``"invalid_request"``,
            ``"invalid_expression"``, ``"unknown_normalization"``,
            ``"unknown_weighting"``, ``"too_many"``).
        message: one-line explanation of the first fault.
        path: its field, e.g. ``criteria[1].weight`` or ``options[3].attributes.price``.
        position: for an expression fault, the character offset in that expression (the
            ``ExpressionError`` is the ``__cause__``), else None.
        errors: every fault found (at most ``MAX_FAULTS``), the first first: dicts
            ``{"pointer", "code", "message"}`` plus ``"position"`` for expressions, where
            ``pointer`` is the JSON pointer of the field (``/options/3/attributes/price``).
    """

    def __init__(
        self,
        code: str,
        message: str,
        path: str | Where,
        position: int | None = None,
        errors: list[dict[str, Any]] | None = None,
    ) -> None:
        where = path if isinstance(path, tuple) else _segments(path)
        self.code = code
        self.message = message
        self.path = dotted(where) if isinstance(path, tuple) else path
        self.position = position
        self.errors = errors if errors is not None else [_fault(where, code, message, position)]
        at = f" at position {position}" if position is not None else ""
        more = f" (and {len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
        super().__init__(f"{self.path}: {message}{at}{more}" if self.path else message + more)

    def to_dict(self, errors: bool = False) -> dict[str, Any]:
        """``{"code", "message", "path"}`` of the first fault, ``"position"`` for an
        expression; with ``errors``, also ``"errors"`` (every fault)."""
        out: dict[str, Any] = {"code": self.code, "message": self.message, "path": self.path}
        if self.position is not None:
            out["position"] = self.position
        if errors:
            out["errors"] = self.errors
        return out

    def __reduce__(self) -> Any:  # keep pickling (process pools) working
        return (type(self), (self.code, self.message, self.path, self.position, self.errors))


def _fault(where: Where, code: str, message: str, position: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"pointer": pointer(where), "code": code, "message": message}
    if position is not None:
        out["position"] = position
    return out


class Faults:
    """The faults found in one request; :meth:`check` raises them as one error."""

    __slots__ = ("items", "first")

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.first: tuple[Where, str, str, int | None, BaseException | None] | None = None

    def __bool__(self) -> bool:
        return self.first is not None

    def add(
        self,
        where: Where,
        code: str,
        message: str,
        position: int | None = None,
        cause: BaseException | None = None,
    ) -> None:
        """Record one fault (past ``MAX_FAULTS`` it is dropped)."""
        if self.first is None:
            self.first = (where, code, message, position, cause)
        if len(self.items) < MAX_FAULTS:
            self.items.append(_fault(where, code, message, position))

    def full(self) -> bool:
        """Whether no more fault would be listed."""
        return len(self.items) >= MAX_FAULTS

    def check(self) -> None:
        """Raise the faults found so far, if any."""
        if self.first is None:
            return
        where, code, message, position, cause = self.first
        err = DecisionError(code, message, where, position, self.items)
        if cause is not None:
            raise err from cause
        raise err


def fail(where: Where, code: str, message: str) -> DecisionError:
    """One fault as an error (for the checks that stop at once)."""
    return DecisionError(code, message, where)


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """``; did you mean 'x'?`` for the names of ``known`` close to ``name``, else ``""``.

    A name that differs only in case and separators (``L-BFGS-B`` for ``lbfgsb``,
    ``nelder-mead`` for ``nelder_mead``) is the one suggestion; else the close ones."""
    plain = _plain(name)
    same = [k for k in known if _plain(k) == plain]
    close = same or difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def _plain(name: str) -> str:
    """``name`` in lower case without separators (what :func:`did_you_mean` compares)."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


def kind_of(value: Any) -> str:
    """What a JSON value is, for messages: ``"null"``, ``"a string"``, ``"an array"``..."""
    if value is None:
        return "null"
    return {str: "a string", bool: "a boolean", list: "an array", dict: "an object"}.get(
        type(value), type(value).__name__
    )


class Bad(Exception):
    """A value refused by a field check, with its ``code`` and ``message``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message


def number(value: Any) -> float:
    """A finite real number (bool excluded), else :class:`Bad`."""
    kind = type(value)
    if (
        kind is not float
        and kind is not int
        and (
            isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating))
        )
    ):
        raise Bad("invalid_request", f"expected a number, got {kind_of(value)}")
    try:
        x = float(value)
    except OverflowError:  # an integer beyond the largest double
        raise Bad("non_finite_value", "value is too large for a double") from None
    if not math.isfinite(x):
        raise Bad("non_finite_value", f"value must be finite, got {x}")
    return x


def choice(value: Any, choices: Sequence[str], what: str) -> str:
    """``value`` when it is one of ``choices``, else :class:`Bad` naming them."""
    if type(value) is not str or value not in choices:
        hint = did_you_mean(value, choices) if isinstance(value, str) else ""
        listed = ", ".join(choices)
        raise Bad("invalid_request", f"unknown {what} {value!r}{hint} (one of: {listed})")
    return value


def positive(value: Any, where: Where, faults: Faults, what: str) -> float | None:
    """A finite number > 0, else None and a fault naming ``what`` it is."""
    try:
        x = number(value)
    except Bad as bad:
        faults.add(where, bad.code, bad.message)
        return None
    if x <= 0:
        faults.add(where, "non_positive_value", f"{what} must be > 0, got {x}")
        return None
    return x


def known_members(value: Any, where: Where, allowed: Sequence[str], what: str,
                  faults: Faults) -> bool:
    """Whether ``value`` is an object whose members are all ``allowed`` (a fault for it,
    or for each other member)."""
    if not isinstance(value, Mapping):
        faults.add(where, "invalid_request", f"{what} is an object, not {kind_of(value)}")
        return False
    ok = True
    for key in value:
        if key not in allowed:
            hint = did_you_mean(key, allowed) if isinstance(key, str) else ""
            faults.add((*where, str(key)), "invalid_request", f"unknown field {key!r}{hint}")
            ok = False
    return ok


def expression_fault(faults: Faults, exc: ExpressionError, where: Where) -> None:
    """An expression that does not compile, as a fault with its position."""
    faults.add(where, "invalid_expression", f"{exc.code}: {exc.message}", exc.position, exc)
