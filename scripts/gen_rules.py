#!/usr/bin/env python
"""Generate rules/generated.toml from torch's own op metadata.

    python scripts/gen_rules.py [--out rules/generated.toml] [--check] [--report]

--check    regenerate in memory and compare with --out; exit 1 (and print a diff) when they differ.
--report   print, for human review, where the generated facts disagree with rules/ops.toml.

This script (and tests/test_rules.py) are the only places in kpredict that import torch. The output
is a pure function of the installed torch: ops are sorted by name, lists are sorted, fields come in a
fixed order, and the only version-dependent text is the torch version in the header and [meta].

Derivation rules
----------------
Ops. Every aten operator known to the dispatcher (torch._C._dispatch_get_all_op_names(), namespace
"aten") is looked at, one entry per packet (aten.add, not aten.add.Tensor). Names starting with "_"
are internal and skipped (rules/ops.toml covers the ones that matter), except the attention kernels
`_scaled_dot_product_*` that Inductor calls as they are (flash, efficient, cudnn, flash_for_cpu...;
not _scaled_dot_product_attention_math, which decomposes). Only an op's "functional tensor
overloads" count: overloads registered with the dispatcher (drops TorchScript-only builtins such as
aten::add.t or aten::dequantize.list) that mention Tensor in their schema and are not out= variants
(no keyword-only argument that is written to).

Category, first rule that matches wins (the `source` field names the rule):
  1. extern    Inductor lowers some overload with a function from torch._inductor.kernel.* (mm,
               addmm, bmm, baddbmm, convolution, _int_mm, _scaled_mm, ...: a library GEMM/conv or a
               template, never fused); or the op is a kept `_scaled_dot_product_*` kernel; or it is
               one of the composite entry points that reach aten.convolution / SDPA directly
               (conv1d/2d/3d, conv_transpose1d/2d/3d -> aten = ["convolution"];
               scaled_dot_product_attention).
  2. alloc     the name is empty, empty_* or new_empty*: allocation only, no kernel.
  3. sync      Tag.data_dependent_output and every overload returns non-tensors (item, equal,
               allclose): the value is read back on the host.
  4. view      Tag.inplace_view (transpose_, t_, squeeze_, ...: metadata-only in-place); or every
               functional overload is a view (OpOverload.is_view: its aliased inputs are not
               written) and all its returns alias an input. Excluded: the MAY_COPY ops (reshape,
               flatten, contiguous, to, ...) whose schema alias means "may alias", since they copy
               when they must; they are not emitted.
  5. random    Tag.nondeterministic_seeded, no Tensor[] argument (drops lstm/gru/rnn_*), and
               `inductor` (below) is lowering or decomposition: Inductor turns it into Philox code.
     fallback  ... the same, but `inductor` is fallback or none (randperm, multinomial, poisson,
               uniform, normal_ -> normal_functional): Inductor calls the aten op.
  6. fallback  Tag.dynamic_output_shape or Tag.data_dependent_output (nonzero, unique_*,
               masked_select, aten.index because of bool masks, ...): `dynamic_output = true`.
  7. reduction Tag.reduction on some overload (wins over pointwise: max.other is pointwise).
  8. pointwise Tag.pointwise on some overload.
  9. in-place variants without a deciding tag of their own (abs_ has only Tag.inplace) inherit the
     category of their base (abs), unless that is view/alloc/sync.
  Anything else is not emitted: rules/ops.toml covers what matters.

In-place: a name X_ whose functional overloads all write their first argument (schema
`Tensor(a!) self`) is `inplace = true` with `aten = [X]` when the op X exists; otherwise
`aten = [X_]`.

inductor: how torch.compile treats the op, over its functional overloads. An in-place variant X_
reports the op functionalization turns it into: X_functional when that exists (normal_ ->
normal_functional), else X (abs_ -> abs).
  lowering       some overload is rewritten by Inductor's replace_random pass into its Philox prims
                 (rand, randn, randint.low), or has a lowering in torch._inductor.lowering.lowerings
                 that is not a fallback handler (torch._inductor.kernel.* lowerings included),
                 unless the next rule applies first;
  decomposition  some overload is in select_decomp_table() (fallback_random=False) but not in the
                 base `decompositions` (the fast random decompositions: rand_like, bernoulli,
                 exponential, ...); or, when the op has no lowering, it is in select_decomp_table()
                 or has a CompositeImplicitAutograd kernel (decomposed while tracing);
  fallback       every lowering it has is a fallback handler (Inductor's `fallbacks` set);
  none           nothing: Inductor's implicit fallback calls the aten op.
  (An op that is in the decomposition table *and* has its own lowering has a conditional
  decomposition that returns NotImplemented in the common case, e.g. cat or amax, so the lowering
  wins there.)

compiled: written only when it differs from the category's default in kpredict.opfacts
(extern -> "extern", fallback -> "fallback", otherwise "generated"): extern ops whose lowerings are
all fallback handlers are "fallback"; other compute ops are "fallback" when `inductor` is fallback
or none, else "generated". view/alloc/sync entries carry none.

api: `torch.<name>`, `torch.nn.functional.<name>` when the attribute exists, is callable and is not
a class or module (name equality is taken as "dispatches to it", but for NOT_THE_OP); `torch.special.<x>` for aten
`special_<x>`, `torch.linalg.<x>` for aten `linalg_<x>`. methods: `<name>` when
hasattr(torch.Tensor, name). Neither is written for the kept private ops.

tags: the torch.Tag names found on the functional overloads (union, sorted), without the
near-universal pt2_compliant_tag. Informational only: kpredict does not read them.

source: which metadata decided the category, e.g. "torch Tag.pointwise".

Hand entries in rules/ops.toml override the generated ones field by field (kpredict.opfacts
.load_table); --report lists the ops where the two disagree on the category.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import tomllib
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "rules" / "generated.toml"
HAND = REPO / "rules" / "ops.toml"

HEADER = (
    "# Generated by scripts/gen_rules.py from torch {version}; do not edit: change the script or rules/ops.toml.\n"
)

# Schema says "returns an alias of self", but these copy when a view is impossible (or move memory):
# the alias annotation means "may alias". Not emitted; rules/ops.toml says what they do.
MAY_COPY = frozenset(
    {
        "coalesce",
        "contiguous",
        "flatten",
        "pin_memory",
        "ravel",
        "reshape",
        "reshape_as",
        "resolve_conj",
        "resolve_neg",
        "to",
    }
)

# Composite entry points that decompose straight into an extern op (aten.convolution / SDPA kernels).
EXTERN_ENTRY_POINTS = {
    "conv1d": "convolution",
    "conv2d": "convolution",
    "conv3d": "convolution",
    "conv_transpose1d": "convolution",
    "conv_transpose2d": "convolution",
    "conv_transpose3d": "convolution",
    "scaled_dot_product_attention": "scaled_dot_product_attention",
}

PRIVATE_KEEP_PREFIX = "_scaled_dot_product_"
FOREACH_PREFIX = "_foreach_"
FUSED_STEPS = frozenset({"_fused_adam", "_fused_adamw", "_fused_sgd", "_fused_adagrad"})
# GradScaler's multi-tensor unscale: one op over the gradients, writing them and found_inf
AMP_MULTI_TENSOR = frozenset({"_amp_foreach_non_finite_check_and_unscale"})
FOREACH_REDUCE = frozenset({"norm", "max", "powsum"})

# Python spellings whose name matches an aten op they do not call: torch.nn.functional.unfold is im2col
# (a copy into patches), aten.unfold is Tensor.unfold (a view). rules/modules.toml says what they do.
NOT_THE_OP = frozenset({"torch.nn.functional.unfold"})

CATEGORY_DEFAULT_COMPILED = {"extern": "extern", "fallback": "fallback"}
NO_COMPILED = frozenset({"view", "alloc", "sync", "noop"})
DROP_TAGS = frozenset({"pt2_compliant_tag"})


# ---------------------------------------------------------------------------------------- torch side
def _torch():
    import torch  # noqa: PLC0415 - the only import of torch in kpredict besides its tests

    return torch


def _is_out(ov) -> bool:
    return any(
        a.kwarg_only and a.alias_info is not None and a.alias_info.is_write for a in ov._schema.arguments
    )


def _mentions_tensor(ov) -> bool:
    s = ov._schema
    return any("Tensor" in str(x.type) for x in (*s.arguments, *s.returns))


def _functional_overloads(packet, registered: frozenset[str]) -> list:
    out = []
    for name in sorted(packet.overloads()):
        ov = getattr(packet, name)
        if ov.name() in registered and _mentions_tensor(ov) and not _is_out(ov):
            out.append(ov)
    return out


def _writes_self(ov) -> bool:
    args = ov._schema.arguments
    return bool(args) and args[0].alias_info is not None and args[0].alias_info.is_write


def _returns_alias(ov) -> bool:
    rets = ov._schema.returns
    return bool(rets) and all(r.alias_info is not None and not r.alias_info.is_write for r in rets)


def _returns_only_non_tensors(ov) -> bool:
    rets = ov._schema.returns
    return bool(rets) and not any("Tensor" in str(r.type) for r in rets)


def _has_tensor_list_arg(ov) -> bool:
    return any(str(a.type).startswith(("List[Tensor", "List[Optional[Tensor")) for a in ov._schema.arguments)


class _Inductor:
    """Inductor's view of aten ops, with config at its defaults (fallback_random=False)."""

    def __init__(self, torch):
        import torch._inductor.config as cfg  # noqa: PLC0415
        import torch._inductor.lowering as lowering  # noqa: PLC0415
        from torch._inductor import decomposition  # noqa: PLC0415

        with cfg.patch(fallback_random=False):
            self.table = dict(decomposition.select_decomp_table())
        self.base_decomps = dict(decomposition.decompositions)
        self.lowerings = lowering.lowerings
        self.rewritten = _replace_random_targets()
        self._cia = torch._C.DispatchKey.CompositeImplicitAutograd

    def composite_implicit(self, ovs) -> bool:
        return any(ov.has_kernel_for_dispatch_key(self._cia) for ov in ovs)

    def extern_module(self, ovs) -> str | None:
        mods = set()
        for ov in ovs:
            fn = self.lowerings.get(ov)
            mod = getattr(fn, "__module__", "") or ""
            if mod.startswith("torch._inductor.kernel."):
                mods.add(mod)
        return min(mods) if mods else None

    def status(self, ovs) -> str:
        if self.extern_module(ovs):
            return "lowering"
        if any(ov in self.rewritten for ov in ovs):
            return "lowering"
        if any(ov in self.table and ov not in self.base_decomps for ov in ovs):
            return "decomposition"
        lowered = [self.lowerings[ov] for ov in ovs if ov in self.lowerings]
        if lowered:
            if all(getattr(fn, "_is_fallback_handler", False) for fn in lowered):
                return "fallback"
            return "lowering"
        if any(ov in self.table for ov in ovs) or self.composite_implicit(ovs):
            return "decomposition"
        return "none"


