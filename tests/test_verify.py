"""`kpredict verify`: the child process, its failure modes, the comparison, the renderers and the schema.

Most runs use --eager-only: a compiled measurement costs ~10 s of Inductor warm-up in each fresh
child process, so only the seed test compiles.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kpredict.ir import CompiledFigures, Figures, FunctionReport, OpRow, Span
from kpredict.examples import comment_block
from kpredict.verify.annotations import annotations_for, definitions
from kpredict.verify.command import verify_command
from kpredict.verify.render import render_json, render_text, result_dict
from kpredict.verify.runner import FunctionCheck, VerifyResult, compare, normalize_name

REPO = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((REPO / "kpredict" / "schema" / "verify.schema.json").read_text())


def _validate(doc: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, SCHEMA)


def _write(tmp_path: Path, name: str, src: str) -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(src))
    return p


def _verify(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(verify_command, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


# ---------------------------------------------------------------------------------- annotations (no torch)


def test_annotations_from_comments_pyproject_and_init(tmp_path):
    src = textwrap.dedent("""\
        import torch

        # an ordinary comment
        # kpredict: example a=randn(8)
        # kpredict: example b=randn(8)
        @torch.no_grad()
        def f(a, b):
            return a + b

        # kpredict: init d=4
        class M:
            def __init__(self, d):
                self.d = d

            # kpredict: example x=randn(4)
            def forward(self, x):
                return x * self.d

        def g(x):
            return x
        """)
    path = _write(tmp_path, "mod.py", src)
    (tmp_path / "pyproject.toml").write_text('[tool.kpredict.examples]\n"mod.py::g" = "x=randn(3)"\n')
    assert definitions(src)["M.forward"][1] == "def"
    f = annotations_for(path, "f")
    assert (f.example, f.example_source) == ("a=randn(8) b=randn(8)", "comment")
    m = annotations_for(path, "M.forward")
    assert (m.example, m.init, m.init_source) == ("x=randn(4)", "d=4", "comment")
    g = annotations_for(path, "g")
    assert (g.example, g.example_source) == ("x=randn(3)", "pyproject")
    assert comment_block(src.splitlines(), 1) == {}


# ---------------------------------------------------------------------------------- comparing (no torch)


def _report(ek=2, er=3, ew=2, eb=20_000_000, ck=1, names=("cpp_fused_add_relu_0",)) -> FunctionReport:
    span = Span(3, 4, 3, 20)
    return FunctionReport(
        qualname="add_relu", line=2, eager=Figures(ek, er, ew, eb, 0),
        compiled=CompiledFigures(ck, 2, 1, 12_000_000, 0, 1, [], list(names)),
        ops=[OpRow(span, "add", "pointwise", 1, 2, 1, 0), OpRow(span, "relu", "pointwise", 1, 1, 1, 0)])


_MEASURED = {
    "eager": {"kernels": 2, "reads": 3, "writes": 2, "bytes": 20_000_000, "syncs": 0, "names": ["add", "relu"],
              "ops": [{"name": "add", "kind": "kernel", "reads": 2, "writes": 1, "bytes": 12_000_000, "line": 3},
                      {"name": "relu", "kind": "kernel", "reads": 1, "writes": 1, "bytes": 8_000_000, "line": 3}]},
    "compiled": {"kernels": 1, "names": ["cpp_fused_add_relu_0"], "graphs": 1, "graph_breaks": [], "syncs": 0,
                 "detail": [{"name": "cpp_fused_add_relu_0", "kind": "generated", "graph": 0}]},
}


def _result(pred: FunctionReport | None) -> VerifyResult:
    rows, match = compare(pred, _MEASURED)
    fc = FunctionCheck("m.py", "add_relu", 2, pred, _MEASURED, rows, match)
    return VerifyResult("m.py", "add_relu", "cpu", "x86_64", "2.13.0", [fc])


def test_compare_match_and_render():
    res = _result(_report())
    assert res.exit_code == 0
    text = render_text(res)
    assert "add_relu (line 2): match" in text and "✗" not in text
    doc = json.loads(render_json(res))
    _validate(doc)
    assert doc["functions"][0]["predicted"]["eager"]["kernels"] == 2
    assert doc["functions"][0]["match"] is True


def test_compare_mismatch_shows_the_row_and_the_lines():
    res = _result(_report(ek=3, names=("cpp_fused_add_0", "cpp_fused_relu_1")))
    assert res.exit_code == 1
    text = render_text(res)
    row = next(line for line in text.splitlines() if "eager kernels" in line)
    assert row.split()[-1] == "✗" and " 3 " in row
    assert "by line:" in text and "MISMATCH" in text
    _validate(result_dict(res))


def test_names_do_not_decide_and_bytes_unknown_is_skipped():
    res = _result(_report(eb=None, names=("cpp_fused_relu_add_0",)))
    assert res.exit_code == 0
    names = next(r for r in res.functions[0].rows if r.label == "kernel names")
    assert names.ok is False and not names.decides


def test_no_prediction_is_a_mismatch():
    res = _result(None)
    assert res.exit_code == 1
    _validate(result_dict(res))


def test_normalize_name():
    assert {normalize_name(n) for n in ("aten::mm", "ext:mm", "extern_kernels.mm", "mm")} == {"mm"}
    assert normalize_name("fallback:randint(seeds)") == "randint"


# ---------------------------------------------------------------------------------- running code (torch)


torch_needed = pytest.mark.oracle


@torch_needed
def test_seed_function_mode_matches(tmp_path):
    pytest.importorskip("torch")
    code, out, _ = _verify("--device", "cpu", "--format", "json", str(REPO / "fixtures/seed/add_relu.py::add_relu"))
    doc = json.loads(out)
    _validate(doc)
    f = doc["functions"][0]
    m = f["measured"]
    assert (m["eager"]["kernels"], m["eager"]["reads"], m["eager"]["writes"], m["eager"]["bytes"]) == (2, 3, 2, 20_000_000)
    assert m["compiled"]["names"] == ["cpp_fused_add_relu_0"]
    assert code == (0 if f["match"] else 1)


@torch_needed
def test_timeout(tmp_path):
    pytest.importorskip("torch")
    p = _write(tmp_path, "slow.py", """\
        import time

        # kpredict: example x=randn(4)
        def slow(x):
            y = x + 1
            time.sleep(120)
            return y
        """)
    code, out, _ = _verify("--device", "cpu", "--timeout", "5", "--eager-only", f"{p}::slow")
    assert code == 2
    assert "did not finish within 5 s" in out


@torch_needed
def test_exception_in_user_code_shows_user_frames_and_keeps_measurement(tmp_path):
    pytest.importorskip("torch")
    p = _write(tmp_path, "bad.py", """\
        def helper(y):
            raise ValueError("shapes do not line up")

        # kpredict: example x=randn(4)
        def bad(x):
            y = x + 1
            return helper(y)
        """)
    code, out, _ = _verify("--device", "cpu", "--eager-only", "--format", "json", f"{p}::bad")
    assert code == 2
    doc = json.loads(out)
    _validate(doc)
    err = doc["error"]
    assert err["kind"] == "user" and err["message"] == "ValueError: shapes do not line up"
    tb = err["traceback"]
    assert "bad.py" in tb and "in bad" in tb and "in helper" in tb
    assert "kpredict" not in tb.replace(str(tmp_path), "") and "torch" not in tb
    assert doc["functions"][0]["measured"]["eager"]["names"] == ["add"]


@torch_needed
def test_missing_example_inputs_names_the_parameters(tmp_path):
    pytest.importorskip("torch")
    p = _write(tmp_path, "noex.py", """\
        def f(a, b, scale=2.0):
            return (a + b) * scale
        """)
    code, out, _ = _verify("--device", "cpu", "--eager-only", f"{p}::f")
    assert code == 2
    assert "needs example inputs for: a, b" in out
    code, out, _ = _verify("--device", "cpu", "--eager-only", "--example", "a=randn(4)", f"{p}::f")
    assert code == 2 and "needs example inputs for: b" in out


@torch_needed
def test_module_needing_constructor_args(tmp_path):
    pytest.importorskip("torch")
    p = _write(tmp_path, "mlp.py", """\
        import torch
        from torch import nn


        class Scale(nn.Module):
            def __init__(self, d, factor=2.0):
                super().__init__()
                self.w = nn.Parameter(torch.ones(d))
                self.factor = factor

            # kpredict: example x=randn(8, 16)
            def forward(self, x):
                return x * self.w * self.factor
        """)
    code, out, _ = _verify("--device", "cpu", "--eager-only", f"{p}::Scale.forward")
    assert code == 2
    assert "Scale(...) needs constructor arguments: d" in out and "--init" in out
    code, out, _ = _verify("--device", "cpu", "--eager-only", "--init", "d=16", "--format", "json", f"{p}::Scale.forward")
    doc = json.loads(out)
    _validate(doc)
    assert doc["error"] is None
    e = doc["functions"][0]["measured"]["eager"]
    assert (e["kernels"], e["names"]) == (2, ["mul", "mul"])
    assert code in (0, 1)


@torch_needed
def test_no_cuda_device_exits_3(tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    p = _write(tmp_path, "f.py", """\
        # kpredict: example a=randn(4)
        def f(a):
            return a + 1
        """)
    code, out, err = _verify("--device", "cuda", f"{p}::f")
    assert code == 3
    assert err.strip() == "kpredict: --device cuda: no CUDA device is available on this machine"
    assert out == ""


@torch_needed
def test_script_mode_attributes_ops_per_function_and_survives_prints(tmp_path):
    pytest.importorskip("torch")
    p = _write(tmp_path, "script.py", """\
        import torch

        def helper(x):
            return x * 2

        def f(x):
            y = helper(x)
            print("noise on stdout")
            return y.relu()

        a = torch.randn(16)
        f(a)
        f(a)
        """)
    code, out, _ = _verify("--device", "cpu", "--format", "json", str(p))
    doc = json.loads(out)
    _validate(doc)
    assert doc["error"] is None
    funcs = {f["qualname"]: f for f in doc["functions"]}
    assert funcs["f"]["calls"] == 2
    assert funcs["f"]["measured"]["eager"]["names"] == ["mul", "relu"]
    assert funcs["helper"]["measured"]["eager"]["names"] == ["mul"]
    assert code in (0, 1)


@torch_needed
def test_every_function_of_a_file_in_one_child(tmp_path):
    pytest.importorskip("torch")
    p = _write(tmp_path, "many.py", """\
        # kpredict: example a=randn(8) b=randn(8)
        def add(a, b):
            return a + b

        # kpredict: example x=randn(8)
        def broken(x):
            return x.no_such_method()

        def no_example(x):
            return x
        """)
    code, out, _ = _verify("--device", "cpu", "--eager-only", "--format", "json", f"{p}::*")
    doc = json.loads(out)
    _validate(doc)
    funcs = {f["qualname"]: f for f in doc["functions"]}
    assert set(funcs) == {"add", "broken"}
    assert funcs["add"]["measured"]["eager"]["names"] == ["add"] and funcs["add"]["error"] is None
    assert funcs["broken"]["error"]["kind"] == "user"
    assert code == 2


@torch_needed
def test_train_mode_is_measured_and_predicted_alike(tmp_path):
    pytest.importorskip("torch")
    p = _write(tmp_path, "drop.py", """\
        from torch import nn


        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(16, 16)
                self.drop = nn.Dropout(0.1)

            # kpredict: example x=randn(8, 16)
            def forward(self, x):
                y = self.drop(self.fc(x).relu())
                if self.training:
                    y = y * 2
                return y
        """)
    docs = {}
    for mode in ("eval", "train"):
        code, out, _ = _verify("--device", "cpu", "--eager-only", "--mode", mode, "--format", "json", f"{p}::Block.forward")
        doc = docs[mode] = json.loads(out)
        _validate(doc)
        assert doc["mode"] == mode and doc["error"] is None
        assert code == 0, [r for r in doc["functions"][0]["rows"] if r["ok"] is False]
    kernels = {m: d["functions"][0]["measured"]["eager"]["kernels"] for m, d in docs.items()}
    assert kernels["train"] > kernels["eval"], kernels  # dropout's mask and the training branch ran
    code, out, _ = _verify("--device", "cpu", "--eager-only", "--mode", "train", f"{p}::Block.forward")
    assert "train mode" in out.splitlines()[0]


@torch_needed
def test_out_of_memory_is_reported_as_such(tmp_path):
    pytest.importorskip("torch")
    p = _write(tmp_path, "oom.py", """\
        # kpredict: example x=randn(4)
        def greedy(x):
            y = x * 2
            raise MemoryError("cannot allocate 1 TB")
        """)
    code, out, _ = _verify("--device", "cpu", "--eager-only", "--format", "json", f"{p}::greedy")
    doc = json.loads(out)
    assert code == 2
    assert doc["error"]["kind"] == "oom" and "MemoryError" in doc["error"]["message"]
    assert doc["functions"][0]["measured"]["eager"]["names"] == ["mul"]


@torch_needed
def test_script_mode_measures_calls_through_torch_compile():
    pytest.importorskip("torch")
    code, out, _ = _verify("--device", "cpu", "--format", "json", str(REPO / "fixtures/seed/add_relu.py"))
    doc = json.loads(out)
    _validate(doc)
    funcs = {f["qualname"]: f for f in doc["functions"]}
    m = funcs["add_relu"]["measured"]
    assert (m["eager"]["kernels"], m["eager"]["bytes"]) == (2, 20_000_000)
    assert m["compiled"]["names"] == ["cpp_fused_add_relu_0"]
    module = funcs["<module>"]
    assert module["match"] and not any(r["decides"] for r in module["rows"])
    assert code == (0 if funcs["add_relu"]["match"] else 1)
