"""`kpredict check --fix` (issue 32): each rule's fixes are its INVALID examples' `fixed` sources, every
fix is checked by torch on the CPU (the rewritten function returns the same values and launches no
more kernels, fewer where the rule says so), and the command line behaves as ruff's does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kpredict.ir import Span
from kpredict.lint import fixes
from kpredict.lint.examples import fix_example, run_example, strip_marks
from kpredict.lint.model import Edit, Fix, as_example
from kpredict.lint.registry import all_rules

FIXED = [pytest.param(rule, ex, id=f"{rule.code}-{i}")
         for rule in all_rules() for i, ex in enumerate(map(as_example, rule.INVALID)) if ex.fixed is not None]
# the fixes that remove kernels torch runs on the CPU (KP601's call is already free; KP501 moves work
# off the host, which a CPU run cannot see)
FEWER = {"KP302", "KP502", "KP602", "KP701"}


@pytest.mark.parametrize("rule,example", [pytest.param(r, ex, id=f"{r.code}-{i}") for r in all_rules()
                                          for i, ex in enumerate(map(as_example, r.INVALID))])
def test_invalid_examples_say_what_their_fix_writes(rule, example):
    """An INVALID example whose findings carry a fix has `fixed`, and one without `fixed` gets no fix."""
    found = run_example(rule, example)
    if example.fixed is None:
        assert [d.fix for d in found if d.fix is not None] == []
    else:
        assert fix_example(rule, example) == example.fixed


def test_the_fixing_rules_have_examples():
    assert {p.values[0].code for p in FIXED} >= {"KP302", "KP501", "KP502", "KP601", "KP602"}


@pytest.mark.parametrize("rule,example", FIXED)
def test_fixed_code_is_clean(rule, example):
    """After its fixes, the example has nothing left for the rule to report."""
    assert run_example(rule, as_example(example.fixed)) == []


def test_overlapping_fixes_wait_for_the_next_round():
    text = "y = (x * 2).clone().contiguous()\n"
    inner = Fix("drop clone", "safe", (Edit(Span(1, 4, 1, 19), "(x * 2)"),))
    outer = Fix("drop contiguous", "safe", (Edit(Span(1, 4, 1, 32), "(x * 2).clone()"),))
    new, applied = fixes.apply(text, [outer, inner])
    assert (new, applied) == ("y = (x * 2).contiguous()\n", [inner])


def test_edits_keep_line_endings_and_the_rest_of_the_file():
    text = "a = 1\r\nb = f(x).g()\r\nc = 3\r\n"
    new, _ = fixes.apply(text, [Fix("m", "safe", (Edit(Span(2, 4, 2, 12), "f(x)"),))])
    assert new == "a = 1\r\nb = f(x)\r\nc = 3\r\n"


CASE = """\
import torch


# kpredict: example x=randn(64, 64, dtype=float16)
def step(x):
    a = (x * 2).clone()  # a comment that stays
    b = torch.clone(
        x + 1,
    ) * 3
    c = x.float().half()
    d = (x - 1).clone()  # noqa: KP602
    return a + b + c + d
"""


def _check(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kpredict", "check", "--isolated", "--no-cache",
                           "--select", "KP502,KP602", "--output-format", "concise", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_check_fix_diff_and_unsafe_fixes(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(CASE)
    listed = _check(tmp_path, "m.py")
    assert listed.returncode == 1
    assert "KP602 [*]" in listed.stdout and "KP502 [*]" not in listed.stdout
    assert "[*] 2 fixable with the `--fix` option." in listed.stdout
    assert "1 hidden fix can be enabled with the `--unsafe-fixes` option." in listed.stdout

    diff = _check(tmp_path, "m.py", "--diff")
    assert diff.returncode == 1 and path.read_text() == CASE
    assert "-    a = (x * 2).clone()  # a comment that stays" in diff.stdout
    assert "+    a = x * 2  # a comment that stays" in diff.stdout
    assert "Would fix 2 findings." in diff.stderr

    fixed = _check(tmp_path, "m.py", "--fix")
    assert fixed.returncode == 1, fixed.stderr
    assert "Found 3 findings (2 fixed, 1 remaining)." in fixed.stdout
    text = path.read_text()
    assert "    a = x * 2  # a comment that stays\n" in text
    assert "    b = (x + 1) * 3\n" in text
    assert "c = x.float().half()" in text and "d = (x - 1).clone()  # noqa: KP602" in text

    unsafe = _check(tmp_path, "m.py", "--fix", "--unsafe-fixes")
    assert unsafe.returncode == 0, unsafe.stdout
    assert "c = x\n" in path.read_text()
    assert _check(tmp_path, "m.py", "--diff").stderr.strip() == "No fixes available."


def test_json_carries_the_fix(tmp_path):
    (tmp_path / "m.py").write_text(CASE)
    out = subprocess.run([sys.executable, "-m", "kpredict", "check", "--isolated", "--no-cache", "--select",
                          "KP602", "--output-format", "json", "m.py"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    (first, second) = json.loads(out.stdout)
    assert first["fix"] == {"applicability": "safe", "message": "Use the computed tensor instead of its clone",
                            "edits": [{"content": "x * 2", "location": {"row": 6, "column": 9},
                                       "end_location": {"row": 6, "column": 24}}]}
    edits = tuple(Edit(Span(e["location"]["row"], e["location"]["column"] - 1, e["end_location"]["row"],
                            e["end_location"]["column"] - 1), e["content"]) for e in second["fix"]["edits"])
    new, _ = fixes.apply(CASE, [Fix("", "safe", edits)])
    assert "    b = (x + 1) * 3\n    c = x.float().half()\n" in new


# ---------------------------------------------------------------------------------- CPU oracle


def _runs_on_cpu(example) -> bool:
    return ".cuda()" not in example.source and '"cuda"' not in example.source


@pytest.mark.oracle
@pytest.mark.parametrize("rule,example", [p for p in FIXED if _runs_on_cpu(p.values[1])])
def test_fix_keeps_values_and_launches_fewer_kernels(tmp_path, rule, example):
    """torch runs the example before and after its fix on the CPU: the same values, and no more eager
    kernels (fewer where the fix removes a kernel the CPU runs); kpredict's prediction of each
    matches what torch ran."""
    torch = pytest.importorskip("torch")
    from kpredict.verify import recorded
    from kpredict.verify.child import load_module
    from kpredict.verify.annotations import annotations_for
    from kpredict.verify.examples import evaluate
    from kpredict.verify.runner import run_verify

    kernels, values = [], []
    for name, source in (("before", strip_marks(example.source)), ("after", example.fixed)):
        path = tmp_path / f"fix_{rule.code.lower()}_{name}.py"
        path.write_text(source)
        result = run_verify(str(path), "*", device="cpu", child=recorded.child(), compiled=False)
        assert result.error is None, result.error
        (check,) = result.functions
        assert check.match, [(r.label, r.predicted, r.measured) for r in check.rows]
        kernels.append(check.measured["eager"]["kernels"])
        module = load_module(str(path), [])
        fn = getattr(module, check.qualname)
        torch.manual_seed(0)
        values.append(fn(**evaluate(annotations_for(str(path), check.qualname).example, vars(module))))
    assert all(torch.equal(a, b) for a, b in zip(*(v if isinstance(v, tuple) else (v,) for v in values)))
    assert kernels[1] < kernels[0] if rule.code in FEWER else kernels[1] <= kernels[0], kernels
