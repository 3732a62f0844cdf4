"""``decido.Expression``: text compiled once to bytecode, run by the C VM."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from decido import _expr
from decido.errors import ExpressionError

__all__ = ["Expression", "Structure", "DEFAULT_LIMITS"]

_F64 = np.dtype(np.float64)

#: Default limits; each can be changed per Expression.
DEFAULT_LIMITS = {"max_length": 10_000, "max_depth": 256, "max_instructions": 65_536}
#: The largest value a limit may be given (far beyond what memory allows).
MAX_LIMIT = 2**48
_REAL_KINDS = frozenset("biuf")


def _input_error(message: str) -> ExpressionError:
    return ExpressionError("invalid_input", message)


def _is_real_scalar(value: object) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating, np.bool_))


def _real_array(x: object) -> NDArray[np.float64]:
    """``x`` as a C-contiguous float64 array; complex values, strings and anything else
    that is not a real number raise :class:`ExpressionError` (code ``invalid_input``)
    instead of being truncated or parsed."""
    if type(x) is np.ndarray and x.dtype == _F64:
        return np.ascontiguousarray(x)
    arr = np.asarray(x)
    kind = arr.dtype.kind
    if kind == "O":
        bad = [v for v in arr.flat if not _is_real_scalar(v)]
        kind = "f" if not bad else "c" if isinstance(bad[0], (complex, np.complexfloating)) \
            else "O"
    if kind == "c":
        raise _input_error("complex values are not accepted (the imaginary part would be "
                           "lost): give real numbers")
    if kind not in _REAL_KINDS:
        raise _input_error(f"inputs must be real numbers, got values of type {arr.dtype}")
    try:
        return np.ascontiguousarray(arr, dtype=np.float64)
    except OverflowError:  # a Python int beyond the range of a float
        raise _input_error("an input is beyond the range of a float") from None


@dataclass(frozen=True)
class Structure:
    """Which input coordinates interact in an expression.

    Attributes:
        kind: ``"constant"``, ``"separable"`` (f = c + sum_j g_j(x_j)), ``"chained"``
            (additive terms couple only x_j and x_{j+1}), ``"grouped"`` (independent
            groups) or ``"general"``.
        identical_terms: separable with the same g for every coordinate.
        groups: connected components of the interaction graph (coordinates the
            expression uses), each a sorted list of coordinate indices.
        used: boolean mask of the coordinates the expression depends on.
    """

    kind: str
    identical_terms: bool
    groups: list[list[int]]
    used: NDArray[np.bool_]
    _edges: NDArray[np.int64] | None = field(repr=False, default=None)

    def edges(self) -> NDArray[np.int64]:
        """Interacting pairs (u, v), u < v, sorted, as an (E, 2) int64 array.

        Raises ``ExpressionError`` (code ``"program_too_large"``) when the graph is
        too large to list (a term coupling thousands of coordinates).
        """
        if self._edges is None:
            raise ExpressionError(
                "program_too_large", "the interaction graph is too large to list edges"
            )
        return self._edges.copy()


class Expression:
    """An expression of the decido language, compiled to bytecode.

    Exactly one context applies:

    * ``Expression(text, n=50)`` -- optimization: ``x`` is a vector of length ``n``,
      with ``n``, ``i`` (1..n), ``pi`` and ``e``.
    * ``Expression(text, variables=["quality", "price"])`` -- decision: each
      variable is a scalar; inputs are given in the order of ``variables``.
    * ``Expression(text)`` -- a constant expression.

    The compiled program is immutable and may be shared between threads;
    evaluation releases the GIL.  Invalid text raises ``ExpressionError``.
    """

    __slots__ = ("_text", "_program", "_n", "_variables", "_structure", "_lock")

    def __init__(
        self,
        text: str,
        n: int | None = None,
        variables: Sequence[str] | None = None,
        *,
        max_length: int = DEFAULT_LIMITS["max_length"],
        max_depth: int = DEFAULT_LIMITS["max_depth"],
        max_instructions: int = DEFAULT_LIMITS["max_instructions"],
    ) -> None:
        if not isinstance(text, str):
            raise TypeError(f"expression text must be a str, not {type(text).__name__}")
        if n is not None and variables is not None:
            raise ValueError("give either n (optimization) or variables (decision), not both")
        if n is not None:
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
                raise TypeError(f"n must be an int, not {type(n).__name__}")
            if not 1 <= int(n) <= 1 << 24:
                raise ValueError(f"n must be between 1 and {1 << 24}, got {n}")
        names: list[str] = []
        if variables is not None:
            if isinstance(variables, (str, bytes)):
                raise TypeError("variables must be a sequence of names, not a single string")
            names = list(variables)
            for name in names:
                if not isinstance(name, str):
                    raise TypeError(f"variable names must be str, not {type(name).__name__}")
        for limit, value in (
            ("max_length", max_length),
            ("max_depth", max_depth),
            ("max_instructions", max_instructions),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not (
                    1 <= value <= MAX_LIMIT):
                raise ExpressionError(
                    "invalid_limit", f"{limit} must be an int between 1 and 2**48, got {value!r}")
        if len(text) > max_length:
            raise ExpressionError(
                "too_long",
                f"expression too long: {len(text)} characters (limit {max_length})",
                max_length,
                len(text) - max_length,
                text,
            )
        encoded = text.encode("utf-8", "surrogatepass")
        self._text = text
        self._n = int(n) if n is not None else None
        self._variables = tuple(names) if variables is not None else None
        self._structure: Structure | None = None
        self._lock = threading.Lock()
        self._program = _expr.Program(
            encoded,
            self._n or 0,
            names,
            max(max_length, len(encoded)),
            max_depth,
            max_instructions,
            text,
        )

    # ---- description ----
    @property
    def text(self) -> str:
        """The source text."""
        return self._text

    @property
    def n(self) -> int | None:
        """The dimension in the optimization context, else None."""
        return self._n

    @property
    def variables(self) -> tuple[str, ...] | None:
        """The variable names in the decision context, else None."""
        return self._variables

    @property
    def n_inputs(self) -> int:
        """Length of one input row: n, the number of variables, or 0."""
        return int(self._program.n_inputs)

    @property
    def n_instructions(self) -> int:
        """Instructions in the compiled program (after folding and sharing)."""
        return int(self._program.n_instructions)

    def __repr__(self) -> str:
        ctx = (
            f"n={self._n}"
            if self._n is not None
            else f"variables={list(self._variables)!r}"
            if self._variables is not None
            else "constant"
        )
        return f"Expression({self._text!r}, {ctx})"

    def disassemble(self) -> str:
        """The bytecode as text, one instruction a line."""
        return str(self._program.disassemble())

    # ---- evaluation ----
    def _row(self, x: ArrayLike | Mapping[str, float] | None) -> NDArray[np.float64]:
        k = self._program.n_inputs
        if type(x) is np.ndarray and x.dtype == _F64 and x.shape == (k,):
            return x  # the binding checks contiguity
        if x is None:
            if k:
                raise ValueError(f"this expression needs an input of length {k}")
            return np.zeros(0)
        if isinstance(x, Mapping):
            x = self._mapping_row(x)
        row = _real_array(x)
        if row.ndim != 1 or row.shape[0] != k:
            raise ValueError(f"expected a vector of length {k}, got shape {row.shape}")
        return row

    def _mapping_row(self, x: Mapping[str, float]) -> NDArray[np.float64]:
        """The values of a mapping in the order of the variables: every variable, no
        other name, real numbers only (else :class:`ExpressionError`, ``invalid_input``)."""
        names = self._variables
        if names is None:
            raise TypeError("a mapping of values needs an expression with variables")
        try:
            values = [x[v] for v in names]
        except KeyError:
            missing = [v for v in names if v not in x]
            raise _input_error(f"missing values for variables: {', '.join(missing)}") from None
        if len(x) != len(names):
            known = set(names)
            extra = [repr(k) for k in x if k not in known]
            raise _input_error(f"unknown names in the values: {', '.join(extra)} (the "
                               f"variables are {', '.join(names)})")
        try:
            return _real_array(values)
        except (ExpressionError, ValueError, TypeError):
            bad = [f"{v} ({type(value).__name__})"
                   for v, value in zip(names, values, strict=True) if not _is_real_scalar(value)]
            if bad:
                raise _input_error(f"the values of {', '.join(bad)} are not real "
                                   "numbers") from None
            raise

    def evaluate(self, x: ArrayLike | Mapping[str, float] | None = None) -> float:
        """The value at one point ``x`` (length ``n_inputs``; a mapping by name for
        variables)."""
        row = self._row(x)
        if not row.flags.c_contiguous:
            row = np.ascontiguousarray(row)
        return self._program.evaluate(row)

    def __call__(self, x: ArrayLike | Mapping[str, float] | None = None) -> float:
        return self.evaluate(x)

    def evaluate_many(self, X: ArrayLike) -> NDArray[np.float64]:
        """One value per row of ``X`` (shape ``(P, n_inputs)``)."""
        rows = _real_array(X)
        k = self.n_inputs
        if rows.ndim != 2 or rows.shape[1] != k:
            raise ValueError(f"expected an array of shape (P, {k}), got shape {rows.shape}")
        return self._program.evaluate_many(rows)

    def gradient(self, x: ArrayLike | Mapping[str, float]) -> tuple[float, NDArray[np.float64]]:
        """``(value, grad)`` at ``x`` by reverse-mode AD over the bytecode."""
        row = self._row(x)
        if not row.flags.c_contiguous:
            row = np.ascontiguousarray(row)
        return self._program.gradient(row)

    # ---- structure ----
    @property
    def structure(self) -> Structure:
        """Separability: which coordinates interact (computed at compile time)."""
        if self._structure is None:
            with self._lock:
                if self._structure is None:
                    kind, identical, group, used, edges = self._program.structure()
                    groups: dict[int, list[int]] = {}
                    for j, g in enumerate(group.tolist()):
                        if g >= 0:
                            groups.setdefault(g, []).append(j)
                    self._structure = Structure(
                        kind, identical, [groups[g] for g in sorted(groups)], used, edges
                    )
        return self._structure

    def separable_terms(self, T: ArrayLike) -> NDArray[np.float64]:
        """Per-coordinate terms of a separable expression.

        For ``f(x) = c + sum_j g_j(x_j)``, returns ``G`` with ``G[k, j] = g_j(T[k, j])``
        (``T`` of shape ``(K, n)``), at the cost of about one evaluation per row:
        K candidate values for every coordinate at once.  Raises
        ``ExpressionError`` (code ``"not_separable"``) for coupled expressions.
        """
        rows = _real_array(T)
        k = self.n_inputs
        if rows.ndim != 2 or rows.shape[1] != k:
            raise ValueError(f"expected an array of shape (K, {k}), got shape {rows.shape}")
        return self._program.separable_terms(rows)
