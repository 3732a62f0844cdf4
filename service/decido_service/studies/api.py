"""What the ``/v1/studies`` endpoints do (docs/studies.md, "Over HTTP"): every operation,
by concern. Each change of a study runs in one transaction holding its row lock
(:mod:`~decido_service.studies.operation`); :mod:`~decido_service.studies.lifecycle`
creates, reads, stops and deletes studies, :mod:`~decido_service.studies.leases` suggests
trials and holds their leases, :mod:`~decido_service.studies.telling` tells their results
and intermediate values.
"""

from __future__ import annotations

from decido_service.studies.leases import abandon, heartbeat, suggest
from decido_service.studies.lifecycle import (
    Caps,
    Created,
    create,
    delete,
    find,
    page,
    stop,
    sweep,
    trial,
    trials,
)
from decido_service.studies.operation import FINISHED, Context, best_event, finished
from decido_service.studies.telling import add_trials, report, tell, tell_many

__all__ = ["FINISHED", "Caps", "Context", "Created", "abandon", "add_trials", "best_event",
           "create", "delete", "find", "finished", "heartbeat", "page", "report", "stop",
           "suggest", "sweep", "tell", "tell_many", "trial", "trials"]
