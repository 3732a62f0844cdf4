"""The exception tree of decido.

``DecidoError`` is the root; ``ExpressionError`` (also a ``ValueError``) is
raised for any text that is not a valid expression in its context, with a
stable machine ``code``, the 0-based character ``position`` and ``length`` of
the fault, and a message that shows the text with a caret under the fault.
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["ConstraintError", "DecidoError", "EngineError", "ExpressionError", "StudyError",
           "status_error"]

_WINDOW = 72


class DecidoError(Exception):
    """Base class of every error raised by decido."""


class ExpressionError(DecidoError, ValueError):
    """An expression that cannot be compiled (or used as asked).

    Attributes:
        code: stable machine code, e.g. ``"unknown_name"`` or ``"syntax_error"``.
        position: 0-based character offset of the fault in ``text``.
        length: number of characters the fault spans (at least 0).
        message: the one-line explanation, without the caret drawing.
        text: the expression text (None when not applicable).
    """

    def __init__(
        self, code: str, message: str, position: int = 0, length: int = 0, text: str | None = None
    ) -> None:
        self.code = code
        self.message = message
        self.position = position
        self.length = length
        self.text = text
        super().__init__(_render(message, text, position, length))

    @classmethod
    def from_c(
        cls, code: str, message: str, text: str, encoded: bytes, byte_pos: int, byte_len: int
    ) -> ExpressionError:
        """Build from the C library's error (byte offsets into UTF-8 ``encoded``)."""
        byte_pos = min(byte_pos, len(encoded))
        end = min(byte_pos + byte_len, len(encoded))
        position = len(encoded[:byte_pos].decode("utf-8", "surrogatepass"))
        length = len(encoded[byte_pos:end].decode("utf-8", "replace"))
        if code == "unexpected_character" and byte_pos < len(encoded) and position < len(text):
            ch = text[position]
            if ord(ch) >= 0x80 or ch == "\x00":
                message = f"unexpected character {ch!r} (U+{ord(ch):04X})"
            length = 1
        return cls(code, message, position, length, text)

    def __reduce__(self) -> tuple[type[ExpressionError], tuple[str, str, int, int, str | None]]:
        # keep pickling (multiprocessing) working
        return (type(self), (self.code, self.message, self.position, self.length, self.text))


class ConstraintError(ExpressionError):
    """A constraint that cannot be used: not one comparison, a side that does not compile,
    or NaN at every point tried.  ``index`` is its place in ``constraints``; ``code``,
    ``position`` and ``length`` are those of :class:`ExpressionError` (``position`` in
    the constraint's own text)."""

    def __init__(self, index: int, code: str, message: str, position: int = 0,
                 length: int = 0, text: str | None = None) -> None:
        self.index = index
        super().__init__(code, f"constraints[{index}]: {message}", position, length, text)
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.index, self.code, self.message, self.position, self.length,
                             self.text))


class EngineError(DecidoError, ValueError):
    """An optimization request that cannot run: bad bounds, an unknown engine or
    option, a budget or limit out of range, an objective of the wrong shape.

    Attributes:
        code: stable machine code: ``"invalid_bounds"``, ``"unknown_engine"``,
            ``"invalid_option"``, ``"invalid_argument"`` or ``"engine_failure"``.
        field: the argument at fault (``"bounds[3]"``, ``"options.popsize"``), or None.
        errors: every fault found, the first first: dicts ``{"pointer", "code",
            "message"}`` where ``pointer`` is the JSON pointer of the argument in a request
            body (``/objectives/1/name``); ``code``, ``message`` and ``field`` are the
            first's.
    """

    def __init__(self, code: str, message: str, field: str | None = None,
                 errors: list[dict[str, str]] | None = None) -> None:
        self.code = code
        self.message = message
        self.field = field
        self.errors = errors if errors is not None else [
            {"pointer": _pointer(field), "code": code, "message": message}]
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.code, self.message, self.field, self.errors))


class StudyError(DecidoError, ValueError):
    """A call a :class:`decido.Study` cannot take in its state: a trial told twice
    (``trial_finished``), a trial it never numbered (``unknown_trial``), values of the
    wrong count or kind (``invalid_values``), a metric a constraint reads missing
    (``missing_metric``), a point outside the variables (``invalid_point``), an ask once
    ``max_trials`` trials were asked (``study_finished``), ``best`` of several objectives
    (``several_objectives``), or a log that does not replay (``invalid_state``).

    Attributes:
        code: the stable machine code above.
        message: the human explanation.
    """

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.code, self.message))


def _pointer(field: str | None) -> str:
    """``bounds[3]`` -> ``/bounds/3``, ``options.popsize`` -> ``/options/popsize``."""
    if not field:
        return ""
    return "/" + field.replace("[", "/").replace("]", "").replace(".", "/")


#: The parts of the library whose C calls return a status (the three extension modules).
LibraryPart = Literal["expression", "engine", "decision"]


def status_error(code: str, message: str, part: LibraryPart, *, field: str | None = None,
                 source: tuple[str, bytes, int, int] | None = None) -> Exception:
    """The exception for a C status (``dc_status_code``, one row of csrc/common/status.def)
    that ``part`` met: the one map from C statuses to exceptions, used by ``_expr``,
    ``_engine`` and ``decisions._kernels``.

    ``out_of_memory`` is a :class:`MemoryError` everywhere.  Otherwise an expression's
    status is an :class:`ExpressionError` with that code (``source``: the text, its UTF-8
    bytes and the fault's byte span, when the C error points into it); the driver's
    ``invalid_argument`` is an :class:`EngineError` ``invalid_argument`` and any other of
    its statuses ``engine_failure`` (``field``: the argument at fault); a decision kernel's
    is a ``ValueError``.  ``message``: the C error's message, or the status's title.
    """
    if code == "out_of_memory":
        return MemoryError(f"decido: out of memory ({part})")
    if part == "expression":
        if source is not None:
            text, encoded, byte_pos, byte_len = source
            return ExpressionError.from_c(code, message, text, encoded, byte_pos, byte_len)
        return ExpressionError(code, message)
    if part == "engine":
        return EngineError("invalid_argument" if code == "invalid_argument" else "engine_failure",
                           message, field)
    return ValueError(f"decido: decision kernel: {message}")


def _render(message: str, text: str | None, position: int, length: int) -> str:
    """The message, then the offending line with a caret under the fault."""
    if text is None:
        return message
    line_start = text.rfind("\n", 0, position) + 1
    line_end = text.find("\n", position)
    if line_end < 0:
        line_end = len(text)
    line = text[line_start:line_end]
    col = position - line_start
    width = max(1, min(length, len(line) - col if col < len(line) else 1))
    start = 0
    if len(line) > _WINDOW:
        start = max(0, min(col - _WINDOW // 2, len(line) - _WINDOW))
    shown = line[start : start + _WINDOW]
    prefix = "..." if start > 0 else ""
    suffix = "..." if start + _WINDOW < len(line) else ""
    shown = "".join(ch if ch.isprintable() else "?" for ch in shown)
    caret_col = len(prefix) + col - start
    width = max(1, min(width, len(shown) - (col - start))) if col - start < len(shown) else 1
    where = f" (line {text.count(chr(10), 0, line_start) + 1})" if "\n" in text else ""
    return (
        f"{message} at position {position}{where}\n"
        f"    {prefix}{shown}{suffix}\n"
        f"    {' ' * caret_col}{'^' * width}"
    )
