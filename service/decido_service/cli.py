"""The ``decido`` console script: ``decido serve`` and ``decido keys create|list|revoke``.

``keys`` commands work on the store directly (no server needed), through the same async
:class:`~decido_service.store.Store` interface the service uses. ``keys create`` creates
the database (SQLite) or the schema (PostgreSQL) when there is none; ``keys list`` and
``keys revoke`` say which store they looked for and create nothing. ``--store URL`` (or
``--db``) picks the store, as for ``decido serve``. ``serve`` lives in
:mod:`decido_service.serve`, which registers itself through ``register(subparsers)``: it adds
its sub-parser and sets ``func`` (``args -> int`` exit code) with ``set_defaults``, the same
convention the ``keys`` commands follow here.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from decido_service import __version__
from decido_service.config import Settings
from decido_service.limits import validate_overrides
from decido_service.store import KeyRecord, Store, StoreError, open_store
from decido_service.store.postgres_url import redact_url

__all__ = ["build_parser", "main"]

T = TypeVar("T")
_KEY_COLUMNS = ("id", "prefix", "plan", "tier", "label", "created", "revoked")


def build_parser(settings: Settings | None = None) -> argparse.ArgumentParser:
    """The full parser: ``keys`` here, ``serve`` from :mod:`decido_service.serve` if present."""
    settings = settings or Settings.from_env()
    parser = argparse.ArgumentParser(
        prog="decido", description="decido service: run the HTTP API and manage API keys."
    )
    parser.add_argument("--version", action="version", version=f"decido {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    _register_serve(commands)
    _add_keys(commands, settings)
    return parser


def _register_serve(commands: Any) -> None:
    try:
        serve = importlib.import_module("decido_service.serve")
    except ModuleNotFoundError as exc:
        if exc.name != "decido_service.serve":
            raise
        return
    serve.register(commands)


def _add_keys(commands: Any, settings: Settings) -> None:
    keys = commands.add_parser("keys", help="create, list and revoke API keys")
    sub = keys.add_subparsers(dest="keys_command", metavar="ACTION")
    sub.required = True
    db = {"dest": "db", "metavar": "URL", "default": settings.db,
          "help": "store: postgresql://user@host/db, sqlite:///path or a SQLite file path "
                  f"(default {redact_url(settings.db)}; --db is the same option)"}

    create = sub.add_parser("create", help="create a key; its secret is printed once")
    create.add_argument("--plan", default="free", choices=sorted(settings.plans),
                        help="decision plan (default free)")
    create.add_argument("--tier", default="free", choices=sorted(settings.tiers),
                        help="optimization tier (default free)")
    create.add_argument("--label", help="free text to recognise the key by, e.g. a customer")
    create.add_argument("--limits", type=_json_object, metavar="JSON",
                        help="per-key limit overrides (enterprise), e.g. "
                             '\'{"decision": {"minute": 5000}, '
                             '"optimization": {"max_dims": 20000}}\'')
    create.add_argument("--store", "--db", **db)
    create.add_argument("--json", action="store_true", help="print one JSON object")
    create.set_defaults(func=_keys_create)

    lst = sub.add_parser("list", help="list keys (never their secrets)")
    lst.add_argument("--store", "--db", **db)
    lst.add_argument("--json", action="store_true", help="print a JSON array")
    lst.set_defaults(func=_keys_list)

    revoke = sub.add_parser("revoke", help="revoke a key by id")
    revoke.add_argument("id", help="the key's id (see `decido keys list`)")
    revoke.add_argument("--store", "--db", **db)
    revoke.set_defaults(func=_keys_revoke)


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = validate_overrides(json.loads(text))
    except (json.JSONDecodeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value or {}


def _keys_create(args: argparse.Namespace) -> int:
    out = sys.stdout
    record, secret = _with_store(args.db, True, lambda store: store.accounts.create_key(
        args.plan, args.tier, args.label, args.limits or None))
    if args.json:
        out.write(json.dumps({**record, "key": secret}) + "\n")
        return 0
    label = f", label {record['label']!r}" if record["label"] else ""
    out.write(
        f"Created key {record['id']} (plan {record['plan']}, tier {record['tier']}{label}).\n"
        f"\n    {secret}\n\n"
        "Copy this key now: it is shown only once and cannot be recovered\n"
        "(only its hash is stored). Send it as `Authorization: Bearer <key>` or `X-API-Key`.\n"
    )
    return 0


def _keys_list(args: argparse.Namespace) -> int:
    out = sys.stdout
    records = _with_store(args.db, False, lambda store: store.accounts.list_keys())
    if args.json:
        out.write(json.dumps(records) + "\n")
        return 0
    rows = [_row(r) for r in records]
    widths = [max([len(c), *(len(row[i]) for row in rows)]) for i, c in enumerate(_KEY_COLUMNS)]
    for row in [list(_KEY_COLUMNS), *rows]:
        out.write("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() + "\n")
    if not rows:
        out.write("(no keys)\n")
    return 0


def _row(r: KeyRecord) -> list[str]:
    return [r["id"], r["prefix"], r["plan"], r["tier"], r["label"] or "-", r["created_at"],
            r["revoked_at"] or "-"]


def _keys_revoke(args: argparse.Namespace) -> int:
    out = sys.stdout

    async def revoke(store: Store) -> KeyRecord | None:
        accounts = store.accounts
        return await accounts.get_key(args.id) if await accounts.revoke_key(args.id) else None

    record = _with_store(args.db, False, revoke)
    if record is None:
        sys.stderr.write(f"decido: no key with id {args.id!r} (see `decido keys list`)\n")
        return 1
    revoked_at = record["revoked_at"]
    out.write(f"Revoked key {args.id} (revoked_at {revoked_at}).\n")
    return 0


def _with_store(url: str, create: bool, use: Callable[[Store], Awaitable[T]]) -> T:
    """Open the store at ``url`` (``create``: make it when missing), ``await use(store)``,
    close the store."""

    async def run() -> T:
        store = await open_store(url, create=create)
        try:
            return await use(store)
        finally:
            await store.close()

    return asyncio.run(run())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``decido`` console script; returns the exit code."""
    try:
        settings = Settings.from_env()
    except ValueError as exc:
        sys.stderr.write(f"decido: bad configuration: {exc}\n")
        return 2
    args = build_parser(settings).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (StoreError, ValueError) as exc:
        sys.stderr.write(f"decido: {exc}\n")
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
