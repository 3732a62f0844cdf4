"""Optimization runs as resources: submitting one (:mod:`.submit`), the durable queue and
its worker (:mod:`.queue`), how a run executes (:mod:`.execution`), reads and cancels
(:mod:`.api`), Server-Sent Events (:mod:`.events`), the convergence trace (:mod:`.trace`)
and ``Idempotency-Key`` (:mod:`.idempotency`). The blueprints and the dashboard both call
these functions.
"""
