"""The CUDA launch definition (kpredict.verify.origin): a kernel of ATen's own code is a launch wherever
it runs; only kernels inside a cuBLAS/cuDNN call beyond its main one are `library_extra`. Held on
the kernel names an H200 ran (fixtures/observed/cuda-h200-torch-2.11.0+cu130.json), and on what
kpredict predicts for the two ATen kernels the old definition hid: a convolution's bias add after
cuDNN and an addmm's bias copy before a GEMV (`Linear(d, 1)`)."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest

from kpredict.api import analyze_file
from kpredict.settings import Settings
from kpredict.verify.origin import (
    RULE, RULE_KEY, compiled_library_extra, eager_library_extra, is_aten_kernel, library_extra,
    with_library_extra,
)
from kpredict.verify.runner import launches

REPO = Path(__file__).resolve().parent.parent
H200 = REPO / "fixtures" / "observed" / "cuda-h200-torch-2.11.0+cu130.json"


def _h200() -> dict:
    return json.loads(H200.read_text())


def _op_kernels(spec: str, op: str, line: int | None = None) -> list[list[str]]:
    """The raw kernel names of each call of `op` (eager) in one recorded function."""
    e = _h200()["functions"][spec]["eager"]
    names = iter(e["kernel_names"])
    out = []
    for o in e["ops"]:
        ks = [next(names) for _ in range(o["kernels"])]
        if o["name"] == op and (line is None or o["line"] == line):
            out.append(ks)
    return out


def test_aten_kernels_around_a_library_call_are_launches() -> None:
    (conv,) = _op_kernels("fixtures/models/functional_model.py::TinyAudioNet.forward", "convolution")
    main, bias_add = conv
    assert main.startswith("void implicit_convolve_sgemm") and not is_aten_kernel(main)
    assert "CUDAFunctor_add" in bias_add and is_aten_kernel(bias_add)
    assert library_extra(conv) == 0  # cuDNN's kernel and ATen's bias add: 2 launches
    gemv = _op_kernels("fixtures/models/moduledict_heads.py::MultiTask.forward", "addmm", 17)[1]
    assert "direct_copy_kernel" in gemv[0] and is_aten_kernel(gemv[0])  # the bias copied into the output
    assert "gemvx" in gemv[1] and not is_aten_kernel(gemv[1])
    assert library_extra(gemv) == 0
    dw = [ks for ks in _op_kernels("fixtures/models/mobilenet_block.py::InvertedResidual.forward", "convolution")
          if "conv_depthwise2d" in ks[0]]
    assert dw and all(len(ks) == 1 and is_aten_kernel(ks[0]) and library_extra(ks) == 0 for ks in dw)


def test_kernels_inside_a_library_call_are_library_extra() -> None:
    mm = _op_kernels("fixtures/models/swiglu.py::SwiGLUFFN.forward", "mm")[0]
    assert "splitKreduce_kernel" in mm[1] and not is_aten_kernel(mm[1])
    assert library_extra(mm) == 1
    addmm = _op_kernels("fixtures/models/transformer_block.py::Block.forward", "addmm")[0]
    assert addmm[0].startswith("void scal_kernel") and "epilogue" in addmm[2]
    assert library_extra(addmm) == 2  # scal and the epilogue beside the GEMM
    (convt,) = _op_kernels("fixtures/models/unet_blocks.py::Up.forward", "convolution", 45)
    assert "scalePackedTensor_kernel" in convt[0] and "dgrad_engine" in convt[1] and is_aten_kernel(convt[2])
    assert library_extra(convt) == 1  # cuDNN's transform is a helper; its bias add after it is a launch
    padding = [k["raw"] for k in _h200()["functions"]["fixtures/models/vit_patch.py::PatchEmbed.forward"]
               ["compiled"]["detail"] if k["name"] == "aten::convolution"]
    assert sum("nhwcAddPaddingKernel" in n for n in padding) == 2
    assert library_extra(padding) == 2


def test_recorded_phases_derive_the_same_counts() -> None:
    """The recorded observation holds the derived counts (scripts/collect_observed.py --rederive), and
    deriving them again changes nothing."""
    doc = _h200()
    fns = doc["functions"]
    for spec, measured in fns.items():
        for phase in ("eager", "compiled"):
            if measured.get(phase):
                assert measured[phase].get(RULE_KEY) == RULE, (spec, phase)
        assert with_library_extra(measured) == measured, spec
    # every bias convolution of the fixtures: cuDNN's kernel and ATen's add, 2 launches each
    tiny = fns["fixtures/models/functional_model.py::TinyAudioNet.forward"]["eager"]
    assert (tiny["kernels"], tiny["library_extra"], launches(tiny)) == (8, 0, 8)
    resnet = fns["fixtures/models/diffusion_resblock.py::ResnetBlock.forward"]["eager"]
    assert (resnet["kernels"], resnet["library_extra"]) == (18, 0)
    heads = fns["fixtures/models/moduledict_heads.py::MultiTask.forward"]
    assert launches(heads["eager"]) == 5 and launches(heads["compiled"]) == 5


def test_derivation_from_the_old_definition() -> None:
    """A phase recorded under the old definition (every kernel of a library op beyond its first taken
    off) gets the new count: exact per op eager, from the oracle's per-call count compiled."""
    heads = copy.deepcopy(_h200()["functions"]["fixtures/models/moduledict_heads.py::MultiTask.forward"])
    for phase in ("eager", "compiled"):
        heads[phase].pop(RULE_KEY)
        heads[phase]["library_extra"] = 1  # what the old definition recorded
    assert eager_library_extra(heads["eager"]) == 0
    assert compiled_library_extra(heads["compiled"]) == 0
    new = with_library_extra(heads)
    assert new["eager"][RULE_KEY] == RULE and new["compiled"]["library_extra"] == 0
    assert with_library_extra(new) == new
    # names that do not add up to the ops' counts are not guessed at
    assert eager_library_extra({**heads["eager"], "kernel_names": heads["eager"]["kernel_names"][:-1]}) is None
    # cpu phases carry no library_extra and are left alone
    cpu = {"eager": {"kernels": 3, "reads": 1}}
    assert with_library_extra(cpu) == cpu