def _dispatcher_ops(torch) -> frozenset[str]:
    """Qualified names ("aten::add.Tensor") of the overloads registered with the dispatcher (drops
    TorchScript-only builtins such as aten::dequantize.list)."""
    return frozenset(n for n in torch._C._dispatch_get_all_op_names() if n.startswith("aten::"))


def _replace_random_targets() -> frozenset:
    """Overloads that Inductor's replace_random pass rewrites into its own Philox prims (rand, randn,
    randint.low): generated code, although their lowerings fall back when fallback_random=True."""
    try:
        from torch._inductor.fx_passes import replace_random  # noqa: PLC0415

        keys = replace_random.patterns.patterns.keys()
    except (ImportError, AttributeError):
        return frozenset()
    return frozenset(target for kind, target in keys if kind == "call_function")


def _aten_names(registered: frozenset[str]) -> list[str]:
    return sorted({n[len("aten::") :].split(".", 1)[0] for n in registered})


def _wanted(name: str) -> bool:
    if not name.startswith("_"):
        return True
    return name.startswith(PRIVATE_KEEP_PREFIX) and "backward" not in name


def _api_spellings(torch, name: str) -> list[str]:
    import types  # noqa: PLC0415

    def ok(obj) -> bool:
        return callable(obj) and not isinstance(obj, (type, types.ModuleType))

    out = []
    for mod, prefix in ((torch, "torch"), (torch.nn.functional, "torch.nn.functional")):
        if ok(getattr(mod, name, None)) and f"{prefix}.{name}" not in NOT_THE_OP:
            out.append(f"{prefix}.{name}")
    for sub in ("special", "linalg"):
        if name.startswith(sub + "_"):
            short = name[len(sub) + 1 :]
            mod = getattr(torch, sub)
            if short and ok(getattr(mod, short, None)):
                out.append(f"torch.{sub}.{short}")
    return sorted(out)


