"""Read the documentation's examples: its code blocks, the values its comments claim, and
the requests its service examples send (for tests/test_readme.py and
tests/service/test_docs_live.py).

A comment after a Python statement (on its last line, and the comment lines right below it)
*claims* the statement's value when it starts with a Python literal, alone or followed by
``:`` or ``;`` and prose: ``# 701.5``, ``# ('separable', True)``, ``# (0.0, 'converged', 65):
dss solves ...``. ``...`` stands for anything: a value (``"score": ...``), the rest of a list
(``[a, ...]``: it starts with ``a``) or of a dict (``{"best": "s3", ...}``: it has at least
these members). A float matches when it rounds to the digits shown (``0.657`` matches
0.65670...). A comment ``# decido.ExpressionError: message`` claims that the statement
raises that error with that message. Other comments are prose.
"""

from __future__ import annotations

import ast
import contextlib
import decimal
import io
import re
import tokenize
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
_RAISES = re.compile(r"^([\w.]*(?:Error|Exception)): (.*)", re.S)


@dataclass
class Block:
    """One fenced code block: its document, first line (1-based) and language."""

    doc: Path
    line: int
    lang: str
    code: str

    @property
    def where(self) -> str:
        return f"{self.doc.name}:{self.line}"


def blocks(doc: Path, lang: str | None = None) -> list[Block]:
    """The fenced code blocks of ``doc`` (of one language)."""
    text = doc.read_text()
    found = [Block(doc, text[:m.start()].count("\n") + 2, m[1], m[2])
             for m in _FENCE.finditer(text)]
    return [b for b in found if lang is None or b.lang == lang]


def needs_server(block: Block) -> bool:
    """A Python block that talks to the service (it makes a client)."""
    return re.search(r"\b(Async)?Client\(", block.code) is not None


# ---------------------------------------------------------------------- claims


@dataclass
class Claim:
    """What a comment says a statement gives: a value, or an exception it raises."""

    value: Any = None
    raises: str | None = None
    message: str | None = None


def _comments(code: str) -> dict[int, str]:
    """line -> the comment text on it (without ``#`` and one space)."""
    out: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = tok.string[1:].removeprefix(" ")
    return out


def _literal(text: str) -> tuple[bool, Any]:
    text = re.sub(r",\s*\.\.\.\s*\}", ', "...": ...}', text)  # {a: 1, ...}: a sub-dict
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return False, None
    allowed = (ast.Expression, ast.Constant, ast.Tuple, ast.List, ast.Dict, ast.Load,
               ast.UnaryOp, ast.USub, ast.UAdd)
    if not all(isinstance(node, allowed) for node in ast.walk(tree)):
        return False, None
    return True, ast.literal_eval(tree)


def parse_claim(text: str) -> Claim | None:
    """The claim a comment makes, or None for prose."""
    raised = _RAISES.match(text)
    if raised:
        return Claim(raises=raised[1].rsplit(".", 1)[-1], message=raised[2].rstrip())
    for end in range(len(text), 0, -1):
        rest = text[end:]
        if rest and not re.match(r"\s*(?:[:;]\s|\n)", rest):
            continue
        ok, value = _literal(text[:end])
        if ok:
            return Claim(value=value)
    return None


def statements(code: str) -> Iterator[tuple[ast.stmt, Claim | None]]:
    """Each top-level statement of ``code`` with the claim of its comment."""
    comments = _comments(code)
    lines = code.splitlines()
    for stmt in ast.parse(code).body:
        end = stmt.end_lineno or stmt.lineno
        parts = [comments[end]] if end in comments else []
        nxt = end + 1
        while nxt <= len(lines) and lines[nxt - 1].lstrip().startswith("#"):
            parts.append(comments.get(nxt, ""))
            nxt += 1
        yield stmt, parse_claim("\n".join(parts)) if parts else None


def _digits_tolerance(claimed: float) -> float:
    exponent = decimal.Decimal(repr(claimed)).as_tuple().exponent
    assert isinstance(exponent, int)
    return 0.5 * 10.0 ** exponent * (1 + 1e-9)


def matches(actual: Any, claimed: Any) -> bool:
    """Whether ``actual`` is what ``claimed`` (a literal with ``...``) says."""
    if claimed is Ellipsis:
        return True
    if hasattr(actual, "tolist"):  # NumPy arrays and scalars
        actual = actual.tolist()
    if isinstance(claimed, dict):
        if not isinstance(actual, Mapping):
            return False
        keys = [k for k in claimed if k != "..."]
        if "..." not in claimed and set(actual) != set(keys):
            return False
        return all(k in actual and matches(actual[k], claimed[k]) for k in keys)
    if isinstance(claimed, (list, tuple)):
        if not isinstance(actual, Sequence) or isinstance(actual, str):
            return False
        open_end = bool(claimed) and claimed[-1] is Ellipsis
        items = list(claimed[:-1] if open_end else claimed)
        if len(actual) < len(items) or (not open_end and len(actual) != len(items)):
            return False
        return all(matches(a, c) for a, c in zip(actual, items, strict=False))
    if isinstance(claimed, bool) or claimed is None or isinstance(claimed, str):
        return type(actual) is type(claimed) and actual == claimed
    if isinstance(claimed, float):
        return (isinstance(actual, (int, float)) and not isinstance(actual, bool)
                and abs(actual - claimed) <= _digits_tolerance(claimed))
    return actual == claimed


def run_block(code: str, where: str, namespace: dict[str, Any] | None = None) -> str:
    """Run ``code`` statement by statement in a fresh namespace, checking every claim;
    what it prints is returned."""
    ns: dict[str, Any] = {"__name__": "__docs__"} if namespace is None else namespace
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for stmt, claim in statements(code):
            label = f"{where}+{stmt.lineno - 1}: {ast.unparse(stmt)[:70]}"
            if claim is not None and claim.raises is not None:
                try:
                    _execute(stmt, ns, where)
                except Exception as exc:  # the claimed one, checked below
                    assert type(exc).__name__ == claim.raises, (label, exc)
                    shown = [line.rstrip() for line in str(exc).splitlines()]
                    said = (claim.message or "").splitlines()
                    assert shown[:len(said)] == [line.rstrip() for line in said], (label,)
                    continue
                raise AssertionError(f"{label}: did not raise {claim.raises}")
            value = _execute(stmt, ns, where)
            if claim is not None:
                assert matches(value, claim.value), (label, value, claim.value)
    return out.getvalue()


def _execute(stmt: ast.stmt, ns: dict[str, Any], where: str) -> Any:
    if isinstance(stmt, ast.Expr):
        code = compile(ast.Expression(stmt.value), where, "eval")
        return eval(code, ns)  # noqa: S307 - the documentation's own example
    exec(compile(ast.Module([stmt], type_ignores=[]), where, "exec"), ns)  # noqa: S102
    return None