def test_collect_observed_rederives_in_place(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("collect_observed", REPO / "scripts" / "collect_observed.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    key = "fixtures/models/small_cnn.py::SmallCNN.forward"
    measured = copy.deepcopy(_h200()["functions"][key])
    measured["eager"].pop(RULE_KEY)
    measured["eager"]["library_extra"] = 2  # the two bias adds, as the old definition took them off
    doc = {"functions": {key: measured}, "train": {}}
    changes = mod.rederive(doc)
    assert changes == [f"{key} eager: library_extra 2 -> 0"]
    assert doc["functions"][key]["eager"]["library_extra"] == 0


# ------------------------------------------------------------------------------------ predictions

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


# kpredict: init c=8
class Convs(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.nobias = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.dw = nn.Conv2d(c, c, 3, padding=1, groups=c)
        self.up = nn.ConvTranspose2d(c, c, 2, stride=2)
        self.c1 = nn.Conv1d(c, c, 3, padding=1)

    # kpredict: example x=randn(2, 8, 16, 16)
    def biased(self, x):
        return self.conv(x)

    # kpredict: example x=randn(2, 8, 16, 16)
    def unbiased(self, x):
        return self.nobias(x)

    # kpredict: example x=randn(2, 8, 16, 16)
    def depthwise(self, x):
        return self.dw(x)

    # kpredict: example x=randn(2, 8, 16, 16)
    def transposed(self, x):
        return self.up(x)

    # kpredict: example x=randn(2, 8, 32)
    def conv1d(self, x):
        return self.c1(x)


# kpredict: init d=32
class Heads(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.score = nn.Linear(d, 1)
        self.proj = nn.Linear(d, 16)

    # kpredict: example x=randn(8, 32)
    def score_only(self, x):
        return self.score(x)

    # kpredict: example x=randn(8, 32)
    def gated(self, x):
        return torch.sigmoid(self.score(x))

    # kpredict: example x=randn(8, 32)
    def wide(self, x):
        return self.proj(x)

    # kpredict: example x=randn(1, 32)
    def one_row(self, x):
        return self.proj(x)

    def unknown_rows(self, x):
        return self.proj(x)
'''


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, tuple[int, int]]]:
    p = tmp_path_factory.mktemp("origin") / "models.py"
    p.write_text(SOURCE)
    out = {}
    for target in ("cuda", "cpu"):
        rep = analyze_file(p, Settings(target=target))
        assert rep.error is None, rep.error
        out[target] = {f.qualname: (f.eager.kernels, f.compiled.kernels) for f in rep.functions}
    return out


@pytest.mark.parametrize("qual,cuda,cpu", [
    # cuda: cuDNN's kernel, then ATen's bias add; compiled: the bias is in the layout kernel after it
    ("Convs.biased", (2, 4), (1, 3)),
    ("Convs.unbiased", (1, 4), (1, 3)),
    ("Convs.depthwise", (1, 3), (1, 3)),  # ATen's depthwise kernel takes the bias itself
    ("Convs.transposed", (2, 4), (1, 3)),
    # conv1d: no layout copies; on cuda Inductor peels the bias off into a pointwise kernel
    ("Convs.conv1d", (2, 2), (1, 1)),
    # Linear(d, 1): ATen copies the bias into the output, then the GEMV (eager, and the extern addmm)
    ("Heads.score_only", (2, 2), (1, 1)),
    # ... unless Inductor makes it an mm plus a kernel adding the bias with the sigmoid
    ("Heads.gated", (3, 2), (2, 2)),
    ("Heads.wide", (1, 1), (1, 1)),  # no GEMM dim of 1: cuBLASLt adds the bias in its epilogue
    ("Heads.one_row", (2, 2), (1, 1)),
    ("Heads.unknown_rows", (1, 1), (1, 1)),  # a size not known is taken as not 1
])
def test_cuda_launches_of_bias_around_library_calls(reports: dict, qual: str, cuda: tuple, cpu: tuple) -> None:
    assert reports["cuda"][qual] == cuda
    assert reports["cpu"][qual] == cpu
