"""Values given as Python expressions on verify's side (issue 28): the child evaluates `--init` and
`--example` with `eval` in the imported user module, the static side with the abstract interpreter,
and both agree. Needs torch; each test runs one child with --eager-only (about 5 s)."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kpredict.verify.command import verify_command

pytest.importorskip("torch")

MODELS = Path(__file__).resolve().parent.parent / "fixtures" / "models"

TOWER = """\
    import torch.nn as nn
    from mypkg.configs import TinyConfig


    class Tower(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(config.dim, config.dim) for _ in range(config.num_hidden_layers)])
            self.act = nn.SiLU() if config.act == "silu" else nn.GELU()

        # kpredict: example x=randn(4, 32)
        def forward(self, x):
            for blk in self.blocks:
                x = self.act(blk(x))
            return x
    """


def _verify(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(verify_command, ["--device", "cpu", "--eager-only", "--output-format", "json", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture
def tower(tmp_path: Path) -> Path:
    """A model whose constructor takes a config of the package fixtures/models/mypkg (copied)."""
    shutil.copytree(MODELS / "mypkg", tmp_path / "mypkg")
    p = tmp_path / "tower.py"
    p.write_text(textwrap.dedent(TOWER))
    return p


def test_a_config_object_given_by_init(tower: Path) -> None:
    code, doc = _verify("--init", "config=TinyConfig(n_layer=2, act='silu')", f"{tower}::Tower.forward")
    assert doc["error"] is None, doc["error"]
    fn = doc["functions"][0]
    assert fn["measured"]["eager"]["kernels"] == 4  # two linears, two silus
    assert code == 0, fn


def test_a_tuple_of_tensors_and_a_dtype_given_by_example(tower: Path) -> None:
    code, doc = _verify("--init", "config=TinyConfig(n_layer=1)",
                        "--example", "x=torch.randn(2, 32).to(torch.float32)", f"{tower}::Tower.forward")
    assert doc["error"] is None, doc["error"]
    assert doc["functions"][0]["measured"]["eager"]["kernels"] == 2
    assert code == 0


def test_a_name_the_file_does_not_define_is_one_line_on_both_sides(tower: Path) -> None:
    code, doc = _verify("--init", "config=TinyConfg(n_layer=2)", f"{tower}::Tower.forward")
    assert code == 2
    assert doc["error"]["kind"] == "init"
    assert "TinyConfg" in doc["error"]["message"] and "\n" not in doc["error"]["message"]
    assert any("name 'TinyConfg' is not defined" in n for n in doc.get("notes") or []), doc.get("notes")
