"""decido_service: the decido HTTP service (Sanic app, store, keys, limits, CLI).

Importing this package is cheap and does not import Sanic: ``create_app`` is
resolved lazily from :mod:`decido_service.http.app` on first access, so the CLI's
``keys`` commands and the store work without the ``service`` extra's server
dependencies being imported.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "create_app"]


def __getattr__(name: str) -> Any:
    """Resolve ``create_app`` lazily (PEP 562) so Sanic is imported only when needed."""
    if name == "create_app":
        from decido_service.http.app import create_app

        return create_app
    raise AttributeError(f"module 'decido_service' has no attribute {name!r}")