def _classify(name, ovs, tags, ind: _Inductor, status: str):
    """(category, source, extra fields) or None. `tags` is the union over functional overloads."""
    ext_mod = ind.extern_module(ovs)
    if ext_mod:
        return "extern", f"Inductor lowering in {ext_mod}", {}
    if name.startswith(PRIVATE_KEEP_PREFIX):
        if status != "fallback":
            return None  # e.g. _scaled_dot_product_attention_math: decomposes into bmm + softmax
        return "extern", "scaled-dot-product attention kernel (Inductor calls the aten op)", {}
    if name in EXTERN_ENTRY_POINTS:
        return "extern", f"composite entry point of aten.{EXTERN_ENTRY_POINTS[name]}", {}
    if name == "empty" or name.startswith(("empty_", "new_empty")):
        return "alloc", "name empty*/new_empty*: allocation only", {}
    if "data_dependent_output" in tags and all(_returns_only_non_tensors(o) for o in ovs):
        return "sync", "torch Tag.data_dependent_output, returns a host value", {}
    if "inplace_view" in tags:
        return "view", "torch Tag.inplace_view", {}
    if name not in MAY_COPY and all(o.is_view and _returns_alias(o) for o in ovs):
        return "view", "schema: returns an alias of an input (OpOverload.is_view)", {}
    if "nondeterministic_seeded" in tags and not any(_has_tensor_list_arg(o) for o in ovs):
        if status in ("fallback", "none"):
            return "fallback", f"torch Tag.nondeterministic_seeded, Inductor {status}", {}
        return "random", "torch Tag.nondeterministic_seeded", {}
    if "dynamic_output_shape" in tags or "data_dependent_output" in tags:
        tag = "dynamic_output_shape" if "dynamic_output_shape" in tags else "data_dependent_output"
        return "fallback", f"torch Tag.{tag}", {"dynamic_output": True}
    if "reduction" in tags:
        return "reduction", "torch Tag.reduction", {}
    if "pointwise" in tags:
        return "pointwise", "torch Tag.pointwise", {}
    return None


