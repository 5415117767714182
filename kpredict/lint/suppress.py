"""Suppression comments: `# noqa: KP101` and `# kpredict: ignore[KP101]`.

On a line, a comment suppresses the findings whose range covers that line (a chain of ops over
several lines can be silenced on any of them); on a `def` line it suppresses the function's findings. `# noqa` without codes suppresses everything on its line (and is never
reported as unused: other linters read it too); `# kpredict: ignore` without brackets does the same
and is reported when it suppresses nothing. Codes of other linters in a `noqa` list are ignored.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from kpredict.ir import Span
from kpredict.lint.model import Diagnostic
from kpredict.lint.registry import get

NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)
KPIGNORE = re.compile(r"#\s*kpredict:\s*ignore(?:\[(?P<codes>[^\]]*)\])?")
KP_CODE = re.compile(r"^KP\d+$", re.IGNORECASE)
ANY = re.compile(r"noqa|kpredict:\s*ignore", re.IGNORECASE)  # cheap pre-filter: most files have none


@dataclass
class Suppression:
    kind: str  # "noqa" | "kpredict"
    span: Span  # of the directive inside the comment, code-point columns
    codes: list[str] | None  # None: every code
    text: str
    used: set[str] = field(default_factory=set)  # codes (or "*") that suppressed something

    def matches(self, code: str, name: str) -> str | None:
        if self.codes is None:
            return "*"
        for c in self.codes:
            if c.upper() == code or c.lower() == name:
                return c
        return None


def parse(text: str) -> dict[int, list[Suppression]]:
    """Suppressions by line, from the comment tokens of `text` (never from strings)."""
    out: dict[int, list[Suppression]] = {}
    if not ANY.search(text):
        return out
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return out
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        line, col = tok.start
        for kind, rx in (("noqa", NOQA), ("kpredict", KPIGNORE)):
            for m in rx.finditer(tok.string):
                raw = m.group("codes")
                codes = None if raw is None else [c for c in re.split(r"[\s,]+", raw.strip()) if c]
                if kind == "kpredict" and codes == []:
                    codes = None
                span = Span(line, col + m.start(), line, col + m.end())
                out.setdefault(line, []).append(Suppression(kind, span, codes, m.group(0)))
    return out


def apply(diags: list[Diagnostic], suppressions: dict[int, list[Suppression]],
          def_lines: dict[str, int]) -> tuple[list[Diagnostic], int]:
    """Drop suppressed diagnostics; mark what each suppression was used for. Returns (kept, n dropped)."""
    kept: list[Diagnostic] = []
    dropped = 0
    for d in diags:
        lines = list(range(d.span.line, d.span.end_line + 1))
        dl = def_lines.get(d.qualname)
        if dl is not None and dl not in lines:
            lines.append(dl)
        hit = False
        for line in lines:
            for s in suppressions.get(line, ()):
                used = s.matches(d.code, d.name)
                if used is not None:
                    s.used.add(used)
                    hit = True
        if hit:
            dropped += 1
        else:
            kept.append(d)
    return kept, dropped


def unused(suppressions: dict[int, list[Suppression]], enabled: frozenset[str]) -> list[tuple[Span, str]]:
    """(span, message) for each suppression, or part of one, that suppressed nothing."""
    out: list[tuple[Span, str]] = []
    for line in sorted(suppressions):
        for s in suppressions[line]:
            if s.codes is None:
                if s.kind == "kpredict" and not s.used:
                    out.append((s.span, f"`{s.text}` suppresses nothing on this line"))
                continue
            problems = []
            for c in s.codes:
                if c in s.used:
                    continue
                if s.kind == "noqa" and not KP_CODE.match(c):
                    continue  # another linter's code
                rule = get(c)
                if rule is None:
                    problems.append(f"{c} is not a kpredict rule")
                elif rule.code not in enabled:
                    problems.append(f"{rule.code} is not enabled")
                else:
                    problems.append(f"{rule.code} has no finding here")
            if problems:
                out.append((s.span, f"unused suppression `{s.text}`: {'; '.join(problems)}"))
    return out
