"""Every rule's own examples are its tests (Fixit's way): an INVALID example must give exactly the
rule's findings on the lines marked `# expect: KPnnn`, a VALID one none. Docs come from the same
examples. KP101's figures are checked against the CPU oracle (torch needed, else skipped)."""

from __future__ import annotations

import re

import pytest

from kpredict.lint.docs import SECTIONS, rule_dict, rule_markdown
from kpredict.lint.examples import run_example, strip_marks
from kpredict.lint.model import CODE_RE, EXPECT_MARK, SEVERITIES, Example, as_example
from kpredict.lint.registry import all_rules, by_code, get
from oracle_cases import KP101_NAME

CASES = [
    pytest.param(rule, kind, ex, id=f"{rule.code}-{kind}-{i}")
    for rule in all_rules()
    for kind, examples in (("invalid", rule.INVALID), ("valid", rule.VALID))
    for i, ex in enumerate(examples)
]


@pytest.mark.parametrize("rule,kind,example", CASES)
def test_rule_examples(rule, kind, example):
    ex = as_example(example)
    found = run_example(rule, ex)
    got = sorted((d.span.line, d.code) for d in found)
    assert got == (sorted(ex.expected()) if kind == "invalid" else []), [d.message for d in found]
    for d in found:
        assert d.severity == rule.severity and d.name == rule.name
        assert d.span.line <= d.span.end_line


FIGURES = re.compile(r"\b\d+ (kernel|transfer|graph|time|call|B\b|KB\b|MB\b)")


@pytest.mark.parametrize("rule", [r for r in all_rules() if r.code != "KP901"], ids=lambda r: r.code)
def test_messages_carry_figures(rule):
    for example in rule.INVALID:
        for d in run_example(rule, example):
            assert FIGURES.search(d.message), d.message
            assert d.figures


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_metadata_and_docs(rule):
    assert CODE_RE.match(rule.code)
    assert re.fullmatch(r"[a-z]+(-[a-z]+)*", rule.name)
    assert rule.severity in SEVERITIES
    assert rule.summary and not rule.summary.endswith(".") and rule.fix
    assert rule.INVALID and rule.VALID
    for ex in rule.INVALID:
        assert as_example(ex).expected(), "an INVALID example marks its findings with # expect:"
    sections = rule.doc_sections()
    assert sections.get("What it does") and sections.get("Why it costs")
    md = rule_markdown(rule)
    for heading in SECTIONS:
        assert f"## {heading}" in md
    assert EXPECT_MARK not in md
    assert rule_dict(rule)["code"] == rule.code
    for name in rule.options:
        assert name in rule.option_docs


def test_registry_lookup_and_unique_codes():
    codes = [r.code for r in all_rules()]
    assert len(codes) == len(set(codes)) and codes == sorted(codes)
    assert get("kp101") is get("unfused-elementwise-chain") is by_code()["KP101"]
    assert get("KP999") is None


def test_strip_marks():
    assert strip_marks("x = 1  # expect: KP101\ny = 2  # keep  # expect: KP101\n") == "x = 1\ny = 2  # keep\n"


def test_option_changes_the_verdict():
    rule = by_code()["KP101"]
    src = as_example(rule.INVALID[1]).source
    assert run_example(rule, Example(src, options={"min-chain-length": 3}))
    assert not run_example(rule, Example(src, options={"min-chain-length": 4}))


# ---------------------------------------------------------------------------------- CPU oracle


@pytest.mark.oracle
@pytest.mark.parametrize("index", range(len(by_code()["KP101"].INVALID)))
def test_kp101_figures_match_the_cpu_oracle(tmp_path, index):
    """KP101's INVALID examples are whole functions that are one chain: the eager figures the finding
    quotes must be what torch runs, and the fused ones what torch.compile launches on the CPU."""
    pytest.importorskip("torch")
    from kpredict.verify import recorded
    from kpredict.verify.runner import run_verify

    rule = by_code()["KP101"]
    ex = as_example(rule.INVALID[index])
    path = tmp_path / KP101_NAME
    path.write_text(strip_marks(ex.source))
    (finding,) = run_example(rule, Example(ex.source, target="cpu"))
    result = run_verify(str(path), "*", device="cpu", child=recorded.child())
    assert result.error is None, result.error
    (check,) = [f for f in result.functions if f.qualname == finding.qualname]
    assert check.match, [(r.label, r.predicted, r.measured) for r in check.rows]
    eager, compiled = check.measured["eager"], check.measured["compiled"]
    assert finding.figures["eager"] == {"kernels": eager["kernels"], "transfers": eager["reads"] + eager["writes"],
                                        "bytes": eager["bytes"]}
    assert finding.figures["fused"]["kernels"] == compiled["kernels"]
