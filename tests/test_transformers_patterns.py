"""Python patterns of transformers' modeling code that the interpreter follows (found as misses by
scripts/transformers_scoreboard.py), each written out small; the expected figures are the CPU
oracle's (`kpredict verify --device cpu`, torch 2.13.0+cpu) on the same source."""

from __future__ import annotations

from pathlib import Path

from kpredict.api import analyze_file, analyze_source
from kpredict.settings import Settings

ROPE_BY_LAYER_TYPE = '''import torch
import torch.nn as nn

_REMAP = {"attention": "full"}


def remap(types=None, config=None):
    # transformers' remap_legacy_layer_types: called on a config, it calls itself on the list
    if types is not None:
        return [_REMAP.get(t, t) for t in types]
    if (remapped := remap(config.types)) != config.types:
        config.types = remapped
    return None


class Config:
    def __init__(self, types):
        self.types = types
        remap(config=self)


class Rope(nn.Module):
    # transformers' rotary embeddings per layer type (olmo3, gemma3): buffers named from a set's items
    def __init__(self, config):
        super().__init__()
        self.layer_types = sorted(set(config.types))
        for t in self.layer_types:
            inv = 1.0 / (10000 ** (torch.arange(0, 8, 2, dtype=torch.float) / 8))
            setattr(self, f"{t}_inv_freq", nn.Buffer(inv, persistent=False))
        self.sliding = "sliding" in config.types

    def forward(self, x):
        x = x * getattr(self, "full_inv_freq")
        if self.sliding:
            x = x * getattr(self, "sliding_inv_freq")
        return x


MODEL = Rope(Config(["attention", "sliding", "attention"]))


# kpredict: example x=randn(4, 4)
def rope_by_type(x):
    return MODEL(x)


# kpredict: example x=randn(2, 16)
def narrowed(x):
    return torch.diff(x, dim=-1) + x.narrow(1, 1, 15)
'''


def _fn(qualname: str):
    rep = analyze_source(ROPE_BY_LAYER_TYPE, "m.py", Settings(target="cpu"), only=qualname)
    return rep.functions[0]


def test_a_function_calling_itself_once_and_a_set_of_names() -> None:
    """A function that calls itself on another argument is followed one level (it was not followed at
    all: the config's layer types became unknown), and `sorted(set(...))` of strings iterates: the
    buffers named after each layer type exist, and each multiply reads one (eager 2 kernels, 4 reads,
    2 writes, 288 bytes; compiled 1 kernel, 1 graph). Before: the buffers were unknown, 4 transfers."""
    f = _fn("rope_by_type")
    assert (f.eager.kernels, f.eager.reads, f.eager.writes, f.eager.bytes) == (2, 4, 2, 288)
    assert (f.compiled.kernels, f.compiled.graphs) == (1, 1)


def test_narrow_keeps_the_other_dims() -> None:
    """`x.narrow(dim, start, length)` (torch.diff's rule narrows twice) has a shape: bytes are known
    (eager 2 kernels, 720 bytes; compiled 1 kernel). Before: `?`."""
    f = _fn("narrowed")
    assert (f.eager.kernels, f.eager.reads + f.eager.writes, f.eager.bytes) == (2, 6, 720)
    assert f.compiled.kernels == 1


def test_repeat_interleave_by_an_int() -> None:
    """`torch.repeat_interleave(freqs, 2, dim=-1)` (cohere's rotary embedding) doubles the dim: one copy
    kernel, then cos and mul on the doubled tensor (eager 3 kernels, 6 transfers, 6,144 bytes; compiled
    1). Before: the shape was kept as the input's, so cohere's keys looked half as wide as its values
    and grouped-query attention repeated them (cohere eager 94 kernels, CPU oracle 88)."""
    src = '''import torch


# kpredict: example x=randn(1, 16, 8)
def f(x):
    emb = torch.repeat_interleave(x, 2, dim=-1)
    return emb.cos() * 2
'''
    f = analyze_source(src, "m.py", Settings(target="cpu"), only="f").functions[0]
    assert (f.eager.kernels, f.eager.reads + f.eager.writes, f.eager.bytes, f.compiled.kernels) == (3, 6, 6144, 1)


