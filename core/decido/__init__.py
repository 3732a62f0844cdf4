"""decido: decision and optimization engines over a compiled expression language."""

from decido._expr import c_version as _c_version
from decido.errors import DecidoError, EngineError, ExpressionError
from decido.expression import DEFAULT_LIMITS, Expression, Structure
from decido.optimize import (
    OptimizeResult,
    default_engine,
    engines,
    maximize,
    minimize,
    optimize,
)

__version__ = "0.1.0"
__all__ = [
    "DEFAULT_LIMITS",
    "DecidoError",
    "EngineError",
    "Expression",
    "ExpressionError",
    "OptimizeResult",
    "Structure",
    "__version__",
    "default_engine",
    "engines",
    "maximize",
    "minimize",
    "optimize",
]

assert _c_version() == __version__, "decido: the C library and the package disagree on version"
