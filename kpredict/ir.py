"""The dataclasses that flow between kpredict's stages, all in one place.

source -> frontend (FunctionGraph) -> models (Kernel lists) -> traffic (Figures) -> report (FileReport).
Nothing here knows libcst or torch, so every stage and every renderer can import it cheaply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

Target = Literal["cuda", "cpu"]
TARGETS: tuple[str, ...] = ("cuda", "cpu")

# What a count can be: a plain int, or a symbolic expression in unknown names ("4 + 13*n_layer").
Count = int | str


@dataclass(frozen=True, slots=True)
class Span:
    """A source range, 1-based lines and 0-based columns (libcst's convention)."""

    line: int
    col: int
    end_line: int
    end_col: int


@dataclass(frozen=True, slots=True)
class TensorMeta:
    """What is known statically about a tensor: each part may be unknown (None)."""

    shape: tuple[int | None, ...] | None = None
    dtype: str | None = None
    device: str | None = None

    @property
    def numel(self) -> int | None:
        return None if self.shape is None else _numel(self.shape)

    @property
    def nbytes(self) -> int | None:
        n = self.numel
        size = DTYPE_SIZES.get(self.dtype or "")
        if n is None or size is None:
            return None
        return n * size


def shape_numel(shape: Sequence[int | None]) -> int | None:
    """Elements of a shape; None when a dimension is unknown."""
    n = 1
    for d in shape:
        if d is None:
            return None
        n *= d
    return n


# a tensor's element count is asked hundreds of thousands of times per file, for a few hundred shapes
_numel = lru_cache(maxsize=8192)(shape_numel)


DTYPE_SIZES: dict[str, int] = {
    "float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4,
    "int16": 2, "int8": 1, "uint8": 1, "bool": 1, "complex64": 8, "complex128": 16,
    "float8_e4m3fn": 1, "float8_e5m2": 1,
}


@dataclass(slots=True)
class Value:
    """A tensor value in the op graph. Views share `storage` with their base."""

    vid: int
    meta: TensorMeta
    storage: int
    contiguous: bool = True
    producer: int | None = None  # op id; None for function inputs and constants
    is_input: bool = False
    name: str | None = None
    # its last dim is not the one adjacent in memory (a transposed view, a result laid out like one):
    # a reduction over that dim loads across rows, which Inductor's reduction hint calls outer
    strided_rows: bool = False
    # autograd records what is done with it (nn.Parameter, requires_grad=True): a leaf of the backward
    requires_grad: bool = False


# Op.region of an op that torch.compile runs outside any graph: Dynamo skips the frame it is in (a
# frame that holds an nn.LSTM/GRU/RNN, rules/modules.toml `dynamo = "skip"`), so its ops run eagerly
EAGER_REGION = -1


@dataclass(slots=True)
class Op:
    """One tensor operation found in the source, after resolving aliases and calls.

    `category` comes from rules/ (pointwise, reduction, view, extern, ...); `eager_kernels`
    is what eager mode launches for it on the chosen target; `aten` are the names Inductor
    would put into a fused kernel's name.
    """

    oid: int
    name: str
    category: str
    span: Span
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    mutates: tuple[int, ...] = ()
    aten: tuple[str, ...] = ()
    eager_kernels: int = 0
    eager_reads: int | None = None  # override of the default transfer count (multi-kernel ops)
    eager_writes: int | None = None
    syncs: int = 0
    graph: int = 0  # index of the torch.compile graph this op falls in (breaks increment it)
    compiled: str = "generated"  # generated | extern | fallback | eager (how Inductor emits it)
    reduce_numel: int | None = None  # for reductions: number of outputs x reduced length known?
    reduce_len: int | None = None
    reduce_axis: str | None = None  # "inner" | "outer" | "all"; "window" for a pooling op (reduce_len: its size)
    free_reason: str | None = None  # why a normally launching op launches nothing here
    via: tuple[str, ...] = ()  # inlined call chain: qualnames of the helpers it came through
    region: int | None = None  # set when the op runs inside a call through a torch.compile'd function
    only: str | None = None  # "eager" | "compiled": the op exists in that mode only (torch.nn catalogue)
    phase: str = "forward"  # forward | backward | optimizer: the part of a training step it belongs to
    # in a custom op's body (`with __kp_opaque__()`): "call" for its first launching op, "inner" for
    # the others, which Inductor's wrapper does not call itself (the op launches them)
    opaque: str = ""

    def moved(self, oid: int, inputs: tuple[int, ...], outputs: tuple[int, ...], mutates: tuple[int, ...],
              graph: int, via: tuple[str, ...], span: Span) -> Op:
        """A copy with new ids and place: a replayed call summary makes hundreds of thousands of
        these, and one positional call costs a fifth of dataclasses.replace."""
        return Op(oid, self.name, self.category, span, inputs, outputs, mutates, self.aten, self.eager_kernels,
                  self.eager_reads, self.eager_writes, self.syncs, graph, self.compiled, self.reduce_numel,
                  self.reduce_len, self.reduce_axis, self.free_reason, via, self.region, self.only, self.phase,
                  self.opaque)


@dataclass(frozen=True, slots=True)
class GraphBreak:
    line: int
    reason: str


@dataclass(frozen=True, slots=True)
class Unknown:
    """Something that looked like a tensor operation but could not be classified."""

    line: int
    name: str


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A torch.utils.checkpoint segment: its forward ops (ids), its tensor inputs, and its form."""

    oids: tuple[int, ...]
    inputs: tuple[int, ...]
    reentrant: bool


@dataclass(slots=True)
class FunctionGraph:
    """The op graph of one function (with its helpers inlined), in program order."""

    qualname: str
    span: Span
    ops: list[Op] = field(default_factory=list)
    values: dict[int, Value] = field(default_factory=dict)
    inputs: list[int] = field(default_factory=list)
    returns: list[int] = field(default_factory=list)
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    unknowns: list[Unknown] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    compiled_call: bool = False  # the function is wrapped by torch.compile somewhere in the file
    region_returns: dict[int, list[int]] = field(default_factory=dict)  # compiled call id -> its outputs
    loop_symbols: list[str] = field(default_factory=list)  # unknown trip counts met (range(n_layer))
    shape_symbols: list[str] = field(default_factory=list)  # named dims of inputs of unknown size (B, T)
    unsized_inputs: list[str] = field(default_factory=list)  # inputs of unknown shape without named dims
    # of those, the float tensors whose dims may be assumed (dimnames.guess_shapes): the rank their own
    # code gives (`x.permute(0, 2, 3, 1)`: 4), 0 when it gives none, -1 when it is used as a tuple
    unsized_ranks: dict[str, int] = field(default_factory=dict)
    # named ints looked up (a constructor's `hidden_size`): those not given are sizes for the byte-formula reruns
    size_symbols: list[str] = field(default_factory=list)
    cut_short: bool = False  # analysis stopped early (op or step budget, idle): figures cover a first part
    # what the compiled figures alone leave out (a training step's backward): they are lower bounds
    compiled_unknowns: list[Unknown] = field(default_factory=list)
    saved: list[list[int]] = field(default_factory=list)  # per backward: the forward values autograd saved for it
    checkpoints: list[Checkpoint] = field(default_factory=list)  # torch.utils.checkpoint segments run
    # graphs whose convolutions the compiled model lays out channels-last (set by models.inductor.prepared)
    channels_last_graphs: frozenset[int] = frozenset()
    # copies of attention inputs lowering makes (set by models.inductor.prepared): op ids
    attention_copies: frozenset[int] = frozenset()
    # group norms whose normalized output lowering stores (set by models.inductor.prepared): op ids
    realized_norms: frozenset[int] = frozenset()
    # group norms over a channels-last image, whose split statistics take three levels (set by
    # models.inductor.prepared): op ids
    layout_norms: frozenset[int] = frozenset()

    def to_networkx(self):  # -> networkx.DiGraph
        """Ops and values as a bipartite DiGraph: ('v', vid) -> ('o', oid) -> ('v', vid)."""
        import networkx as nx  # lazy: networkx loads only for --dot/graph export

        g = nx.DiGraph()
        for v in self.values.values():
            g.add_node(("v", v.vid), value=v)
        for op in self.ops:
            g.add_node(("o", op.oid), op=op)
            for i in op.inputs:
                g.add_edge(("v", i), ("o", op.oid))
            for o in op.outputs:
                g.add_edge(("o", op.oid), ("v", o))
        return g


@dataclass(slots=True)
class Kernel:
    """One launch predicted by a model (eager or compiled)."""

    name: str
    ops: tuple[int, ...]
    reads: tuple[int, ...]  # value ids read from memory
    writes: tuple[int, ...]  # value ids written to memory
    kind: str = "generated"  # generated | extern | fallback | eager | memcpy (bytes moved, no launch)
    graph: int = 0
    launches: int = 1
    inner: bool = False  # launched by ATen inside the extern or fallback call before it (not in the wrapper code)

    @property
    def launched(self) -> int:
        """Kernel launches: a memcpy moves its bytes (`launches` times) without one."""
        return 0 if self.kind == "memcpy" else self.launches


@dataclass(slots=True)
class KernelCost:
    """One launch's modelled cost (kpredict.cost): FLOPs, bytes and time on a device preset.

    `flops` are matrix FLOPs (matmul, conv, attention: what torch's FlopCounterMode counts);
    `flops_elementwise` are pointwise and reduction FLOPs by kpredict's convention (one per output
    element of a pointwise op, one per input element of a reduction). None: a shape is unknown."""

    name: str
    flops: int | None = 0
    flops_elementwise: int | None = 0
    bytes: int | None = 0
    time_us: float | None = None
    bound: str = "launch"  # memory | compute | launch | unknown
    launches: int = 1


@dataclass(slots=True)
class ModeCost:
    """One mode's modelled totals for a function (kpredict.cost): None when a shape is unknown (as
    bytes are) or the model was not run; `kernels` has one entry per kernel."""

    flops: int | None = None
    flops_elementwise: int | None = None
    time_us: float | None = None
    kernels: list[KernelCost] = field(default_factory=list)


@dataclass(slots=True)
class Figures:
    """Per-mode totals for one function."""

    kernels: Count = 0
    reads: Count = 0
    writes: Count = 0
    bytes: Count | None = 0
    syncs: Count = 0


@dataclass(slots=True)
class CompiledFigures(Figures):
    graphs: int = 1
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    kernel_names: list[str] = field(default_factory=list)
    # launches ATen makes inside an extern call (a bias copied into the output before cuBLAS): counted
    # in `kernels` as the GPU runs them; Inductor's generated wrapper shows the call once
    extern_inner: int = 0


@dataclass(slots=True)
class OpRow:
    span: Span
    op: str
    kind: str
    kernels: int
    reads: int
    writes: int
    group: int | None  # index into the compiled kernel list, None when the op launches nothing


@dataclass(slots=True)
class Finding:
    code: str
    severity: str
    qualname: str
    span: Span
    message: str
    name: str = ""


@dataclass(slots=True)
class FunctionReport:
    qualname: str
    line: int
    eager: Figures
    compiled: CompiledFigures
    ops: list[OpRow] = field(default_factory=list)
    unknown: list[Unknown] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    graph: FunctionGraph | None = None  # kept for lint rules; never serialized
    # Never a silent zero: the eager and compiled figures are lower bounds when something not
    # understood (an op that may launch kernels) is in the function or what it inlines, or when its
    # analysis was cut short. The causes are (line, what) pairs, the cut_short one at the def line.
    lower_bound: bool = False
    lower_bound_causes: list[Unknown] = field(default_factory=list)
    # what the compiled figures alone leave out (a training step's backward): they are lower bounds too
    compiled_causes: list[Unknown] = field(default_factory=list)
    # a training step's eager figures per phase (forward, backward), when it runs a backward
    phases: dict[str, Figures] = field(default_factory=dict)
    # bytes of the activations autograd saved for the backward (parameters not counted); None: unknown
    activation_bytes: int | None = None
    # the bytes leave out transfers of tensors of unknown size (what is not understood made them): a
    # lower bound with the other figures, never compared with a measurement as if exact
    partial_bytes: bool = False
    # the eager and compiled kernels the figures come from, and the graph the compiled ones refer to
    # (Inductor's, with the values its rewrites add), for kpredict.symbolic's byte formulas; never
    # serialized, and dropped once the report is final
    kernel_lists: tuple[list[Kernel], list[Kernel], FunctionGraph] | None = None
    # FLOPs and modelled time per mode (kpredict.cost); speedup: eager time / compiled time, None
    # when either time is unknown
    eager_cost: ModeCost = field(default_factory=ModeCost)
    compiled_cost: ModeCost = field(default_factory=ModeCost)
    speedup: float | None = None
    device: str | None = None  # the device preset the times are for (rules/devices.toml)

    @property
    def compiled_lower_bound(self) -> bool:
        """The compiled figures are lower bounds: what the function does not understand, or what the
        compiled model leaves out (a training step's backward)."""
        return self.lower_bound or bool(self.compiled_causes)


@dataclass(slots=True)
class FileReport:
    path: str
    error: str | None = None
    skipped: str | None = None  # why the file was not analyzed (it is not PyTorch code), one line
    functions: list[FunctionReport] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


@dataclass(slots=True)
class Report:
    target: str
    files: list[FileReport] = field(default_factory=list)