def test_a_model_output_holding_a_result_that_ends_in_type_as() -> None:
    """transformers' models return a ModelOutput, a dataclass that is also an OrderedDict of its fields,
    and gemma's RMSNorm ends in `.type_as(x)` to the same dtype (free). The fields are what the function
    returns (they were not looked for in the dict's items), and a free op does not consume what it reads,
    so compiled, the norm's kernel is live: 1 kernel (eager 6, 7,264 bytes) by the CPU oracle. Before: 0
    compiled kernels (gemma2's Model.forward: 0 for 39 measured)."""
    src = '''from collections import OrderedDict
from dataclasses import dataclass

import torch


@dataclass
class Output(OrderedDict):
    last_hidden_state: torch.Tensor = None

    def __post_init__(self):
        for k, v in vars(self).items():
            if v is not None:
                self[k] = v


# kpredict: example x=randn(4, 64)
def norm_out(x):
    y = x.float()
    y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + 1e-6)
    return Output(last_hidden_state=(y * 2.0).type_as(x))
'''
    f = analyze_source(src, "m.py", Settings(target="cpu"), only="norm_out").functions[0]
    assert (f.eager.kernels, f.eager.bytes, f.compiled.kernels, f.compiled.graphs) == (6, 7264, 1, 1)


def test_repeat_interleave_as_a_method() -> None:
    """`t.repeat_interleave(2, dim=-1)` (glm's rotary embedding) is the same as the function: one copy
    kernel in eager, fused when compiled (the op's own entry is a fallback kernel, for a tensor of
    counts). CPU oracle: eager 3 kernels, 6,144 bytes; compiled 1 (glm compiled: 36 predicted before,
    31 measured)."""
    src = '''import torch


# kpredict: example x=randn(1, 16, 16)
def f(x):
    c = x[..., : x.shape[-1] // 2].repeat_interleave(2, dim=-1)
    return c.cos() * 2
'''
    f = analyze_source(src, "m.py", Settings(target="cpu"), only="f").functions[0]
    assert (f.eager.kernels, f.eager.bytes, f.compiled.kernels) == (3, 6144, 1)


def test_finfo_min_fills_a_mask() -> None:
    """transformers' eager_mask: `torch.where(mask, torch.zeros((), dtype=dtype), torch.finfo(dtype).min)`.
    torch.finfo's limits are known (kpredict.frontend.shapes.dtype_info), so the Python float is wrapped
    into a tensor by a kernel of its own in eager mode as torch does: 4 kernels, 8 transfers, 336 bytes;
    compiled 1 (CPU oracle). Before: the limit was unknown, 3 kernels (gemma2 eager 175 vs 177)."""
    src = '''import torch


# kpredict: example x=randn(4, 8)
def f(x):
    mask = x > 0
    min_dtype = torch.finfo(x.dtype).min
    return torch.where(mask, torch.zeros((), device=mask.device, dtype=x.dtype), min_dtype)
'''
    f = analyze_source(src, "m.py", Settings(target="cpu"), only="f").functions[0]
    assert (f.eager.kernels, f.eager.reads + f.eager.writes, f.eager.bytes, f.compiled.kernels) == (4, 8, 336, 1)


def test_finfo_and_iinfo_equal_torchs() -> None:
    torch = __import__("pytest").importorskip("torch")
    from kpredict.frontend.shapes import dtype_info
    for name in ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8"):
        dt = getattr(torch, name)
        want = torch.finfo(dt) if dt.is_floating_point else torch.iinfo(dt)
        got = dtype_info(name)
        fields = ("bits", "min", "max") + (("eps", "tiny", "resolution") if dt.is_floating_point else ())
        assert all(getattr(got, k) == getattr(want, k) for k in fields), name


def test_a_broadcast_operand_first_does_not_decide_the_layout() -> None:
    """`weight * x` (transformers' RMSNorm) on a transposed view: TensorIterator lays the result out in
    x's dim order, not the 1-D weight's, so QK-normed queries keep (B, T, H, D) in memory and attention's
    output transposed back is contiguous: no copy (hunyuan, exaone4). CPU oracle: eager 13 kernels, 33
    transfers, 40,256 bytes; compiled 2. Before: 14 kernels (a copy after attention), compiled 3."""
    src = '''import torch
import torch.nn.functional as F

W = torch.randn(8)


def rms(x):
    v = x.pow(2).mean(-1, keepdim=True)
    return W * (x * torch.rsqrt(v + 1e-6))


# kpredict: example q=randn(1, 16, 4, 8) k=randn(1, 16, 4, 8) v=randn(1, 16, 4, 8)
def qk_norm(q, k, v):
    q, k, v = rms(q.transpose(1, 2)), rms(k.transpose(1, 2)), v.transpose(1, 2)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return y.transpose(1, 2).reshape(1, 16, 32)
'''
    f = analyze_source(src, "m.py", Settings(target="cpu"), only="qk_norm").functions[0]
    assert (f.eager.kernels, f.eager.reads + f.eager.writes, f.eager.bytes, f.compiled.kernels) == (13, 33, 40256, 2)


