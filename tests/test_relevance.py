"""Files that are not PyTorch code (no torch import in them or in the tree's modules they import)
are reported as skipped, not analyzed with every parameter taken as a tensor; --all-files, the
config key `all-files` and a named function (`file.py::f`) analyze them anyway."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kpredict.api import NOT_TORCH, analyze_source
from kpredict.cli import main
from kpredict.frontend.parse import parse_module
from kpredict.frontend.relevance import uses_torch
from kpredict.settings import Settings

PLAIN = "def f(a, b):\n    return (a + b).relu()\n"


def _uses(text: str, path: str = "<string>") -> bool:
    return uses_torch(parse_module(text, path))


@pytest.mark.parametrize("text", [
    "import torch\n",
    "import os, torch.nn as nn\n",
    "from torch import nn\n",
    "from transformers.modeling_utils import PreTrainedModel\n",
    "import timm\n",
    "def f(x):\n    import torch\n    return torch.relu(x)\n",
    "try:\n    import torchvision\nexcept ImportError:\n    pass\n",
    "# kpredict: example x=randn(8)\ndef f(x):\n    return x.relu()\n",  # shapes given: tensors
])
def test_a_torch_import_anywhere_makes_the_file_pytorch_code(text):
    assert _uses(text)


@pytest.mark.parametrize("text", [
    PLAIN,
    "import numpy as np\n\ndef f(a):\n    return np.exp(a)\n",
    "import torchish\nfrom mytorch import x\n",  # names that only start like torch
    "x = 'import torch'\n",  # not an import statement
    "",
])
def test_no_torch_import_is_not_pytorch_code(text):
    assert not _uses(text)


def test_plain_file_is_skipped_and_analyzed_on_request():
    r = analyze_source(PLAIN, "plain.py")
    assert r.skipped == NOT_TORCH and r.functions == [] and r.error is None
    forced = analyze_source(PLAIN, "plain.py", Settings(all_files=True))
    assert forced.skipped is None
    f = forced.functions[0]
    assert (f.eager.kernels, f.compiled.kernels) == (2, 1)
    named = analyze_source(PLAIN, "plain.py", only="f")  # asked for by name: analyzed
    assert named.skipped is None and named.functions[0].eager.kernels == 2


def test_a_local_module_that_imports_torch_makes_its_importers_pytorch_code(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "layers.py").write_text("import torch\n\ndef act(x):\n    return torch.relu(x)\n")
    (tmp_path / "pkg" / "middle.py").write_text("from .layers import act\n")
    user = tmp_path / "pkg" / "model.py"
    user.write_text("from .middle import act\n\ndef f(a):\n    return act(a + 1)\n")
    r = analyze_source(user.read_bytes(), str(user))
    assert r.skipped is None
    assert r.functions[0].eager.kernels == 2  # add, then relu in the helper two files away


def test_import_cycles_without_torch_end(tmp_path):
    (tmp_path / "a.py").write_text("from b import g\n\ndef f(x):\n    return x + 1\n")
    (tmp_path / "b.py").write_text("from a import f\n\ndef g(x):\n    return x * 2\n")
    for name in ("a.py", "b.py"):
        p = tmp_path / name
        assert analyze_source(p.read_bytes(), str(p)).skipped == NOT_TORCH


def _project(tmp_path: Path) -> Path:
    (tmp_path / "plain.py").write_text(PLAIN)
    (tmp_path / "util.py").write_text("def g(x):\n    return x * 2\n")
    (tmp_path / "model.py").write_text("import torch\n\n\ndef f(a, b):\n    return torch.relu(a + b)\n")
    return tmp_path


def test_report_text_json_and_flag(tmp_path, monkeypatch):
    monkeypatch.chdir(_project(tmp_path))
    run = CliRunner().invoke
    text = run(main, ["report", "--no-cache", "-j", "1", "."])
    assert text.exit_code == 0, text.output
    assert "model.py" in text.output and "  f (line 4)" in text.output
    assert "2 files: not analyzed: no torch import reached (--all-files analyzes them" in text.output
    assert "plain.py" not in text.output
    verbose = run(main, ["report", "--no-cache", "-j", "1", "-v", "."])
    assert "plain.py: skipped: not PyTorch code" in verbose.output
    doc = json.loads(run(main, ["report", "--no-cache", "-j", "1", "--format", "json", "."]).output)
    by = {Path(f["path"]).name: f for f in doc["files"]}
    assert by["plain.py"]["skipped"] == NOT_TORCH and by["plain.py"]["functions"] == []
    assert by["model.py"]["skipped"] is None
    doc = json.loads(run(main, ["report", "--no-cache", "-j", "1", "--format", "json", "--all-files", "."]).output)
    by = {Path(f["path"]).name: f for f in doc["files"]}
    assert by["plain.py"]["skipped"] is None and by["plain.py"]["functions"][0]["eager"]["kernels"] == 2


def test_all_files_from_config_and_a_bad_value(tmp_path, monkeypatch):
    monkeypatch.chdir(_project(tmp_path))
    (tmp_path / "pyproject.toml").write_text("[tool.kpredict]\nall-files = true\n")
    doc = json.loads(CliRunner().invoke(main, ["report", "--no-cache", "-j", "1", "--format", "json", "."]).output)
    assert all(f["skipped"] is None for f in doc["files"])
    (tmp_path / "pyproject.toml").write_text("[tool.kpredict]\nall-files = 'yes'\n")
    bad = CliRunner().invoke(main, ["check", "--no-cache", "-j", "1", "."])
    assert bad.exit_code == 2 and "all-files must be true or false" in bad.output


def test_the_cache_keeps_flag_and_default_apart(tmp_path, monkeypatch):
    monkeypatch.chdir(_project(tmp_path))
    args = ["report", "-j", "1", "--format", "json", "--cache-dir", str(tmp_path / "cache"), "plain.py"]
    first = json.loads(CliRunner().invoke(main, args).output)["files"][0]
    forced = json.loads(CliRunner().invoke(main, [*args, "--all-files"]).output)["files"][0]
    again = json.loads(CliRunner().invoke(main, args).output)["files"][0]
    assert first["skipped"] == again["skipped"] == NOT_TORCH
    assert forced["skipped"] is None and forced["functions"]


def test_helpers_of_a_skipped_file_are_followed_from_pytorch_code(tmp_path):
    (tmp_path / "helpers.py").write_text("def double_relu(x):\n    return (x * 2).relu()\n")
    model = tmp_path / "model.py"
    model.write_text("import torch\nfrom helpers import double_relu\n\n\ndef f(a):\n    return double_relu(a + 1)\n")
    assert analyze_source((tmp_path / "helpers.py").read_bytes(), str(tmp_path / "helpers.py")).skipped == NOT_TORCH
    f = analyze_source(model.read_bytes(), str(model)).functions[0]
    assert (f.eager.kernels, f.compiled.kernels) == (3, 1)  # add, mul, relu; one fused kernel
