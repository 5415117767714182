"""A rule's documentation, from its docstring and its own examples (`kpredict rule`, SARIF help)."""

from __future__ import annotations

from typing import Any

from kpredict.lint.examples import run_example, strip_marks
from kpredict.lint.model import Rule, as_example

SECTIONS = ("What it does", "Why it costs", "Example", "Use instead")


def rule_markdown(rule: type[Rule], with_findings: bool = True) -> str:
    """Markdown: What it does / Why it costs from the docstring, Example / Use instead from the
    first INVALID and VALID examples (with what kpredict reports for the example), then options."""
    doc = rule.doc_sections()
    out = [f"# {rule.name} ({rule.code})", "",
           f"Default severity: {rule.severity}. {rule.summary}.", ""]
    for heading in SECTIONS[:2]:
        out += [f"## {heading}", doc.get(heading, ""), ""]
    if rule.INVALID:
        ex = as_example(rule.INVALID[0])
        out += ["## Example", "```python", strip_marks(ex.source).rstrip("\n"), "```", ""]
        if ex.baseline:
            out += ["With this baseline: `" + _baseline_text(ex.baseline) + "`", ""]
        if with_findings:
            for d in run_example(rule, ex):
                out += [f"kpredict reports, at line {d.span.line}:", "", f"> {d.code} {d.message}", ""]
    if rule.VALID:
        ex = as_example(rule.VALID[0])
        out += ["## Use instead", "```python", strip_marks(ex.source).rstrip("\n"), "```", ""]
        if ex.baseline:
            out += ["With this baseline (recorded with `--write-baseline`): `" + _baseline_text(ex.baseline) + "`", ""]
    if rule.fix:
        out += [rule.fix, ""]
    if rule.options:
        out += ["## Options", ""]
        for name, default in rule.options.items():
            out.append(f"- `{name}` (default `{default}`): {rule.option_docs.get(name, '')}".rstrip())
        out += ["", f"Set them in `[tool.kpredict.rules.{rule.code}]` or with "
                    f"`--rule-option {rule.code}.{next(iter(rule.options))}=VALUE`.", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _baseline_text(baseline: dict[str, Any]) -> str:
    import json

    return json.dumps(baseline, separators=(", ", ": "))


def rule_dict(rule: type[Rule]) -> dict[str, Any]:
    doc = rule.doc_sections()
    return {
        "code": rule.code, "name": rule.name, "severity": rule.severity, "summary": rule.summary,
        "what_it_does": doc.get("What it does", ""), "why_it_costs": doc.get("Why it costs", ""),
        "fix": rule.fix, "options": dict(rule.options),
        "examples": {"invalid": [strip_marks(as_example(e).source) for e in rule.INVALID],
                     "valid": [strip_marks(as_example(e).source) for e in rule.VALID]},
    }
