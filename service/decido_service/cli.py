"""The service's commands of ``decido``: ``decido serve`` and ``decido keys create|list|revoke``.

They are click commands the service registers in the ``decido`` command through entry points
(``[project.entry-points."decido.commands"]`` in pyproject.toml): the ``decido`` package never
imports this one. ``keys`` commands work on the store directly (no server needed), through
the same async :class:`~decido_service.store.Store` interface the service uses, and never
import Sanic. ``keys create`` creates the database (SQLite) or the schema (PostgreSQL) when
there is none; ``keys list`` and ``keys revoke`` say which store they looked for and create
nothing, and ``keys create`` makes a new store only when told (``--create``): a key written
to a new ``./decido.db`` in some other directory would be one the running server never
sees. ``--store URL`` (or ``--db``) picks the store, as for ``decido serve``; without it,
``DECIDO_STORE`` (or ``DECIDO_DB``), else ``./decido.db``. ``serve`` runs
:func:`decido_service.serve.serve`.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import click

from decido_service.config import Settings
from decido_service.limits import validate_overrides
from decido_service.store import KeyRecord, Store, StoreError, StoreMissing, open_store
from decido_service.store.postgres_url import is_postgres_url, redact_url

__all__ = ["keys", "serve"]

T = TypeVar("T")
_KEY_COLUMNS = ("id", "prefix", "plan", "tier", "label", "created", "revoked")
_store = click.option("--store", "--db", "db", metavar="URL",
                      help="store: postgresql://user@host/db, sqlite:///path or a SQLite file "
                           "path (default $DECIDO_STORE or $DECIDO_DB, else ./decido.db)")


def _fail(message: str, code: int = 1) -> NoReturn:
    """``decido: message`` on stderr, exit ``code``."""
    click.echo(f"decido: {message}", err=True)
    raise click.exceptions.Exit(code)


def _settings(**given: Any) -> Settings:
    """The settings from ``DECIDO_*`` (and the command line); a bad one exits 2."""
    try:
        return Settings.from_env(**given)
    except ValueError as exc:
        _fail(f"bad configuration: {exc}", 2)


@click.command(help="Run the decido HTTP API (docs at /v1/docs). Options override the "
                    "DECIDO_HOST, DECIDO_PORT, DECIDO_STORE (or DECIDO_DB) and DECIDO_WORKERS "
                    "variables. DECIDO_METRICS=1 also serves Prometheus metrics at /metrics "
                    "(the metrics extra).")
@click.option("--host", help="address to listen on (default 127.0.0.1)")
@click.option("--port", type=int, help="port (default 8000)")
@_store
@click.option("--workers", type=int, help="worker processes (default 1)")
def serve(host: str | None, port: int | None, db: str | None, workers: int | None) -> None:
    """Run the HTTP service until interrupted."""
    from decido_service import serve as serving

    settings = _settings(host=host, port=port, db=db, workers=workers)
    raise click.exceptions.Exit(serving.serve(settings))


@click.group(help="Create, list and revoke API keys (on the store: no server needed).")
def keys() -> None:
    """``decido keys``."""


def _json_object(ctx: click.Context, param: click.Parameter, text: str | None
                 ) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = validate_overrides(json.loads(text))
    except (json.JSONDecodeError, ValueError) as exc:
        raise click.BadParameter(str(exc)) from None
    return value or None


def _one_of(table: dict[str, Any], value: str, option: str) -> str:
    if value not in table:
        raise click.BadParameter(f"{value!r} is not one of {', '.join(sorted(table))}",
                                 param_hint=option)
    return value


@keys.command("create", help="Create a key; its secret is printed once.")
@click.option("--plan", default="free", show_default=True, help="decision plan")
@click.option("--tier", default="free", show_default=True, help="optimization tier")
@click.option("--label", help="free text to recognise the key by, e.g. a customer")
@click.option("--limits", callback=_json_object, metavar="JSON",
              help="per-key limit overrides (enterprise), e.g. "
                   '\'{"decision": {"minute": 5000}, "optimization": {"max_dims": 20000}}\'')
@_store
@click.option("--create", "create_store", is_flag=True,
              help="make the store when there is none (without it, a missing store is an "
                   "error: name the server's with --store)")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def create(plan: str, tier: str, label: str | None, limits: dict[str, Any] | None,
           db: str | None, create_store: bool, as_json: bool) -> None:
    """``decido keys create``."""
    settings = _settings(db=db)
    _one_of(settings.plans, plan, "--plan")
    _one_of(settings.tiers, tier, "--tier")
    record, secret = _with_store(
        settings.db, create_store,
        lambda store: store.accounts.create_key(plan, tier, label, limits),
        missing="; the server's store is where `decido serve` runs (./decido.db) or what its "
                "--store or $DECIDO_STORE names: pass it with --store, or --create to make a "
                "new store here")
    out = sys.stdout
    if as_json:
        out.write(json.dumps({**record, "key": secret}) + "\n")
        return
    shown = f", label {record['label']!r}" if record["label"] else ""
    out.write(
        f"Created key {record['id']} (plan {record['plan']}, tier {record['tier']}{shown})\n"
        f"in the store {_where(settings.db)}.\n"
        f"\n    {secret}\n\n"
        "Copy this key now: it is shown only once and cannot be recovered\n"
        "(only its hash is stored). Send it as `Authorization: Bearer <key>` or `X-API-Key`.\n"
    )


@keys.command("list", help="List keys (never their secrets).")
@_store
@click.option("--json", "as_json", is_flag=True, help="print a JSON array")
def list_keys(db: str | None, as_json: bool) -> None:
    """``decido keys list``."""
    records = _with_store(_settings(db=db).db, False, lambda store: store.accounts.list_keys())
    out = sys.stdout
    if as_json:
        out.write(json.dumps(records) + "\n")
        return
    rows = [_row(r) for r in records]
    widths = [max([len(c), *(len(row[i]) for row in rows)]) for i, c in enumerate(_KEY_COLUMNS)]
    for row in [list(_KEY_COLUMNS), *rows]:
        out.write("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() + "\n")
    if not rows:
        out.write("(no keys)\n")


def _row(r: KeyRecord) -> list[str]:
    return [r["id"], r["prefix"], r["plan"], r["tier"], r["label"] or "-", r["created_at"],
            r["revoked_at"] or "-"]


@keys.command("revoke", help="Revoke a key by id.")
@click.argument("key_id", metavar="ID")
@_store
def revoke(key_id: str, db: str | None) -> None:
    """``decido keys revoke ID`` (the id from ``decido keys list``)."""

    async def revoke(store: Store) -> KeyRecord | None:
        accounts = store.accounts
        return await accounts.get_key(key_id) if await accounts.revoke_key(key_id) else None

    record = _with_store(_settings(db=db).db, False, revoke)
    if record is None:
        _fail(f"no key with id {key_id!r} (see `decido keys list`)")
    sys.stdout.write(f"Revoked key {key_id} (revoked_at {record['revoked_at']}).\n")


def _where(url: str) -> str:
    """The store at ``url`` as a person finds it: a SQLite file's absolute path, a
    PostgreSQL URL without its password."""
    if is_postgres_url(url):
        return redact_url(url)
    from decido_service.store.sqlite import parse_sqlite_url

    return os.path.abspath(parse_sqlite_url(url)[0])


def _with_store(url: str, create: bool, use: Callable[[Store], Awaitable[T]],
                missing: str = "") -> T:
    """Open the store at ``url`` (``create``: make it when missing), ``await use(store)``,
    close the store. ``missing``: said after the store's own message when it is missing."""

    async def run() -> T:
        store = await open_store(url, create=create)
        try:
            return await use(store)
        finally:
            await store.close()

    try:
        return asyncio.run(run())
    except StoreMissing as exc:
        _fail(f"no decido store at {exc.where}{missing}" if missing else str(exc))
    except (StoreError, ValueError) as exc:
        _fail(str(exc))
