"""The store: what the service keeps, by concern, on SQLite or PostgreSQL.

:class:`Store` is what the app holds (``app.ctx.store``); it exposes one object per
concern, each a class written once in SQL for both backends:

- ``store.accounts`` (:class:`~decido_service.store.accounts.Accounts`): keys, their
  accounts, dashboard sessions, service secrets;
- ``store.admissions`` (:class:`~decido_service.store.admissions.Admissions`): counting
  requests against their limits (``admit_many``, through the worker's group commit,
  :mod:`~decido_service.store.group`; ``peek``);
- ``store.runs`` (:class:`~decido_service.store.runs.Runs`): run rows (frozen
  :class:`~decido_service.store.runs.RunRow`), the queue and its leases, idempotency records;
- ``store.decisions`` (:class:`~decido_service.store.decisions.DecisionLog`): the
  decision log (written by the admission that counts its request);
- ``store.studies`` (:class:`~decido_service.store.studies.Studies`): studies, their
  trials and ordered logs, changed under the study's row lock;
- ``store.webhooks`` (:class:`~decido_service.store.webhooks.Webhooks`): webhook endpoints
  and their deliveries (a run's written with its final state by ``store.runs.update``);
- ``store.wakeups`` (:class:`~decido_service.store.wakeup.Wakeups`): PostgreSQL's
  ``LISTEN``/``NOTIFY`` between processes and nodes (nothing on SQLite).

Underneath, a backend (:class:`~decido_service.store.dialect.Database`: SQLite,
:mod:`~decido_service.store.sqlite`, or PostgreSQL, :mod:`~decido_service.store.postgres`)
runs a concern's ``async`` body in a transaction (``write``) or in autocommit (``read``);
the few places the two SQL dialects differ are a
:class:`~decido_service.store.dialect.Dialect`. :func:`open_store` picks the backend from
the URL. The schema of every concern is :mod:`~decido_service.store.schema`. Nothing
outside this package knows SQL.

**Adding a concern** (webhooks, say): write ``store/<concern>.py`` with one class taking
the :class:`~decido_service.store.dialect.Database`
(statements with ``?`` placeholders; a lock clause or an advisory lock from the dialect
where rows must not change under you); append its tables to
:data:`~decido_service.store.schema.MIGRATIONS` (a new entry once version 1 has shipped);
add the attribute to :class:`Store`; give it a contract test run on both backends
(``tests/service/test_store_<concern>.py``). What must be written in the same transaction
as another concern's rows (a delivery with a run's final state, a decision-log entry with
its admission) is a function of the one concern called with the other's
:class:`~decido_service.store.dialect.Tx`, as :func:`~decido_service.store.admissions.admit`
is by :meth:`~decido_service.store.runs.Runs.enqueue`. A periodic clean-up goes into
:meth:`Store.prune`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable

from decido_service.store.accounts import Accounts
from decido_service.store.admission_rule import window_bounds
from decido_service.store.admissions import Admissions
from decido_service.store.decisions import DecisionLog
from decido_service.store.dialect import Database
from decido_service.store.records import (
    Admission,
    AdmissionRequest,
    CounterSpec,
    CounterState,
    DecisionEntry,
    DecisionRecord,
    KeyRecord,
    StoreError,
    StoreMissing,
    iso_utc,
    metadata_text,
    ordered_id,
    short_id,
)
from decido_service.store.runs import (
    FINISHED_STATES,
    RUN_STATES,
    FrontChunk,
    RunRow,
    Runs,
    run_row,
)
from decido_service.store.studies import Studies, StudyTx
from decido_service.store.wakeup import NoWakeups, Wakeups
from decido_service.store.webhooks import Webhooks

__all__ = [
    "FINISHED_STATES",
    "PRUNE_INTERVAL",
    "RUN_STATES",
    "Accounts",
    "Admission",
    "AdmissionRequest",
    "Admissions",
    "CounterSpec",
    "CounterState",
    "DecisionEntry",
    "DecisionLog",
    "DecisionRecord",
    "FrontChunk",
    "KeyRecord",
    "RunRow",
    "Runs",
    "Store",
    "Studies",
    "StudyTx",
    "Webhooks",
    "StoreError",
    "StoreMissing",
    "iso_utc",
    "metadata_text",
    "open_store",
    "ordered_id",
    "run_row",
    "short_id",
    "window_bounds",
]

log = logging.getLogger("decido.service")

#: seconds between two runs of :meth:`Store.prune` by :meth:`Store.start_pruning`
PRUNE_INTERVAL = 60.0


class Store:
    """The concerns of one database (module docs). ``decision_retention``: seconds a
    decision-log entry is kept (:meth:`prune`); ``decision_log_bytes``: the bytes a key's
    decision log may hold (:mod:`~decido_service.store.decisions`; ``None``: no cap)."""

    def __init__(self, database: Database, *, decision_retention: float = 30 * 86400.0,
                 decision_log_bytes: int | None = None) -> None:
        self.database = database
        self.decision_retention = float(decision_retention)
        log = DecisionLog(database, decision_log_bytes)
        self.accounts = Accounts(database)
        self.admissions = Admissions(database, log)
        self.runs = Runs(database)
        self.decisions: DecisionLog = log
        self.webhooks = Webhooks(database)
        self.studies = Studies(database)
        self.wakeups: Wakeups = database if isinstance(database, Wakeups) else NoWakeups()
        self._pruning: asyncio.Task[None] | None = None

    async def ping(self) -> bool:
        """True when the store answers a trivial query and its schema is current."""
        return await self.database.ping()

    async def prune(self, now: float) -> int:
        """Delete what has outlived its use: minute and hour counters of windows long
        ended (:meth:`Admissions.prune`) and decision-log entries older than the
        retention; how many rows."""
        return (await self.admissions.prune(now)
                + await self.decisions.prune(now - self.decision_retention))

    def start_pruning(self, interval: float = PRUNE_INTERVAL) -> None:
        """Run :meth:`prune` every ``interval`` seconds, as of the store's clock (the one
        that stamps what it writes), until :meth:`close` (each worker of each node: the
        deletes are idempotent and cheap when there is nothing to do); a failure is
        logged and tried again next time."""
        async def loop() -> None:
            while True:
                await asyncio.sleep(interval)
                try:
                    await self.prune(self.database.clock())
                except StoreError as exc:
                    log.warning("pruning the store failed (tried again in %.0f s): %s",
                                interval, exc)

        self._pruning = asyncio.ensure_future(loop())

    async def close(self) -> None:
        """Stop pruning and release every connection; the store is unusable afterwards."""
        if self._pruning is not None:
            self._pruning.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pruning
        await self.database.close()

    def __repr__(self) -> str:
        return f"Store({self.database!r})"


async def open_store(url: str = "./decido.db", *, create: bool = True,
                     clock: Callable[[], float] | None = None,
                     decision_retention: float = 30 * 86400.0,
                     decision_log_bytes: int | None = None) -> Store:
    """Open (and migrate) the store at ``url``.

    ``postgresql://user@host/db`` (or ``postgres://``): the PostgreSQL backend
    (:mod:`decido_service.store.postgres`; URL options in
    :mod:`decido_service.store.postgres_url`). Otherwise SQLite:
    ``sqlite:///abs/path.db`` (absolute, as in ``file:///``; ``sqlite:////abs``
    works too), ``sqlite:relative/path.db``, or a plain filesystem path. Query parameter
    ``?synchronous=full`` makes every commit fsync (survives power loss; the default,
    ``normal``, survives a killed process). ``create=False``: a missing database (SQLite:
    file; PostgreSQL: schema) is a :class:`StoreError` naming what was looked for, and
    nothing is created. ``clock`` stamps ``created_at`` of new keys and runs;
    ``decision_retention`` is how many seconds decision-log entries are kept and
    ``decision_log_bytes`` how many bytes a key's log may hold (``None``: no cap)."""
    from decido_service.store.postgres_url import is_postgres_url

    database: Database
    if is_postgres_url(url):
        try:
            from decido_service.store.postgres import PostgresDatabase
        except ImportError as exc:
            raise StoreError(f"a postgresql:// store needs asyncpg ({exc}); "
                             "pip install 'decido[service]'") from exc
        database = postgres = PostgresDatabase(url, clock=clock)
        migrate = postgres.migrate(create=create)
    else:
        from decido_service.store.sqlite import SQLiteDatabase, parse_sqlite_url

        path, options = parse_sqlite_url(url)
        if not create and not os.path.exists(path):
            raise StoreMissing(os.path.abspath(path))
        database = sqlite = SQLiteDatabase(path, clock=clock, **options)
        migrate = sqlite.migrate()
    try:
        await migrate
    except BaseException:
        await database.close()
        raise
    return Store(database, decision_retention=decision_retention,
                 decision_log_bytes=decision_log_bytes)
