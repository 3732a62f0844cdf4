"""The README's Python examples run as pasted and give what their comments say; the
documentation's service examples fit a free key; the limits the documents print are the
service's.

Rule: every ```python block of README.md (and of docs/decisions.md and docs/studies.md) runs
on its own, in a fresh namespace (as pasted into a new interpreter), statement by statement,
each claim of a comment checked (tests/docs_examples.py says what a claim is). A block that makes a
``decido.Client`` needs a server: tests/service/test_docs_live.py runs it against a real one.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from docs_examples import DOCS, README, Block, blocks, matches, needs_server, parse_claim, run_block

DECISIONS = README.parent / "docs" / "decisions.md"
STUDIES = README.parent / "docs" / "studies.md"
LOCAL = [b for doc in (README, DECISIONS, STUDIES) for b in blocks(doc, "python")
         if not needs_server(b)]


@pytest.mark.parametrize("block", LOCAL, ids=lambda b: b.where)
def test_a_readme_python_block_runs_as_pasted(block: Block) -> None:
    run_block(block.code, block.where)


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_every_python_block_imports_what_it_uses(doc: Path) -> None:
    """A block pasted into a new interpreter starts with its imports: none is a fragment
    that needs ``import decido`` (or anything else) from somewhere else."""
    for block in blocks(doc, "python"):
        assert re.search(r"^(import|from) \S+", block.code, re.M), block.where


def test_the_readme_has_blocks_of_both_kinds() -> None:
    assert len(LOCAL) >= 3
    assert any(needs_server(b) for b in blocks(README, "python"))


@pytest.mark.parametrize(("comment", "actual", "ok"), [
    ("0.0", 0.0, True),
    ("0.657", 0.65670064, True),
    ("0.657", 0.6581, False),
    ("(0.0, 'converged', 65): prose", (0.0, "converged", 65), True),
    ("(0.0, 'converged', 65): prose", (0.0, "converged", 66), False),
    ("[701.5, 870.0]: prose", [701.5, 870.0], True),
    ('{"id": "s2", "score": ...}', {"id": "s2", "score": 1.5}, True),
    ('{"id": "s2"}', {"id": "s2", "score": 1.5}, False),
    ('{"id": "s2", ...}', {"id": "s2", "score": 1.5}, True),
    ('{"id": "s2", ...}', {"id": "s3", "score": 1.5}, False),
    ('[{"id": "s2", ...}, ...]', [{"id": "s2"}, {"id": "s1"}], True),
    ('[{"id": "s2", ...}, ...]', [{"id": "s1"}, {"id": "s2"}], False),
    ("'separable'", "chained", False),
    ("True", 1, False),
])
def test_a_claim_is_checked(comment: str, actual: Any, ok: bool) -> None:
    claim = parse_claim(comment)
    assert claim is not None and matches(actual, claim.value) is ok


@pytest.mark.parametrize("comment", ["64 values, one VM call", "reverse-mode AD",
                                     "id, name, summary, kind", "the bytecode"])
def test_prose_claims_nothing(comment: str) -> None:
    assert parse_claim(comment) is None


def test_a_wrong_claim_fails_the_block() -> None:
    with pytest.raises(AssertionError):
        run_block("x = 2\nx + 1      # 4\n", "test")
    with pytest.raises(AssertionError):
        run_block("int('a')\n# TypeError: nope\n", "test")
    run_block("int('a')\n# ValueError: invalid literal for int() with base 10: 'a'\n", "t")


# ------------------------------------------------------------- the limits printed


@pytest.fixture
def decido_tiers() -> Any:
    """The service's plan and tier tables (every limit is read from them)."""
    return pytest.importorskip("decido_service.tiers")


def _number(value: int | None, unit: str = "") -> str:
    return "unlimited" if value is None else f"{value:,}{unit}"


def free_key_rows(decido_tiers: Any) -> list[str]:
    """The README's table of the free key, as the service's settings give it."""
    plan = decido_tiers.DEFAULT_PLANS["free"]
    tier = decido_tiers.DEFAULT_TIERS["free"]
    return [
        f"| decisions (`/v1/decide`, `/v1/batch`) | {_number(plan['minute'])} | "
        f"{_number(plan['month'])} decisions | at most {_number(plan['batch_max'])} "
        f"decisions a batch, {_number(plan['from_run_points'])} front points (`from_run`) |",
        f"| optimization (`/v1/optimize`, `/v1/runs`) | {_number(tier['minute'])} | "
        f"{_number(tier['month'])} runs | at most {_number(tier['max_dims'])} dimensions, "
        f"{_number(tier['max_evaluations'])} evaluations, {tier['max_time_limit']} s, "
        f"{_number(tier['max_start_points'])} start points, a front of "
        f"{_number(tier['max_archive_size'])} points; "
        f"{tier['max_runs']} run queued or running |",
    ]


def test_the_readme_prints_the_free_keys_numbers(decido_tiers: Any) -> None:
    text = README.read_text()
    for row in free_key_rows(decido_tiers):
        assert row in text, f"README.md should have the row\n{row}"
    per_hour = pytest.importorskip("decido_service.config").Settings().keys_per_hour
    assert f"at most {per_hour} an hour per address" in text


def _table(text: str, heading: str) -> dict[str, list[str]]:
    """The first table after ``heading``: first cell -> the other cells."""
    lines = text.split(heading, 1)[1].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[first + 2:]:  # after the header and the rule
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return {cells[0]: cells[1:] for cells in rows}