def _compiled(category: str, status: str, ovs, ind: _Inductor) -> str | None:
    if category in NO_COMPILED:
        return None
    if category == "extern":
        lowered = [ind.lowerings[o] for o in ovs if o in ind.lowerings]
        fb = bool(lowered) and all(getattr(f, "_is_fallback_handler", False) for f in lowered)
        value = "fallback" if fb else "extern"
    elif status in ("fallback", "none"):  # none: Inductor's implicit fallback
        value = "fallback"
    else:
        value = "generated"
    return None if value == CATEGORY_DEFAULT_COMPILED.get(category, "generated") else value


def collect() -> tuple[str, dict[str, dict]]:
    """Return (torch version, {op name: entry}) derived from the installed torch."""
    torch = _torch()
    ind = _Inductor(torch)
    registered = _dispatcher_ops(torch)
    names = _aten_names(registered)
    packets = {}
    for name in names:
        if not _wanted(name):
            continue
        packet = getattr(torch.ops.aten, name, None)
        if packet is None:
            continue
        ovs = _functional_overloads(packet, registered)
        if ovs:
            packets[name] = ovs

    def tags_of(ovs) -> set[str]:
        return {t.name for o in ovs for t in o.tags} - DROP_TAGS

    entries: dict[str, dict] = {}
    inplace_ops = []
    for name, ovs in packets.items():
        if name.endswith("_") and all(_writes_self(o) for o in ovs):
            inplace_ops.append(name)
            continue
        e = _entry(torch, ind, name, ovs, tags_of(ovs), None)
        if e:
            entries[name] = e
    # In-place variants after all base ops, so that they can inherit a base's category.
    for name in inplace_ops:
        ovs, base = packets[name], name[:-1]
        info = None
        if base in packets:
            # Functionalization rewrites X_ into X_functional when that exists (normal_), else X.
            functional = base + "_functional" if base + "_functional" in packets else base
            info = _Base(base, packets[functional], entries.get(base))
        e = _entry(torch, ind, name, ovs, tags_of(ovs), info, inplace=True)
        if e:
            entries[name] = e
    for name in names:
        if name.startswith(FOREACH_PREFIX) or name.rstrip("_") in FUSED_STEPS | AMP_MULTI_TENSOR:
            e = _multi_tensor_entry(torch, ind, name, getattr(torch.ops.aten, name, None), registered, entries)
            if e:
                entries[name] = e
    return torch.__version__, dict(sorted(entries.items()))


