"""The dashboard: runs, studies, decisions, usage, keys, webhooks in the browser
(``/dashboard``).

Server-rendered pages (:mod:`.views`, Jinja2 templates under ``templates/``), forms for
every action (:mod:`.actions`; the webhooks page's: :mod:`.webhooks_page`), a few
JSON/CSV endpoints and the event stream for the pages' scripts (:mod:`.data`), sessions
signed in with a key (:mod:`.session`), runs of several objectives (:mod:`.front`),
studies (:mod:`.studies_page`);
plots with uPlot, vendored under ``static/`` with its licence. Every asset comes from
this origin, under a Content-Security-Policy that forbids others. See docs/service.md, "Dashboard".
"""

from __future__ import annotations

from typing import Any

from sanic import Sanic

from decido_service.dashboard import actions, data, studies_page, views, webhooks_page
from decido_service.dashboard.routes import bp

__all__ = ["register"]
_MODULES = (actions, data, studies_page, views, webhooks_page)  # their routes are on bp


def register(app: Sanic[Any, Any]) -> None:
    """Mount the dashboard on ``app`` under ``/dashboard``."""
    app.blueprint(bp)
