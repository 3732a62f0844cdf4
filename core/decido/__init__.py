"""decido: decision and optimization engines over a compiled expression language."""

from typing import Any

from decido import option_table
from decido._expr import c_version as _c_version
from decido.decide import LIMITS as DECISION_LIMITS
from decido.decide import (
    DecisionError,
    decide,
    decide_batch,
    decision_methods,
    decision_schemas,
)
from decido.errors import ConstraintError, DecidoError, EngineError, ExpressionError, StudyError
from decido.expression import DEFAULT_LIMITS, Expression, Structure
from decido.optimize import (
    OptimizeResult,
    ParetoResult,
    RunMonitor,
    default_engine,
    engines,
    maximize,
    minimize,
    optimize,
)
from decido.pareto import hypervolume
from decido.study import Study, Trial

__version__ = "0.1.0"
__all__ = [
    "AsyncClient",
    "Client",
    "DECISION_LIMITS",
    "DEFAULT_LIMITS",
    "ConstraintError",
    "DecidoError",
    "DecisionError",
    "EngineError",
    "Expression",
    "ExpressionError",
    "OptimizeResult",
    "ParetoResult",
    "RunMonitor",
    "Structure",
    "Study",
    "StudyError",
    "Trial",
    "__version__",
    "decide",
    "decide_batch",
    "decision_methods",
    "decision_schemas",
    "default_engine",
    "engines",
    "hypervolume",
    "maximize",
    "minimize",
    "optimize",
    "option_table",
]

_CLIENT = ("Client", "AsyncClient")


def __getattr__(name: str) -> Any:
    """``decido.Client`` and ``decido.AsyncClient`` from :mod:`decido.client`, imported on
    first use (PEP 562): ``import decido`` never imports the client or httpx."""
    if name in _CLIENT:
        from decido import client

        return getattr(client, name)
    raise AttributeError(f"module 'decido' has no attribute {name!r}")


assert _c_version() == __version__, "decido: the C library and the package disagree on version"
