"""The two tiers of tests/tiers.py: tests are classified by what they use (no list, no
marker to remember), and a test of the fast tier that starts a process or reaches
PostgreSQL fails saying how to mark it. Each case is a small suite run in this process
(pytester); nothing here starts a process."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

HELPERS = '''
import contextlib
import subprocess

def start(cmd):
    return subprocess.Popen(cmd)

class Server:
    def up(self):
        self.proc = start(["true"])
        return self

@contextlib.contextmanager
def running():
    yield Server().up()

def pure(x):
    return x + 1
'''

SUITE = '''
import os
import socket
import subprocess
import pytest
from hypothesis import given, strategies as st
import helpers
from helpers import running, pure

@pytest.fixture
def server():
    with running() as s:
        yield s

@pytest.fixture
def via_server(server):
    return server

@pytest.fixture
def number():
    return pure(1)

@pytest.fixture(params=[pytest.param("memory", marks=pytest.mark.fast), "process"])
def backend(request):
    if request.param == "process":
        subprocess.run(["true"])
    return request.param

def test_plain(number):
    assert number == 2

@given(st.integers())
def test_property(n):
    assert pure(n) == n + 1

def test_direct():
    subprocess.run(["true"], check=True)

def test_fixture(server):
    pass

def test_fixture_of_a_fixture(via_server):
    pass

def test_helper_attribute():
    helpers.start(["true"])

def test_local_import():
    from helpers import Server
    Server()

def test_os_fork():
    if os.environ.get("NEVER_SET_ANYWHERE"):
        os.fork()

def test_nested():
    def inner():
        return subprocess.check_output(["true"])
    return None

@pytest.mark.live(reason="a library call that starts processes")
def test_marked():
    pass

def test_backend(backend):
    pass
'''


def _suite(pytester: pytest.Pytester, **files: str) -> None:
    pytester.makepyfile(helpers=HELPERS, test_suite=SUITE, **files)
    pytester.makeconftest("from tiers import *  # noqa: F403\n")


def _selected(pytester: pytest.Pytester, expression: str) -> set[str]:
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--collect-only", "-q",
                                          "-m", expression)
    return {line.split("::", 1)[1] for line in result.outlines if "::" in line}


def test_tests_are_classified_by_what_they_use(pytester: pytest.Pytester) -> None:
    _suite(pytester)
    fast = _selected(pytester, "not live")
    live = _selected(pytester, "live")
    assert fast == {"test_plain", "test_property", "test_backend[memory]"}
    assert live == {"test_direct", "test_fixture", "test_fixture_of_a_fixture",
                    "test_helper_attribute", "test_local_import", "test_os_fork",
                    "test_nested", "test_marked", "test_backend[process]"}


def test_the_live_marker_says_why(pytester: pytest.Pytester) -> None:
    _suite(pytester)
    pytester.makepyfile(test_why='''
def test_reasons(request):
    pass
''')
    pytester.makeconftest('''
from tiers import *  # noqa: F403
from tiers import pytest_collection_modifyitems as classify

def pytest_collection_modifyitems(config, items):
    classify(config, items)
    for item in items:
        mark = item.get_closest_marker("live")
        print("WHY", item.name, mark.kwargs["reason"] if mark else "-")
''')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--collect-only", "-q",
                                          "-s")
    why = {line.split()[1]: line.split(" ", 2)[2] for line in result.outlines
           if line.startswith("WHY ")}
    assert why["test_plain"] == "-"
    assert why["test_fixture"].startswith("fixture server: server -> running -> Server")
    assert why["test_fixture"].endswith("subprocess.Popen")
    assert why["test_direct"] == "test_direct -> subprocess.run"
    assert why["test_marked"] == "a library call that starts processes"


def test_a_fast_test_that_starts_a_process_fails_saying_how_to_mark_it(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(helpers=HELPERS)
    pytester.makeconftest("from tiers import *  # noqa: F403\n")
    pytester.makepyfile(test_hidden='''
import contextlib
import importlib
import pytest

def _start():
    # reached through a name the reading cannot follow: classified fast
    getattr(importlib.import_module("sub" + "process"), "run")(["true"])

def test_starts():
    _start()

def test_swallows():
    with contextlib.suppress(Exception):
        _start()

@pytest.fixture
def hidden():
    _start()

def test_fixture(hidden):
    pass

def test_forks():
    getattr(importlib.import_module("o" + "s"), "fork")()

def test_postgres():
    import socket
    with socket.socket(socket.AF_UNIX) as s:
        s.connect("/var/run/postgresql/.s.PGSQL.5432")

def test_in_process():
    assert sum(range(4)) == 6
''')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "-m", "not live")
    result.assert_outcomes(passed=1, failed=4, errors=1)
    text = result.stdout.str()
    assert "test_starts is in the fast tier but starts a process (true)" in text
    assert "test_swallows is in the fast tier but starts a process (true)" in text
    assert "test_fixture is in the fast tier but starts a process (true)" in text
    assert "test_forks is in the fast tier but starts a process (os.fork)" in text
    assert "test_postgres is in the fast tier but connects to PostgreSQL" in text
    assert "Mark it live: @pytest.mark.live(reason=...)" in text


def test_the_guard_leaves_live_tests_alone(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("from tiers import *  # noqa: F403\n")
    pytester.makepyfile(test_live='''
import subprocess
import sys
import pytest

BEFORE = subprocess.Popen._execute_child

def test_fast_first():  # (naming no process module: fast)
    assert sys.modules["subprocess"].Popen._execute_child is not BEFORE  # guarded

@pytest.mark.live(reason="checked here")
def test_live_after():
    assert subprocess.Popen._execute_child is BEFORE  # restored, and left alone
''')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=2)


def test_a_test_marked_both_ways_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("from tiers import *  # noqa: F403\n")
    pytester.makepyfile(test_both='''
import pytest

@pytest.mark.live(reason="x")
@pytest.mark.fast
def test_both():
    pass
''')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "--collect-only")
    assert "marked both live and fast" in result.stdout.str() + result.stderr.str()
