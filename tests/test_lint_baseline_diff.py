"""The kernel budget (`check --baseline`, `--write-baseline`) and `kpredict diff`, on a small git
repository made in the test."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from kpredict.cli import main

pytestmark = pytest.mark.skipif(subprocess.run(["git", "--version"], capture_output=True).returncode != 0,
                                reason="git is not installed")

V1 = """\
import torch


# kpredict: example x=randn(1024)
def act(x):
    return x.sigmoid() * x


# kpredict: example x=randn(1024) y=randn(1024)
def mix(x, y):
    return x + y


# kpredict: example x=randn(1024)
def gone(x):
    return x.exp()
"""

# act grows by one op (and becomes a chain of 3), mix moves down, gone is removed, new appears
V2 = """\
import torch


# kpredict: example x=randn(1024)
def new(x):
    return x.abs()


# kpredict: example x=randn(1024)
def act(x):
    return (x.sigmoid() * x).relu()


# kpredict: example x=randn(1024) y=randn(1024)
def mix(x, y):
    return x + y
"""


def git(root: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com")
    return subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    git(root, "init", "-q")
    (root / "pkg" / "model.py").write_text(V1)
    (root / "pkg" / "same.py").write_text("import torch\n\ndef f(a):\n    return a * 2\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "v1")
    monkeypatch.chdir(root / "pkg")  # relative paths are keyed from the repository root, not the cwd
    monkeypatch.delenv("KPREDICT_OUTPUT_FORMAT", raising=False)
    return root


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


# ------------------------------------------------------------------------------------ baseline


def test_write_and_check_baseline(repo):
    code, _, err = cli("check", "-j", "1", "--write-baseline", "--baseline", "../budget.json", ".")
    assert code == 0 and "wrote 4 functions" in err
    doc = json.loads((repo / "budget.json").read_text())
    assert doc["schema"] == "kpredict/baseline/v1" and doc["target"] == "cuda"
    assert doc["functions"]["pkg/model.py::act"] == {"eager": {"kernels": 2, "bytes": 20480},
                                                      "compiled": {"kernels": 1, "bytes": 8192}}
    assert all(":" in fp for fp in doc["findings"])
    assert cli("check", "-j", "1", "--baseline", "../budget.json", ".")[0] == 0

    # moving code does not matter: keys are path + qualname
    (repo / "pkg" / "model.py").write_text("# moved\n\n\n" + V1)
    assert cli("check", "-j", "1", "--baseline", "../budget.json", ".")[0] == 0

    # growth fails, and says by how much
    (repo / "pkg" / "model.py").write_text(V2)
    code, out, _ = cli("check", "-j", "1", "--baseline", "../budget.json", ".")
    assert code == 1
    lines = out.splitlines()
    assert ("model.py:10:1: KP801 `act` is over its kernel budget: eager 2 -> 3 kernels (+1), "
            "eager 20.5 KB -> 28.7 KB (+8.2 KB)") in lines
    assert any(" KP101 3 elementwise ops (" in line and "launch 3 kernels" in line for line in lines)  # a new finding
    assert not any("`new`" in line or "`mix`" in line for line in lines)  # no budget yet / unchanged

    # re-recording accepts the change
    assert cli("check", "-j", "1", "--write-baseline", "--baseline", "../budget.json", ".")[0] == 0
    assert cli("check", "-j", "1", "--baseline", "../budget.json", ".")[0] == 0


def test_baseline_from_config_and_errors(repo):
    (repo / "pyproject.toml").write_text('[tool.kpredict]\nbaseline = ".kpredict-baseline.json"\n')
    assert cli("check", "-j", "1", "--write-baseline", ".")[0] == 0
    assert (repo / ".kpredict-baseline.json").is_file()
    assert cli("check", "-j", "1", ".")[0] == 0
    code, _, err = cli("check", "-j", "1", "--target", "cpu", ".")
    assert code == 2 and "recorded for --target cuda" in err
    (repo / "bad.json").write_text("{}")
    code, _, err = cli("check", "-j", "1", "--baseline", "../bad.json", ".")
    assert code == 2 and "not a kpredict baseline" in err
    code, _, err = cli("check", "-j", "1", "--baseline", "../missing.json", ".")
    assert code == 2 and "no such baseline" in err


# ------------------------------------------------------------------------------------ diff


def test_diff_between_commits(repo):
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "pkg" / "model.py").write_text(V2)
    git(repo, "commit", "-q", "-am", "v2")
    code, out, _ = cli("diff", base, "HEAD")
    assert code == 0
    assert out.splitlines() == [
        f"kpredict diff {base} -> HEAD (target cuda)",
        "pkg/model.py",
        "  act: eager 2 -> 3 kernels (+1), 20.5 KB -> 28.7 KB (+8.2 KB); compiled unchanged (1 kernel, 8.2 KB); "
        "modelled time eager 4.0 µs -> 6.0 µs",
        "  new: new, eager 1 kernel, 8.2 KB; compiled 1 kernel, 8.2 KB",
        "  gone: removed (was eager 1 kernel, 8.2 KB; compiled 1 kernel, 8.2 KB)",
    ]
    assert cli("diff", base, "HEAD", "--fail-on-increase")[0] == 1

    doc = json.loads(cli("diff", base, "HEAD", "--format", "json")[1])
    assert doc["schema"] == "kpredict/diff/v1" and doc["base"] == base and doc["head"] == "HEAD"
    (f,) = doc["files"]
    act = {fn["qualname"]: fn for fn in f["functions"]}["act"]
    assert act["status"] == "changed"
    assert act["delta"] == {"eager": {"kernels": 1, "bytes": 8192}, "compiled": {"kernels": 0, "bytes": 0}}
    assert act["text"] == ("act: eager 2 -> 3 kernels (+1), 20.5 KB -> 28.7 KB (+8.2 KB); compiled unchanged "
                           "(1 kernel, 8.2 KB); modelled time eager 4.0 µs -> 6.0 µs")
    assert act["after"]["eager"]["time_us"] > act["before"]["eager"]["time_us"]  # one more launch, more bytes

    md = cli("diff", base, "HEAD", "--format", "markdown")[1]
    assert "| `pkg/model.py::act` | 2 → 3 (+1) | 20.5 KB → 28.7 KB (+8.2 KB) | 1 | 8.2 KB | 4.0 µs → 6.0 µs | 2.0 µs |" in md
    assert "| `pkg/model.py::gone` (removed) |" in md and "| `pkg/model.py::new` (new) |" in md


def test_diff_against_the_working_tree(repo):
    (repo / "pkg" / "model.py").write_text(V1.replace("return x + y", "return (x + y) * 2"))
    (repo / "pkg" / "untracked.py").write_text("import torch\n\n# kpredict: example a=randn(8)\ndef g(a):\n    return a - 1\n")
    code, out, _ = cli("diff", "HEAD")
    assert code == 0
    assert "  mix: eager 1 -> 2 kernels (+1), 12.3 KB -> 20.5 KB (+8.2 KB)" in out
    assert "pkg/untracked.py" in out and "pkg/same.py" not in out
    code, out, _ = cli("diff", "HEAD", "--path", "untracked.py")
    assert "pkg/model.py" not in out and "pkg/untracked.py" in out


LAYER = """\
import torch


