"""The worker's periodic lease sweep: every :data:`SWEEP_INTERVAL` seconds, the active
trials whose lease ran out are failed (``lease_expired``) and their points queued again
(every study call sweeps its own study too), so an abandoned trial is noticed within
twice its lease even on a study nobody calls."""

from __future__ import annotations

from decido_service.poller import Poller
from decido_service.studies.api import Context, sweep

__all__ = ["SWEEP_INTERVAL", "LeaseSweeper"]

#: seconds between two sweeps of a worker (leases are at least 1 s)
SWEEP_INTERVAL = 0.5


class LeaseSweeper(Poller):
    """Sweeps the expired trial leases of every study (module docs)."""

    def __init__(self, ctx: Context, interval: float = SWEEP_INTERVAL) -> None:
        super().__init__("study lease sweep", interval)
        self.ctx = ctx

    async def round(self) -> None:
        """One sweep."""
        await sweep(self.ctx)
