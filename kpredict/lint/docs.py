"""A rule's documentation, from its docstring and its own examples (`kpredict rule`, SARIF help)."""

from __future__ import annotations

from typing import Any

from kpredict.lint.examples import run_example
from kpredict.lint.model import SECTIONS, Rule, as_example, strip_marks  # noqa: F401 - SECTIONS re-exported
from kpredict.lint.model import rule_markdown as model_rule_markdown
from kpredict.lint.precision import default_state, on_by_default


def rule_markdown(rule: type[Rule], with_findings: bool = True) -> str:
    """Markdown: What it does / Why it costs from the docstring, Example / Use instead from the
    first INVALID and VALID examples (with what kpredict reports for the example), then options."""
    return model_rule_markdown(rule, (lambda ex: run_example(rule, ex)) if with_findings else None,
                               default_state(rule.code))


def rule_dict(rule: type[Rule]) -> dict[str, Any]:
    doc = rule.doc_sections()
    return {
        "code": rule.code, "name": rule.name, "severity": rule.severity, "summary": rule.summary,
        "what_it_does": doc.get("What it does", ""), "why_it_costs": doc.get("Why it costs", ""),
        "fix": rule.fix, "options": dict(rule.options),
        "on_by_default": on_by_default(rule.code), "default": default_state(rule.code),
        "examples": {"invalid": [strip_marks(as_example(e).source) for e in rule.INVALID],
                     "valid": [strip_marks(as_example(e).source) for e in rule.VALID]},
    }
