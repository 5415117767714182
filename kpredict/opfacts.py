"""Facts about ops, loaded from the TOML files in rules/.

rules/generated.toml is written by scripts/gen_rules.py from torch's own metadata (op tags,
schemas, Inductor's lowerings and fallbacks); rules/ops.toml holds the hand-written entries and
overrides, each with a `source`. This module only reads them; it never imports torch.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path

# Categories the models understand. Everything in rules/ maps onto these.
CATEGORIES = (
    "pointwise",  # elementwise math, casts, copies, creation fills, gathers: fusible
    "reduction",  # sum/mean/amax/softmax/layer_norm...: fusible with same-row pointwise
    "view",  # metadata only: no kernel anywhere
    "alloc",  # empty*: allocation only, no kernel
    "extern",  # matmul, conv, attention: a library kernel, never fused
    "fallback",  # Inductor calls the aten op (sort, topk, nonzero, ...)
    "random",  # RNG: fusible, plus one seed launch per compiled graph
    "sync",  # .item(), .tolist(): a device->host copy and a graph break
    "noop",  # returns its input (detach, .to() of the same dtype handled by free_when)
)


@dataclass(frozen=True, slots=True)
class OpFact:
    name: str
    category: str
    aten: tuple[str, ...] = ()
    eager: dict[str, int] = field(default_factory=dict)  # target -> kernels in eager mode
    compiled: dict[str, str] = field(default_factory=dict)  # target -> generated|extern|fallback
    shape: str = "same"
    dtype: str = "same"
    inplace: bool = False
    free_when: str | None = None
    returns: str = "tensor"
    eager_traffic: tuple[int, int] | None = None  # (reads, writes) when not the default
    graph_break: str | None = None  # reason, when the op breaks a torch.compile graph
    stats_outputs: int = 0  # extra per-row outputs written in eager (layer_norm's mean and rstd)
    wrap_scalars: bool = False  # Python scalar arguments become 0-dim tensors first (aten.scalar_tensor)
    scalar_operand: bool = False  # a Python number argument is a 0-dim TensorIterator operand (output layout)
    # when eager launches 2+ kernels: a copy of the input, then the in-place op (masked_fill), or,
    # when false, one op's kernels over the same tensors (group_norm on cuda: moments, params, apply)
    eager_copy: bool = True
    # target -> profiler rows the op makes when run eagerly inside a compiled call (a skipped frame)
    # though a dispatch mode sees a view: the CPU oracle counts those rows (unsafe_split)
    profiler_row: dict[str, int] = field(default_factory=dict)
    # the name of the aten op eager runs, where `aten` lists the ops of Inductor's decomposition that name
    # the fused kernel instead (upsample_bilinear2d: eager runs it, compiled kernels say _unsafe_index)
    eager_name: str | None = None
    # nodes of the FX graph Inductor receives for one such op (its decomposition, getitems included):
    # what decide_layout_opt counts against the convolutions
    fx_nodes: int = 1
    # compiled: Inductor's lowering calls realize_hint() on the input (a window op reads each element
    # several times): an unrealized pointwise input that loads more than one buffer becomes a kernel
    realize_input: bool = False
    # a store at indices (scatter, index_add, ...): on CUDA compiled a kernel of its own (models.inductor
    # split_scatter_stores)
    indirect_store: bool = False
    # a multi-tensor op (shape "foreach"/"foreach_reduce"): the positions of the tensor-list arguments it
    # writes (an in-place _foreach_ op its first; a fused optimizer step params, grads and moments)
    list_writes: tuple[int, ...] = ()
    list_aside: tuple[int, ...] = ()  # tensor lists outside multi_tensor_apply's depth (a fused step's state_steps)
    # Inductor's post-grad graph reads the op's inputs with ops torch tags pointwise (Tag.pointwise; an in-place
    # op by its functional form, an op by its aten ops, a loss by its decomposition's first op): a linear's bias
    # goes into its users' kernel only when all are
    source: str = ""
    pointwise_use: bool = False
    # the op torch runs instead when the second argument is a tensor (torch.max(a, b): aten max.other,
    # the elementwise maximum, not a reduction)
    tensor_other: str | None = None

    def eager_kernels(self, target: str) -> int:
        if self.category in ("view", "alloc", "noop", "sync"):
            return self.eager.get(target, 0)
        return self.eager.get(target, 1)

    def own_launches(self, target: str) -> int:
        """Launches of the op's own kernels over the same tensors: its eager count when `eager_copy`
        is false (group_norm, topk on cuda), else 1 (more kernels are then a copy plus the op)."""
        return self.eager_kernels(target) if not self.eager_copy else 1

    def compiled_as(self, target: str) -> str:
        if self.category == "extern":
            return self.compiled.get(target, "extern")
        if self.category == "fallback":
            return self.compiled.get(target, "fallback")
        return self.compiled.get(target, "generated")


@dataclass(frozen=True, slots=True)
class GradStep:
    """One step of an op's backward (rules/autograd.toml): an aten op, or a view when `op` is "",
    "view" or "expand"; `args` are names (grad, in0, out1, t2) or numbers, `outs` what it writes."""

    op: str
    args: tuple[str, ...]
    outs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GradRule:
    steps: tuple[GradStep, ...]
    formula: str = ""


def parse_step(text: str) -> GradStep:
    """`"mm(grad, in1) -> g0"`, `"grad -> g1"`, `"native_layer_norm_backward(...) -> g0, g1, g2"`."""
    lhs, arrow, rhs = text.partition("->")
    outs = tuple(o.strip() for o in rhs.split(",") if o.strip())
    lhs = lhs.strip()
    if not arrow or not outs or not lhs:
        raise ValueError(f"rules/autograd.toml: step {text!r} is not 'op(args) -> outs'")
    if "(" not in lhs:
        return GradStep("", (lhs,), outs)
    op, _, rest = lhs.partition("(")
    args = tuple(a.strip() for a in rest.rstrip(")").split(",") if a.strip())
    return GradStep(op.strip(), args, outs)


def _grad_rules(d: dict) -> tuple[dict[str, GradRule], dict[str, str]]:
    rules = {name: GradRule(tuple(parse_step(s) for s in r["steps"]), r.get("formula", ""))
             for name, r in d.get("backward", {}).items()}
    views = {name: kind for kind, names in d.get("views", {}).items() if isinstance(names, list) for name in names}
    return rules, views


@dataclass(slots=True)
class OpTable:
    ops: dict[str, OpFact]
    api: dict[str, str]  # dotted python name (torch.nn.functional.gelu) -> op name
    methods: dict[str, str]  # Tensor method name -> op name
    modules: dict[str, dict]  # torch.nn module class -> catalogue entry (issue 4)
    version: str
    functions: dict[str, dict] = field(default_factory=dict)  # functional decompositions (modules.toml)
    # model libraries the analyzed tree does not hold (libraries.toml)
    registries: dict[str, dict] = field(default_factory=dict)  # dotted mapping -> {instances, entries}
    library_classes: dict[str, str] = field(default_factory=dict)  # dotted class -> catalogue module
    traceable: tuple[str, ...] = ()  # dotted prefixes Dynamo traces without a graph break
    library_names: frozenset[str] = frozenset()  # every dotted name libraries.toml describes
    containers: tuple[str, ...] = ()  # dotted prefixes whose classes are output containers (ModelOutput)
    overrides: dict[str, str] = field(default_factory=dict)  # dotted function -> catalogue function, in-tree too
    init_decorators: dict[str, dict] = field(default_factory=dict)  # dotted decorator -> {attr}: config registrars
    class_decorators: dict[str, dict] = field(default_factory=dict)  # dotted decorator -> {forward, attrs, methods}
    # dotted classes whose own __init_subclass__ runs for their subclasses in the tree (`subclass_hook`)
    subclass_hooks: frozenset[str] = frozenset()
    # eager autograd (rules/autograd.toml): op name (or "name/N" for N tensor inputs) -> its backward,
    # and forward view names -> how their gradient goes back (permute, expand, split, partial, stop)
    backward: dict[str, GradRule] = field(default_factory=dict)
    grad_views: dict[str, str] = field(default_factory=dict)

    def library_name(self, dotted: str) -> bool:
        """Whether `dotted` is a name libraries.toml describes (or lies under a traceable module)."""
        return dotted in self.library_names or self.is_traceable(dotted)

    def is_traceable(self, dotted: str) -> bool:
        return any(dotted == t or dotted.startswith(t + ".") for t in self.traceable)

    def is_container(self, dotted: str) -> bool:
        return any(dotted.startswith(t + ".") for t in self.containers)

    def for_api(self, dotted: str) -> OpFact | None:
        name = self.api.get(dotted)
        return self.ops.get(name) if name else None

    def for_method(self, method: str) -> OpFact | None:
        name = self.methods.get(method)
        return self.ops.get(name) if name else None


def _rules_dir() -> Path:
    try:
        p = resources.files("kpredict._rules")
        if p.joinpath("ops.toml").is_file():
            return Path(str(p))
    except (ModuleNotFoundError, TypeError):
        pass
    return Path(__file__).resolve().parent.parent / "rules"


def _as_target_map(v, default_targets=("cuda", "cpu")) -> dict:
    if v is None:
        return {}
    if isinstance(v, dict):
        return dict(v)
    return {t: v for t in default_targets}


def _fact(name: str, d: dict, base: OpFact | None = None) -> OpFact:
    b = base
    et = d.get("eager_traffic", b.eager_traffic if b else None)
    return OpFact(
        name=name,
        category=d.get("category", b.category if b else "pointwise"),
        aten=tuple(d.get("aten", b.aten if b else (name.rstrip("_") or name,))),
        eager={**(b.eager if b else {}), **_as_target_map(d.get("eager"))},
        compiled={**(b.compiled if b else {}), **_as_target_map(d.get("compiled"))},
        shape=d.get("shape", b.shape if b else "same"),
        dtype=d.get("dtype", b.dtype if b else "same"),
        inplace=d.get("inplace", b.inplace if b else False),
        free_when=d.get("free_when", b.free_when if b else None),
        returns=d.get("returns", b.returns if b else "tensor"),
        eager_traffic=tuple(et) if et is not None else None,
        graph_break=d.get("graph_break", b.graph_break if b else None),
        stats_outputs=d.get("stats_outputs", b.stats_outputs if b else 0),
        wrap_scalars=d.get("wrap_scalars", b.wrap_scalars if b else False),
        scalar_operand=d.get("scalar_operand", b.scalar_operand if b else False),
        eager_copy=d.get("eager_copy", b.eager_copy if b else True),
        profiler_row={**(b.profiler_row if b else {}), **_as_target_map(d.get("profiler_row"))},
        eager_name=d.get("eager_name", b.eager_name if b else None),
        fx_nodes=d.get("fx_nodes", b.fx_nodes if b else 1),
        realize_input=d.get("realize_input", b.realize_input if b else False),
        indirect_store=d.get("indirect_store", b.indirect_store if b else False),
        list_writes=tuple(d.get("list_writes", b.list_writes if b else ())),
        list_aside=tuple(d.get("list_aside", b.list_aside if b else ())),
        source=d.get("source", b.source if b else ""),
        pointwise_use=d.get("pointwise_use", b.pointwise_use if b else "pointwise" in d.get("tags", ())),
        tensor_other=d.get("tensor_other", b.tensor_other if b else None),
    )


def _tag_pointwise(ops: dict[str, OpFact], hand: dict[str, dict]) -> None:
    """Fill `pointwise_use` where neither torch's tags nor a hand entry set it: an in-place op as its
    functional form (functionalization leaves that in the graph), an op as the aten ops it names."""
    own = {n for n, f in ops.items() if f.pointwise_use}
    for name, f in list(ops.items()):
        if f.pointwise_use or "pointwise_use" in hand.get(name, {}):
            continue
        base = name.rstrip("_") if f.inplace else None
        if (base is not None and base in own) or (f.aten and all(a in own for a in f.aten)):
            ops[name] = replace(f, pointwise_use=True)


def load_table(rules_dir: Path | None = None) -> OpTable:
    """Merge generated facts with hand entries (hand wins, field by field)."""
    d = rules_dir or _rules_dir()
    gen_path = d / "generated.toml"
    gen = tomllib.loads(gen_path.read_text()) if gen_path.is_file() else {}
    hand = tomllib.loads((d / "ops.toml").read_text())
    mods_path = d / "modules.toml"
    mods = tomllib.loads(mods_path.read_text()) if mods_path.is_file() else {}

    ops: dict[str, OpFact] = {}
    api: dict[str, str] = {}
    methods: dict[str, str] = {}
    for name, g in gen.get("op", {}).items():
        ops[name] = _fact(name, g)
        for spelling in g.get("api", []):
            api[spelling] = name
        for m in g.get("methods", []):
            methods[m] = name
    for name, h in hand.get("op", {}).items():
        ops[name] = _fact(name, h, ops.get(name))
        for spelling in h.get("api", []):
            api[spelling] = name
        for m in h.get("methods", []):
            methods[m] = name
    _tag_pointwise(ops, hand.get("op", {}))
    api.update(hand.get("api", {}))
    methods.update(hand.get("methods", {}))
    for k, v in list(api.items()):
        if v not in ops:
            del api[k]
    for k, v in list(methods.items()):
        if v not in ops:
            del methods[k]
    libs_path = d / "libraries.toml"
    libs = tomllib.loads(libs_path.read_text()) if libs_path.is_file() else {}
    modules = {**mods.get("module", {}), **libs.get("module", {})}
    functions = {**mods.get("function", {}), **libs.get("function", {})}
    library_classes = {dotted: name for name, m in libs.get("module", {}).items() for dotted in m.get("api", [])}
    version = f"{gen.get('meta', {}).get('torch', 'none')}+{hand.get('meta', {}).get('version', '0')}"
    if libs:
        version += f"+lib{libs.get('meta', {}).get('version', '0')}"
    registries = libs.get("registry", {})
    ag_path = d / "autograd.toml"
    backward, grad_views = _grad_rules(tomllib.loads(ag_path.read_text()) if ag_path.is_file() else {})
    names = {*registries, *library_classes, *(a for f in libs.get("function", {}).values() for a in f.get("api", []))}
    # and the objects they are reached through: `from ...modeling_utils import ALL_ATTENTION_FUNCTIONS`
    names |= {n.rsplit(".", k)[0] for n in list(names) for k in range(1, n.count("."))}
    return OpTable(ops=ops, api=api, methods=methods, modules=modules, version=version, functions=functions,
                   registries=registries, library_classes=library_classes,
                   traceable=tuple(libs.get("traceable", {}).get("modules", [])), library_names=frozenset(names),
                   containers=tuple(libs.get("containers", {}).get("modules", [])),
                   overrides={a: name for name, f in libs.get("function", {}).items() if f.get("override")
                              for a in f.get("api", [])},
                   init_decorators=libs.get("init_decorator", {}),
                   class_decorators=libs.get("class_decorator", {}),
                   subclass_hooks=frozenset(a for m in libs.get("module", {}).values() if m.get("subclass_hook")
                                            for a in m.get("api", [])),
                   backward=backward, grad_views=grad_views)


def load_autocast(rules_dir: Path | None = None) -> dict:
    """Autocast's cast policy per device type (rules/autocast.toml): {device: {"dtype", "policy": {op: policy}},
    "aliases": {name: aten op}}."""
    d = rules_dir or _rules_dir()
    raw = tomllib.loads((d / "autocast.toml").read_text())
    out: dict = {"aliases": dict(raw.get("aliases", {}))}
    for device in ("cpu", "cuda"):
        conf = raw.get(device, {})
        policy = {op: kind for kind in ("lower_precision_fp", "fp32", "fp32_set_opt_dtype", "fp32_append_dtype",
                                        "promote", "banned") for op in conf.get(kind, [])}
        out[device] = {"dtype": conf.get("default_dtype", "float32"), "policy": policy}
    return out


@lru_cache(maxsize=1)
def default_autocast() -> dict:
    return load_autocast()


def load_targets(rules_dir: Path | None = None) -> dict[str, dict]:
    """Per-target Inductor facts (rules/targets.toml): the only place cuda and cpu differ in code paths."""
    d = rules_dir or _rules_dir()
    return tomllib.loads((d / "targets.toml").read_text())["target"]


@lru_cache(maxsize=2)
def default_targets() -> dict[str, dict]:
    return load_targets()


def attention_kernel(conf: dict, dtype: str | None) -> str:
    """The fused attention kernel a target runs for a dtype (rules/targets.toml sdpa_kernel)."""
    kernels = conf["sdpa_kernel"]
    return kernels.get(dtype or "float32", kernels["float32"])


@lru_cache(maxsize=4)
def default_table() -> OpTable:
    """The packaged table, loaded once per process (a pure function of the files on disk)."""
    return load_table()