def _multi_tensor_entry(torch, ind, name, packet, registered, entries) -> dict | None:
    """A `_foreach_<x>` or fused optimizer step: one op over lists of tensors (module docstring)."""
    if packet is None:
        return None
    ovs = [getattr(packet, o) for o in sorted(packet.overloads())]
    ovs = [o for o in ovs if o.name() in registered and not _is_out(o)]
    if not ovs or not any(_has_tensor_list_arg(o) for o in ovs):
        return None
    inplace = name.endswith("_")
    base = name[len(FOREACH_PREFIX):].rstrip("_") if name.startswith(FOREACH_PREFIX) else None
    if base == "mm":
        return None  # a list of matmuls, not elementwise: left to rules/ops.toml
    reduce = base in FOREACH_REDUCE
    first = next(o for o in ovs if _has_tensor_list_arg(o))
    writes = [i for i, a in enumerate(first._schema.arguments)
              if str(a.type).startswith(("List[Tensor", "Tensor")) and a.alias_info is not None and a.alias_info.is_write]
    category = "reduction" if reduce else entries.get(base or "", {}).get("category", "pointwise")
    if category not in ("pointwise", "reduction"):
        category = "pointwise"
    e: dict = {"category": category, "aten": [base or name.rstrip("_")]}
    if inplace:
        e["inplace"] = True
    e["shape"] = "foreach_reduce" if reduce else "foreach"
    if writes:
        e["list_writes"] = writes
    if not base and name.rstrip("_") in FUSED_STEPS:
        aside = [i for i, a in enumerate(first._schema.arguments)
                 if str(a.type).startswith("List[Tensor") and i not in writes]
        if aside:
            e["list_aside"] = aside
    if callable(getattr(torch, name, None)):
        e["api"] = [f"torch.{name}"]
    e["tags"] = sorted({t.name for o in ovs for t in o.tags} - DROP_TAGS)
    e["inductor"] = ind.status(ovs)
    what = f"_foreach_ variant of {base}" if base else (
        "GradScaler's unscale" if name.rstrip("_") in AMP_MULTI_TENSOR else "fused optimizer step")
    e["source"] = f"{what}: one op over lists of tensors, list_writes from the schema's Tensor(a!)[] arguments"
    return e


class _Base(NamedTuple):
    """What an in-place op X_ inherits from: X, the overloads of what functionalization makes of
    X_ (X_functional or X), and X's entry when one was emitted."""

    name: str
    functional_ovs: list
    entry: dict | None


def _entry(torch, ind, name, ovs, tags, base: _Base | None, inplace: bool = False) -> dict | None:
    status_ovs = base.functional_ovs if base else ovs
    status = ind.status(status_ovs)
    got = _classify(name, ovs, tags, ind, status)
    if got is None and base and base.entry and base.entry["category"] not in ("view", "alloc", "sync"):
        extra = {k: v for k, v in base.entry.items() if k == "dynamic_output"}
        got = base.entry["category"], f"in-place variant of {base.name}: {base.entry['source']}", extra
    if got is None:
        return None
    category, source, extra = got
    e: dict = {"category": category}
    if inplace:
        e["aten"] = [base.name if base else name]
        e["inplace"] = True
    else:
        e["aten"] = [EXTERN_ENTRY_POINTS.get(name, name)] if category == "extern" else [name]
    e.update(extra)
    api = [] if name.startswith("_") else _api_spellings(torch, name)
    if api:
        e["api"] = api
    if not name.startswith("_") and hasattr(torch.Tensor, name):
        e["methods"] = [name]
    e["tags"] = sorted(tags)
    e["inductor"] = status
    compiled = _compiled(category, status, status_ovs, ind)
    if compiled:
        e["compiled"] = {"cpu": compiled, "cuda": compiled}
    e["source"] = source
    return e


# ---------------------------------------------------------------------------------------- TOML out
def _q(s: str) -> str:
    out = []
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ch == "\x7f":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return _q(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in sorted(v)) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_value(v[k])}" for k in sorted(v)) + " }"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


FIELD_ORDER = ("category", "aten", "inplace", "dynamic_output", "shape", "list_writes", "list_aside", "api", "methods", "tags",
               "inductor", "compiled", "source")


