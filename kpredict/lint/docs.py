"""A rule's documentation, from its docstring and its own examples (`kpredict rule`, SARIF help)."""

from __future__ import annotations

from typing import Any

from kpredict.lint.examples import run_example
from kpredict.lint.model import SECTIONS, Rule, as_example, strip_marks  # noqa: F401 - SECTIONS re-exported
from kpredict.lint.model import rule_markdown as model_rule_markdown
from kpredict.lint.precision import FIX_FALSE_LIMIT, default_state, fix_trusted, on_by_default


def rule_markdown(rule: type[Rule], with_findings: bool = True) -> str:
    """Markdown: What it does / Why it costs from the docstring, Example / Use instead from the
    first INVALID and VALID examples (with what kpredict reports for the example), then options."""
    text = model_rule_markdown(rule, (lambda ex: run_example(rule, ex)) if with_findings else None,
                               default_state(rule.code))
    return text + fix_markdown(rule)


def fix_markdown(rule: type[Rule]) -> str:
    """`## Fix`: what `check --fix` writes for the first example that has a fix, and when it applies."""
    ex = next((e for e in map(as_example, rule.INVALID) if e.fixed is not None), None)
    if ex is None:
        return ""
    when = ("`kpredict check --fix` applies it" if fix_trusted(rule.code) else
            f"`kpredict check --fix --unsafe-fixes` applies it: more than {FIX_FALSE_LIMIT:.0%} of this "
            f"rule's labelled findings were wrong, and a fix is only as right as its finding")
    return "\n".join(["", "## Fix", "", f"{when} (`--diff` shows it first). The example becomes:", "",
                      "```python", ex.fixed.rstrip("\n"), "```", ""])


def rule_dict(rule: type[Rule]) -> dict[str, Any]:
    doc = rule.doc_sections()
    return {
        "code": rule.code, "name": rule.name, "severity": rule.severity, "summary": rule.summary,
        "what_it_does": doc.get("What it does", ""), "why_it_costs": doc.get("Why it costs", ""),
        "fix": rule.fix, "options": dict(rule.options), "fixes": any(as_example(e).fixed for e in rule.INVALID),
        "on_by_default": on_by_default(rule.code), "default": default_state(rule.code),
        "examples": {"invalid": [strip_marks(as_example(e).source) for e in rule.INVALID],
                     "valid": [strip_marks(as_example(e).source) for e in rule.VALID]},
    }
