"""Whole trees (issue 32): results written file by file, a progress line on a terminal only, Ctrl-C
stops the run and its workers at once with one line. The sizes, memory and the time to stop on
transformers' tree are measured by benchmarks/whole_tree.py, not here."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from kpredict.cli import main
from kpredict.cli_options import Progress
from kpredict.ir import FileReport, Report
from kpredict.parallel import analyze_paths
from kpredict.render import json_report, text_report
from kpredict.settings import Settings

TORCH = "import torch\n\n# kpredict: example x=randn(8)\ndef f(x):\n    return (x + 1).relu()\n\n# kpredict: example x=randn(8)\ndef g(x):\n    return x.sin() * 2\n"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _ticks() -> Iterator[float]:
    t = 0.0
    while True:
        yield t
        t += 1.0


def test_progress_line_counts_files_and_is_erased():
    out = Terminal()
    clock = _ticks()
    items = list(Progress(3, out, {}, clock=lambda: next(clock)).track(["a", "b", "c"]))
    assert items == ["a", "b", "c"]
    text = out.getvalue()
    erase = "\r\033[K"
    assert text == "".join(f"\rkpredict: {i}/3 files, {i + 1} s{erase}" for i in range(4))  # nothing left at the end


def test_progress_line_is_erased_while_the_caller_prints_and_when_stopped():
    out = Terminal()
    seen = []
    with pytest.raises(KeyboardInterrupt):
        for item in Progress(3, out, {}).track(["a", "b", "c"]):
            seen.append(out.getvalue())
            if item == "b":
                raise KeyboardInterrupt
    assert all(s.endswith("\r\033[K") for s in seen)  # the caller's output starts on a clean line
    assert out.getvalue().endswith("\r\033[K")


@pytest.mark.parametrize("stream,env", [(io.StringIO(), {}), (Terminal(), {"CI": "true"})], ids=["pipe", "ci"])
def test_no_progress_in_a_pipe_or_in_ci(stream, env):
    assert list(Progress(3, stream, env).track([1, 2, 3])) == [1, 2, 3]
    assert stream.getvalue() == ""


@pytest.fixture
def tree(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text(TORCH, encoding="utf-8")
    (tmp_path / "b.py").write_text("def h(x):\n    return x\n", encoding="utf-8")  # not PyTorch code
    (tmp_path / "c.py").write_text("def (:\n", encoding="utf-8")  # fails
    (tmp_path / "d.py").write_text(TORCH.replace("relu", "sigmoid"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CI", raising=False)
    return tmp_path


def _reports() -> list[FileReport]:
    return list(analyze_paths(["."], Settings(), jobs=1))


@pytest.mark.parametrize("verbose", [False, True])
def test_streamed_text_is_the_renderers_text(tree, verbose):
    flags = ["-v"] if verbose else []
    result = CliRunner().invoke(main, ["report", "--no-cache", "-j", "1", *flags, "."])
    assert result.exit_code == 2  # c.py failed
    analyzed = [f for f in _reports() if not f.error]
    assert result.stdout == text_report.render(Report("cuda", analyzed), verbose)
    assert result.stderr.splitlines() == ["c.py: error: line 1: syntax error: invalid syntax"]


@pytest.mark.parametrize("detail", [False, True])
def test_streamed_json_is_the_renderers_json(tree, detail):
    flags = ["--detail"] if detail else []
    result = CliRunner().invoke(main, ["report", "--no-cache", "-j", "2", "--output-format", "json", *flags, "."])
    assert result.exit_code == 2
    assert result.stdout == json_report.render(Report("cuda", _reports()), ops=detail)


def test_json_is_written_before_the_next_file_is_analyzed(tree):
    written: list[str] = []
    asked: list[int] = []

    def files() -> Iterator[FileReport]:
        for f in _reports():
            asked.append(len("".join(written)))
            yield f

    json_report.write(written.append, "cuda", files())
    assert len(asked) == 4 and all(a < b for a, b in zip(asked, asked[1:]))  # each file out before the next


def test_no_file_writes_an_empty_list(tree):
    out: list[str] = []
    json_report.write(out.append, "cpu", iter(()))
    assert "".join(out) == '{"schema": "kpredict/report/v1", "target": "cpu", "files": []}\n'


@pytest.mark.parametrize("detail", [False, True])
def test_json_layout_is_the_document_one_flat_object_a_line(tree, detail):
    files = _reports()
    text = json_report.render(Report("cuda", files), ops=detail)
    assert json.loads(text) == json_report.report_dict(Report("cuda", files), ops=detail)
    lines = text.splitlines()
    assert lines[:4] == ["{", '  "schema": "kpredict/report/v1",', '  "target": "cuda",', '  "files": [']
    eager = any(ln.startswith('          "eager": {"kernels": 2, ') for ln in lines)
    assert eager != detail  # f's figures on one line; with --detail they hold the kernels' costs, a line each
    rows = [ln for ln in lines if ln.lstrip().startswith('{"line": 5, "col"')]
    assert len(rows) == (4 if detail else 0)  # an op row a line: f's add and relu, d.py's add and sigmoid


def test_ctrl_c_stops_workers_at_once_with_one_line(tmp_path):
    body = "import torch\n\n\ndef f(x):\n" + "    x = x + 1\n" * 20_000 + "    return x\n"
    for i in range(8):  # about 2 s each here: the run is still going when Ctrl-C comes
        (tmp_path / f"s{i}.py").write_text(body, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    p = subprocess.Popen([sys.executable, "-m", "kpredict", "report", "-j", "2", "--no-cache", str(tmp_path)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True, env=env,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as in a terminal
    time.sleep(2.5)
    assert p.poll() is None, "the run ended before Ctrl-C: make the files slower"
    os.killpg(p.pid, signal.SIGINT)  # as a terminal sends it: to every process of the group
    try:
        _, err = p.communicate(timeout=20)  # a hang guard, not the goal (benchmarks/whole_tree.py times it)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == 130
    assert err.decode() == "kpredict: interrupted\n"
    time.sleep(0.3)
    left = subprocess.run(["pgrep", "-g", str(p.pid)], capture_output=True, text=True).stdout.split()
    assert left == []  # no worker goes on alone


def test_a_spent_time_budget_cuts_the_file_short_and_says_so():
    """Whatever a file holds, its analysis stops near its time budget (CPU seconds): the function it
    stopped in covers a first part, the functions after it are not analyzed, and every figure that
    rests on that is a lower bound with the reason; nothing raises (issue 32)."""
    from kpredict.api import analyze_source

    heavy = "".join(f"def f{i}(x):\n" + "    x = x + 1\n" * 3000 + "    return x\n\n\n" for i in range(6))
    src = ("import torch\n\n\n" + heavy).encode()
    fns = analyze_source(src, "m.py", Settings(time_budget=0.2)).functions
    assert [f.qualname for f in fns] == [f"f{i}" for i in range(6)]
    skipped = [f for f in fns if any(a.startswith("not analyzed: this file's time budget of 0.2 s") for a in f.assumptions)]
    assert skipped and fns[-1] in skipped
    for f in skipped:
        assert f.lower_bound and f.eager.kernels == 0
        assert [u.name for u in f.lower_bound_causes] == [
            "analysis cut short: not analyzed: this file's time budget of 0.2 s (CPU) is spent"]
    full = analyze_source(src, "m.py", Settings(time_budget=0)).functions
    assert all(f.eager.kernels == 3000 and not f.lower_bound for f in full)
    # module-level code is stopped the same way, and the functions after it are still listed
    module = ("import torch\nx = torch.zeros(4)\nfor _ in range(100000):\n    x = x + 1\n\n\n" + heavy).encode()
    report = analyze_source(module, "m.py", Settings(time_budget=0.2))
    assert report.error is None and len(report.functions) == 7
    assert all(f.lower_bound for f in report.functions if f.qualname != "<module>")


def test_check_says_when_the_time_budget_cut_a_file_short(tmp_path):
    """`check` on a file its time budget cut short: a clean result there may miss findings, so one
    warning line on stderr names the file and how many functions were not analyzed in full."""
    heavy = "".join(f"def f{i}(x):\n" + "    x = x + 1\n" * 3000 + "    return x\n\n\n" for i in range(6))
    (tmp_path / "m.py").write_text("import torch\n\n\n" + heavy, encoding="utf-8")
    res = subprocess.run([sys.executable, "-m", "kpredict", "check", "--no-cache", "--isolated", "--time-budget",
                          "0.2", str(tmp_path / "m.py")], capture_output=True, text=True)
    warning = [ln for ln in res.stderr.splitlines() if ln.startswith("kpredict: warning:")]
    assert res.returncode == 0 and len(warning) == 1, res.stderr
    assert "m.py: this file's time budget of 0.2 s (CPU) was spent;" in warning[0]
    assert "not analyzed in full" in warning[0] and "--time-budget SECONDS" in warning[0]


def test_rows_of_a_long_tensor_are_not_made_one_by_one():
    """A loop (or a zip) over the rows of a tensor longer than max_unroll counts the first max_unroll
    rows as a lower bound, as a long range does; its rows were made one by one before (transformers'
    ernie4_5_vl_moe zips a guessed 5.3 million rows: 10 million views, 160 s and 3.5 GB)."""
    from kpredict.api import analyze_source

    src = (b"import torch\n\n\n# kpredict: example x=randn(5_000_000, 4)\ndef f(x):\n    y = torch.zeros(4)\n"
           b"    for r in x:\n        y = y + r\n    return y\n\n\n"
           b"# kpredict: example x=randn(5_000_000, 4)\ndef g(x):\n    y = torch.zeros(4)\n"
           b"    for r, s in zip(x, x):\n        y = y + r\n    return y\n")
    f, g = analyze_source(src, "m.py", Settings()).functions
    assert f.eager.kernels == g.eager.kernels == 1 + 4096 and f.lower_bound and g.lower_bound
    assert [(u.line, u.name) for u in f.lower_bound_causes] == [
        (7, "loop of 5000000 iterations counted for the first 4096")]
    assert [(u.line, u.name) for u in g.lower_bound_causes] == [
        (15, "zip() over 5000000 rows of a tensor counted for the first 4096")]


def test_a_loop_longer_than_max_unroll_gives_lower_bounds():
    """A 4-line file that stacks 20,000 ops: counted for the first max_unroll (4096) iterations, which
    is said as an assumption and, since the loop launches kernels, makes the figures lower bounds
    (they were printed as exact). A long loop of plain Python values stays exact."""
    from kpredict.api import analyze_source

    src = b"import torch\n\n\ndef f(x):\n    for _ in range(20000):\n        x = x + 1\n    return x\n"
    (fn,) = analyze_source(src, "m.py", Settings()).functions
    assert fn.eager.kernels == 4096 and fn.lower_bound
    assert [(u.line, u.name) for u in fn.lower_bound_causes] == [
        (5, "loop of 20000 iterations counted for the first 4096")]
    plain = src.replace(b"x = x + 1", b"n = 1")
    (fn,) = analyze_source(plain, "m.py", Settings()).functions
    assert not fn.lower_bound
