"""Precision per rule on labelled findings from public model code (issue 32).

Precision is true / (true + false + useless): a finding that is right but not worth a reviewer's time
costs the reviewer as much as a wrong one, and it is what makes people stop reading a linter. Check is
re-run on every labelled file (the wheels are fetched with `pip download --no-deps` into the benchmark
cache: tests/corpus_sources.py); a labelled finding no longer reported and a reported finding that
was neither labelled nor seen when sampling are listed, never silently counted. The run takes a few
minutes (233 files: 7 min on 2 shared cores, once per run); a failed download is an error, not a skip.
"""

from __future__ import annotations

import sys
import tomllib
import warnings
from pathlib import Path

import pytest

import corpus_sources
from kpredict.lint import precision
from kpredict.lint.registry import all_rules

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import label_corpus  # noqa: E402


def labels() -> list[dict]:
    return tomllib.loads(corpus_sources.LABELS.read_text(encoding="utf-8"))["finding"]


def stored() -> dict[str, corpus_sources.Measure]:
    """rules/lint_precision.toml as Measures."""
    return {code: corpus_sources.Measure(true=p.true, false=p.false, useless=p.useless)
            for code, p in precision.table().items()}


def test_labels_are_complete():
    entries = labels()
    assert len(entries) >= 300
    assert {e["project"] for e in entries} == set(corpus_sources.PROJECTS)
    for e in entries:
        assert e["label"] in corpus_sources.KINDS, e
        assert e["reason"].strip() and e["snippet"].strip(), e
        assert e["version"] == corpus_sources.PROJECTS[e["project"]], e


def test_readme_shows_the_stored_table():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert label_corpus.markdown(stored()) in readme, \
        "README's precision table differs from rules/lint_precision.toml (scripts/label_corpus.py measure prints it)"


def test_off_rules_say_why():
    for rule in all_rules():
        state = precision.default_state(rule.code)
        if precision.on_by_default(rule.code):
            assert state.startswith("On by default"), state
        else:
            p = precision.measured(rule.code)
            assert p is not None and p.value < precision.THRESHOLD
            assert f"{p.value:.0%}" in state and f"--extend-select {rule.code}" in state, state


@pytest.fixture(scope="module")
def measures() -> dict[str, corpus_sources.Measure]:
    return corpus_sources.measure()


def test_precision_per_rule(measures):
    for code, m in sorted(measures.items()):
        for line in m.gone:
            warnings.warn(f"labelled finding no longer reported: {line}", stacklevel=1)
        for line in m.unlabelled:
            warnings.warn(f"unlabelled finding: {line}", stacklevel=1)
    now = {c: (m.sampled, m.true, m.false, m.useless) for c, m in measures.items() if m.sampled}
    then = {c: (m.sampled, m.true, m.false, m.useless) for c, m in stored().items()}
    assert now == then, ("check's findings on the labelled files changed: label new ones, then "
                         "`python scripts/label_corpus.py measure --write` and update README's table")
    low = {c: f"{m.precision:.0%}" for c, m in measures.items()
           if m.sampled and precision.on_by_default(c) and m.precision < precision.THRESHOLD}
    assert not low, f"rules on by default below {precision.THRESHOLD:.0%} precision: {low}"


def test_fixes_on_the_corpus_parse(measures):
    """Every fix check offers on the labelled files (safe and unsafe), applied as one round of
    `check --fix --unsafe-fixes` applies them, leaves code that parses; fixes are offered at all."""
    assert {c: m.unparsable for c, m in measures.items() if m.unparsable} == {}
    assert sum(m.fixes for m in measures.values()) > 0
    assert all(m.applied <= m.fixes for m in measures.values())


CHAIN = """\
import torch


# kpredict: example a=randn(1000) b=randn(1000)
def chain(a, b):
    return ((a + b) * 2).relu()
"""


@pytest.mark.default_rules
def test_rules_below_the_threshold_are_off_until_selected(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from kpredict.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(CHAIN, encoding="utf-8")
    assert not precision.on_by_default("KP101")

    def codes(*args: str) -> list[str]:
        r = CliRunner().invoke(main, ["check", "--isolated", "--no-cache", "-j", "1", "--output-format", "json",
                                      *args, "model.py"])
        return [d["code"] for d in __import__("json").loads(r.stdout)]

    assert codes() == []
    assert codes("--extend-select", "KP101") == ["KP101"]
    assert codes("--select", "ALL") == ["KP101"]
