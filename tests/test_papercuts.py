"""The papercuts of issue 32, as a new user meets them from the shell:

- a path that does not exist is one `path: error: ...` line, never "All checks passed!" (exit 2);
- a file that cannot be analyzed is an error entry in every output format, never dropped;
- a folder with no Python file says so on stderr (exit 0, as ruff);
- `--output-format` is the option's name on every command, `--format` its alias;
- the JSON report's op rows only on request (`--detail` or `-v`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kpredict.cli import main

REPO = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((REPO / "kpredict" / "schema" / "report.schema.json").read_text())
CHECK_FORMATS = ("full", "concise", "json", "json-lines", "github", "sarif", "rdjsonl", "gitlab", "markdown")
CHAIN = "import torch\n\n\ndef f(a, b):\n    return (a + b).relu().sin()\n"


@pytest.fixture
def proj(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KPREDICT_OUTPUT_FORMAT", raising=False)
    monkeypatch.delenv("CI", raising=False)
    (tmp_path / "ok.py").write_text(CHAIN)
    (tmp_path / "bad.py").write_text("def f(:\n")
    (tmp_path / "empty").mkdir()
    return tmp_path


def cli(*args: str):
    result = CliRunner().invoke(main, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


# ------------------------------------------------------------------------------------ a missing path


def test_missing_path_is_one_error_line_never_all_checks_passed(proj):
    r = cli("check", "--isolated", "-j", "1", "--output-format", "concise", "missing.py")
    assert r.exit_code == 2
    assert r.stderr.splitlines() == ["missing.py: error: no such file or directory"]
    assert "All checks passed" not in r.stdout
    assert r.stdout == "No findings; 1 file could not be analyzed.\n"


def test_missing_path_does_not_stop_the_other_files(proj):
    r = cli("check", "--isolated", "-j", "1", "--output-format", "concise", "missing.py", "ok.py")
    assert r.exit_code == 2
    assert r.stderr.splitlines() == ["missing.py: error: no such file or directory"]
    assert "ok.py:5:12: KP101" in r.stdout
    assert r.stdout.endswith("Found 1 finding; 1 file could not be analyzed.\n")


def test_report_of_a_missing_path_prints_no_empty_table(proj):
    r = cli("-j", "1", "missing.py")
    assert r.exit_code == 2
    assert r.stderr.splitlines() == ["missing.py: error: no such file or directory"]
    assert r.stdout == ""


# ------------------------------------------------------------------------------------ errors in every format


@pytest.mark.parametrize("fmt", CHECK_FORMATS)
def test_every_check_format_shows_files_that_failed(proj, fmt):
    r = cli("check", "--isolated", "-j", "1", "--output-format", fmt, "missing.py", "bad.py", "ok.py")
    assert r.exit_code == 2
    out = r.stdout
    if fmt in ("json", "json-lines"):
        entries = json.loads(out) if fmt == "json" else [json.loads(line) for line in out.splitlines()]
        errors = [e for e in entries if e["code"] is None]
        assert [(e["filename"], e["severity"], e["message"], e["location"]["row"]) for e in errors] == [
            ("missing.py", "error", "no such file or directory", 1),
            ("bad.py", "error", "line 1: syntax error: invalid syntax", 1)]
        assert all(e["fingerprint"] for e in errors)
        assert [e["code"] for e in entries if e["code"]] == ["KP101"]
        # same keys as a finding, so a consumer that reads findings reads errors too
        assert {tuple(e) for e in entries} == {tuple(entries[-1])}
    elif fmt == "sarif":
        notes = json.loads(out)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        assert [n["message"]["text"] for n in notes] == ["missing.py: no such file or directory",
                                                         "bad.py: line 1: syntax error: invalid syntax"]
    elif fmt == "gitlab":
        issues = [i for i in json.loads(out) if i["check_name"] == "error"]
        assert [(i["location"]["path"], i["severity"]) for i in issues] == [("missing.py", "critical"),
                                                                          ("bad.py", "critical")]
        assert len({i["fingerprint"] for i in json.loads(out)}) == 3
    elif fmt == "rdjsonl":
        errors = [json.loads(line) for line in out.splitlines() if '"ERROR"' in line]
        assert [e["location"] for e in errors] == [{"path": "missing.py"},
                                                   {"path": "bad.py", "range": {"start": {"line": 1}}}]
    elif fmt == "github":
        assert "::error title=kpredict (error),file=missing.py::missing.py: error: no such file or directory\n" in out
        assert "file=bad.py,line=1::bad.py: error: line 1: syntax error" in out
    elif fmt == "markdown":
        assert out.startswith("### kpredict: 1 finding, 2 files not analyzed")
        assert "- `missing.py`: no such file or directory" in out
    else:  # full, concise: the errors on stderr, counted in the summary
        assert out.endswith("Found 1 finding; 2 files could not be analyzed.\n")
    assert r.stderr.splitlines() == ["missing.py: error: no such file or directory",
                                     "bad.py: error: line 1: syntax error: invalid syntax"]


def test_json_error_entries_alone_are_not_an_empty_list(proj):
    r = cli("check", "--isolated", "-j", "1", "--output-format", "json", "bad.py")
    assert r.exit_code == 2
    (entry,) = json.loads(r.stdout)
    assert entry["code"] is None and entry["name"] == "error" and entry["path"] == "bad.py"


def test_report_json_keeps_files_that_failed(proj):
    r = cli("-j", "1", "--output-format", "json", "missing.py", "bad.py")
    assert r.exit_code == 2
    files = json.loads(r.stdout)["files"]
    assert [(f["path"], f["error"]) for f in files] == [("missing.py", "no such file or directory"),
                                                       ("bad.py", "line 1: syntax error: invalid syntax")]


# ------------------------------------------------------------------------------------ an empty folder


def test_empty_folder_warns_and_exits_0(proj):
    r = cli("check", "--isolated", "-j", "1", "--output-format", "concise", "empty")
    assert r.exit_code == 0
    assert r.stderr == "kpredict: warning: no Python files found under empty\n"
    r = cli("-j", "1", "empty")
    assert (r.exit_code, r.stderr, r.stdout) == (0, "kpredict: warning: no Python files found under empty\n", "")


def test_a_folder_whose_files_git_ignores_says_so(proj):
    """A folder named on the command line whose .py files are all git-ignored (a pyenv's standard library
    inside its git checkout) is not said to hold no Python file: the warning says git ignores them."""
    import subprocess

    subprocess.run(["git", "init", "-q"], check=True)
    (proj / ".gitignore").write_text("lib/\n")
    (proj / "lib").mkdir()
    (proj / "lib" / "m.py").write_text(CHAIN)
    r = cli("check", "--isolated", "-j", "1", "--output-format", "concise", "lib")
    assert r.exit_code == 0
    assert r.stderr.startswith("kpredict: warning: no Python files found under lib that git does not ignore "
                               "(its .py files are all in .gitignore")
    r = cli("check", "--isolated", "-j", "1", "--output-format", "concise", "lib/m.py")  # named: analyzed
    assert r.exit_code == 1 and "KP101" in r.stdout


def test_empty_folder_next_to_files_warns_and_the_files_go_on(proj):
    r = cli("check", "--isolated", "-j", "1", "--output-format", "concise", "empty", "ok.py")
    assert r.exit_code == 1
    assert r.stderr == "kpredict: warning: no Python files found under empty\n"
    assert "KP101" in r.stdout


def test_no_warning_for_a_folder_with_files_or_one_walked_twice(proj):
    (proj / "src").mkdir()
    (proj / "src" / "m.py").write_text(CHAIN)
    r = cli("check", "--isolated", "-j", "1", "--output-format", "concise", "src", "src")
    assert r.exit_code == 1 and "warning" not in r.stderr


def test_every_file_excluded_warns_once(proj):
    (proj / "src").mkdir()
    (proj / "src" / "m.py").write_text(CHAIN)
    (proj / "pyproject.toml").write_text('[tool.kpredict]\nexclude = ["src/*"]\n')
    r = cli("check", "-j", "1", "--output-format", "concise", "src")
    assert r.exit_code == 0
    assert r.stderr == "kpredict: warning: no Python files found under the given paths\n"


# ------------------------------------------------------------------------------------ one option name


@pytest.mark.parametrize("command", ["report", "check", "diff", "verify", "rule", "rules"])
def test_output_format_is_the_name_and_format_the_alias_on_every_command(command):
    r = cli(command, "--help")
    assert r.exit_code == 0
    assert "--output-format, --format" in r.stdout


@pytest.mark.parametrize("option", ["--output-format", "--format"])
def test_both_spellings_work(proj, option):
    assert json.loads(cli("-j", "1", option, "json", "ok.py").stdout)["schema"] == "kpredict/report/v1"
    assert json.loads(cli("check", "--isolated", "-j", "1", option, "json", "ok.py").stdout)[0]["code"] == "KP101"
    assert json.loads(cli("rules", option, "json").stdout)[0]["code"] == "KP101"
    assert json.loads(cli("rule", "KP101", option, "json").stdout)["code"] == "KP101"


# ------------------------------------------------------------------------------------ op rows on request


def test_report_json_has_op_rows_only_with_detail_or_verbose(proj):
    jsonschema = pytest.importorskip("jsonschema")
    plain = json.loads(cli("-j", "1", "--output-format", "json", "ok.py").stdout)
    (fn,) = plain["files"][0]["functions"]
    assert "ops" not in fn and fn["eager"]["kernels"] == 3 and fn["compiled"]["kernels"] == 1
    assert "kernel_names" not in fn["compiled"]
    for flag in ("--detail", "-v"):
        detailed = json.loads(cli("-j", "1", "--output-format", "json", flag, "ok.py").stdout)
        (fn,) = detailed["files"][0]["functions"]
        assert [r["op"] for r in fn["ops"]] == ["add", "relu", "sin"] and len(fn["compiled"]["kernel_names"]) == 1
        jsonschema.validate(detailed, SCHEMA)
    jsonschema.validate(plain, SCHEMA)


def test_report_json_without_op_rows_is_smaller_on_the_fixtures(monkeypatch):
    monkeypatch.chdir(REPO)
    seed = "fixtures/seed"
    args = ("--no-cache", "-j", "1", "--output-format", "json", seed)
    plain, detailed = cli(*args).stdout, cli(*args, "--detail").stdout
    assert len(plain) < len(detailed) / 2
    strip = json.loads(detailed)
    for f in strip["files"]:
        for fn in f["functions"]:
            del fn["ops"]
            del fn["eager"]["kernel_costs"], fn["compiled"]["kernel_costs"]  # per kernel, also --detail only
            del fn["compiled"]["kernel_names"]  # likewise (issue 32: a third of a whole tree's report)
    assert strip == json.loads(plain)


LOOP_BREAK = """import torch


# kpredict: example x=randn(8, 4)
def f(x):
    for _ in range(3):
        x = x.sin()
        if x.sum() > 0:
            x = x.cos()
    return x
"""


def test_a_break_in_a_loop_is_one_line_with_its_count(proj):
    """A data-dependent branch in a loop breaks once per pass: the text report says it once per site,
    with the count (an MoE layer's router in a 32-layer model printed 2,015 lines), and -v each."""
    Path("m.py").write_text(LOOP_BREAK)
    out = CliRunner().invoke(main, ["report", "m.py"]).output
    assert out.count("graph break at line 8") == 1, out
    assert "graph break at line 8 (3 times): data-dependent branch" in out, out
    verbose = CliRunner().invoke(main, ["report", "-v", "m.py"]).output
    assert verbose.count("graph break at line 8: data-dependent branch") == 3, verbose
