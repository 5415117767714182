"""`kpredict check`: exit codes, rule selection, configuration precedence, suppressions, options."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kpredict.api import analyze_source
from kpredict.cli import main
from kpredict.lint.config import ConfigError, Layer, LintConfig, select_codes
from kpredict.lint.engine import Linter
from kpredict.lint.registry import codes
from kpredict.render.json_report import report_dict

CHAIN = """\
import torch


# kpredict: example a=randn(1000) b=randn(1000)
def chain(a, b):
    c = a + b{noqa}
    d = c * 2
    return d.relu()


# kpredict: example x=randn(64, dtype=float16)
def cast(x):
    return x.float().half()
"""


def write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


@pytest.fixture
def proj(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KPREDICT_OUTPUT_FORMAT", raising=False)
    write(tmp_path, "model.py", CHAIN.format(noqa=""))
    return tmp_path


def check(*args: str) -> tuple[int, list[tuple[str, int]], str]:
    """Exit code, [(code, line)] from the json output, stderr."""
    result = CliRunner().invoke(main, ["check", "-j", "1", "--output-format", "json", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    try:
        found = [(d["code"], d["location"]["row"]) for d in json.loads(result.stdout)]
    except ValueError:
        found = []
    return result.exit_code, found, result.stderr


# ------------------------------------------------------------------------------------ exit codes


def test_exit_codes(proj):
    assert check("model.py")[0] == 1
    assert check("--exit-zero", "model.py")[0] == 0
    write(proj, "clean.py", "import torch\n\ndef f(a, b):\n    return a + b\n")
    assert check("clean.py")[:2] == (0, [])
    write(proj, "broken.py", "def f(:\n")
    code, _, err = check("broken.py", "model.py")
    assert code == 2 and "broken.py: error:" in err
    assert check("--exit-zero", "broken.py")[0] == 2
    code, _, err = check("--select", "XY1", "model.py")
    assert code == 2 and "unknown rule selector 'XY1'" in err
    assert check("nothere.py")[0] == 2


def test_default_path_is_the_current_directory(proj):
    code, found, _ = check()
    assert code == 1 and ("KP101", 6) in found


def test_concise_is_the_default_when_not_a_terminal(proj):
    result = CliRunner().invoke(main, ["check", "-j", "1", "model.py"])
    assert result.stdout.startswith("model.py:6:9: KP101 3 elementwise ops (add, mul, relu, lines 6-8) launch 3 kernels")
    assert "\nFound 2 findings.\n" in result.stdout


def test_output_file_and_statistics(proj):
    result = CliRunner().invoke(main, ["check", "-j", "1", "-o", "out.json", "--output-format", "json", "model.py"])
    assert result.exit_code == 1 and result.stdout == ""
    assert {d["code"] for d in json.loads((proj / "out.json").read_text())} == {"KP101", "KP502"}
    result = CliRunner().invoke(main, ["check", "-j", "1", "--statistics", "model.py"])
    assert result.stdout.splitlines() == ["1\tKP101\tunfused-elementwise-chain", "1\tKP502\tdtype-round-trip"]
    result = CliRunner().invoke(main, ["check", "-j", "1", "--statistics", "--output-format", "json", "model.py"])
    assert json.loads(result.stdout)[0] == {"code": "KP101", "name": "unfused-elementwise-chain", "count": 1}


# ------------------------------------------------------------------------------------ selection


def test_selection_prefixes_and_all(proj):
    assert check("--select", "KP5", "model.py")[1] == [("KP502", 13)]
    assert check("--select", "ALL", "--ignore", "KP1", "model.py")[1] == [("KP502", 13)]
    assert check("--select", "KP1,KP5", "model.py")[1] == [("KP101", 6), ("KP502", 13)]
    assert check("--ignore", "KP", "--extend-select", "KP101", "model.py")[1] == [("KP101", 6)]
    assert check("--select", "unfused-elementwise-chain", "model.py")[1] == [("KP101", 6)]


def test_specificity_within_a_layer():
    all_codes = set(codes())
    assert select_codes([Layer(select=("ALL",), ignore=("KP1",))]) == all_codes - {"KP101"}
    # the more specific selector wins; an ignore beats a select of the same length
    assert select_codes([Layer(select=("KP101",), ignore=("KP1",))]) == {"KP101"}
    assert select_codes([Layer(select=("KP1",), ignore=("KP101",))]) == set()
    assert select_codes([Layer(select=("KP101",), ignore=("KP101",))]) == set()
    # a later layer without select adjusts; with select it starts over
    base = Layer(select=("KP4",))
    assert select_codes([base, Layer(extend_select=("KP101",))]) == {"KP101", "KP401", "KP402"}
    assert select_codes([base, Layer(select=("KP5",))]) == {"KP501", "KP502"}


def test_config_file_and_cli_precedence(proj):
    write(proj, "pyproject.toml", """
        [tool.kpredict]
        select = ["KP5"]
    """)
    assert check("model.py")[1] == [("KP502", 13)]
    assert check("--select", "KP1", "model.py")[1] == [("KP101", 6)]  # CLI select replaces
    assert check("--extend-select", "KP1", "model.py")[1] == [("KP101", 6), ("KP502", 13)]
    assert check("--ignore", "KP502", "model.py")[1] == []
    assert check("--isolated", "model.py")[1] == [("KP101", 6), ("KP502", 13)]


def test_nearest_pyproject_wins(proj):
    write(proj, "pyproject.toml", '[tool.kpredict]\nselect = ["KP1"]\n')
    write(proj, "sub/pyproject.toml", '[tool.kpredict]\nselect = ["KP5"]\n')
    write(proj, "sub/model.py", CHAIN.format(noqa=""))
    write(proj, "other/pyproject.toml", "[project]\nname = 'x'\n")  # no [tool.kpredict]: skipped
    write(proj, "other/model.py", CHAIN.format(noqa=""))
    result = CliRunner().invoke(main, ["check", "-j", "1", "--output-format", "json", "."])
    got = sorted((d["path"], d["code"]) for d in json.loads(result.stdout))
    assert got == [("model.py", "KP101"), ("other/model.py", "KP101"), ("sub/model.py", "KP502")]


def test_rule_options_from_config_and_cli(proj):
    write(proj, "pyproject.toml", """
        [tool.kpredict]
        select = ["KP101"]
        [tool.kpredict.rules.unfused-elementwise-chain]
        min-chain-length = 4
    """)
    assert check("model.py")[1] == []
    assert check("--rule-option", "KP101.min-chain-length=3", "model.py")[1] == [("KP101", 6)]
    code, _, err = check("--rule-option", "KP101.min-chain=3", "model.py")
    assert code == 2 and "has no option 'min-chain'" in err


def test_cold_code_option_from_config_and_cli(proj):
    """A BN fusion helper runs once: kept out until `cold-code` (a bool option) brings it back."""
    write(proj, "model.py", CHAIN.format(noqa="").replace("def chain(a, b):", "def _fuse_bn_tensor(a, b):"))
    assert ("KP101", 6) not in check("model.py")[1]
    assert ("KP101", 6) in check("--rule-option", "KP101.cold-code=true", "model.py")[1]
    code, _, err = check("--rule-option", "KP101.cold-code=3", "model.py")
    assert code == 2 and "must be true or false" in err
    write(proj, "pyproject.toml", "[tool.kpredict.rules.KP101]\ncold-code = true\n")
    assert ("KP101", 6) in check("model.py")[1]
    write(proj, "pyproject.toml", "[tool.kpredict.rules.KP101]\ncold-code = 1\n")
    code, _, err = check("model.py")
    assert code == 2 and "must be true or false" in err


def test_per_file_ignores_exclude_target_and_dims(proj):
    write(proj, "pyproject.toml", """
        [tool.kpredict]
        target = "cpu"
        per-file-ignores = { "tests/*" = ["KP1"] }
        exclude = ["generated"]
        dims = { n = 8 }
    """)
    write(proj, "tests/test_model.py", CHAIN.format(noqa=""))
    write(proj, "generated/model.py", CHAIN.format(noqa=""))
    result = CliRunner().invoke(main, ["check", "-j", "1", "--output-format", "json", "."])
    got = sorted((d["path"], d["code"]) for d in json.loads(result.stdout))
    assert got == [("model.py", "KP101"), ("model.py", "KP502"), ("tests/test_model.py", "KP502")]
    # a file named on the command line is checked even when excluded
    assert check("generated/model.py")[1] == [("KP101", 6), ("KP502", 13)]
    result = CliRunner().invoke(main, ["check", "--show-settings", "--target", "cuda", "model.py"])
    assert result.exit_code == 0
    out = result.stdout
    assert f"config file: {proj / 'pyproject.toml'}" in out.replace(str(proj.resolve()), str(proj))
    assert "target = 'cuda'" in out and "dims = {'n': 8}" in out and "'tests/*': ['KP101']" in out
    assert "  KP101 unfused-elementwise-chain  {'min-chain-length': 3, 'cold-code': False}" in out


@pytest.mark.parametrize("text,message", [
    ("[tool.kpredict]\nselekt = ['KP1']\n", "unknown key(s) in [tool.kpredict]: selekt"),
    ("[tool.kpredict]\ntarget = 'tpu'\n", "target must be one of cuda, cpu"),
    ("[tool.kpredict]\nselect = ['KQ1']\n", "unknown rule selector 'KQ1'"),
    ("[tool.kpredict.rules.KP999]\nx = 1\n", "[tool.kpredict.rules.KP999]: no such rule"),
    ("[tool.kpredict\n", "invalid TOML"),
])
def test_config_errors_exit_2(proj, text, message):
    write(proj, "pyproject.toml", text)
    code, _, err = check("model.py")
    assert code == 2 and message in err, err


# ------------------------------------------------------------------------------------ suppressions


@pytest.mark.parametrize("noqa,expected", [
    ("  # noqa: KP101", [("KP502", 13)]),
    ("  # noqa", [("KP502", 13)]),
    ("  # kpredict: ignore[KP101]", [("KP502", 13)]),
    ("  # kpredict: ignore[unfused-elementwise-chain]", [("KP502", 13)]),
    ("  # noqa: E501, KP101", [("KP502", 13)]),
    ("  # noqa: E501", [("KP101", 6), ("KP502", 13)]),
    ("  # noqa: KP502", [("KP101", 6), ("KP901", 6), ("KP502", 13)]),
    ("  # noqa: KP101, KP999", [("KP901", 6), ("KP502", 13)]),
])
def test_line_suppressions(proj, noqa, expected):
    write(proj, "model.py", CHAIN.format(noqa=noqa))
    assert check("model.py")[1] == expected


def test_suppression_anywhere_in_a_multi_line_finding(proj):
    write(proj, "model.py", CHAIN.format(noqa="").replace("return d.relu()", "return d.relu()  # noqa: KP101"))
    assert check("model.py")[1] == [("KP502", 13)]


def test_def_line_suppresses_the_whole_function(proj):
    text = CHAIN.format(noqa="").replace("def chain(a, b):", "def chain(a, b):  # kpredict: ignore[KP101]")
    write(proj, "model.py", text)
    assert check("model.py")[1] == [("KP502", 13)]
    write(proj, "model.py", text.replace("[KP101]", ""))  # blanket: everything in the function
    assert check("model.py")[1] == [("KP502", 13)]
    write(proj, "model.py", CHAIN.format(noqa="").replace("def cast(x):", "def cast(x):  # kpredict: ignore"))
    assert check("model.py")[1] == [("KP101", 6)]


def test_unused_suppression_messages(proj):
    write(proj, "model.py", CHAIN.format(noqa="  # noqa: KP502, KP999, E501").replace(
        "def cast(x):", "def cast(x):  # kpredict: ignore[KP101]"))
    result = CliRunner().invoke(main, ["check", "-j", "1", "--select", "KP1,KP9", "model.py"])
    lines = result.stdout.splitlines()
    assert lines[:2] == [
        "model.py:6:9: KP101 3 elementwise ops (add, mul, relu, lines 6-8) launch 3 kernels and move 7 transfers "
        "(28.0 KB); "
        "fused they would be 1 kernel and 3 transfers (12.0 KB)",
        "model.py:6:16: KP901 unused suppression `# noqa: KP502, KP999, E501`: KP502 is not enabled; "
        "KP999 is not a kpredict rule",
    ]
    assert "model.py:12:15: KP901 unused suppression `# kpredict: ignore[KP101]`: KP101 has no finding here" in lines
    # a comment in a string is not a suppression
    write(proj, "model.py", CHAIN.format(noqa="; s = '# noqa: KP101'"))
    assert ("KP101", 6) in check("model.py")[1]


# ------------------------------------------------------------------------------------ the JSON report


def test_findings_in_the_json_report():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parent.parent / "kpredict" / "schema" / "report.schema.json").read_text())
    from kpredict.ir import Report

    fr = analyze_source(CHAIN.format(noqa=""), "model.py", lint=Linter(LintConfig.default()))
    doc = report_dict(Report("cuda", [fr]))
    jsonschema.validate(doc, schema)
    assert [(f["code"], f["line"], f["qualname"]) for f in doc["files"][0]["findings"]] == [
        ("KP101", 6, "chain"), ("KP502", 13, "cast")]
    assert analyze_source(CHAIN.format(noqa=""), "model.py").findings == []


def test_config_error_type():
    with pytest.raises(ConfigError):
        from kpredict.lint.config import parse_rule_option

        parse_rule_option("KP101=3")


def test_force_exclude_and_the_pre_commit_hook(proj):
    write(proj, "pyproject.toml", '[tool.kpredict]\nexclude = ["gen_*.py"]\n')
    write(proj, "gen_model.py", CHAIN.format(noqa=""))
    assert check("gen_model.py")[0] == 1  # named on the command line: checked
    assert check("--force-exclude", "gen_model.py")[:2] == (0, [])
    hooks = (Path(__file__).parent.parent / ".pre-commit-hooks.yaml").read_text()
    yaml = pytest.importorskip("yaml")
    (hook,) = yaml.safe_load(hooks)
    assert hook["id"] == "kpredict-check" and hook["language"] == "python"
    program, *args = hook["entry"].split()
    assert program == "kpredict"
    result = CliRunner().invoke(main, [*args, "-j", "1", "gen_model.py", "model.py"])
    assert result.exit_code == 1 and "gen_model.py" not in result.stdout and "model.py:6:9: KP101" in result.stdout
