"""`kpredict diff --init/--example "QUALNAME: NAME=EXPR ..."`: values for a function named by its
qualname, in every changed file that defines it, at both revisions."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from kpredict.cli import main

V1 = '''from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class Cfg:
    dim: int = 64
    n_layer: int = 2


class Net(nn.Module):
    def __init__(self, config: Cfg):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(config.dim, config.dim) for _ in range(config.n_layer)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x).relu()
        return x
'''
V2 = V1.replace("x = layer(x).relu()", "x = layer(x).relu() * 2")


def git(root: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com")
    return subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "model.py").write_text(V1)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "v1")
    (root / "model.py").write_text(V2)
    monkeypatch.chdir(root)
    monkeypatch.delenv("KPREDICT_OUTPUT_FORMAT", raising=False)
    return root


def cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    if r.exception and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.stdout, r.stderr


def _forward(out: str) -> dict:
    (f,) = json.loads(out)["files"]
    return {fn["qualname"]: fn for fn in f["functions"]}["Net.forward"]


def test_diff_takes_init_and_example(repo):
    code, out, _ = cli("diff", "HEAD", "--format", "json")
    assert code == 0
    fn = _forward(out)
    # x of unknown shape: (B, T, C) assumed, bytes a formula in them (no number to compare)
    assert isinstance(fn["before"]["eager"]["bytes"], str) and "B*T" in fn["before"]["eager"]["bytes"]
    code, out, _ = cli("diff", "HEAD", "--format", "json", "--init", "Net.forward: config=Cfg(dim=32, n_layer=3)",
                       "--example", "Net.forward: x=randn(8, 32)")
    assert code == 0
    fn = _forward(out)
    assert fn["before"]["eager"]["kernels"] == 6 and fn["after"]["eager"]["kernels"] == 9  # 3 layers
    # the * 2 adds per layer one read and one write of the 8 x 32 float32 activations
    assert fn["delta"]["eager"]["bytes"] == 3 * 2 * 8 * 32 * 4
    # values for one function given twice join, a later item replacing one of the same name
    code, out, _ = cli("diff", "HEAD", "--init", "Net.forward: config=Cfg(dim=32)",
                       "--init", "Net.forward: config=Cfg(dim=32, n_layer=3)", "--example", "Net.forward: x=randn(8, 32)")
    assert code == 0 and "Net.forward: eager 6 -> 9 kernels (+3), 25.0 KB -> 31.1 KB (+6.1 KB)" in out, out


def test_diff_input_errors(repo):
    code, _, err = cli("diff", "HEAD", "--init", "config=Cfg(dim=32)")
    assert code == 2 and "expected 'QUALNAME: NAME=EXPR ...'" in err
    code, out, _ = cli("diff", "HEAD", "--init", "Net.forward: config=Cfg(dm=32)")
    assert code == 2
    assert "Cfg() got an unexpected keyword argument 'dm'" in out