def _cells(row: dict[str, int | None], columns: list[tuple[str, str]],
           per_key: bool) -> list[str]:
    suffix = " (per key)" if per_key else ""
    mib = {name for name, unit in columns if unit == " MiB"}  # bytes, written in MiB
    return [_number(row[name] >> 20 if name in mib and row[name] is not None else row[name],
                    unit) + suffix for name, unit in columns]


def test_the_service_docs_tables_are_the_settings(decido_tiers: Any) -> None:
    text = (README.parent / "docs" / "service.md").read_text()
    plans = _table(text, "### Decision plans")
    assert plans == {
        name: _cells(row, [("minute", ""), ("month", ""), ("batch_max", ""), ("refused", ""),
                           ("from_run_points", ""), ("max_smaa_values", "")],
                          name == "enterprise")
        for name, row in decido_tiers.DEFAULT_PLANS.items()}
    tiers = _table(text, "### Optimization tiers")
    assert tiers == {
        name: _cells(row, [("month", ""), ("max_dims", ""), ("minute", ""),
                           ("max_evaluations", ""), ("max_time_limit", " s"), ("refused", ""),
                           ("max_runs", ""), ("max_webhooks", ""), ("max_streams", ""),
                           ("max_archive_size", ""), ("max_start_points", ""),
                           ("front_page_bytes", " MiB"), ("max_studies", ""),
                           ("max_study_trials", ""), ("study_minute", "")],
                     name == "enterprise")
        for name, row in decido_tiers.DEFAULT_TIERS.items()}


# ------------------------------------------------- service examples on a free key

_OTHER_TIER = re.compile(r"\b(pro|team|enterprise)\b", re.I)


def _request_bodies(block: Block) -> list[tuple[str, dict[str, Any]]]:
    """(where, body) of every JSON body a shell block sends: ``-d '...'``, and the files
    ``cat > F <<'EOF'`` writes or ``python3 - > F <<'EOF'`` prints."""
    code = block.code
    found = [(m[0][:60], json.loads(re.sub(r"'\$(\w+)'", r"\1", m[1])))  # '$RUN' spliced in
             for m in re.finditer(r"-d '(\{.*?\})'\s", code, re.S)]
    for made in re.finditer(r"(cat|python3 -) > (\S+\.json) <<'EOF'\n(.*?)\nEOF", code, re.S):
        text = made[3]
        if made[1] != "cat":
            text = subprocess.run([sys.executable, "-"], input=text, capture_output=True,
                                  text=True, timeout=60, check=True).stdout
        found.append((made[0][:60], json.loads(text)))
    return found


def _client_calls(block: Block) -> list[tuple[str, dict[str, Any]]]:
    """(where, body) of every run a Python block submits through a client."""
    found = []
    for node in ast.walk(ast.parse(block.code)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("submit", "optimize", "minimize", "maximize")
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "client"):
            body: dict[str, Any] = {"bounds": eval(ast.unparse(node.args[1]), {})}  # noqa: S307
            for kw in node.keywords:
                if kw.arg in ("max_evaluations", "time_limit"):
                    body[kw.arg] = ast.literal_eval(kw.value)
            found.append((ast.unparse(node)[:60], body))
    return found


def _cli_runs(block: Block) -> list[tuple[str, dict[str, Any]]]:
    """(where, body) of every ``decido optimize ... --server`` of a shell block."""
    found = []
    for command in re.split(r"(?<!\\)\n", block.code):
        command = command.replace("\\\n", " ").split("  #", 1)[0]
        if not command.startswith("decido optimize") or "--server" not in command:
            continue
        args = shlex.split(command)
        value = {a: args[i + 1] for i, a in enumerate(args[:-1])}
        bounds = [a for i, a in enumerate(args[1:], 1) if args[i - 1] in ("-b", "--bounds")]
        dims = int(value.get("--dims", value.get("-n", len(bounds))))
        body: dict[str, Any] = {"bounds": [[0, 1]] * dims}
        if "--budget" in value:
            body["max_evaluations"] = int(value["--budget"])
        if "--time-limit" in value:
            body["time_limit"] = float(value["--time-limit"])
        found.append((command[:60], body))
    return found


def _requests(doc: Path) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in blocks(doc):
        if block.lang == "python" and needs_server(block):
            out += _client_calls(block)
        elif block.lang in ("sh", "bash"):
            out += _request_bodies(block) + _cli_runs(block)
    return out


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_the_service_examples_fit_a_free_key(doc: Path, decido_tiers: Any) -> None:
    """What an example sends fits the free tier and plan, unless the example's own text
    names the tier it needs."""
    plan = decido_tiers.DEFAULT_PLANS["free"]
    tier = decido_tiers.DEFAULT_TIERS["free"]
    for where, body in _requests(doc):
        if _OTHER_TIER.search(where):
            continue
        dims = len(body.get("bounds") or body.get("variables") or [])
        assert dims <= tier["max_dims"], (doc.name, where, dims)
        assert body.get("max_evaluations", 0) <= tier["max_evaluations"], (doc.name, where)
        assert body.get("time_limit", 0) <= tier["max_time_limit"], (doc.name, where)
        assert len(body.get("decisions", [])) <= plan["batch_max"], (doc.name, where)


def test_the_free_key_check_finds_the_examples(decido_tiers: Any) -> None:
    found = [body for doc in DOCS for _, body in _requests(doc)]
    assert any(len(b.get("bounds", [])) == decido_tiers.DEFAULT_TIERS["free"]["max_dims"]
               for b in found)  # the README's run of a few seconds
    assert len(found) >= 6
