"""Run a rule's own examples: the tests check them, and `kpredict rule` shows what they report."""

from __future__ import annotations

from dataclasses import replace

from kpredict.api import analyze_source
from kpredict.lint import fixes
from kpredict.lint.baseline import budget_findings
from kpredict.lint.config import LintConfig
from kpredict.lint.engine import Linter
from kpredict.lint.model import Diagnostic, Example, Rule, as_example
from kpredict.lint.model import strip_marks
from kpredict.lint.registry import codes
from kpredict.settings import Settings

EXAMPLE_PATH = "example.py"


def run_example(rule: type[Rule], example: Example | str) -> list[Diagnostic]:
    """The findings of `rule` on one example: every rule enabled (so that suppressions have
    something to suppress), the example's options for this rule, and its baseline if it has one."""
    ex = as_example(example)
    lint = LintConfig(enabled=frozenset(codes()),
                      options=((rule.code, tuple(sorted(ex.options.items()))),) if ex.options else ())
    report = analyze_source(ex.source, EXAMPLE_PATH, Settings(target=ex.target), lint=Linter(lint))
    if report.error:
        raise ValueError(f"{rule.code} example does not analyze: {report.error}")
    found = [d for d in report.findings if isinstance(d, Diagnostic) and d.code == rule.code]
    if ex.baseline is not None:
        entries = {f"{EXAMPLE_PATH}::{q}": figs for q, figs in ex.baseline.items()}
        found += [d for d in budget_findings(EXAMPLE_PATH, report.functions, ex.source.splitlines(), entries)
                  if d.code == rule.code]
    return found


def fix_example(rule: type[Rule], example: Example | str, unsafe: bool = True) -> str:
    """The example's source (marks dropped) after its fixes by `rule`, applied as `check --fix` does:
    round after round until nothing changes (kpredict.lint.fixes)."""
    ex = as_example(example)
    text = strip_marks(ex.source)
    for _ in range(fixes.MAX_ROUNDS):
        found = run_example(rule, replace(ex, source=text))
        new, _ = fixes.apply(text, fixes.wanted(found, unsafe))
        if new == text:
            break
        text = new
    return text