def test_a_custom_autograd_function_runs_its_forward() -> None:
    """`GeLUFunction.apply(x)` (bloom's gelu, a torch.autograd.Function of the tree) runs the staticmethod
    forward(ctx, x); the context's save_for_backward does no tensor work. CPU oracle: eager 10 kernels,
    23 transfers, 23,552 bytes; compiled 1. Before: >= 1 kernel, a lower bound (bloom eager 48 vs 63)."""
    src = '''import torch


def gelu(x):
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


class GeLUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return gelu(input)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * input


# kpredict: example x=randn(4, 64)
def f(x):
    return GeLUFunction.apply(x * 2)
'''
    f = analyze_source(src, "m.py", Settings(target="cpu"), only="f").functions[0]
    assert not f.lower_bound
    assert (f.eager.kernels, f.eager.reads + f.eager.writes, f.eager.bytes, f.compiled.kernels) == (10, 23, 23552, 1)


def test_a_number_divided_by_a_tensor_is_reciprocal_then_mul() -> None:
    """`1.0 / t` is Tensor.__rtruediv__, `t.reciprocal() * 1.0`: two kernels in eager mode (mpt's
    alibi slopes `1.0 / torch.pow(2, base)`). CPU oracle: eager 6 kernels, 13 transfers, 13,312 bytes;
    compiled 1. Before: one div each, 4 kernels (mpt eager 52 vs 53)."""
    src = '''import torch


# kpredict: example x=randn(4, 64)
def f(x):
    return 1.0 / torch.pow(2, x) + 3 / x
'''
    f = analyze_source(src, "m.py", Settings(target="cpu"), only="f").functions[0]
    assert (f.eager.kernels, f.eager.reads + f.eager.writes, f.eager.bytes, f.compiled.kernels) == (6, 13, 13312, 1)


def test_type_as_reads_only_its_input() -> None:
    """`torch.cumsum(mask, dim=1).type_as(mask)` (roberta's position ids from input ids): the other tensor
    gives a dtype and is not read. CPU oracle: eager 7 kernels, 15 transfers, 2,496 bytes; compiled 3.
    Before: 16 transfers (roberta-likes' eager reads one over)."""
    src = '''import torch


# kpredict: example ids=randint(0, 100, (2, 16))
def f(ids):
    mask = ids.ne(1).int()
    return (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + 1
'''
    f = analyze_source(src, "m.py", Settings(target="cpu"), only="f").functions[0]
    assert (f.eager.kernels, f.eager.reads + f.eager.writes, f.eager.bytes, f.compiled.kernels) == (7, 15, 2496, 3)


def test_a_value_in_a_tensor_is_eq_then_any_read_on_the_host() -> None:
    """`pad_token_id in input_ids[:, [-1, 0]]` (transformers' warn_if_padding_and_no_attention_mask, in
    every BERT-like forward without a mask) is Tensor.__contains__: (t == v).any(), and the host reads it.
    CPU oracle, eager: 4 kernels (index, eq, any, then the branch's add), 9 transfers, 1 sync. (Its bytes
    are 8 over the prediction and torch.compile skips the frame: not held here.) Before: no kernel."""
    src = '''import torch


# kpredict: example ids=randint(2, 100, (2, 16))
def f(ids):
    if 0 in ids[:, [-1, 0]]:
        return ids * 2
    return ids + 1
'''
    f = analyze_source(src, "m.py", Settings(target="cpu"), only="f").functions[0]
    assert (f.eager.kernels, f.eager.reads + f.eager.writes, f.eager.syncs) == (4, 9, 1)


def test_sdpa_with_a_boolean_mask_converts_it_first_in_eager_mode() -> None:
    """scaled_dot_product_attention turns a boolean mask into an additive one before the kernel:
    where(mask, 0.0, -inf) with both numbers wrapped into tensors, 3 kernels, and the kernel reads the
    float mask; compiled, that runs inside the fallback call (falcon builds its mask and keeps it). CPU
    oracle: eager 6 kernels, 15 transfers, 7,312 bytes; compiled 2. Before: 3 kernels (falcon 63 vs 69)."""
    src = '''import torch
import torch.nn.functional as F


# kpredict: example q=randn(1, 2, 16, 8) k=randn(1, 2, 16, 8) v=randn(1, 2, 16, 8)
def f(q, k, v):
    mask = torch.ones(16, 16, dtype=torch.bool).tril()
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
'''
    f = analyze_source(src, "m.py", Settings(target="cpu"), only="f").functions[0]
    assert (f.eager.kernels, f.eager.reads + f.eager.writes, f.eager.bytes, f.compiled.kernels) == (6, 15, 7312, 2)


