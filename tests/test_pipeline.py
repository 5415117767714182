"""The static pipeline end to end, without torch: the seed's figures, the report contract, bad input.

The seed's numbers here are the tutorial's own (shared/seed): 2 eager kernels and 5 transfers,
1 fused kernel and 3 transfers; tests/test_fixtures_oracle.py checks the same functions against
torch on CPU, and the CUDA kernel name is checked on a GPU when one is lent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kpredict.api import analyze_file, analyze_source
from kpredict.cli import main
from kpredict.settings import Settings

REPO = Path(__file__).resolve().parent.parent
SEED = REPO / "fixtures" / "seed"
SCHEMA = json.loads((REPO / "kpredict" / "schema" / "report.schema.json").read_text())


def _fn(path: Path, qual: str, target: str = "cuda"):
    rep = analyze_file(path, Settings(target=target))
    assert rep.error is None, rep.error
    return next(f for f in rep.functions if f.qualname == qual)


@pytest.mark.parametrize("name", ["seed.py", "add_relu.py"])
def test_seed_add_relu_cuda(name: str) -> None:
    fn = _fn(SEED / name, "add_relu")
    assert (fn.eager.kernels, fn.eager.reads + fn.eager.writes, fn.eager.bytes) == (2, 5, 20_000_000)
    c = fn.compiled
    assert (c.kernels, c.reads + c.writes, c.bytes) == (1, 3, 12_000_000)
    assert c.kernel_names == ["triton_poi_fused_add_relu_0"]


def test_seed_add_relu_cpu_names() -> None:
    fn = _fn(SEED / "add_relu.py", "add_relu", "cpu")
    assert fn.compiled.kernel_names == ["cpp_fused_add_relu_0"]


def test_seed_add() -> None:
    fn = _fn(SEED / "add.py", "add")
    assert (fn.eager.kernels, fn.eager.reads, fn.eager.writes, fn.eager.bytes) == (1, 2, 1, 12_000_000)


def test_shapes_flow_from_module_level_calls() -> None:
    src = "import torch\ndef f(a):\n    return a * 2\nx = torch.randn(10, 20, dtype=torch.float16)\nf(x)\n"
    fn = next(f for f in analyze_source(src).functions if f.qualname == "f")
    assert fn.eager.bytes == 2 * 200 * 2


def test_views_and_python_values_launch_nothing() -> None:
    src = (
        "import torch\n"
        "def f(x):\n"
        "    n = x.shape[0] // 2 + len(x)\n"
        "    y = x.view(-1).t().unsqueeze(0)[..., :n]\n"
        "    return y\n"
    )
    fn = analyze_source(src).functions[0]
    assert fn.eager.kernels == 0 and fn.compiled.kernels == 0


def test_graph_break_splits_compiled_region() -> None:
    src = "import torch\ndef f(a):\n    s = a.sum().item()\n    return a * s\n"
    fn = analyze_source(src, settings=Settings(target="cpu")).functions[0]
    assert fn.compiled.graphs == 2
    assert [b.line for b in fn.compiled.graph_breaks] == [3]
    assert fn.eager.syncs == 1


def test_an_unresolved_calls_result_is_what_later_ops_read_in_every_layer() -> None:
    """Attention from a registry kpredict cannot read (a kernels library): the call is a placeholder
    op, and what is computed from its result (unpacked, reshaped, projected, returned and added) reads
    the placeholder's output, in each of three layers, the two replayed ones included (their tensors
    are remapped, not the first layer's). Checked on the op graph: which op reads which tensor is not
    a torch figure."""
    from kpredict.frontend.entry import build_graphs
    from kpredict.frontend.parse import parse_module
    from kpredict.opfacts import load_table

    src = (
        "import torch\n"
        "import torch.nn as nn\n"
        "from attention_kernels import REGISTRY\n"
        "class Attn(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.qkv = nn.Linear(64, 192)\n"
        "        self.o = nn.Linear(64, 64)\n"
        "    def forward(self, x):\n"
        "        q, k, v = self.qkv(x).chunk(3, dim=-1)\n"
        "        fn = REGISTRY.get_interface('sdpa')\n"
        "        out, weights = fn(self, q, k, v)\n"
        "        return self.o(out.reshape(x.shape).contiguous()), weights\n"
        "class Model(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.layers = nn.ModuleList([Attn() for _ in range(3)])\n"
        "    def forward(self, x):\n"
        "        for layer in self.layers:\n"
        "            y, w = layer(x)\n"
        "            x = x + y + w\n"
        "        return x\n"
    )
    fg = next(g for g in build_graphs(parse_module(src, "m.py"), load_table(), Settings(target="cpu"))
              if g.qualname == "Model.forward")
    ops = [op for op in fg.ops if op.name in ("unknown", "linear", "add")]
    assert [op.name for op in ops] == ["linear", "unknown", "linear", "add", "add"] * 3
    producer = {v: op for op in fg.ops for v in op.outputs}

    def feeds(op) -> set[int]:
        """The listed ops whose results `op` reads, through views and copies only."""
        stack, seen, found = list(op.inputs), set(), set()
        while stack:
            p = producer.get(stack.pop())
            if p is None or p.oid in seen:
                continue
            seen.add(p.oid)
            if p in ops:
                found.add(ops.index(p))
            else:
                stack.extend(p.inputs)
        return found

    for layer in range(3):
        i = 5 * layer
        assert feeds(ops[i]) == ({i - 1} if layer else set())  # the previous layer's output
        assert feeds(ops[i + 1]) == {i}  # the call reads this layer's q, k, v
        assert feeds(ops[i + 2]) == {i + 1}  # the output projection reads the call's result
        assert feeds(ops[i + 3]) == ({i - 1, i + 2} if layer else {i + 2})
        assert feeds(ops[i + 4]) == {i + 3, i + 1}  # `+ w`: the call's second result, returned by the layer


def test_a_torch_call_kpredict_does_not_know_keeps_its_inputs_and_splits_fusion() -> None:
    """`torch.ops.mylib.mystery(a)`: counted as 0 kernels and reported as not understood, but under
    torch.compile the mul that makes `a` still runs (it was dropped as dead code), and the two muls
    reading `cos` on either side of the call are not one kernel (the second depends on the call).
    Not checkable on CPU (the op does not exist); what holds is Inductor's rule that a kernel never
    contains both the inputs and the users of an op it does not generate."""
    src = (
        "import torch\n"
        "# kpredict: example x=randn(64, 64) cos=randn(64, 64)\n"
        "def f(x, cos):\n"
        "    a = x * cos\n"
        "    b = torch.ops.mylib.mystery(a)\n"
        "    return b.sin() * cos\n"
    )
    fn = analyze_source(src, settings=Settings(target="cpu")).functions[0]
    assert [u.name for u in fn.unknown] == ["torch.ops.mylib.mystery"]
    assert fn.eager.kernels == 3
    assert fn.compiled.kernels == 2
    rows = {(r.span.line, r.op): r.group for r in fn.ops}
    assert rows[(4, "mul")] is not None and rows[(4, "mul")] != rows[(6, "mul")]


def _validate(doc: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, SCHEMA)


def test_json_report_validates_for_every_fixture() -> None:
    paths = sorted(str(p) for p in (REPO / "fixtures").rglob("*.py"))
    for target in ("cuda", "cpu"):
        res = CliRunner().invoke(main, ["--format", "json", "--target", target, *paths])
        assert res.exit_code in (0, 1), res.output
        doc = json.loads(res.stdout)
        _validate(doc)
        assert doc["schema"] == "kpredict/report/v1" and doc["target"] == target


def test_unparsable_file_is_one_line_and_others_go_on(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    good = tmp_path / "good.py"
    good.write_text("import torch\n\n\ndef g(a, b):\n    return a + b\n")
    res = CliRunner().invoke(main, [str(bad), str(good)])
    assert res.exit_code == 2
    assert f"{bad}: error: line 1: syntax error" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert "g (line 4)" in res.stdout


def test_report_is_the_default_command_and_qualname_selects(tmp_path: Path) -> None:
    p = tmp_path / "m.py"
    p.write_text("def f(a):\n    return a.relu()\n\ndef g(a):\n    return a.exp()\n")
    res = CliRunner().invoke(main, [f"{p}::g"])
    assert res.exit_code == 0
    assert "g (line 4)" in res.stdout and "f (line 1)" not in res.stdout
    res = CliRunner().invoke(main, [f"{p}::nope"])
    assert res.exit_code == 2 and "no function named 'nope'" in res.stderr


def test_report_shows_findings_and_exits_1(tmp_path: Path) -> None:
    p = tmp_path / "chain.py"
    p.write_text("import torch\n\n# kpredict: example x=randn(64, 64)\ndef f(x):\n    return x.sin().cos().exp()\n")
    res = CliRunner().invoke(main, [str(p), "--no-cache"])
    assert res.exit_code == 1, res.output
    assert "KP101 line 5:" in res.stdout and "fused they would be 1 kernel" in res.stdout
    doc = json.loads(CliRunner().invoke(main, ["--format", "json", "--no-cache", str(p)]).stdout)
    _validate(doc)
    assert [x["code"] for x in doc["files"][0]["findings"]] == ["KP101"]
