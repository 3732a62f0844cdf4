"""The suite's two tiers: *fast* (in process) and *live* (processes and servers).

A test is **live** when what it uses starts a process or reaches a server of its own: a
``decido serve`` subprocess, PostgreSQL, chromium, nginx, a ``decido`` command, ``make``.
Everything else is **fast**: the library, the bindings, the store contract on SQLite, the
service's handlers in process. ``make test-fast`` (``pytest -m "not live"``) is the inner
loop; ``make test`` runs both tiers, the live one spread over pytest-xdist workers.

Nobody has to remember a marker: at collection every test is classified by what it uses,
read from the bytecode of the test function and of every fixture it requests (pytest's
closure of fixtures), following the helpers of the suite (functions and classes defined in
the test directories) to what they call. A test is marked ``live`` (with the chain that
made it so as the marker's ``reason``, ``pytest --collect-only -q -m live`` lists them)
when that use reaches

* a module that starts processes or talks to a server: :data:`LIVE_MODULES`
  (``subprocess``, ``multiprocessing``, ``asyncpg``, ``playwright``, ...), or anything
  defined in one, as ``subprocess.run`` or ``from playwright.sync_api import ...``;
* one of ``os``'s process starters (:data:`OS_PROCESS_STARTERS`: ``os.fork``, ...).

Explicit marks decide before that reading: ``pytest.mark.live`` (a test, a module's
``pytestmark`` or a parameter: for a use the reading cannot see, as a library call that
starts processes) and ``pytest.mark.fast`` (a parameter whose branch of a shared fixture is
in process, as the store contract's ``sqlite``, while the same fixture's ``postgresql``
branch is live).

A guard keeps the classification honest: while a fast test runs (its set-up and tear-down
included) starting a process or connecting to PostgreSQL fails the test with a message
saying how to mark it, so a test classified wrongly fails in every run, ``make test``
included, instead of slowing the fast tier down (tests/test_tiers.py checks all of it).
"""

from __future__ import annotations

import _posixsubprocess
import contextlib
import dis
import importlib
import inspect
import os
import socket
import subprocess
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

LIVE = "live"
FAST = "fast"

#: modules (and their submodules) whose use starts a process or reaches a server
LIVE_MODULES = frozenset({
    "subprocess", "multiprocessing", "concurrent.futures.process", "asyncio.subprocess",
    "pty", "asyncpg", "playwright",
})
#: ``os``'s functions that start a process
OS_PROCESS_STARTERS = frozenset(
    name for name in ("fork", "forkpty", "system", "popen", "posix_spawn", "posix_spawnp",
                      "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve",
                      "spawnvp", "spawnvpe")
    if hasattr(os, name))

_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
_ATTRS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})


def _live_module(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in LIVE_MODULES)


