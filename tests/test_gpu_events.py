"""The cuda oracle's reading of profiler events, on events shaped as an H200 showed them.

Recorded with torch 2.11.0+cu130 on an NVIDIA H200 (scripts/gpu_session.sh lease, 2026-12-04):
  - a GPU kernel's `id` is its CUPTI correlation id, shared with the cudaLaunchKernel /
    cuLaunchKernel / cudaMemcpyAsync call that queued it; `linked_correlation_id` is absent;
  - an aten op's `id` is from another numbering and can equal a launch's (aten::relu and the
    add kernel's launch were both 8);
  - every record_function range (kpredict::op#N, kpredict::tensor_str) is mirrored on the GPU
    timeline as a CUDA-device event with is_user_annotation set: not a launch;
  - a cuBLAS mm of (8x1024) @ (1024x64) launched a cutlass kernel and a splitKreduce kernel.
Before this reading, every eager count on cuda was doubled and no kernel was linked to its op.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from kpredict.verify import oracle  # noqa: E402
from kpredict.verify import render  # noqa: E402
from kpredict.verify.runner import launches  # noqa: E402

CPU = torch.autograd.DeviceType.CPU
CUDA = torch.autograd.DeviceType.CUDA


@dataclass
class Range:
    start: float
    end: float


@dataclass(eq=False)
class Ev:
    name: str
    id: int
    device_type: Any = CPU
    cpu_parent: Ev | None = None
    is_user_annotation: bool = False
    time_range: Range = field(default_factory=lambda: Range(0.0, 0.0))
    cpu_children: list = field(default_factory=list)


class Trace:
    """Events in the order a profile lists them, with a clock for the GPU side."""

    def __init__(self) -> None:
        self.events: list[Ev] = []
        self.t = 0.0

    def cpu(self, name: str, id: int, parent: Ev | None = None, annotation: bool = False) -> Ev:
        e = Ev(name, id, CPU, parent, annotation)
        self.events.append(e)
        return e

    def gpu(self, name: str, id: int, annotation: bool = False) -> Ev:
        self.t += 1.0
        e = Ev(name, id, CUDA, None, annotation, Range(self.t, self.t + 0.5))
        self.events.append(e)
        return e


def _row(name: str) -> dict:
    return {"name": name, "kind": "kernel", "reads": 1, "writes": 1, "bytes": 4, "line": 1, "function": "f"}


def test_eager_kernels_are_linked_to_their_ops_and_annotations_are_not_kernels() -> None:
    tr = Trace()
    add = tr.cpu("aten::add", 1)
    r0 = tr.cpu("kpredict::op#0", 3, add, annotation=True)
    add_in = tr.cpu("aten::add", 4, r0)
    tr.cpu("cudaLaunchKernel", 8, add_in)
    tr.gpu("void at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>>", 8)
    tr.gpu("kpredict::op#0", 3, annotation=True)
    relu = tr.cpu("aten::relu", 8)  # the same number as the add kernel's launch
    r1 = tr.cpu("kpredict::op#1", 7, relu, annotation=True)
    clamp = tr.cpu("aten::clamp_min", 9, tr.cpu("aten::relu", 10, r1))
    tr.cpu("cudaLaunchKernel", 20, clamp)
    tr.gpu("void at::native::vectorized_elementwise_kernel<4, clamp_scalar>", 20)
    mm = tr.cpu("aten::mm", 11)
    r2 = tr.cpu("kpredict::op#2", 13, mm, annotation=True)
    mm_in = tr.cpu("aten::mm", 14, r2)
    tr.cpu("cuLaunchKernel", 40, mm_in)
    tr.gpu("void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1>", 40)
    tr.cpu("cudaLaunchKernelExC", 42, mm_in)
    tr.gpu("void cublasLt::splitKreduce_kernel<32, 16, int, float>", 42)
    clone = tr.cpu("aten::clone", 27)
    r3 = tr.cpu("kpredict::op#3", 29, clone, annotation=True)
    copy = tr.cpu("aten::copy_", 32, tr.cpu("aten::clone", 30, r3))
    tr.cpu("cudaMemcpyAsync", 87, copy)
    tr.gpu("Memcpy DtoD (Device -> Device)", 87)
    shown = tr.cpu(oracle.PRINT_RANGE, 524, annotation=True)
    tr.cpu("cudaLaunchKernel", 23704, tr.cpu("aten::abs", 530, shown))
    tr.gpu(oracle.PRINT_RANGE, 524, annotation=True)
    tr.gpu("void at::native::vectorized_elementwise_kernel<4, AbsFunctor<float>>", 23704)

    rows = [_row("add"), _row("relu"), _row("mm"), _row("clone")]
    result = oracle.summarize_eager(rows)
    oracle._attribute_gpu_eager(result, rows, tr.events)

    assert [r["kernels"] for r in rows] == [1, 1, 2, 0]
    assert result["kernels"] == 4  # add, relu, cutlass, splitKreduce: not the annotations, not the print
    assert result["library_extra"] == 1  # the split-K reduction beside the mm's main kernel
    assert launches(result) == 3
    assert (result["memcpy"], result["memset"]) == (1, 0)
    assert not any(n.startswith("kpredict::") for n in result["kernel_names"])
    shown = render._measured_json({"eager": result, "compiled": None})["eager"]
    assert shown["library_extra"] == 1  # the JSON answer keeps it: collect_observed and the tests read it


def test_compiled_kernels_name_their_extern_call_and_skip_printing() -> None:
    tr = Trace()
    region = tr.cpu("Torch-Compiled Region: 0/0", 514)
    graph = tr.cpu(oracle.COMPILED_GRAPH_ROW + " None ##", 517, region)
    tr.cpu("cuLaunchKernel", 23646, tr.cpu("triton_poi_fused_add_relu_0", 518, graph))
    tr.gpu("triton_poi_fused_add_relu_0", 23646)
    mm = tr.cpu("aten::mm", 519, graph)
    tr.cpu("cuLaunchKernel", 23661, mm)
    tr.gpu("void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1>", 23661)
    tr.cpu("cudaLaunchKernelExC", 23663, mm)
    tr.gpu("void cublasLt::splitKreduce_kernel<32, 16, int, float>", 23663)
    tr.cpu("cuLaunchKernel", 23669, tr.cpu("triton_poi_fused_sin_1", 520, graph))
    tr.gpu("triton_poi_fused_sin_1", 23669)
    conv = tr.cpu("aten::cudnn_convolution", 522, tr.cpu("aten::convolution", 521, graph))
    tr.cpu("cudaLaunchKernel", 23670, conv)
    tr.gpu("sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nchw", 23670)
    tr.cpu("cudaLaunchKernel", 23671, conv)
    tr.gpu("void nhwcAddPaddingKernel<float, float, float, true>", 23671)
    shown = tr.cpu(oracle.PRINT_RANGE, 524, annotation=True)
    tr.gpu(oracle.PRINT_RANGE, 524, annotation=True)
    tr.cpu("cudaLaunchKernel", 23704, tr.cpu("aten::abs", 530, shown))
    tr.gpu("void at::native::vectorized_elementwise_kernel<4, AbsFunctor<float>>", 23704)

    got = oracle.summarize_compiled(tr.events, "cuda", graphs=1, breaks=[])

    assert [(k["kind"], k["name"]) for k in got["detail"]] == [
        ("generated", "triton_poi_fused_add_relu_0"), ("extern", "aten::mm"), ("extern", "aten::mm"),
        ("generated", "triton_poi_fused_sin_1"), ("extern", "aten::convolution"), ("extern", "aten::convolution")]
    assert got["library_extra"] == 2  # the split-K reduction and the cuDNN padding kernel
    assert launches(got) == 4
    assert got["syncs"] == 1  # the print, counted once (its GPU mirror is not a second one)
