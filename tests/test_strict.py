"""--strict on report and check: a function whose figures rest on an assumed input or config is an
error (one line on stderr per function, exit 2); given values, signature defaults and the analysis'
own limits are not."""

from __future__ import annotations

import pytest

from kpredict.strict import assumed_input

MODEL = '''from dataclasses import dataclass

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


def _cli(*args: str) -> tuple[int, str, str]:
    from click.testing import CliRunner

    from kpredict.cli import main

    r = CliRunner().invoke(main, list(args))
    if r.exception and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("text, assumed", [
    ("x: tensor of unknown shape, float32", True),
    ("x: tensor of unknown shape, float32 (its default is None)", True),
    ("input_ids: int64 tensor of unknown shape (annotation torch.LongTensor)", True),
    ("n: not known statically (symbol n)", True),
    ("n: used as an int; not known statically (symbol n)", True),
    ("flag: a bool flag, not known statically (used as a condition); both branches analyzed", True),
    ("config: fields not known statically (symbols named after them)", True),
    ("config: GPTConfig() with its default values", True),
    ("GPTConfig() field defaults: n_layer=12, n_embd=768", True),
    ("# kpredict: init config=Missing(): name 'Missing' is not defined in m.py; config takes its default", True),
    ("dim = -1 (its default)", False),
    ("line 12: condition not known statically; the figures take the branch ...", False),
    ("line 3: loop count not known statically; the body is counted once", False),
    ("recursive call to f not followed", False),
])
def test_which_assumptions_are_assumed_inputs(text, assumed):
    assert assumed_input(text) is assumed


def test_report_strict(tmp_path):
    p = tmp_path / "model.py"
    p.write_text(MODEL)
    code, out, err = _cli("report", "--no-cache", str(p))
    assert code == 0 and "assumed: x: tensor of unknown shape" in out
    code, out, err = _cli("report", "--no-cache", "--strict", str(p))
    assert code == 2
    assert "Net.forward" in out  # the figures are still printed
    assert err.splitlines() == [
        f"{p}::Net.__init__: error: --strict: assumed config: Cfg() with its default values (and 1 more)",
        f"{p}::Net.forward: error: --strict: assumed config: Cfg() with its default values (and 2 more)",
    ]
    # values given: exact figures, exit 0 (n_layer's default inside a config given is not an assumption)
    code, out, err = _cli("report", "--no-cache", "--strict", f"{p}::Net.forward",
                          "--init", "config=Cfg(dim=32)", "--example", "x=randn(8, 32)")
    assert code == 0 and err == "", err


def test_check_strict(tmp_path):
    p = tmp_path / "model.py"
    p.write_text(MODEL)
    assert _cli("check", "--no-cache", str(p))[0] == 0
    code, _, err = _cli("check", "--no-cache", "--strict", str(p))
    assert code == 2 and f"{p}::Net.forward: error: --strict: assumed config: Cfg()" in err
    code, _, err = _cli("check", "--no-cache", "--strict", f"{p}::Net.forward",
                        "--init", "config=Cfg(dim=32)", "--example", "x=randn(8, 32)")
    assert code == 0, err


def test_strict_is_in_help():
    for cmd in ("report", "check"):
        code, out, _ = _cli(cmd, "--help")
        assert code == 0 and "--strict" in out and "assumed input" in out
