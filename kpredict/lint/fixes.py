"""Applying fixes: splice a file's fix edits into its text (ruff's model, not its code).

A fix is all of its edits or none. Fixes are taken in source order, and one whose edits overlap an
edit already taken waits: `check --fix` analyzes the file again and applies what is still found, up
to `MAX_ROUNDS` times (`(x * 2).clone().contiguous()` is two fixes on one span: the second applies in
the next round, to the code the first left).
"""

from __future__ import annotations

import ast
import difflib
import io
import re
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kpredict.ir import Span
from kpredict.lint.model import Diagnostic, Fix

MAX_ROUNDS = 10
_NEWLINE = re.compile(r"\r\n|\r|\n")


def wanted(diags: Iterable[Diagnostic], unsafe: bool) -> list[Fix]:
    """The fixes `--fix` applies: the safe ones, and the unsafe ones too with `--unsafe-fixes`."""
    return [d.fix for d in diags if d.fix is not None and (unsafe or d.fix.applicability == "safe")]


def _offsets(text: str) -> list[int]:
    """Where each line starts (lines end at \\n, \\r\\n or \\r, as Python's tokenizer ends them)."""
    return [0] + [m.end() for m in _NEWLINE.finditer(text)]


def _offset(starts: Sequence[int], text: str, line: int, col: int) -> int:
    if line - 1 >= len(starts):
        return len(text)
    return min(starts[line - 1] + col, len(text))


def apply(text: str, fixes: Sequence[Fix]) -> tuple[str, list[Fix]]:
    """The text with every fix applied that overlaps no fix applied before it, and those fixes."""
    starts = _offsets(text)

    def rng(span: Span) -> tuple[int, int]:
        return _offset(starts, text, span.line, span.col), _offset(starts, text, span.end_line, span.end_col)

    taken: list[tuple[int, int]] = []
    applied: list[Fix] = []
    edits: list[tuple[int, int, str]] = []
    for fix in sorted(fixes, key=lambda f: min(rng(e.span) for e in f.edits)):
        ranges = [rng(e.span) for e in fix.edits]
        if any(a < d and c < b or a == b == c == d for a, b in ranges for c, d in taken):
            continue
        taken += ranges
        applied.append(fix)
        edits += [(a, b, e.content) for (a, b), e in zip(ranges, fix.edits)]
    out = text
    for a, b, content in sorted(edits, key=lambda t: (t[0], t[1]), reverse=True):
        out = out[:a] + content + out[b:]
    return out, applied


def unified(path: str, before: str, after: str) -> str:
    """A unified diff of one file, as `git diff` and `ruff --diff` print it (a path outside the
    repository as it is, without git's a/ and b/)."""
    old, new = (path, path) if path.startswith("/") else (f"a/{path}", f"b/{path}")
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=old, tofile=new))


@dataclass(frozen=True)
class Rewrite:
    """One round of a file's fixes: its text before and after, the encoding to write it back in, the
    fixes applied and how many wait for the next round (they overlap one applied)."""

    before: str
    after: str
    encoding: str
    applied: list[Fix]
    waiting: int

    @property
    def parses(self) -> bool:
        return parses(self.after)


def rewrite(path: str, diags: Iterable[Diagnostic], unsafe: bool) -> Rewrite | None:
    """The file's fixes (safe ones, unsafe too with `unsafe`) applied to its text in memory; None when
    there is nothing to apply or the text does not change."""
    fixes = wanted(diags, unsafe)
    if not fixes:
        return None
    text, encoding = read(path)
    new, applied = apply(text, fixes)
    return None if new == text else Rewrite(text, new, encoding, applied, len(fixes) - len(applied))


def read(path: str) -> tuple[str, str]:
    """A file's text and the encoding to write it back in (a UTF-8 BOM and `# coding:` kept; line
    endings kept as they are)."""
    with open(path, "rb") as fh:
        raw = fh.read()
    encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    return raw.decode(encoding), encoding


def write(path: str, text: str, encoding: str) -> None:
    with open(path, "wb") as fh:
        fh.write(text.encode(encoding))


def parses(text: str) -> bool:
    """Whether fixed code still compiles: a fix that broke it is never written."""
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True
