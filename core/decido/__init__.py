"""decido: decision and optimization engines over a compiled expression language."""

from decido._expr import c_version as _c_version
from decido.errors import DecidoError, ExpressionError
from decido.expression import DEFAULT_LIMITS, Expression, Structure

__version__ = "0.1.0"
__all__ = [
    "DEFAULT_LIMITS",
    "DecidoError",
    "Expression",
    "ExpressionError",
    "Structure",
    "__version__",
]

assert _c_version() == __version__, "decido: the C library and the package disagree on version"
