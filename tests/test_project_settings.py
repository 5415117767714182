"""One settings loader (kpredict/project.py): every command and the Python API take target, mode,
dims, init and examples from the same pyproject.toml, found by one rule (the nearest one above the
analyzed path with a [tool.kpredict] table)."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kpredict import api, project
from kpredict.settings import Settings
from kpredict.cli import main

NET = """\
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return x + self.fc(self.ln(x))


class Net(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.h = nn.ModuleList([Block(config.n_embd) for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(config.n_embd)

    def forward(self, x):
        for b in self.h:
            x = b(x)
        return self.ln_f(x){extra}
"""

PROJECT = """\
[tool.kpredict]
target = "cpu"

[tool.kpredict.dims]
n_layer = 4
"""


def write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def git(root: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com")
    return subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """repo/pyproject.toml: packaging only; repo/sub/pyproject.toml: the project's [tool.kpredict];
    repo/sub/pkg/pyproject.toml: packaging only again, nearer to the file (it must be passed over)."""
    root = tmp_path / "repo"
    write(root, "pyproject.toml", "[project]\nname = 'outer'\n")
    write(root, "sub/pyproject.toml", PROJECT)
    write(root, "sub/pkg/pyproject.toml", "[project]\nname = 'inner'\n")
    write(root, "sub/pkg/net.py", NET.format(extra=""))
    monkeypatch.chdir(root)
    monkeypatch.delenv("KPREDICT_OUTPUT_FORMAT", raising=False)
    return root


@pytest.fixture
def seen(monkeypatch):
    """(path, target, mode, dims) of every analysis run in this process."""
    calls: list[tuple[str, str, str, tuple]] = []
    original = api.analyze_source

    def spy(source, path="<string>", settings=None, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        s = settings or Settings()
        calls.append((Path(path).name, s.target, s.mode, s.dims))
        return original(source, path, settings, *args, **kwargs)

    monkeypatch.setattr(api, "analyze_source", spy)
    return calls


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def forward(functions: list[dict]) -> dict:
    return next(f for f in functions if f["qualname"] == "Net.forward")


EXPECTED = ("net.py", "cpu", "eval", (("n_layer", 4),))


def test_the_one_search_rule(tree):
    assert project.find(tree / "sub/pkg/net.py") == (tree / "sub/pyproject.toml").resolve()
    assert project.find(tree / "sub/pkg/net.py::Net.forward") == (tree / "sub/pyproject.toml").resolve()
    assert project.find(tree / "sub/pkg") == (tree / "sub/pyproject.toml").resolve()
    assert project.find(tree / "other.py") is None  # repo/pyproject.toml has no [tool.kpredict]
    got = project.load("sub/pkg/net.py")
    assert got.settings.target == "cpu" and got.settings.dims == (("n_layer", 4),)
    assert project.settings_for("sub/pkg/net.py", project.Options(target="cuda", dims=(("n_layer", 2),))).target == "cuda"
    assert project.settings_for("sub/pkg/net.py", project.Options(dims=(("n_layer", 2),))).dims == (("n_layer", 2),)


def test_report_check_diff_and_verify_see_the_same_target_and_dims(tree, seen):
    # report (the default command)
    code, out, err = run("--format", "json", "--no-cache", "-j", "1", "sub/pkg/net.py::Net.forward")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["target"] == "cpu"
    kernels = forward(doc["files"][0]["functions"])["eager"]["kernels"]
    assert isinstance(kernels, int)  # n_layer = 4 from [tool.kpredict.dims]: a number, not 1 + 3*n_layer
    assert seen == [EXPECTED]
    seen.clear()

    # check: the markdown review comment names the target and carries the figures
    code, out, err = run("check", "--no-cache", "-j", "1", "--output-format", "markdown", "sub/pkg/net.py")
    assert code in (0, 1), err
    assert "Predicted for `cpu`" in out
    assert seen == [EXPECTED]
    seen.clear()

    # diff: the working tree against the commit
    git(tree, "init", "-q")
    git(tree, "add", ".")
    git(tree, "commit", "-q", "-m", "v1")
    write(tree, "sub/pkg/net.py", NET.format(extra=".relu()"))
    code, out, err = run("diff", "HEAD", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["target"] == "cpu"
    (fn,) = [f for f in doc["files"][0]["functions"] if f["qualname"] == "Net.forward"]
    assert fn["before"]["eager"]["kernels"] == kernels and fn["after"]["eager"]["kernels"] == kernels + 1
    assert seen and set(seen) == {EXPECTED}
    seen.clear()
    kernels += 1  # the file now ends in .relu()

    # verify: the device `auto` resolves to (the project's target) and what the prediction is given;
    # nothing is run
    from kpredict.verify import command, runner

    assert command.project_defaults("sub/pkg/net.py", "auto", None) == ("cpu", "eval")
    assert command.project_defaults("sub/pkg/net.py", "cuda", "train") == ("cuda", "train")
    report, _ = runner.predict("sub/pkg/net.py", "cpu", "Net.forward", None)
    assert forward([{"qualname": f.qualname, "eager": {"kernels": f.eager.kernels}} for f in report.functions]) == \
        {"qualname": "Net.forward", "eager": {"kernels": kernels}}
    assert seen == [EXPECTED]
    seen.clear()

    # the Python API, without settings
    rep = api.analyze_file("sub/pkg/net.py", only="Net.forward")
    assert rep.functions[0].eager.kernels == kernels and seen == [EXPECTED]


def test_verify_command_passes_the_project_settings(tree, monkeypatch):
    from kpredict.verify import command
    from kpredict.verify.runner import VerifyResult

    got = {}

    def fake(path, qualname=None, **kwargs):  # noqa: ANN001, ANN003
        got.update(kwargs, path=path, qualname=qualname)
        return VerifyResult(path, qualname, None, None, None, mode=kwargs["mode"],
                            error={"kind": "load", "message": "not run", "traceback": None})

    monkeypatch.setattr(command, "run_verify", fake)
    write(tree, "sub/pyproject.toml", PROJECT.replace('target = "cpu"', 'target = "cpu"\nmode = "train"'))
    code, _, _ = run("verify", "--format", "json", "sub/pkg/net.py::Net.forward")
    assert code == 2 and (got["device"], got["mode"]) == ("cpu", "train")
    code, _, _ = run("verify", "--mode", "eval", "--device", "cuda", "sub/pkg/net.py::Net.forward")
    assert (got["device"], got["mode"]) == ("cuda", "eval")


def test_init_and_examples_tables_are_accepted_and_used(tree):
    write(tree, "sub/pkg/mlp.py", """\
        import torch
        from torch import nn


        def add_relu(a, b):
            return (a + b).relu()


        class MLP(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.fc = nn.Linear(d, d)

            def forward(self, x):
                return self.fc(x)
    """)
    write(tree, "sub/pyproject.toml", PROJECT + textwrap.dedent("""\

        [tool.kpredict.examples]
        "pkg/mlp.py::add_relu" = "a=randn(1000) b=randn(1000)"
        "pkg/mlp.py::MLP.forward" = "x=randn(8, 16)"

        [tool.kpredict.init]
        "pkg/mlp.py::MLP" = "d=16"
    """))
    for args in (["--format", "json"], ["check", "--output-format", "json"]):
        code, out, err = run(*args, "--no-cache", "-j", "1", "sub/pkg/mlp.py")
        assert code in (0, 1) and "unknown key" not in err, err
    code, out, err = run("--format", "json", "--no-cache", "-j", "1", "sub/pkg/mlp.py")
    fns = {f["qualname"]: f for f in json.loads(out)["files"][0]["functions"]}
    assert fns["add_relu"]["eager"]["bytes"] == 5 * 1000 * 4  # a, b read, a + b written and read, result
    assert isinstance(fns["MLP.forward"]["eager"]["bytes"], int)
    assert project.file_entries(tree / "sub/pkg/mlp.py") == {
        "examples": {"add_relu": "a=randn(1000) b=randn(1000)", "MLP.forward": "x=randn(8, 16)"},
        "init": {"MLP": "d=16"}}


@pytest.mark.parametrize("command", [[], ["check"], ["diff", "HEAD"]])
def test_an_unknown_key_is_one_line_and_exit_2(tree, command):
    write(tree, "sub/pyproject.toml", PROJECT + "\n[tool.kpredict.exampels]\n\"pkg/net.py::f\" = \"x=randn(2)\"\n")
    if command[:1] == ["diff"]:
        git(tree, "init", "-q")
        git(tree, "add", ".")
        git(tree, "commit", "-q", "-m", "v1")
        write(tree, "sub/pkg/net.py", NET.format(extra=".relu()"))
        code, out, err = run(*command)
    else:
        code, out, err = run(*command, "--no-cache", "-j", "1", "sub/pkg/net.py")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "sub/pyproject.toml" in lines[0] and "unknown key(s) in [tool.kpredict]: exampels" in lines[0]


def test_verify_rejects_an_unknown_key_too(tree):
    write(tree, "sub/pyproject.toml", "[tool.kpredict]\ntagret = 'cpu'\n")
    code, _, err = run("verify", "sub/pkg/net.py::Net.forward")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "tagret" in err


@pytest.mark.parametrize("text,message", [
    ('[tool.kpredict.init]\n"pkg/net.py::Net" = 16\n', "[tool.kpredict.init] 'pkg/net.py::Net' must be a string"),
    ('[tool.kpredict.examples]\n"Net.forward" = "x=randn(2)"\n', "must be \"file.py::qualname\""),
    ('[tool.kpredict.dims]\nn_layer = "four"\n', "dims.n_layer must be an integer, not 'four'"),
    ('[tool.kpredict]\ndims = 4\n', "dims must be a table of name = integer"),
    ('[tool.kpredict]\nmode = "training"\n', "mode must be one of eval, train"),
    ('[tool.kpredict]\ntime-budget = -1\n', "time-budget must be a number of seconds >= 0, not -1"),
])
def test_bad_values_name_the_key_and_the_file(tree, text, message):
    write(tree, "sub/pyproject.toml", text)
    with pytest.raises(project.ConfigError) as e:
        project.load("sub/pkg/net.py")
    assert message in str(e.value) and str(e.value).startswith(str((tree / "sub/pyproject.toml").resolve()))
    code, _, err = run("--no-cache", "-j", "1", "sub/pkg/net.py")
    assert code == 2 and message in err


def test_time_budget_from_the_file_and_the_command_line(tree):
    """`time-budget` (CPU seconds per file) is read as the other prediction keys are; the flag wins."""
    assert project.load("sub/pkg/net.py").settings.time_budget == Settings.time_budget == 10.0
    write(tree, "sub/pyproject.toml", "[tool.kpredict]\ntime-budget = 2.5\n")
    assert project.load("sub/pkg/net.py").settings.time_budget == 2.5
    assert project.load("sub/pkg/net.py", project.Options(time_budget=0)).settings.time_budget == 0
