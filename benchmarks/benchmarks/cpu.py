"""The timer of every timed benchmark here: CPU seconds of the benchmark process.

The development machine is shared: wall time there measures the other jobs as much as
decido, CPU time much less so (``asv continuous`` compares these)."""

from __future__ import annotations

import time


class CpuTimer:
    """Base class: time in CPU seconds (the machine is shared and noisy)."""

    timer = time.process_time