def _lazy_package(root: Path) -> Path:
    """A package laid out as transformers lays its models out: a lazy `__init__` that star-imports its
    modules under TYPE_CHECKING, a registry of names found through importlib, a reverse mapping built by
    a dict comprehension of 600 entries."""
    pkg = root / "lib"
    (pkg / "models" / "tiny").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "models" / "__init__.py").write_text("")
    (pkg / "models" / "tiny" / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from .modeling_tiny import *\n"
        "else:\n"
        "    import sys\n"
        "    sys.modules[__name__] = object()\n")
    (pkg / "models" / "tiny" / "modeling_tiny.py").write_text(
        "import torch\n"
        "__all__ = ['Sin']\n"
        "class Sin(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x.sin()\n")
    (pkg / "models" / "registry.py").write_text(
        "import importlib\n"
        "NAMES = {f'model_{i}': f'Class{i}' for i in range(600)}\n"
        "NAMES['tiny'] = 'Sin'\n"
        "REVERSE = {v: k for k, v in NAMES.items()}\n"
        "def build(name):\n"
        "    module = importlib.import_module(f'.{REVERSE[name]}', 'lib.models')\n"
        "    return getattr(module, name)()\n")
    main = pkg / "models" / "use.py"
    main.write_text(
        "import torch\n"
        "from .tiny import Sin\n"
        "from .registry import build\n"
        "\n"
        "\n"
        "# kpredict: example x=randn(8)\n"
        "def star(x):\n"
        "    return Sin()(x)\n"
        "\n"
        "\n"
        "# kpredict: example x=randn(8)\n"
        "def by_name(x):\n"
        "    return build('Sin')(x)\n")
    return main


def test_a_lazy_package_an_importlib_lookup_and_a_long_reverse_dict(tmp_path: Path) -> None:
    """transformers' AutoModel.from_config finds a model class so: the model's package exports it only
    through `if TYPE_CHECKING: from .modeling_x import *` (a _LazyModule at run time), the class is
    found with importlib.import_module(f".{module}", "transformers.models"), and the module comes from a
    reverse dict of ~600 model types. Each was lost before (the star import inside `if` not read,
    importlib not followed, a dict comprehension of plain values cut after 128 items): the call was not
    understood. The sine is the one kernel both functions run."""
    rep = analyze_file(_lazy_package(tmp_path), Settings(target="cpu"))
    got = {f.qualname: ([r.op for r in f.ops], [u.name for u in f.unknown]) for f in rep.functions}
    assert got == {"star": (["sin"], []), "by_name": (["sin"], [])}, got


def test_a_model_output_unpacked_into_another() -> None:
    """`LlavaModelOutputWithPast(**outputs, image_outputs=...)`: a ModelOutput (a dataclass) unpacked with
    `**` passes its fields that are not None. It was dropped: the new output held none of them and the
    compiled model kept what nothing returns (llava on cuda 34 kernels, cudagen 33). Here the sine is
    returned, the cosine is dead code under torch.compile."""
    src = '''import torch
from dataclasses import dataclass


@dataclass
class Out:
    last: torch.Tensor | None = None
    extra: torch.Tensor | None = None


@dataclass
class Wrapped(Out):
    image: torch.Tensor | None = None


def inner(x):
    unused = x.cos()
    return Out(last=x.sin())


# kpredict: example x=randn(8)
def f(x):
    return Wrapped(**inner(x), image=None).last * 2
'''
    f = analyze_source(src, "m.py", Settings(target="cpu"), only="f").functions[0]
    assert ([r.op for r in f.ops], f.compiled.kernels, [u.name for u in f.unknown]) == (["cos", "sin", "mul"], 1, [])


def test_a_sequence_object_iterates_by_index() -> None:
    """An object whose class defines __len__ and __getitem__ (a collections.abc.Sequence) iterates over
    indices 0..len-1, and len() asks its __len__: transformers' DynamicCache(config) makes one cache layer
    per entry of the config's per-layer view, and every layer after the first was not understood (a
    default decoder's forward, use_cache=True). `isinstance(i, slice)` of an int is False (it was not
    known, and the slice branch was taken). Three layers here: three exps."""
    src = '''import torch


class PerLayer:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return i * 2


# kpredict: example x=randn(8)
def f(x):
    for scale in PerLayer(3):
        x = (x * scale).exp()
    return x, len(PerLayer(5))
'''
    f = analyze_source(src, "m.py", Settings(target="cpu"), only="f").functions[0]
    assert ([r.op for r in f.ops].count("exp"), [u.name for u in f.unknown]) == (3, []), [r.op for r in f.ops]