class Reader:
    """What the code under ``roots`` (the tests and their helpers) reaches, memoized."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots = [r.resolve() for r in roots]
        self.prefix = Path(sys.prefix).resolve()
        self.seen: dict[int, str | None] = {}
        self._pinned: list[object] = []  # keeps ids in ``seen`` from being reused

    def ours(self, filename: str) -> bool:
        """True for a file of the test suite (not of an installed package)."""
        path = Path(filename).resolve()
        if path.is_relative_to(self.prefix) or "site-packages" in path.parts:
            return False
        return any(path.is_relative_to(root) for root in self.roots)

    def why(self, obj: object) -> str | None:
        """The chain by which ``obj`` reaches a live resource (``None``: in process)."""
        obj = _unwrap(obj)
        key = id(obj)
        if key in self.seen:
            return self.seen[key]
        self.seen[key] = None  # a cycle reaches nothing new
        self._pinned.append(obj)
        found = self._why(obj)
        self.seen[key] = found
        return found

    def _why(self, obj: object) -> str | None:
        if isinstance(obj, types.ModuleType):
            return obj.__name__ if _live_module(obj.__name__) else None
        if isinstance(obj, _OsStarter):
            return f"os.{obj.name}"
        module = getattr(obj, "__module__", None)
        if isinstance(module, str) and _live_module(module):
            return f"{module}.{getattr(obj, '__qualname__', '?')}"
        if isinstance(obj, types.FunctionType):
            if not self.ours(obj.__code__.co_filename):
                return None
            found = self.code(obj.__code__, obj.__globals__)
            return f"{obj.__qualname__} -> {found}" if found else None
        if isinstance(obj, type) and self._defined_here(obj):
            for klass in obj.__mro__:
                for member in vars(klass).values():
                    for function in _functions_of(member):
                        found = self.why(function)
                        if found:
                            return found
        return None

    def _defined_here(self, klass: type) -> bool:
        module = sys.modules.get(klass.__module__)
        filename = getattr(module, "__file__", None)
        return isinstance(filename, str) and self.ours(filename)

    def code(self, code: types.CodeType, namespace: dict[str, Any]) -> str | None:
        """What a code object (and the code nested in it) reaches through its names."""
        for obj in _referenced(code, namespace):
            found = self.why(obj)
            if found:
                return found
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                found = self.code(const, namespace)
                if found:
                    return found
        return None


def _unwrap(obj: object) -> object:
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    inner = getattr(getattr(obj, "hypothesis", None), "inner_test", None)
    if inner is not None:  # a hypothesis test: the function it wraps
        obj = inner
    if callable(obj):
        try:
            obj = inspect.unwrap(obj)
        except ValueError:
            pass
    return obj


def _functions_of(member: object) -> Iterator[object]:
    if isinstance(member, (staticmethod, classmethod)):
        yield member.__func__
    elif isinstance(member, property):
        yield from (f for f in (member.fget, member.fset, member.fdel) if f is not None)
    elif isinstance(member, types.FunctionType):
        yield member


def _referenced(code: types.CodeType, namespace: dict[str, Any]) -> Iterator[object]:
    """The objects a code object names: globals and the attributes read from them, to the
    end of each chain (``subprocess.run``, ``pg_server.throwaway_database``), and what it
    imports; ``os``'s process starters by name (a patched ``os.fork`` is still one)."""
    builtins = namespace.get("__builtins__", {})
    chain: object = None
    for ins in dis.get_instructions(code):
        name = ins.argval if isinstance(ins.argval, str) else None
        if name is not None and chain is not None and ins.opname in (*_ATTRS, "IMPORT_FROM"):
            if chain is os and name in OS_PROCESS_STARTERS:
                yield _OsStarter(name)
                chain = None
                continue
            try:
                found = getattr(chain, name, None)
            except Exception:  # a descriptor that fails on the class
                found = None
            if found is None:
                yield chain
            chain = found
            continue
        if chain is not None:
            yield chain
        chain = None
        if name is not None and ins.opname in _LOADS:
            if name in namespace:
                chain = namespace[name]
            elif isinstance(builtins, dict):
                chain = builtins.get(name)
        elif name is not None and ins.opname == "IMPORT_NAME":
            chain = _imported(name)
    if chain is not None:
        yield chain


def _imported(name: str) -> object:
    module = sys.modules.get(name)
    if module is None:
        try:
            module = importlib.import_module(name)
        except Exception:  # an import the test itself will report
            return None
    return module


class _OsStarter:
    """``os.<name>``, a function that starts a process."""

    def __init__(self, name: str) -> None:
        self.name = name


def _fixture_defs(item: pytest.Item) -> Iterator[tuple[str, Any]]:
    info = getattr(item, "_fixtureinfo", None)
    for name, defs in (getattr(info, "name2fixturedefs", None) or {}).items():
        for fixturedef in defs:
            yield name, fixturedef


def classify(item: pytest.Item, reader: Reader) -> str | None:
    """Why ``item`` is live (``None`` when it is fast); explicit marks first."""
    marks = {m.name: m for m in item.iter_markers() if m.name in (LIVE, FAST)}
    if LIVE in marks and FAST in marks:
        raise pytest.UsageError(f"{item.nodeid} is marked both live and fast")
    if LIVE in marks:
        return str(marks[LIVE].kwargs.get("reason", "marked live"))
    if FAST in marks:
        return None
    found = reader.why(getattr(item, "obj", None))
    if found:
        return found
    for name, fixturedef in _fixture_defs(item):
        found = reader.why(fixturedef.func)
        if found:
            return f"fixture {name}: {found}"
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{LIVE}(reason): starts a process or reaches a server (the live tier; "
        "set automatically, tests/tiers.py)")
    config.addinivalue_line(
        "markers", f"{FAST}: in process although a fixture it shares could reach a server "
        "(a parameter's mark; the guard of tests/tiers.py checks it)")


@pytest.hookimpl(tryfirst=True)  # before -m selects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # the suite's own code: its test paths (the root directory when it names none)
    reader = Reader([config.rootpath / p for p in config.getini("testpaths")]
                    or [config.rootpath])
    for item in items:
        explicit = any(m.name == LIVE for m in item.iter_markers())
        reason = classify(item, reader)
        if reason is not None and not explicit:
            item.add_marker(pytest.mark.live(reason=reason))


