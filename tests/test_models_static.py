"""nn.Module code without torch: the catalogue, classes, imports, symbolic loops, assumptions.

The figures themselves are held against the oracle in test_models_oracle.py; these tests pin what
the static side must understand and report, and run everywhere (no torch).
"""

from __future__ import annotations

import json
import textwrap
from importlib import resources
from pathlib import Path

import pytest

from kpredict.api import analyze_file, analyze_source
from kpredict.frontend.catalogue import catalogue_text
from kpredict.opfacts import default_table
from kpredict.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "fixtures" / "models"
CORPUS = ROOT / "fixtures" / "corpus"
CPU = Settings(target="cpu")


def fn(report, qualname: str):
    assert report.error is None, report.error
    return next(f for f in report.functions if f.qualname == qualname)


def test_every_catalogue_entry_has_a_source_and_generates_python() -> None:
    table = default_table()
    assert len(table.modules) >= 50
    for name, entry in {**table.modules, **table.functions}.items():
        assert entry.get("source"), name
    for name, entry in table.functions.items():
        assert entry.get("api") or name.startswith("_kp_"), name  # _kp_*: helpers of other entries' bodies
    compile(catalogue_text(table.modules, table.functions), "<catalogue>", "exec")


@pytest.mark.parametrize("module, expected", [
    ("nn.Linear(64, 32)", ["linear"]),
    ("nn.Linear(64, 32, bias=False)", ["linear"]),
    ("nn.LayerNorm(64)", ["layer_norm"]),
    ("nn.RMSNorm(64)", ["pow", "mean", "add_", "rsqrt", "mul", "mul"]),
    ("nn.Sequential(nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 64))", ["linear", "gelu", "linear"]),
    ("nn.Dropout(0.1)", []),
    ("nn.Identity()", []),
])
def test_modules_run_their_functional_ops(module: str, expected: list[str]) -> None:
    src = textwrap.dedent(f"""
        import torch
        from torch import nn
        m = {module}

        # kpredict: example x=randn(4, 16, 64)
        def f(x):
            return m(x)
    """)
    rep = analyze_source(src, "m.py", CPU, only="f")
    ops = [r.op for r in fn(rep, "f").ops if r.kernels]
    assert ops == expected
    assert not fn(rep, "f").unknown


def test_linear_parameters_have_their_shapes() -> None:
    src = textwrap.dedent("""
        import torch.nn as nn
        lin = nn.Linear(64, 32)

        # kpredict: example x=randn(8, 64)
        def f(x):
            return lin(x)
    """)
    f = fn(analyze_source(src, "m.py", CPU, only="f"), "f")
    # addmm reads x (8x64), weight (32x64), bias (32) and writes 8x32, all float32
    assert f.eager.bytes == 4 * (8 * 64 + 32 * 64 + 32 + 8 * 32)


def test_batchnorm_follows_the_mode() -> None:
    path = str(MODELS / "conv_bn_relu.py")
    ev = fn(analyze_file(path, Settings(target="cpu", mode="eval")), "ConvBNReLU.forward")
    tr = fn(analyze_file(path, Settings(target="cpu", mode="train")), "ConvBNReLU.forward")
    assert (ev.eager.kernels, tr.eager.kernels) == (3, 4)  # train also bumps num_batches_tracked


def test_self_training_and_dropout_follow_the_mode() -> None:
    path = str(MODELS / "mlp.py")
    ev = fn(analyze_file(path, Settings(target="cpu", mode="eval")), "MLP.forward")
    tr = fn(analyze_file(path, Settings(target="cpu", mode="train")), "MLP.forward")
    assert ev.eager.kernels == 3 and tr.eager.kernels == 6  # CPU dropout: bernoulli_, div_, mul


def test_helpers_and_layers_imported_from_other_files() -> None:
    f = fn(analyze_file(str(MODELS / "second_file.py"), CPU), "ImportedBlock.forward")
    assert not f.unknown
    assert f.eager.kernels == 33


def test_config_defaults_and_constructor_defaults_are_listed() -> None:
    rep = analyze_file(str(CORPUS / "nanogpt_model.py"), CPU)
    f = fn(rep, "GPT.forward")
    assert not f.unknown
    assert any("GPTConfig()" in a for a in f.assumptions)
    # hasattr(F, "scaled_dot_product_attention") is true: the flash path, one attention op per layer
    assert sum(1 for r in f.ops if r.op == "scaled_dot_product_attention") == 12


def test_unknown_trip_count_gives_symbolic_figures_and_dims_fix_them(tmp_path: Path) -> None:
    src = textwrap.dedent("""
        import torch.nn as nn

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
                return self.ln_f(x)
    """)
    f = fn(analyze_source(src, "net.py", CPU, only="Net.forward"), "Net.forward")
    assert f.eager.kernels == "1 + 3*n_layer"
    assert f.compiled.kernels == "1 + 2*n_layer"
    fixed = fn(analyze_source(src, "net.py", Settings(target="cpu", dims=(("n_layer", 4),)), only="Net.forward"),
               "Net.forward")
    assert (fixed.eager.kernels, fixed.compiled.kernels) == (13, 9)
    # the text table's transfers column is reads + writes summed as an expression, and equals the
    # transfers of the run with the symbol given
    from kpredict.ir import Report
    from kpredict.render.text_report import render as render_text
    from kpredict.symbolic import _terms, add_counts

    total = add_counts(f.eager.reads, f.eager.writes)
    const, coefs = _terms(total)  # type: ignore[misc]
    assert const + 4 * coefs.get("n_layer", 0) == fixed.eager.reads + fixed.eager.writes
    assert f" {total} " in render_text(Report("cpu", [analyze_source(src, "net.py", CPU, only="Net.forward")]))
    from kpredict.render.json_report import render

    doc = json.loads(render(Report("cpu", [analyze_source(src, "net.py", CPU)])))
    schema = json.loads(resources.files("kpredict.schema").joinpath("report.schema.json").read_text())
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, schema)


def test_graph_breaks_in_model_code() -> None:
    f = fn(analyze_file(str(MODELS / "graph_breaks.py"), CPU), "AdaptiveScale.forward")
    assert [b.reason for b in f.compiled.graph_breaks] == ["Tensor.item() reads a value back to the host"]
    src = textwrap.dedent("""
        import numpy as np

        # kpredict: example x=randn(8)
        def f(x):
            y = x.relu()
            z = np.tanh(y)
            return y * 2
    """)
    g = fn(analyze_source(src, "m.py", CPU), "f")
    assert [u.name for u in g.unknown] == ["numpy.tanh"]
    assert g.compiled.graphs == 2


def test_every_model_fixture_is_understood() -> None:
    for path in sorted(MODELS.glob("*.py")):
        rep = analyze_file(str(path), CPU)
        assert rep.error is None, (path, rep.error)
        for f in rep.functions:
            assert not f.unknown, (path.name, f.qualname, f.unknown)
