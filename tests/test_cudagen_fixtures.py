"""--target cuda compiled kernel counts of the fixtures' functions against cudagen (issue 27): Inductor's own
CUDA code generation on fake H100 tensors, recorded by scripts/record_cudagen.py in
fixtures/observed/cudagen-torch-<version>.json with a digest of each file. A fixture that changed since its
recording fails until it is recorded again; a known difference is a strict xfail with its reason, so a fix
shows. Nothing here imports torch: the recording is data."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from kpredict.api import analyze_file
from kpredict.settings import Settings

REPO = Path(__file__).resolve().parent.parent
STORES = sorted((REPO / "fixtures" / "observed").glob("cudagen-torch-*.json"))
STORE = json.loads(STORES[-1].read_text()) if STORES else {"files": {}}

# file::function -> why kpredict's count differs from cudagen's (read from the launches' names; stop 47)
_OPS = "fixtures/ops/"
_REWRITE = "attention written as matmul/softmax/matmul: Inductor's pattern matcher makes it SDPA, kpredict's pattern does not match this form"
_CAT_SCAN = "a cat of slices read by a cumsum: Inductor writes each slice and the cat with kernels of their own before the scan; kpredict fuses them into it"
_FOLD = "F.fold (col2im) with overlapping windows is an accumulating store on CUDA: a zero fill, then the accumulation, kernels of their own; kpredict one pointwise kernel"
_PERMUTED_COPY = "a permuted copy read by an elementwise op: Inductor computes both in one kernel; kpredict writes the copy first"
_CONV_AFTER_LINEAR = "a convolution after a linear layer: Inductor keeps the bias in addmm and writes one layout copy; kpredict unfuses the bias and copies the weight once more"
KNOWN: dict[str, str] = {
    _OPS + "advanced_index.py::one_hot_counts": "one_hot's range check (_assert_async of all(ge & lt)) is a kernel on CUDA; kpredict's one_hot leaves it out compiled",
    _OPS + "advanced_index.py::one_hot_from_data": "num_classes read from the data (max(), a host read): the graphs differ; kpredict counts max, zeros and the scatter as aten calls",
    _OPS + "attention_strided.py::five_dims": _REWRITE,
    _OPS + "attention_strided.py::mask_and_head_sizes": _REWRITE,
    _OPS + "attention_strided.py::strided_chunks": "SDPA of views whose last dim has a stride other than 1: "
    "compiled, Inductor copies q, k and v (three kernels, each reading the input at its own offset) and calls "
    "efficient attention; kpredict takes eager's math path (bmm, softmax, bmm), its q and k copies two kernels "
    "(5 launches matched by chance until sibling copies fused only on reads at the same index)",
    _OPS + "conv_views.py::split_dense": _CONV_AFTER_LINEAR,
    _OPS + "conv_views.py::whole_dense": _CONV_AFTER_LINEAR,
    _OPS + "cuda_layouts.py::depthwise_pointwise": "two convolutions in a row: Inductor copies each one's input to channels-last; kpredict reads the second's input as the first wrote it",
    _OPS + "diff.py::packed_sequences": _CAT_SCAN,
    _OPS + "library_patterns.py::size_limit_and_keyword_arange": "a Python number raised to a tensor's power: a generated kernel for Inductor, an aten call (pow) for kpredict",
    _OPS + "library_patterns.py::cdist_matrix_path": "cdist's matrix path (_euclidean_dist): Inductor writes the squared norms and padded operands in 4 kernels; kpredict 2",
    _OPS + "modes.py::mode_packed_positions": _CAT_SCAN + "; the mask before SDPA is a kernel of its own",
    _OPS + "resample.py::fold_overlapping": _FOLD,
    _OPS + "resample.py::unfold_then_fold": _FOLD,
    _OPS + "resample.py::reflect_and_replicate_1d": "two pads in a row: Inductor stores the first (its reader loads it at clamped indices); kpredict fuses them",
    _OPS + "shaped_views.py::group_norm_after_channels_last_add": "a group norm of a transposed sum: Inductor copies the input and splits statistics and normalization over 5 kernels; kpredict 3",
    _OPS + "shaped_views.py::movedim_then_copy": _PERMUTED_COPY,
    _OPS + "shaped_views.py::swapaxes_then_copy": _PERMUTED_COPY,
}


def _cases() -> list:
    out = []
    for rel, entry in sorted(STORE["files"].items()):
        for name, got in sorted(entry["functions"].items()):
            if "kernels" not in got or got.get("errors"):
                continue  # cudagen could not compile it: nothing to hold the prediction to
            key = f"{rel}::{name}"
            marks = [pytest.mark.xfail(strict=True, reason=KNOWN[key])] if key in KNOWN else []
            out.append(pytest.param(rel, name, got["kernels"], id=key, marks=marks))
    return out


_REPORTS: dict[str, dict] = {}


def _predicted(rel: str) -> dict:
    if rel not in _REPORTS:
        rep = analyze_file(REPO / rel, Settings(target="cuda"))
        _REPORTS[rel] = {f.qualname: f for f in rep.functions}
    return _REPORTS[rel]


def test_recordings_are_current() -> None:
    """Each recorded file is as it was recorded (else: python scripts/record_cudagen.py FILE)."""
    stale = [rel for rel, e in STORE["files"].items()
             if hashlib.sha256((REPO / rel).read_bytes()).hexdigest()[:16] != e["digest"]]
    assert STORE["files"] and not stale, f"record again with scripts/record_cudagen.py: {stale}"


@pytest.mark.parametrize(("rel", "name", "measured"), _cases())
def test_cuda_compiled_kernels_equal_cudagen(rel: str, name: str, measured: int) -> None:
    f = _predicted(rel).get(name)
    assert f is not None, f"{rel}::{name} not analyzed"
    got = f.compiled.kernels - f.compiled.extern_inner  # an extern call is one launch in Inductor's wrapper
    assert got == measured, (got, measured, list(f.compiled.kernel_names))


# file::function -> why kpredict's matmul calls differ from cudagen's by name (mm / addmm)
_EXTERN_KNOWN: dict[str, str] = {
    _OPS + "cuda_layouts.py::token_mixer": "the token linear's output, added back transposed into the next norm: Inductor moves the bias into that kernel; kpredict keeps addmm",
    _OPS + "cuda_layouts.py::token_mixer_wide": "as token_mixer",
    _OPS + "einsum.py::matrix_product": "a 2-D einsum: Inductor calls mm; kpredict names it bmm",
    _OPS + "matmul.py::einsum_2d": "a 2-D einsum: Inductor calls mm; kpredict names it bmm",
}


def _matmuls(names: list[str], sep: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for n in names:
        short = n.rsplit(sep, 1)[-1]
        if short in ("mm", "addmm"):
            out[short] = out.get(short, 0) + 1
    return out


def _extern_cases() -> list:
    out = []
    for rel, entry in sorted(STORE["files"].items()):
        for name, got in sorted(entry["functions"].items()):
            if "names" not in got or got.get("errors") or not _matmuls(got["names"], "."):
                continue
            key = f"{rel}::{name}"
            marks = [pytest.mark.xfail(strict=True, reason=_EXTERN_KNOWN[key])] if key in _EXTERN_KNOWN else []
            out.append(pytest.param(rel, name, _matmuls(got["names"], "."), id=key, marks=marks))
    return out


@pytest.mark.parametrize(("rel", "name", "measured"), _extern_cases())
def test_linear_bias_moves_as_inductor_moves_it(rel: str, name: str, measured: dict[str, int]) -> None:
    """A linear's bias goes into the kernel after its mm only when every reader is a pointwise op and the
    bias is not half precision (Inductor's should_prefer_unfused_addmm): mm and addmm calls as cudagen's."""
    f = _predicted(rel).get(name)
    assert f is not None, f"{rel}::{name} not analyzed"
    assert _matmuls(list(f.compiled.kernel_names), "::") == measured, list(f.compiled.kernel_names)
