"""Run a rule's own examples: the tests check them, and `kpredict rule` shows what they report."""

from __future__ import annotations

from kpredict.api import analyze_source
from kpredict.lint.baseline import budget_findings
from kpredict.lint.config import LintConfig
from kpredict.lint.engine import Linter
from kpredict.lint.model import Diagnostic, Example, Rule, as_example
from kpredict.lint.model import strip_marks  # noqa: F401 - re-exported for the tests
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
