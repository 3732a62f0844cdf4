"""One fault of an optimization request (shared by :mod:`decido.optimize` and
:mod:`decido.design`)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from decido.errors import EngineError

__all__ = ["Problem", "engine_error", "is_float", "is_real"]


def is_real(value: Any) -> bool:
    """True for an int or float (NumPy's too) that is not a bool."""
    return not isinstance(value, bool) and isinstance(
        value, (int, float, np.integer, np.floating)
    )


def is_float(value: Any) -> bool:
    """True when ``float(value)`` works (an int may be beyond a float's range)."""
    try:
        float(value)
    except OverflowError:
        return False
    return True


class Problem(NamedTuple):
    """One fault of an optimization request, as :func:`problems` reports it.

    ``path`` is where it is (``("bounds", 3)``, ``("options", "popsize")``, ``()`` for the
    whole request), ``code`` a stable machine code (those of :class:`EngineError`),
    ``message`` a human explanation."""

    path: tuple[str | int, ...]
    code: str
    message: str

    @property
    def pointer(self) -> str:
        """The RFC 6901 JSON pointer of :attr:`path` in a request body: ``/bounds/3``."""
        return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in self.path)

    @property
    def field(self) -> str:
        """:attr:`path` as :attr:`EngineError.field` writes it: ``bounds[3]``,
        ``options.popsize`` (``""`` for the whole request)."""
        out = ""
        for p in self.path:
            out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
        return out

    def error(self) -> EngineError:
        """This fault as the :class:`EngineError` that :func:`optimize` raises."""
        return EngineError(self.code, self.message, self.field or None)


def engine_error(problems: list[Problem]) -> EngineError:
    """Every fault as one :class:`EngineError`: the first's code, message and field, and
    ``errors`` listing them all with their JSON pointers."""
    first = problems[0]
    return EngineError(first.code, first.message, first.field or None,
                       [{"pointer": p.pointer, "code": p.code, "message": p.message}
                        for p in problems])