def render(version: str, entries: dict[str, dict]) -> str:
    lines = [
        HEADER.format(version=version).rstrip("\n"),
        "[meta]",
        f"torch = {_q(version)}",
        'generator = "scripts/gen_rules.py"',
    ]
    for name in sorted(entries):
        e = entries[name]
        lines.append("")
        lines.append(f"[op.{name}]")
        for key in FIELD_ORDER:
            if key in e:
                lines.append(f"{key} = {_value(e[key])}")
        unknown = set(e) - set(FIELD_ORDER)
        assert not unknown, (name, unknown)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------- report
def report(entries: dict[str, dict], hand_path: Path = HAND, torch=None) -> list[str]:
    """Human-readable disagreements between generated entries and the hand file (and, given torch,
    hand spellings that the installed torch does not have)."""
    hand = tomllib.loads(hand_path.read_text())
    hops = hand.get("op", {})
    out = []
    for name in sorted(hops):
        h, g = hops[name], entries.get(name)
        if g is None:
            continue
        hc, gc = h.get("category"), g["category"]
        if hc is not None and hc != gc:
            line = f"category  {name}: hand {hc!r} vs generated {gc!r} ({g['source']}; hand: {h.get('source', '')})"
            out.append(line)
        if "compiled" in g and "compiled" not in h and hc is not None and hc != gc:
            default = CATEGORY_DEFAULT_COMPILED.get(hc, "generated")
            if any(v != default for v in g["compiled"].values()):
                out.append(f"compiled  {name}: hand {hc!r} entry inherits generated compiled={g['compiled']}")
    claimed = {}
    for name, g in entries.items():
        for s in g.get("api", []):
            claimed[f"api {s}"] = name
        for m in g.get("methods", []):
            claimed[f"method {m}"] = name
    hand_claims = {}
    for name, h in hops.items():
        for s in h.get("api", []):
            hand_claims[f"api {s}"] = name
        for m in h.get("methods", []):
            hand_claims[f"method {m}"] = name
    for s, name in hand.get("api", {}).items():
        hand_claims[f"api {s}"] = name
    for m, name in hand.get("methods", {}).items():
        hand_claims[f"method {m}"] = name
    for key in sorted(hand_claims):
        if key in claimed and claimed[key] != hand_claims[key]:
            out.append(f"spelling  {key}: hand -> {hand_claims[key]}, generated -> {claimed[key]} (hand wins)")
    if torch is not None:
        for key in sorted(hand_claims):
            kind, spelling = key.split(" ", 1)
            if kind == "method":
                found = hasattr(torch.Tensor, spelling)
            else:
                obj = torch if spelling.startswith("torch.") else None
                for part in spelling.split(".")[1:]:
                    obj = getattr(obj, part, None)
                found = obj is not None
            if not found:
                out.append(f"missing   {key} (hand -> {hand_claims[key]}) does not exist in torch {torch.__version__}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="file to write (default rules/generated.toml)")
    ap.add_argument("--check", action="store_true", help="do not write; fail if --out differs")
    ap.add_argument("--report", action="store_true", help="list disagreements with rules/ops.toml")
    args = ap.parse_args(argv)

    version, entries = collect()
    text = render(version, entries)

    if args.report:
        lines = report(entries, torch=_torch())
        print(f"# {len(lines)} disagreement(s) between generated entries and {HAND.name}")
        for line in lines:
            print(line)

    if args.check:
        old = args.out.read_text() if args.out.is_file() else ""
        if old == text:
            print(f"{args.out}: up to date ({len(entries)} ops, torch {version})")
            return 0
        meta = tomllib.loads(old).get("meta", {}) if old else {}
        if meta.get("torch") and meta["torch"] != version:
            print(f"{args.out} was generated from torch {meta['torch']}, installed is {version}", file=sys.stderr)
        sys.stderr.writelines(
            difflib.unified_diff(old.splitlines(True), text.splitlines(True), str(args.out), "regenerated", n=1)
        )
        print(f"{args.out}: out of date; run python scripts/gen_rules.py", file=sys.stderr)
        return 1

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    counts: dict[str, int] = {}
    for e in entries.values():
        counts[e["category"]] = counts.get(e["category"], 0) + 1
    summary = ", ".join(f"{k} {counts[k]}" for k in sorted(counts))
    print(f"wrote {args.out}: {len(entries)} ops from torch {version} ({summary})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
