"""The oracle: count what PyTorch really runs for one call of a function.

This is the ground truth every static prediction is checked against (issue 2, "A CPU oracle in the
package"), so its definitions are the contract and are spelled out here:

eager (a TorchDispatchMode sees every aten op that reaches the dispatcher, after CompositeImplicit
decomposition; only top-level ops are seen because the mode is switched off while an op runs):
  - kernels: the ops seen, minus views and other alias-only ops (`func.is_view`, schemas whose
    outputs all alias an input, `_unsafe_view`, `lift_fresh`, or an output that shares its input's
    storage; in-place views such as `as_strided_` and `transpose_`, torch.Tag.inplace_view, whose
    schema writes self but which change metadata only), minus allocation-only ops (`empty*`, `resize_`...), minus host reads (`syncs`).
    On cuda, kernels are the profiler's GPU kernel events instead (memcpy/memset counted apart;
    a cuBLAS/cuDNN call's helper kernels beside its main one counted in `library_extra`).
  - reads: +1 per distinct input tensor of a counted op (`x + x` reads once; the template of
    `zeros_like(x)`, `randn_like(x)`, `x.new_zeros(..)` is not read); writes: +1 per output
    tensor; an in-place op reads and writes its target, except ops that overwrite it without reading
    it (`fill_`, `zero_`, `copy_`, `normal_`, `uniform_`..., and `out=` arguments), which only write.
    bytes: the same transfers weighted by numel * element_size.
  - syncs: host reads of a tensor value (`_local_scalar_dense`, which `.item()`, `float(t)`, `bool(t)`
    and `if t:` go through; `.tolist()` and printing a tensor, which never reach the dispatcher, are
    caught separately; the ops torch's formatter runs to print are not counted, eager or compiled).

compiled (`torch.compile(fn)`, default mode, Inductor caches off, one warm-up call, one profiled call):
  - cpu: profiler rows `graph_<g>_cpp_fused_...` (Inductor's kernel profiling), plus aten calls made
    directly by a compiled graph's wrapper (externs such as `aten::mm`, fallbacks such as
    `aten::randint` for random seeds), plus top-level aten ops run eagerly outside compiled graphs
    (code between graph breaks), with the same view/alloc/sync exclusions as eager.
  - cuda: the profiler's GPU kernel events during the profiled call (record_function ranges that
    torch mirrors on the GPU timeline are not launches; library helpers as for eager).
  - graphs / graph_breaks: from `torch._dynamo.explain`.

torch is imported inside the functions only: this module is importable (and its constants usable)
without torch.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

# Ops that allocate memory without computing anything (no kernel on any backend).
ALLOC_OPS: frozenset[str] = frozenset({
    "empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided",
    "resize_", "resize_as_", "_resize_output_", "_empty_affine_quantized", "set_",
})
# Host reads of a tensor value: a device->host copy and a stream sync on cuda, never a kernel.
SYNC_OPS: frozenset[str] = frozenset({"_local_scalar_dense", "item", "is_nonzero"})
# Alias-only ops whose schema does not say so (their outputs share the input's storage).
ALIAS_OPS: frozenset[str] = frozenset({
    "_unsafe_view", "lift_fresh", "alias", "detach", "_reshape_alias", "view_as_real",
    "view_as_complex", "_neg_view", "_conj", "_indices", "_values",
})
# In-place ops that overwrite their target without reading it.
WRITE_ONLY_SELF: frozenset[str] = frozenset({
    "fill_", "zero_", "copy_", "normal_", "uniform_", "random_", "bernoulli_", "exponential_",
    "geometric_", "cauchy_", "log_normal_",
})
# Ops that look at an input tensor's metadata only (shape, dtype, device), never at its values.
METADATA_ONLY_SELF: frozenset[str] = frozenset({
    "zeros_like", "ones_like", "full_like", "rand_like", "randn_like", "randint_like", "empty_like",
    "new_zeros", "new_ones", "new_full", "new_empty", "new_empty_strided",
})
# Aten calls a compiled graph makes to vendor/ATen kernels (Inductor's `extern_kernels.*`);
# any other aten call made by a compiled graph is a fallback.
EXTERN_OPS: frozenset[str] = frozenset({
    "mm", "addmm", "bmm", "baddbmm", "convolution", "_convolution", "mkldnn_convolution",
    "convolution_backward", "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention", "_scaled_mm", "_int_mm", "mv", "addmv",
})

GENERATED_ROW = re.compile(r"^graph_(\d+)_((?:cpp|triton)_\w+)$")
COMPILED_GRAPH_ROW = "## Call CompiledFxGraph"
_OP_RANGE = "kpredict::op#"


class OracleError(Exception):
    """The oracle itself could not measure (as opposed to the user's code raising)."""


# --------------------------------------------------------------------------------------------
# classification of aten ops


def op_name(qualified: str) -> str:
    """'aten::add' -> 'add'; other namespaces keep their prefix ('prims::convert_element_type')."""
    return qualified[6:] if qualified.startswith("aten::") else qualified


def _inplace_view(op: Any) -> bool:
    """An in-place view op (`as_strided_`, `transpose_`, `unsqueeze_`: torch.Tag.inplace_view): its schema
    writes self, but only the tensor's metadata changes, no element is read or written: no kernel."""
    import torch  # lazy: only the oracle runs it

    return torch.Tag.inplace_view in getattr(op, "tags", ())


def _schema_is_alias(op: Any) -> bool:
    """True when every output of an overload aliases an input without writing it (a view)."""
    if op.is_view or _inplace_view(op):
        return True
    rets = op._schema.returns
    return bool(rets) and all(r.alias_info is not None and not r.alias_info.is_write for r in rets)


_NAME_CLASS: dict[str, str] = {}


def classify_name(name: str) -> str:
    """'kernel' | 'view' | 'alloc' | 'sync' | 'composite' for an aten op name (profiler rows).

    Profiler rows carry no overload, so the op's overloads that take a Tensor first are looked at:
    'composite' when they all decompose before the dispatcher (CompositeImplicitAutograd: `to`,
    `reshape`, `contiguous`, `matmul`...; their children are what a dispatch mode would see), else
    'view' when they all only alias their input (`slice`, `t`, `view`...), else 'kernel'.
    """
    name = op_name(name)
    if name in _NAME_CLASS:
        return _NAME_CLASS[name]
    if name in SYNC_OPS:
        kind = "sync"
    elif name in ALLOC_OPS:
        kind = "alloc"
    elif name in ALIAS_OPS:
        kind = "view"
    else:
        kind = "kernel"
        import torch  # lazy: torch takes seconds to import; only the oracle runs it

        try:
            packet = getattr(torch.ops.aten, name)
            overloads = [getattr(packet, o) for o in packet.overloads()]
        except (AttributeError, RuntimeError):
            overloads = []
        ops = [o for o in overloads if _plain_tensor_overload(o)] or overloads
        if ops and all(_is_composite_implicit(o) for o in ops):
            kind = "composite"
        elif ops and all(_schema_is_alias(o) for o in ops):
            kind = "view"
    _NAME_CLASS[name] = kind
    return kind


def _plain_tensor_overload(op: Any) -> bool:
    """Overloads a Python call usually reaches: Tensor first, no out=, no Dimname, no TorchScript prim."""
    args = op._schema.arguments
    if not args or str(args[0].type) not in ("Tensor", "Optional[Tensor]"):
        return False
    if op._overloadname.startswith("prim_") or op._overloadname.endswith("out"):
        return False
    return not any(a.is_out or "Dimname" in str(a.type) for a in args)


def _is_composite_implicit(op: Any) -> bool:
    import torch  # lazy: torch takes seconds to import; only the oracle runs it

    try:
        return bool(torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd"))
    except RuntimeError:
        return False


def _storage_key(t: Any) -> tuple:
    """Identity of the memory a tensor covers: same storage, offset, shape and strides."""
    try:
        ptr = t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):  # tensors without storage (sparse, nested...)
        return ("id", id(t))
    return (ptr, t.storage_offset(), tuple(t.shape), tuple(t.stride()), str(t.dtype))


def _storage_ptr(t: Any) -> int | None:
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return None


def _nbytes(t: Any) -> int:
    return int(t.numel()) * int(t.element_size())


# --------------------------------------------------------------------------------------------
# where an op came from


class Sites:
    """Finds the innermost frame of the user's file(s) on the Python stack (best effort)."""

    def __init__(self, files: set[str]) -> None:
        self.files = {os.path.realpath(f) for f in files}
        self._cache: dict[str, bool] = {}

    def is_user(self, filename: str) -> bool:
        hit = self._cache.get(filename)
        if hit is None:
            hit = os.path.realpath(filename) in self.files if not filename.startswith("<") else False
            self._cache[filename] = hit
        return hit

    def stack(self, depth: int = 2) -> list[Any]:
        """User frames on the stack, innermost first."""
        out = []
        f = sys._getframe(depth)
        while f is not None:
            if self.is_user(f.f_code.co_filename):
                out.append(f)
            f = f.f_back
        return out


def user_files_of(fn: Callable) -> set[str]:
    """The source file of a function, bound method or nn.Module (whose forward is looked at)."""
    target: Any = fn
    target = getattr(target, "__func__", target)
    code = getattr(target, "__code__", None)
    if code is None and hasattr(type(fn), "forward"):
        code = getattr(type(fn).forward, "__code__", None)
    if code is None:
        wrapped = getattr(target, "__wrapped__", None)
        code = getattr(wrapped, "__code__", None)
    return {code.co_filename} if code is not None else set()


# --------------------------------------------------------------------------------------------
# eager: the dispatch-mode recorder


def new_recorder(sites: Sites, ranges: bool, tagger: Callable[[Any], Any] | None):
    """Build the TorchDispatchMode lazily (the class needs torch)."""
    import torch  # lazy: torch takes seconds to import; only the oracle runs it
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    class Recorder(TorchDispatchMode):
        """Records one row per top-level aten op: kind, transfers, source site."""

        def __init__(self) -> None:
            super().__init__()
            self.rows: list[dict[str, Any]] = []
            self.depth = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            kwargs = kwargs or {}
            if self.depth:  # an op issued while another one runs is part of it
                return func(*args, **kwargs)
            idx = len(self.rows)
            self.depth += 1
            try:
                if ranges:
                    with torch.autograd.profiler.record_function(f"{_OP_RANGE}{idx}"):
                        out = func(*args, **kwargs)
                else:
                    out = func(*args, **kwargs)
            finally:
                self.depth -= 1
            self.rows.append(self._row(func, args, kwargs, out))
            return out

        def sync_row(self, name: str) -> dict[str, Any]:
            """A host read seen outside the dispatcher (called from `host_reads`)."""
            frames = sites.stack(4)
            row: dict[str, Any] = {
                "name": name, "overload": "", "kind": "sync", "reads": 0, "writes": 0, "bytes": 0,
                "line": frames[0].f_lineno if frames else None,
                "function": frames[0].f_code.co_qualname if frames else None,
            }
            if tagger is not None:
                row["stack"] = [(f.f_code.co_qualname, f.f_lineno, tagger(f)) for f in frames]
            return row

        def _row(self, func, args, kwargs, out) -> dict[str, Any]:  # noqa: ANN001
            name = op_name(func.overloadpacket._qualified_op_name)
            overload = func._overloadname
            frames = sites.stack(3)
            row: dict[str, Any] = {
                "name": name, "overload": overload, "kind": "kernel",
                "reads": 0, "writes": 0, "bytes": 0,
                "line": frames[0].f_lineno if frames else None,
                "function": frames[0].f_code.co_qualname if frames else None,
            }
            if tagger is not None:
                row["stack"] = [(f.f_code.co_qualname, f.f_lineno, tagger(f)) for f in frames]
            ins = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
            outs = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
            if name in SYNC_OPS:
                row["kind"] = "sync"
                return row
            if name in ALLOC_OPS:
                row["kind"] = "alloc"
                return row
            if _inplace_view(func):
                row["kind"] = "view"
                return row
            mutated = self._mutated(func, args, kwargs)
            if not mutated and (name in ALIAS_OPS or _schema_is_alias(func) or self._aliases(ins, outs)):
                row["kind"] = "view"
                return row
            reads: dict[tuple, Any] = {}
            writes: dict[tuple, Any] = {}
            for t, write_only in mutated:
                writes[_storage_key(t)] = t
                if not write_only:
                    reads[_storage_key(t)] = t
            write_only_keys = {_storage_key(t) for t, wo in mutated if wo}
            if name in METADATA_ONLY_SELF and args and isinstance(args[0], torch.Tensor):
                write_only_keys.add(_storage_key(args[0]))  # not read: only its shape/dtype are used
            for t in ins:
                k = _storage_key(t)
                if k not in write_only_keys:
                    reads.setdefault(k, t)
            for t in outs:
                writes.setdefault(_storage_key(t), t)
            row["reads"] = len(reads)
            row["writes"] = len(writes)
            row["bytes"] = sum(_nbytes(t) for t in reads.values()) + sum(_nbytes(t) for t in writes.values())
            return row

        @staticmethod
        def _mutated(func, args, kwargs) -> list[tuple[Any, bool]]:  # noqa: ANN001
            """(tensor, write_only) for every argument the schema says the op writes."""
            res = []
            name = op_name(func.overloadpacket._qualified_op_name)
            for i, a in enumerate(func._schema.arguments):
                if a.alias_info is None or not a.alias_info.is_write:
                    continue
                val = kwargs.get(a.name) if (a.kwarg_only or i >= len(args)) else args[i]
                if val is None:
                    continue
                write_only = a.is_out or (i == 0 and name in WRITE_ONLY_SELF)
                for t in tree_flatten(val)[0]:
                    if isinstance(t, torch.Tensor):
                        res.append((t, write_only))
            return res

        @staticmethod
        def _aliases(ins: list[Any], outs: list[Any]) -> bool:
            """Runtime check for alias ops the schema does not mark: every output shares an input's storage."""
            if not outs or not ins:
                return False
            in_ptrs = {_storage_ptr(t) for t in ins} - {None, 0}
            return all(_storage_ptr(o) in in_ptrs for o in outs)

    return Recorder()


def _first_outside_torch(depth: int) -> Any | None:
    """The innermost frame that is neither torch's nor this module's (who asked torch to do it)."""
    import torch  # lazy: torch takes seconds to import; only the oracle runs it

    torch_dir = os.path.dirname(torch.__file__) + os.sep
    f = sys._getframe(depth)
    while f is not None and (f.f_code.co_filename.startswith(torch_dir) or f.f_code.co_filename == __file__):
        f = f.f_back
    return f


@contextlib.contextmanager
def host_reads(rec: Any, sites: Sites) -> Iterator[Callable[[], contextlib.AbstractContextManager]]:
    """Host reads that never reach the dispatcher, recorded as syncs when the user's code asks for them.

    `.tolist()` copies the values out in C++; printing a tensor (`print(t)`, `str(t)`, f-strings) runs
    torch's formatter with dispatch modes switched off. Each counts as one sync; the kernels the
    formatter runs are not counted (they depend on the values and are not the user's computation).
    """
    import torch  # lazy: torch takes seconds to import; only the oracle runs it
    import torch._tensor_str as tensor_str

    original_tolist = torch.Tensor.tolist
    original_str = tensor_str._str
    printing = [0]

    def record(name: str) -> None:
        caller = _first_outside_torch(3)
        if rec.depth or printing[0] or caller is None or not sites.is_user(caller.f_code.co_filename):
            return
        rec.rows.append(rec.sync_row(name))

    def tolist(self):  # noqa: ANN001, ANN202
        record("tolist")
        return original_tolist(self)

    def _str(self, *, tensor_contents=None):  # noqa: ANN001, ANN202
        record("print")
        printing[0] += 1
        try:
            return original_str(self, tensor_contents=tensor_contents)
        finally:
            printing[0] -= 1

    def install(on: bool) -> None:
        torch.Tensor.tolist = tolist if on else original_tolist  # type: ignore[method-assign]
        tensor_str._str = _str if on else original_str

    @contextlib.contextmanager
    def suspended() -> Iterator[None]:
        """Put torch's own functions back, e.g. while Dynamo runs compiled code (it would trace ours)."""
        install(False)
        try:
            yield
        finally:
            install(True)

    install(True)
    try:
        yield suspended
    finally:
        install(False)


PRINT_RANGE = "kpredict::tensor_str"


@contextlib.contextmanager
def mark_printing() -> Iterator[None]:
    """Wrap torch's tensor formatter in a profiler range, so a compiled call's printing is set apart."""
    import torch  # lazy: torch takes seconds to import; only the oracle runs it
    import torch._tensor_str as tensor_str

    original = tensor_str._str

    def _str(self, *, tensor_contents=None):  # noqa: ANN001, ANN202
        with torch.autograd.profiler.record_function(PRINT_RANGE):
            return original(self, tensor_contents=tensor_contents)

    # Dynamo would otherwise trace this wrapper (it is not in torch's skip list) and drop the range
    tensor_str._str = torch.compiler.disable(_str, recursive=True)
    try:
        yield
    finally:
        tensor_str._str = original


def summarize_eager(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals of the counted rows; `ops` keeps kernels and syncs in program order."""
    kept = [r for r in rows if r["kind"] in ("kernel", "sync")]
    kernels = [r for r in kept if r["kind"] == "kernel"]
    return {
        "kernels": sum(r.get("kernels", 1) for r in kernels),
        "reads": sum(r["reads"] for r in kernels),
        "writes": sum(r["writes"] for r in kernels),
        "bytes": sum(r["bytes"] for r in kernels),
        "syncs": sum(1 for r in kept if r["kind"] == "sync"),
        "names": [r["name"] for r in kernels],
        "ops": [{k: v for k, v in r.items() if k != "stack"} for r in kept],
    }


# --------------------------------------------------------------------------------------------
# profiler helpers (cpu and cuda)


def _ancestors(e: Any) -> Iterator[Any]:
    p = e.cpu_parent
    while p is not None:
        yield p
        p = p.cpu_parent


def _is_gpu(e: Any) -> bool:
    import torch  # lazy: torch takes seconds to import; only the oracle runs it

    return e.device_type == torch.autograd.DeviceType.CUDA


def _gpu_kind(e: Any) -> str:
    """'kernel' | 'memcpy' | 'memset' for a GPU event."""
    act = str(getattr(e, "activity_type", "") or "").lower()
    low = e.name.lower()
    if "memcpy" in act or low.startswith("memcpy"):
        return "memcpy"
    if "memset" in act or low.startswith("memset"):
        return "memset"
    return "kernel"


def _launch_site(e: Any, by_id: dict[int, list[Any]]) -> Any | None:
    """The CPU runtime call (cudaLaunchKernel, cuLaunchKernel, cudaMemcpyAsync...) that put a GPU event on
    the stream. A GPU event's `id` is its CUPTI correlation id, which its runtime call shares (op ids
    live in another numbering, so an aten op can carry the same number: only runtime calls are
    taken). `linked_correlation_id`, where torch has it, is tried second."""
    for key in (e.id, getattr(e, "linked_correlation_id", 0) or 0):
        for c in by_id.get(key, []):
            low = c.name.lower()
            if "launch" in low or "memcpy" in low or "memset" in low:
                return c
    return None


def _chain(site: Any | None) -> list[Any]:
    """A launch's CPU call and every range around it, innermost first."""
    return [] if site is None else [site, *_ancestors(site)]


def _gpu_events(events: list[Any]) -> tuple[list[tuple[Any, Any | None]], dict[str, int]]:
    """GPU kernel events with their CPU launch site, and counts of memcpy/memset."""
    by_id: dict[int, list[Any]] = {}
    for e in events:
        if not _is_gpu(e):
            by_id.setdefault(e.id, []).append(e)
    kernels = []
    other = {"memcpy": 0, "memset": 0}
    for e in sorted((e for e in events if _is_gpu(e)), key=lambda e: e.time_range.start):
        if getattr(e, "is_user_annotation", False) or e.name.startswith("kpredict::"):
            continue  # a record_function range mirrored on the GPU timeline, not a launch
        kind = _gpu_kind(e)
        if kind == "kernel":
            kernels.append((e, _launch_site(e, by_id)))
        else:
            other[kind] += 1
    return kernels, other


# --------------------------------------------------------------------------------------------
# measuring


def _grad_ctx(grad: bool):
    import torch  # lazy: torch takes seconds to import; only the oracle runs it

    return contextlib.nullcontext() if grad else torch.no_grad()


def fresh_inputs(args: tuple, kwargs: dict) -> Callable[[], tuple[tuple, dict]]:
    """Fresh copies of the tensor inputs for each phase, so in-place code sees the same values."""
    import torch  # lazy: torch takes seconds to import; only the oracle runs it
    from torch.utils._pytree import tree_map

    def clone(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            y = x.detach().clone(memory_format=torch.preserve_format)
            return y.requires_grad_(x.requires_grad) if x.is_leaf else y
        return x

    return lambda: (tree_map(clone, args), tree_map(clone, kwargs))


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch  # lazy: torch takes seconds to import; only the oracle runs it

        torch.cuda.synchronize()


def measure_eager(
    fn: Callable, make_args: Callable[[], tuple[tuple, dict]], *, device: str = "cpu", grad: bool = False,
    files: set[str] | None = None, tagger: Callable[[Any], Any] | None = None,
) -> dict[str, Any]:
    """One eager call under the dispatch-mode recorder (and the profiler on cuda).

    On an exception from the user's code, the exception is re-raised with `kpredict_partial`
    set to what was measured up to that point.
    """
    import torch  # lazy: torch takes seconds to import; only the oracle runs it

    sites = Sites(files if files is not None else user_files_of(fn))
    cuda = device.startswith("cuda")
    rec = new_recorder(sites, ranges=cuda, tagger=tagger)
    args, kwargs = make_args()
    if cuda:  # warm-up outside the measurement: lazy library init launches kernels once
        with _grad_ctx(grad):
            fn(*args, **kwargs)
        _sync(device)
        args, kwargs = make_args()
    prof_cm: Any = contextlib.nullcontext()
    print_cm: Any = contextlib.nullcontext()
    if cuda:
        from torch.profiler import ProfilerActivity, profile  # lazy: torch takes seconds to import; only the oracle runs it

        prof_cm = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        print_cm = mark_printing()
    error: BaseException | None = None
    with prof_cm as prof, print_cm:
        try:
            with _grad_ctx(grad), rec, host_reads(rec, sites):
                fn(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - re-raised below with the partial result
            error = e
        _sync(device)
    result = summarize_eager(rec.rows)
    if cuda and prof is not None:
        _attribute_gpu_eager(result, rec.rows, list(prof.events()))
    if error is not None:
        error.kpredict_partial = {"eager": result}  # type: ignore[attr-defined]
        raise error
    return result


def _attribute_gpu_eager(result: dict[str, Any], rows: list[dict[str, Any]], events: list[Any]) -> None:
    """On cuda, kernels are GPU kernel events; give each recorded op the kernels launched inside it.

    Kernels launched by torch's tensor formatter (a print) are left out, as on cpu. A library call
    (cuBLAS, cuDNN: the ops in EXTERN_OPS) may add helper kernels beside its main one (a split-K
    reduction, padding, scaling), chosen per shape and GPU: those are counted in `library_extra`,
    which the comparison takes off the kernel count, so one library call is one launch.
    """
    kernels, other = _gpu_events(events)
    per_op: dict[int, int] = {}
    names: list[str] = []
    for k, site in kernels:
        chain = _chain(site)
        if any(a.name == PRINT_RANGE for a in chain):
            continue
        names.append(k.name)
        idx = next((int(a.name[len(_OP_RANGE):]) for a in chain if a.name.startswith(_OP_RANGE)), None)
        if idx is not None:
            per_op[idx] = per_op.get(idx, 0) + 1
    for i, r in enumerate(rows):
        r["kernels"] = per_op.get(i, 0)
    result["kernels"] = len(names)
    result["kernel_names"] = names
    result["library_extra"] = sum(max(0, r["kernels"] - 1) for r in rows if r["name"] in EXTERN_OPS)
    result["memcpy"] = other["memcpy"]
    result["memset"] = other["memset"]
    result["ops"] = [{k: v for k, v in r.items() if k != "stack"} for r in rows if r["kind"] in ("kernel", "sync")]


def _explain(fn: Callable, make_args: Callable[[], tuple[tuple, dict]], grad: bool, sites: Sites) -> tuple[int, list[dict[str, Any]]]:
    """Graph count and graph breaks (line in the user's file, first line of Dynamo's reason)."""
    import torch  # lazy: torch takes seconds to import; only the oracle runs it
    import torch._dynamo

    args, kwargs = make_args()
    with _grad_ctx(grad):
        exp = torch._dynamo.explain(fn)(*args, **kwargs)
    breaks: list[dict[str, Any]] = []
    seen: set[tuple] = set()
    for br in exp.break_reasons:
        line = None
        for fs in reversed(list(br.user_stack or [])):
            if sites.is_user(fs.filename):
                line = fs.lineno
                break
        reason = (str(br.reason).strip().splitlines() or [""])[0]
        key = (line, reason)
        if key not in seen:
            seen.add(key)
            breaks.append({"line": line, "reason": reason})
    return int(exp.graph_count), breaks


def measure_compiled(
    fn: Callable, make_args: Callable[[], tuple[tuple, dict]], *, device: str = "cpu", grad: bool = False,
    files: set[str] | None = None,
) -> dict[str, Any]:
    """Compile with Inductor (caches off, kernel profiling on), warm up once, profile one call."""
    import torch  # lazy: torch takes seconds to import; only the oracle runs it
    import torch._dynamo
    import torch._inductor.config as inductor_config
    from torch.profiler import ProfilerActivity, profile

    sites = Sites(files if files is not None else user_files_of(fn))
    cuda = device.startswith("cuda")
    with inductor_config.patch({"force_disable_caches": True, "cpp.enable_kernel_profile": True}):
        torch._dynamo.reset()
        graphs, breaks = _explain(fn, make_args, grad, sites)
        torch._dynamo.reset()
        compiled = torch.compile(fn)
        args, kwargs = make_args()
        with _grad_ctx(grad):
            compiled(*args, **kwargs)  # warm-up: compiles; discarded
        _sync(device)
        args, kwargs = make_args()
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        with profile(activities=acts) as prof, mark_printing():
            with _grad_ctx(grad):
                compiled(*args, **kwargs)
            _sync(device)
    torch._dynamo.reset()
    return summarize_compiled(list(prof.events()), device, graphs, breaks)


def summarize_compiled(events: list[Any], device: str, graphs: int | None = None,
                       breaks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The compiled block from the profiler events of one compiled call."""
    cuda = device.startswith("cuda")
    detail = classify_gpu_compiled(events) if cuda else classify_cpu_compiled(events)
    return {
        "kernels": len(detail["kernels"]),
        "names": [k["name"] for k in detail["kernels"]],
        "graphs": graphs if graphs is not None else detail["graphs_run"],
        "graph_breaks": breaks if breaks is not None else [],
        "syncs": detail["syncs"],
        "detail": detail["kernels"],
        **({"memcpy": detail["memcpy"], "memset": detail["memset"], "library_extra": detail["library_extra"]}
           if cuda else {}),
    }


def _local_graph_ids() -> Callable[[str], int]:
    """Inductor numbers graphs per process (`graph_7_...`); renumber them 0, 1, ... per call."""
    seen: dict[str, int] = {}
    return lambda g: seen.setdefault(g, len(seen))


def classify_cpu_compiled(events: list[Any]) -> dict[str, Any]:
    """Classify CPU profiler rows of one compiled call: generated, extern/fallback, eager leftovers.

    Outermost aten rows are classified the way the eager dispatch mode sees ops: composite ops are
    looked through (their children count), views, allocations and syncs launch nothing.
    """
    graph_of = _local_graph_ids()
    kernels: list[dict[str, Any]] = []
    syncs = 0

    def visit(e: Any, in_graph: bool) -> None:
        nonlocal syncs
        kind = classify_name(e.name)
        if kind == "composite":
            for c in sorted(e.cpu_children, key=lambda c: c.time_range.start):
                if c.name.startswith("aten::"):
                    visit(c, in_graph)
        elif kind == "sync":
            syncs += 1
        elif kind == "kernel":
            name = op_name(e.name)
            where = ("extern" if name in EXTERN_OPS else "fallback") if in_graph else "eager"
            kernels.append({"name": e.name, "kind": where, "graph": None})

    for e in sorted(events, key=lambda e: e.time_range.start):
        m = GENERATED_ROW.match(e.name)
        if m:
            kernels.append({"name": m.group(2), "kind": "generated", "graph": graph_of(m.group(1))})
            continue
        ancestors = list(_ancestors(e))
        if any(a.name == PRINT_RANGE for a in ancestors):
            continue  # torch's tensor formatter: the print itself is one sync
        if e.name == PRINT_RANGE:
            syncs += 1
            continue
        if not e.name.startswith("aten::"):
            continue
        if any(a.name.startswith("aten::") or GENERATED_ROW.match(a.name) for a in ancestors):
            continue  # part of another op (composites are looked through by visit)
        visit(e, any(a.name.startswith(COMPILED_GRAPH_ROW) for a in ancestors))
    graphs = sum(1 for e in events if e.name.startswith(COMPILED_GRAPH_ROW))
    return {"kernels": kernels, "syncs": syncs, "graphs_run": graphs}


def classify_gpu_compiled(events: list[Any]) -> dict[str, Any]:
    """cuda: every GPU kernel event is a launch; name Triton kernels as is, library kernels by their aten op.

    Kernels of torch's tensor formatter (a print between graphs) are left out. `library_extra`
    counts the helper kernels a library call adds beside its main one (see `_attribute_gpu_eager`).
    """
    gpu, other = _gpu_events(events)
    kernels: list[dict[str, Any]] = []
    per_call: dict[int, int] = {}
    for k, site in gpu:
        chain = _chain(site)
        if any(a.name == PRINT_RANGE for a in chain):
            continue
        # the aten op the graph (or eager code) called: the outermost one, not the backend op it
        # dispatched to (aten::convolution, not aten::cudnn_convolution)
        aten = next((a for a in reversed(chain) if a.name.startswith("aten::")), None)
        in_graph = any(a.name.startswith(COMPILED_GRAPH_ROW) for a in chain)
        if k.name.startswith("triton_"):
            kernels.append({"name": k.name, "kind": "generated", "graph": None, "raw": k.name})
        elif aten is not None:
            name = op_name(aten.name)
            kind = ("extern" if name in EXTERN_OPS else "fallback") if in_graph else "eager"
            kernels.append({"name": aten.name, "kind": kind, "graph": None, "raw": k.name})
            if name in EXTERN_OPS:
                per_call[id(aten)] = per_call.get(id(aten), 0) + 1
        else:
            kernels.append({"name": k.name, "kind": "unknown", "graph": None, "raw": k.name})
    syncs = sum(1 for e in events if not _is_gpu(e) and e.name.startswith("aten::")
                and classify_name(e.name) == "sync"
                and not any(a.name.startswith("aten::") or a.name == PRINT_RANGE for a in _ancestors(e)))
    syncs += sum(1 for e in events if e.name == PRINT_RANGE and not _is_gpu(e))
    graphs = sum(1 for e in events if not _is_gpu(e) and e.name.startswith(COMPILED_GRAPH_ROW))
    return {"kernels": kernels, "syncs": syncs, "graphs_run": graphs,
            "library_extra": sum(n - 1 for n in per_call.values()), **other}


def measure(
    fn: Callable, args: tuple, kwargs: dict | None = None, *, device: str = "cpu", compiled: bool = True,
    grad: bool = False, files: set[str] | None = None,
) -> dict[str, Any]:
    """Measure one call of `fn(*args, **kwargs)`: eager, then (if `compiled`) under torch.compile.

    Each phase gets fresh copies of the tensor inputs. `files` are the source files whose lines
    ops are attributed to (default: the file that defines `fn`). If the user's code raises, the
    exception propagates with `kpredict_partial` holding what was measured before it.
    """
    make_args = fresh_inputs(tuple(args), dict(kwargs or {}))
    result: dict[str, Any] = {"device": device}
    result["eager"] = measure_eager(fn, make_args, device=device, grad=grad, files=files)
    if compiled:
        try:
            result["compiled"] = measure_compiled(fn, make_args, device=device, grad=grad, files=files)
        except BaseException as e:
            e.kpredict_partial = dict(result)  # type: ignore[attr-defined]
            raise
    return result