def act(x):
    return x.sigmoid() * x
"""

MODEL = """\
import torch

from .layers import act


# kpredict: example x=randn(1024)
def block(x):
    return act(x) + 1
"""

LONG = """\
import torch


# kpredict: example x=randn(1024) w=randn(1024)
def {name}(x, w):
    h = x * w
    h = h.sigmoid() * h
    h = h + x
    h = torch.nn.functional.layer_norm(h, (1024,))
    return h * 2
"""


def test_diff_follows_callers_renames_and_reads_each_revision_whole(repo):
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "layers.py").write_text(LAYER)
    (repo / "pkg" / "blocks.py").write_text(MODEL)
    (repo / "pkg" / "old_name.py").write_text(LONG.format(name="scale_mix"))
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "layers")
    base = git(repo, "rev-parse", "HEAD").strip()
    # the layer grows by one op; the long function is renamed in a renamed file, its body unchanged
    (repo / "pkg" / "layers.py").write_text(LAYER.replace("x.sigmoid() * x", "(x.sigmoid() * x).relu()"))
    git(repo, "mv", "pkg/old_name.py", "pkg/new_name.py")
    (repo / "pkg" / "new_name.py").write_text(LONG.format(name="mix_scale"))
    git(repo, "commit", "-q", "-am", "change")
    code, out, _ = cli("diff", base, "HEAD")
    assert code == 0, out
    lines = out.splitlines()
    # blocks.py did not change, but it calls the layer: its figures move with it (at base, the layer as it was)
    i = lines.index("pkg/blocks.py (unchanged; it imports changed code)")
    assert lines[i + 1].startswith("  block: eager 3 -> 4 kernels (+1)"), lines
    j = lines.index("pkg/new_name.py (renamed from pkg/old_name.py)")
    assert lines[j + 1].startswith("  mix_scale (renamed from scale_mix): unchanged, eager "), lines
    doc = json.loads(cli("diff", base, "HEAD", "--format", "json")[1])
    files = {f["path"]: f for f in doc["files"]}
    assert files["pkg/blocks.py"]["caller"] and files["pkg/new_name.py"]["old_path"] == "pkg/old_name.py"
    (fn,) = files["pkg/new_name.py"]["functions"]
    assert (fn["status"], fn["old_name"]) == ("renamed", "scale_mix")


def test_diff_errors(repo, tmp_path, monkeypatch):
    code, _, err = cli("diff", "no-such-rev")
    assert code == 2 and "git rev-parse" in err
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("diff", "HEAD")
    assert code == 2 and "not inside a git repository" in err
