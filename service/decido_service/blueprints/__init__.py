"""One blueprint per surface, grouped under ``/v1``."""

from __future__ import annotations

from typing import Any

from sanic import Blueprint, Sanic

from decido_service.blueprints.account import bp as account
from decido_service.blueprints.decide import bp as decide
from decido_service.blueprints.meta import bp as meta
from decido_service.blueprints.optimize import bp as optimize
from decido_service.blueprints.runs import bp as runs
from decido_service.webhooks.endpoints import bp as webhooks

__all__ = ["register"]


def register(app: Sanic[Any, Any]) -> None:
    """Mount every surface on ``app`` as one group with ``version=1`` (paths ``/v1/...``)."""
    app.blueprint(Blueprint.group(meta, account, decide, optimize, runs, webhooks, version=1))