# ---------------------------------------------------------------- the guard

class LiveUseInFastTest(RuntimeError):
    """A test of the fast tier started a process or reached PostgreSQL."""


def _message(item: pytest.Item, what: str) -> str:
    return (f"{item.nodeid} is in the fast tier but {what}. Mark it live: "
            "@pytest.mark.live(reason=...) on the test, pytestmark in its module, or "
            "marks=pytest.mark.live on the parameter that needs it (tests/tiers.py).")


def _postgres_ports() -> set[int]:
    ports = {5432}
    url = os.environ.get("DECIDO_TEST_POSTGRES")
    if url:
        try:
            ports.add(urlsplit(url).port or 5432)
        except ValueError:
            pass
    return ports


def _is_postgres(family: int, address: object, ports: set[int]) -> bool:
    if family == socket.AF_UNIX and isinstance(address, (str, bytes)):
        base = os.path.basename(os.fsdecode(address))
        return base.startswith(".s.PGSQL.")
    if family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
        return len(address) >= 2 and address[1] in ports
    return False


class Guard:
    """Refuses process starts and PostgreSQL connections while a fast test runs."""

    def __init__(self) -> None:
        self.item: pytest.Item | None = None
        self.faults: dict[str, list[str]] = {}

    def refuse(self, what: str) -> LiveUseInFastTest:
        """The exception for ``what``, remembered for the report (in case it is swallowed)."""
        assert self.item is not None
        message = _message(self.item, what)
        self.faults.setdefault(self.item.nodeid, []).append(message)
        return LiveUseInFastTest(message)

    def replacements(self) -> list[tuple[object, str, Callable[..., Any]]]:
        """``(owner, attribute, replacement)`` of everything patched."""
        def refused(label: str) -> Callable[..., Any]:
            def call(*args: Any, **kwargs: Any) -> Any:
                raise self.refuse(f"starts a process ({label})")
            return call

        def execute_child(popen: object, args: Any, *rest: Any, **kw: Any) -> Any:
            shown = (os.fsdecode(args) if isinstance(args, (str, bytes, os.PathLike))
                     else " ".join(map(str, list(args)[:3])))
            raise self.refuse(f"starts a process ({shown})")

        ports = _postgres_ports()

        def guarded(original: Callable[..., Any]) -> Callable[..., Any]:
            def call(sock: socket.socket, address: Any) -> Any:
                if _is_postgres(sock.family, address, ports):
                    raise self.refuse(f"connects to PostgreSQL ({address!r})")
                return original(sock, address)
            return call

        found: list[tuple[object, str, Callable[..., Any]]] = [
            (subprocess.Popen, "_execute_child", execute_child),
            (_posixsubprocess, "fork_exec", refused("_posixsubprocess.fork_exec")),
            (socket.socket, "connect", guarded(socket.socket.connect)),
            (socket.socket, "connect_ex", guarded(socket.socket.connect_ex)),
        ]
        if getattr(subprocess, "_fork_exec", None) is not None:
            found.append((subprocess, "_fork_exec", refused("subprocess._fork_exec")))
        found += [(os, name, refused(f"os.{name}")) for name in OS_PROCESS_STARTERS]
        return found

    @contextlib.contextmanager
    def active(self, item: pytest.Item) -> Iterator[None]:
        """The patches in place for one phase of ``item``."""
        replacements = self.replacements()
        saved = [(owner, name, getattr(owner, name)) for owner, name, _ in replacements]
        self.item = item
        for owner, name, replacement in replacements:
            setattr(owner, name, replacement)
        try:
            yield
        finally:
            for owner, name, original in saved:
                setattr(owner, name, original)
            self.item = None


_GUARD = pytest.StashKey[Guard]()


def _guard(config: pytest.Config) -> Guard:
    if _GUARD not in config.stash:
        config.stash[_GUARD] = Guard()
    return config.stash[_GUARD]


def _phase(item: pytest.Item) -> contextlib.AbstractContextManager[None]:
    if any(m.name == LIVE for m in item.iter_markers()):
        return contextlib.nullcontext()
    return _guard(item.config).active(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    with _phase(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with _phase(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    with _phase(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[None]) -> Iterator[pytest.TestReport]:
    """A refusal fails its phase even when the test caught the exception."""
    report: pytest.TestReport = yield
    faults = _guard(item.config).faults.pop(item.nodeid, None)
    if faults:
        message = "\n".join(dict.fromkeys(faults))
        if report.failed:
            report.sections.append(("tiers", message))
        else:
            report.outcome = "failed"
            report.longrepr = message
    return report
