"""The markdown review comment fits GitHub's cap on a comment (issue 32): the costliest functions and
their findings first, a summary line for what is left out, a pointer to the full output. A comment that
fits is complete (tests/snapshots/lint_markdown.txt holds its form)."""

from __future__ import annotations

import re

from kpredict.ir import CompiledFigures, FileReport, Figures, FunctionReport, Span
from kpredict.lint.commands import ci_run_url
from kpredict.lint.model import Diagnostic, FileResult, LintRun
from kpredict.render import markdown

GITHUB_CAP = 65_536


def _fn(name: str, kernels: int | str, line: int) -> FunctionReport:
    return FunctionReport(qualname=name, line=line, eager=Figures(kernels=kernels, bytes=1000 * line),
                          compiled=CompiledFigures(kernels=1))


def _diag(code: str, qualname: str, line: int, severity: str = "warning") -> Diagnostic:
    return Diagnostic(code=code, severity=severity, qualname=qualname, span=Span(line, 4, line, 9),
                      message=f"{code} at line {line}: " + "some words about kernels " * 8,
                      figures={"eager": {"kernels": 3, "transfers": 6, "bytes": 98304}},
                      help="Run the function under torch.compile.")


def _tree(files: int, functions: int) -> LintRun:
    """`files` files of `functions` functions each; function j of file i launches i*functions+j kernels
    and has one KP101 finding (KP401 on every tenth)."""
    out = []
    for i in range(files):
        fns = [_fn(f"f{j}", i * functions + j, j + 1) for j in range(functions)]
        diags = [_diag("KP401" if j % 10 == 0 else "KP101", f"f{j}", j + 1) for j in range(functions)]
        path = f"pkg/m{i:03d}.py"
        out.append(FileResult(path, path, FileReport(path, functions=fns), diags))
    return LintRun(out, [], "/")


def _functions(md: str) -> list[str]:
    return re.findall(r"^\| `([^`]+)` \|", md, flags=re.M)


def test_a_whole_tree_fits_the_cap_costliest_first():
    run = _tree(300, 20)  # 6,000 functions and findings: about 4 MB listed in full
    md = markdown.render(run)
    assert len(md.encode("utf-8")) <= markdown.MAX_BYTES < GITHUB_CAP
    shown = _functions(md)
    assert 0 < len(shown) < 6000
    assert shown[:3] == ["pkg/m299.py::f19", "pkg/m299.py::f18", "pkg/m299.py::f17"]  # the most kernels first
    findings = re.findall(r"^- \*\*(KP\d+)\*\* `([^:]+):(\d+):", md, flags=re.M)
    assert findings and findings[0][1] == "pkg/m299.py" and findings[0][2] == "20"  # f19's, at line 20
    n_findings = len(findings)
    (rest,) = [ln for ln in md.splitlines() if ln.startswith("**Not shown**")]
    assert f"{6000 - len(shown):,} of 6,000 functions" in rest
    assert f"{6000 - n_findings:,} of 6,000 findings" in rest
    left = {c: int(k.replace(",", "")) for c, k in re.findall(r"(KP\d+) ([\d,]+)", rest)}
    assert sum(left.values()) == 6000 - n_findings and set(left) == {"KP101", "KP401"}
    assert "--output-format sarif" in rest
    assert f"the {len(shown)} costliest of 6000 functions" in md


def test_errors_come_first_and_a_link_to_the_run():
    run = _tree(100, 20)
    cheap = run.files[0]
    cheap.diagnostics.append(_diag("KP801", "f0", 1, severity="error"))
    run.full_output = ci_run_url({"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r",
                                  "GITHUB_RUN_ID": "42"})
    md = markdown.render(run)
    first = re.search(r"^- \*\*(KP\d+)\*\* `([^`]+)`", md, flags=re.M)
    assert first is not None and first.groups() == ("KP801", "pkg/m000.py:1:5")
    assert "[the full output](https://github.com/o/r/actions/runs/42)" in md
    assert ci_run_url({}) == ""


def test_files_not_analyzed_are_counted_when_too_many_to_list():
    run = _tree(50, 20)
    run.files += [FileResult(f"bad{i}.py", f"bad{i}.py", FileReport(f"bad{i}.py", error="line 1: invalid syntax"))
                  for i in range(500)]
    md = markdown.render(run)
    assert len(md.encode("utf-8")) <= markdown.MAX_BYTES
    assert md.startswith("### kpredict: 1000 findings, 500 files not analyzed")
    assert md.count("`: line 1: invalid syntax") == markdown.ERRORS_SHOWN
    assert "480 of 500 files not analyzed" in md


def test_a_small_run_is_complete_and_has_no_summary_line():
    run = _tree(2, 3)
    md = markdown.render(run)
    assert len(_functions(md)) == 6 and md.count("- **KP") == 6
    assert "Not shown" not in md


def test_a_tiny_cap_still_says_what_is_left_out():
    md = markdown.render(_tree(3, 3), max_bytes=300)
    assert "| function |" not in md and "9 of 9 findings" in md


def test_symbolic_counts_rank_as_a_lower_bound():
    assert markdown.count_rank("4 + 13*n_layer") == 17
    assert markdown.count_rank("n_layer") == 1
    assert markdown.count_rank(7) == 7
