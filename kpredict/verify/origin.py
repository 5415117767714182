"""Where a GPU kernel comes from, and so whether it is a launch the prediction is held to.

On cuda a launch is a GPU kernel event. Only the kernels *inside* a library call are the library's
own choice: cuBLAS's split-K reductions, `scal` and epilogue kernels, cuDNN's layout transforms and
padding, picked per shape and GPU. Those beyond the call's main kernel are `library_extra`, shown
apart and taken off the count (`runner.launches`). A kernel of ATen's own code around the call is a
launch like any other: the elementwise add that puts a convolution's bias on after cuDNN ran, the
copy of an addmm's bias into its output before a GEMV. Kernels are told apart by name, as the
profiler gives them (cut to 120 characters in the recorded observations): ATen's kernels live in
the `at::native` (and `at::cuda`) namespaces.

The same definition is applied to a live measurement (`runner`) and to a recorded one
(`scripts/collect_observed.py --rederive`), from the raw kernel names both keep: eager, the
function's kernel names in launch order with each recorded op's kernel count; compiled, each
kernel's raw name beside the aten op that launched it. Pure Python: no torch.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# Ops whose call is a library call (cuBLAS, cuDNN, attention kernels): the same set as
# kpredict.verify.oracle.EXTERN_OPS (kept apart so that this module never imports the oracle).
LIBRARY_OPS: frozenset[str] = frozenset({
    "mm", "addmm", "bmm", "baddbmm", "convolution", "_convolution", "mkldnn_convolution",
    "convolution_backward", "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention", "_scaled_mm", "_int_mm", "mv", "addmv",
})

# A phase whose `library_extra` follows this module carries RULE_KEY = RULE, so that deriving it
# again (the compiled count is derived from the oracle's own) leaves it as it is.
RULE_KEY, RULE = "library_extra_rule", "origin"

_ATEN_NAMESPACES = ("at::native::", "at::cuda::")


def is_aten_kernel(name: str) -> bool:
    """A kernel of ATen's own code (`void at::native::elementwise_kernel<...CUDAFunctor_add...>`,
    `at::native::(anonymous namespace)::conv_depthwise2d_forward_kernel`): a launch wherever it runs."""
    return any(ns in name for ns in _ATEN_NAMESPACES)


def library_extra(names: Iterable[str]) -> int:
    """Helper kernels of one library call, from the raw names of the kernels launched inside it:
    its library kernels beyond the first (the main one). ATen's kernels around the call count as
    launches, and a call of ATen's own kernel alone (depthwise convolution) has no helper."""
    lib = sum(1 for n in names if not is_aten_kernel(n))
    return max(0, lib - 1)


def _op(name: str) -> str:
    return name[6:] if name.startswith("aten::") else name


def eager_library_extra(phase: dict[str, Any]) -> int | None:
    """`library_extra` of a cuda eager phase from its raw kernel names (`kernel_names`, in launch
    order) and its ops (`ops`, each with the kernels launched inside it, in the same order).
    None when the names cannot be matched to the ops (no names, or counts that do not add up)."""
    names = phase.get("kernel_names")
    ops = phase.get("ops")
    if names is None or ops is None:
        return None
    counts = [int(o.get("kernels") or 0) for o in ops]
    if sum(counts) != len(names):
        return None
    extra, i = 0, 0
    for o, n in zip(ops, counts):
        if _op(str(o.get("name", ""))) in LIBRARY_OPS:
            extra += library_extra(names[i:i + n])
        i += n
    return extra


def compiled_library_extra(phase: dict[str, Any]) -> int | None:
    """`library_extra` of a cuda compiled phase from `detail` (each kernel's aten op and raw name)
    and the oracle's own `library_extra`, which took every kernel of a library call beyond its first.

    The detail does not say where one call ends and the next begins (two mm calls in a row), but the
    oracle's count does: what it took as helpers less the ATen kernels among them is the library's.
    Consecutive kernels of one library op are a run; an ATen kernel in a run that has library
    kernels is taken as part of a library call (the copy an addmm launches before its GEMV), one in
    a run of ATen kernels alone as a call of its own (a depthwise convolution's ATen kernel).
    None without detail."""
    detail = phase.get("detail")
    if detail is None or phase.get("library_extra") is None:
        return None
    aten_in_calls = 0
    run: list[str] = []
    run_op = None
    for k in list(detail) + [{}]:
        op = _op(str(k.get("name", "")))
        inside = k.get("kind") in ("extern", "eager", "fallback") and op in LIBRARY_OPS
        if not inside or op != run_op:
            if any(not is_aten_kernel(n) for n in run):
                aten_in_calls += sum(1 for n in run if is_aten_kernel(n))
            run, run_op = [], (op if inside else None)
        if inside:
            run.append(str(k.get("raw") or k.get("name", "")))
    return max(0, int(phase["library_extra"]) - aten_in_calls)


def with_library_extra(measured: dict[str, Any]) -> dict[str, Any]:
    """`measured` ({"eager": ..., "compiled": ...}) with each cuda phase's `library_extra` derived
    from its raw kernel names and marked so; a phase without them (cpu, or names not kept) or
    derived already is left as it is."""
    out = dict(measured)
    for key, derive in (("eager", eager_library_extra), ("compiled", compiled_library_extra)):
        phase = measured.get(key)
        if not isinstance(phase, dict) or "library_extra" not in phase or phase.get(RULE_KEY) == RULE:
            continue  # cpu (no library kernels are told apart), or derived already
        value = derive(phase)
        if value is not None:
            out[key] = {**phase, "library_extra": value, RULE_KEY: RULE}
    return out


# Ops of the profiler's namespace a dispatch mode sees: the record_function ranges torch.optim wraps
# `step()` and `zero_grad()` in (`Optimizer.profile_hook_step`). They mark a range and launch nothing,
# on any device.
PROFILER_PREFIX = "profiler::"


def without_profiler_ranges(measured: dict[str, Any]) -> dict[str, Any]:
    """`measured` with the eager rows of record_function ranges taken out of the kernels (they carry no
    transfers). The oracle's rows keep them (changing its definition re-measures every stored answer);
    the definition is applied here, as `library_extra` is."""
    phase = measured.get("eager")
    if not isinstance(phase, dict) or not any(str(n).startswith(PROFILER_PREFIX) for n in phase.get("names") or ()):
        return measured
    ranges = [o for o in phase.get("ops") or () if str(o.get("name", "")).startswith(PROFILER_PREFIX)]
    names = [n for n in phase["names"] if not str(n).startswith(PROFILER_PREFIX)]
    kernels = phase["kernels"] - sum(int(o.get("kernels", 1)) for o in ranges)
    ops = [o for o in phase.get("ops") or () if not str(o.get("name", "")).startswith(PROFILER_PREFIX)]
    return {**measured, "eager": {**phase, "kernels": kernels, "names": names, "ops": ops}}
