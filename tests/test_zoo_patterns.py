"""Python patterns of the public model zoos (torchvision, timm) that the interpreter follows
(scripts/zoo_scoreboard.py found each as a miss): each model built with the pattern predicts what the
same model written plainly predicts. The plain forms (Linear, BatchNorm2d, SiLU chains) are checked
against the CPU oracle by the fixtures; torch.roll's rule by scripts/module_probes/cases10.py."""

from __future__ import annotations

import pytest

from kpredict.api import analyze_file, analyze_source
from kpredict.settings import Settings

HEAD = '''import collections.abc
import copy
import dataclasses
import functools
import math
import re
import types
from collections import OrderedDict
from dataclasses import dataclass
from itertools import repeat
from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F
'''
TAIL = '''

MODEL = Net().eval()


# kpredict: example x=randn(2, 8)
def run(x):
    return MODEL(x)
'''

# timm's get_norm_act_layer (unbind a partial, setdefault the act, bind again) and a norm + act layer
NORM_ACT = '''
def norm_act(layer, act):
    if layer is None:
        return None
    kw = {}
    if isinstance(layer, functools.partial):
        kw.update(layer.keywords)
        layer = layer.func
    kw.setdefault("act", act)
    return functools.partial(layer, **kw)


class NormAct(nn.Module):
    def __init__(self, n, eps=1e-5, act=None):
        super().__init__()
        self.norm = nn.LayerNorm(n, eps=eps)
        self.act = act() if act is not None else nn.Identity()

    def forward(self, x):
        return self.act(self.norm(x))
'''

CASES = {
    # timm's NesT: isinstance(img_size, collections.abc.Sequence) of an int; block counts from
    # (4 ** torch.arange(n)).flip(0).tolist()
    "abc_sequence_and_flip": ('''
class Net(nn.Module):
    def __init__(self, img_size=8, n=3):
        super().__init__()
        if isinstance(img_size, collections.abc.Sequence):
            img_size = img_size[0]
        blocks = (4 ** torch.arange(n, dtype=torch.long)).flip(0).tolist()
        self.layers = nn.Sequential(*[nn.Linear(img_size, img_size) for b in blocks if b > 1])

    def forward(self, x):
        return self.layers(x)
''', 2),
    # timm's FasterNet: the forward chosen in __init__ (`self.forward = self.forward_slicing`)
    "forward_set_in_init": ('''
class Net(nn.Module):
    def __init__(self, mode="slicing"):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        if mode == "slicing":
            self.forward = self.forward_slicing
        else:
            self.forward = self.forward_plain

    def forward_slicing(self, x):
        return self.fc(x).relu()

    def forward_plain(self, x):
        return self.fc(x)
''', 2),
    # timm's sam2: a deep copy of a module while building; crossvit: torch.jit.annotate; vgg: typing.cast;
    # metaformer: issubclass of classes of the tree
    "deepcopy_annotate_cast_issubclass": ('''
import typing


class Attention(nn.Module):
    pass


class Mixer(nn.Module):
    pass


class Net(nn.Module):
    def __init__(self, mixer=Mixer):
        super().__init__()
        self.pool = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
        self.pool2 = copy.deepcopy(self.pool)
        width = typing.cast(int, 8)
        self.fc = nn.Linear(width, width) if not issubclass(mixer, Attention) else nn.Identity()

    def forward(self, x):
        outs = torch.jit.annotate(typing.List[torch.Tensor], [])
        outs.append(self.pool2(self.pool(x)))
        return self.fc(outs[0])
''', 5),
    # timm's MixedConv2d: `split[0] += n` on a list; hiera: math.prod of a list of sizes
    "list_aug_assign_and_prod": ('''
def split_channels(n, groups):
    split = [n // groups for _ in range(groups)]
    split[0] += n - sum(split)
    return split


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.splits = split_channels(8, 3)
        self.w = nn.Parameter(torch.zeros(1, math.prod([2, 4])))

    def forward(self, x):
        return torch.cat([t * 2 for t in torch.split(x, self.splits, 1)], 1) + self.w
''', 5),
    # timm's pad_same indexes a convolution's stride and dilation, which torch stores as tuples
    "conv_stride_tuple": ('''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 2, 3, 2)

    def forward(self, x):
        s = self.conv.stride[0] * self.conv.dilation[0]
        return self.conv(F.pad(x.view(2, 2, 4), (s, s)))  # bytes known only with s known
''', 2),
    # timm's efficientvit: val2tuple inserts repeats with a slice assignment, `x[-1:-1] = [...]`
    "list_slice_assignment": ('''
def val2tuple(x, min_len=1, idx_repeat=-1):
    x = list(x) if isinstance(x, (list, tuple)) else [x]
    x[idx_repeat:idx_repeat] = [x[idx_repeat] for _ in range(min_len - len(x))]
    return tuple(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        norms = val2tuple((nn.LayerNorm, None), 3)
        self.layers = nn.Sequential(*[nn.Linear(8, 8) if n is None else n(8) for n in norms])

    def forward(self, x):
        return self.layers(x)
''', 3),
    # timm's efficientformerv2 Stem4: an nn.Sequential subclass whose children are modules of the tree
    # deriving from nn.Module only (nn.Module is no catalogue class): they were not registered
    "sequential_subclass_of_tree_modules": ('''
class ConvAct(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return self.fc(x).relu()


class Stem(nn.Sequential):
    def __init__(self, d):
        super().__init__()
        self.stride = 4
        self.conv1 = ConvAct(d)
        self.conv2 = ConvAct(d)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = Stem(8)

    def forward(self, x):
        return self.stem(x)
''', 4),
    # torchvision vision_transformer: layers[f"encoder_layer_{i}"] = ...; nn.Sequential(layers)
    "fstring_keys": ('''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        layers = OrderedDict()
        for i in range(3):
            layers[f"layer_{i:02d}"] = nn.Linear(8, 8)
        self.layers = nn.Sequential(layers)

    def forward(self, x):
        return self.layers(x)
''', 3),
    # torchvision densenet: a ModuleDict subclass filling itself with add_module
    "moduledict_add_module": ('''
class Block(nn.ModuleDict):
    def __init__(self, n):
        super().__init__()
        for i in range(n):
            self.add_module("layer%d" % (i + 1), nn.Linear(8, 8))

    def forward(self, x):
        for name, layer in self.items():
            x = layer(x)
        return x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block(3)

    def forward(self, x):
        return self.block(x)
''', 3),
    # torchvision efficientnet: super().__init__ into a dataclass base, copy.copy of the config
    "dataclass_super_and_copy": ('''
@dataclass
class _Cfg:
    n: int
    block: Callable[..., nn.Module]


class Cfg(_Cfg):
    def __init__(self, n, depth_mult=1.5, block=None):
        if block is None:
            block = nn.Linear
        super().__init__(int(math.ceil(n * depth_mult)), block)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        cfg = Cfg(2)
        layers = []
        for _ in range(cfg.n):
            c = copy.copy(cfg)
            layers.append(c.block(8, 8))
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)
''', 3),
    # timm's _ntuple(n): a nested function reading the enclosing n; repeat(); isinstance Iterable
    "closure_ntuple": ('''
def _ntuple(n):
    def parse(x):
        if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
            return tuple(x)
        return tuple(repeat(x, n))
    return parse


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(*[f(8, 8) for f in _ntuple(4)(nn.Linear)])

    def forward(self, x):
        return self.layers(x)
''', 4),
    # timm's activation table: 'silu' in dir(torch.nn.functional) picks nn.SiLU (else a fallback)
    "dir_feature_check": ('''
_has_silu = 'silu' in dir(torch.nn.functional)
ACT = dict(silu=nn.SiLU if _has_silu else nn.Identity)


class Net(nn.Module):
    def __init__(self, name="SiLU"):
        super().__init__()
        self.act = ACT[name.lower()]()

    def forward(self, x):
        return self.act(x)
''', 1),
    # timm's layer factories: isinstance(x, str / functools.partial / types.FunctionType) of a class,
    # a class in a set of classes, a class's __name__, re.split of a block string
    "layer_factory": ('''
class NormAct(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.norm(x))


NORM_ACT_TYPES = {NormAct}
TO_NORM_ACT = dict(layernorm=NormAct)


def get_norm_act(layer):
    if isinstance(layer, functools.partial):
        layer = layer.func
    if isinstance(layer, str):
        return TO_NORM_ACT[layer]
    if layer in NORM_ACT_TYPES:
        return layer
    if isinstance(layer, types.FunctionType):
        return layer
    return TO_NORM_ACT[layer.__name__.lower()]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        reps = int(re.split(r"(\\d.*)", "r2")[1])
        self.layers = nn.Sequential(*[get_norm_act(nn.LayerNorm)(8) for _ in range(reps)])

    def forward(self, x):
        return self.layers(x)
''', 4),
    # torchvision densenet's _Transition: an nn.Sequential subclass that assigns its layers as attributes
    "sequential_subclass_attrs": ('''
class Transition(nn.Sequential):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.act = nn.ReLU()
        self.fc = nn.Linear(8, 8)
        self.act = nn.SiLU()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = Transition()

    def forward(self, x):
        return self.t(x)
''', 3),
    # torchvision alexnet: AdaptiveAvgPool2d((6, 6)) is a pool, not the mean that (1, 1) is
    "tuple_equality": ('''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d((6, 6))
        self.fc = nn.Linear(8 * 36, 4)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(x.view(2, 8, 1, 1)), 1))
''', 2),
    # timm's config: an environment variable read at import is taken as not set (its default)
    "environment_default": ('''
import os

if "KP_FUSED" in os.environ:
    FUSED = int(os.environ["KP_FUSED"])
else:
    FUSED = int(os.environ.get("KP_OTHER", 1))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fused = FUSED > 0

    def forward(self, x):
        q = x.view(2, 1, 1, 8)
        if self.fused:
            return F.scaled_dot_product_attention(q, q, q)
        return (q @ q.transpose(-1, -2)).softmax(-1) @ q
''', 1),
    # timm's pretrained config: dataclasses.replace of the defaults, then asdict, read with .get
    "dataclass_replace_asdict": ('''
@dataclass
class _Cfg:
    norm: bool = False
    width: int = 4


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        d = dataclasses.asdict(dataclasses.replace(_Cfg(), norm=True, width=8))
        self.fc = nn.Linear(8, d["width"])
        self.norm = nn.LayerNorm(8) if d.get("norm", False) else nn.Identity()

    def forward(self, x):
        return self.norm(self.fc(x))
''', 2),
    # timm's efficientnet: each decoded block dict repeated as copy.deepcopy, then read
    "deepcopy_of_plain_data": ('''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        spec = {"kind": "lin", "act": nn.ReLU, "sizes": [8, 8]}
        blocks = [copy.deepcopy(spec) for _ in range(2)]
        blocks[0]["act"] = None
        self.blocks = nn.Sequential(*[nn.Sequential(nn.Linear(*b["sizes"]), b["act"]() if b["act"] else nn.Identity())
                                      if b["kind"] == "lin" else nn.Identity() for b in blocks])
        assert spec["act"] is nn.ReLU

    def forward(self, x):
        return self.blocks(x)
''', 3),
    # timm's efficientnet blocks: `se_layer(...) if se_layer else nn.Identity()` with a partial, and
    # get_norm_act_layer: `if norm_layer is None`, then the partial unbound (.func, .keywords) and rebound
    "partial_truth_and_unbinding": (NORM_ACT + '''

class Net(nn.Module):
    def __init__(self, se_layer=functools.partial(nn.Linear, bias=False)):
        super().__init__()
        self.se = se_layer(8, 8) if se_layer else nn.Identity()
        self.bn = norm_act(functools.partial(NormAct, eps=1e-3), nn.SiLU)(8)

    def forward(self, x):
        return self.bn(self.se(x))
''', 3),
    # timm's dpn: get_norm_act_layer's result wrapped again (partial(..., eps=.001)), then unbound once
    # more: a partial of a partial is flat, so the act bound first stays (setdefault) [dpn48b's head]
    "partial_of_partial_is_flat": (NORM_ACT + '''

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        inner = functools.partial(norm_act(NormAct, nn.ReLU), eps=1e-3)
        assert inner.func is NormAct
        self.bn = norm_act(inner, None)(8)

    def forward(self, x):
        return self.bn(x)
''', 2),
    # timm's resnet: `deep_stem = 'deep' in stem_type` (a substring test on plain strings)
    "substring_test": ('''
class Stem(nn.Sequential):
    def __init__(self, stem_type):
        layers = [nn.Linear(8, 8)]
        if "deep" in stem_type or "wide" not in stem_type or 3 not in (1, 3):
            layers += [nn.ReLU(), nn.Linear(8, 8)]
        super().__init__(*layers)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = Stem(**dict({"stem_type": "wide_tiered"}))

    def forward(self, x):
        return self.stem(x)
''', 1),
    # regnet's widths and timm's drop-path rates, computed with small tensors while the model is built
    "tensor_computed_widths": ('''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        widths = (torch.round(torch.arange(4) * 0.6 + 2) * 2).int().tolist()  # [4, 6, 6, 8]
        stage_widths, stage_depths = torch.unique(torch.tensor(widths), return_counts=True)
        rates = [x.item() for x in torch.linspace(0, 0.1, 3)]
        layers = []
        for w, d in zip(stage_widths.tolist(), stage_depths.tolist()):
            layers += [nn.Sequential(nn.Linear(8, w), nn.Linear(w, 8)) for _ in range(d)] + [nn.ReLU()]
        layers += [nn.ReLU() if r > 0. else nn.Identity() for r in rates]
        self.layers = nn.Sequential(*layers)
        self.n = int(torch.tensor(widths).max().item()) + len(torch.unique(torch.tensor(widths)))

    def forward(self, x):
        return self.layers(x) * self.n
''', 14),
    # timm's RegStage: blocks registered with add_module, run as `for block in self.children()`
    "children_are_direct": ('''
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.cfg = types.SimpleNamespace(n=2)
        for i in range(self.cfg.n):
            self.add_module("b{}".format(i + 1), Block())

    def forward(self, x):
        names = [n for n, _ in self.named_children()]
        assert names == ["b1", "b2"]
        for block in self.children():
            x = block(x)
        return x
''', 4),
    # swin's relative position bias: an index built with meshgrid, gathered as table[index.view(-1)]
    "meshgrid_and_index": ('''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        coords = torch.stack(torch.meshgrid(torch.arange(2), torch.arange(2), indexing="ij"))
        flat = torch.flatten(coords, 1)
        rel = (flat[:, :, None] - flat[:, None, :]).permute(1, 2, 0).contiguous()
        self.register_buffer("index", rel.sum(-1), persistent=False)
        self.table = nn.Parameter(torch.zeros(9, 2))
        gx, gy = torch.meshgrid(torch.arange(2), torch.arange(3), indexing="xy")
        self.rows = gx.shape[0] + gy.shape[1]  # 3 + 2

    def forward(self, x):
        bias = self.table[self.index.view(-1)].view(4, 4, -1).permute(2, 0, 1).contiguous()
        return x[:, :self.rows] + bias.sum()
''', 4),
    # timm's layer formats: Format(fmt) of a str Enum, then `fmt is Format.NHWC` (swin's pooling dims)
    "enum_members": ('''
import enum


class Format(str, enum.Enum):
    NCHW = "NCHW"
    NHWC = "NHWC"


def spatial_dims(fmt):
    fmt = Format(fmt)
    if fmt is Format.NHWC:
        return (1, 2)
    return (2, 3)


class Net(nn.Module):
    def __init__(self, fmt="NHWC"):
        super().__init__()
        self.dims = spatial_dims(fmt)
        self.fc = nn.Linear(4, 8)

    def forward(self, x):
        y = x.view(2, 2, 2, 4).mean(self.dims)
        return self.fc(y) if y.shape[-1] == 4 else y
''', 2),
    # timm's rexnet: strides flattened with sum(list of lists, []); modules found by named_modules()
    "sum_with_start_and_named_modules": ('''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        strides = sum([[s] + [1] * (n - 1) for s, n in zip([1, 2], [1, 2])], [])
        self.blocks = nn.Sequential(*[nn.Linear(8, 8) for _ in strides])
        for name, m in self.named_modules():
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)
        self.names = [n for n, _ in self.named_modules()]

    def forward(self, x):
        assert self.names[:3] == ["", "blocks", "blocks.0"]
        return self.blocks(x)
''', 3),
    # levit's attention biases: biases[:, idx] (an index tensor on dim 1), cached in a dict by device
    "index_on_dim1_and_empty_cache": ('''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.biases = nn.Parameter(torch.zeros(2, 9))
        self.register_buffer("idxs", torch.arange(8).view(2, 4), persistent=False)
        self.cache = {}

    def forward(self, x):
        key = str(x.device)
        if key not in self.cache:
            self.cache[key] = self.biases[:, self.idxs]
        return x.view(2, 2, 4) + self.cache[key]
''', 2),
    # timm's byobnet: a group size that may be a function, `isinstance(gs, Callable)`
    "isinstance_callable": ('''
class Net(nn.Module):
    def __init__(self, gs=4):
        super().__init__()
        if isinstance(gs, Callable):
            gs = gs(8)
        groups = 8 // gs if gs else 1
        self.conv = nn.Conv2d(8, 8, 3, padding=1, groups=groups, bias=False)

    def forward(self, x):
        return self.conv(x.view(2, 8, 1, 1)) if self.conv.weight.shape[1] == 4 else x
''', 1),
    # swin's shifted windows
    "roll": ('''
class Net(nn.Module):
    def forward(self, x):
        return torch.roll(x, shifts=1, dims=-1) + 1
''', 2),
    # diffusers' DiagonalGaussianDistribution(h): an object of another class built during the forward
    # takes exp(logvar) in its __init__ (not model building: its ops run in the call)
    "object_built_in_forward": ('''
class Dist:
    def __init__(self, parameters):
        self.mean, self.logvar = torch.chunk(parameters, 2, dim=1)
        self.std = torch.exp(0.5 * self.logvar)

    def mode(self):
        return self.mean


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        d = Dist(self.fc(x))
        return d.mode() * d.std
''', 4),
    # diffusers' Upsample2D: `if x.numel() * 2 > pow(2, 31)`; get_timestep_embedding's
    # torch.arange(start=0, end=half_dim); `isinstance(pos, np.ndarray)` of a tensor
    "pow_arange_keywords_numpy_isinstance": ('''
import numpy as np


class Net(nn.Module):
    def forward(self, x):
        if x.numel() * 2 > pow(2, 31):
            x = x.t().contiguous()
        if isinstance(x, np.ndarray):
            x = torch.from_numpy(x)
        e = torch.arange(start=0, end=8, dtype=torch.float32)
        return pow(x, 2) + e.exp()
''', 4),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_zoo_pattern_is_followed(name: str) -> None:
    src, kernels = CASES[name]
    r = analyze_source(HEAD + src + TAIL, "m.py", Settings(target="cpu"), only="run")
    assert r.error is None
    f = r.functions[0]
    assert not f.lower_bound and not f.unknown, [u.name for u in f.lower_bound_causes]
    assert f.eager.kernels == kernels, (f.eager.kernels, [o.op for o in f.ops])
    assert f.eager.bytes is not None
    assert "mean" not in [o.op for o in f.ops] or name != "tuple_equality"


def test_registering_decorator_is_said() -> None:
    """A builder whose decorator fills a module-level table at import (timm's @register_model and its
    pretrained configs) is followed without the decorator: the table reads as empty, and that is listed
    with the figures of the function that uses the model built at module level."""
    src = HEAD + '''
_REGISTRY = {}


def register(fn):
    _REGISTRY[fn.__name__] = {"norm": True}
    return fn


class Net(nn.Module):
    def __init__(self, norm=False):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8) if norm else nn.Identity()

    def forward(self, x):
        return self.norm(self.fc(x))


@register
def net():
    return Net(**_REGISTRY.get("net", {}))


MODEL = net().eval()


# kpredict: example x=randn(2, 8)
def run(x):
    return MODEL(x)
'''
    r = analyze_source(src, "m.py", Settings(target="cpu"), only="run")
    f = r.functions[0]
    assert f.eager.kernels == 1
    assert any("@register not applied" in a and "_REGISTRY" in a for a in f.assumptions), f.assumptions


def test_unknown_choice_while_building_is_said() -> None:
    """`A(...) if cond else B(...)` with cond not known while the model is built picks one module
    silently no more: the choice is listed with the figures."""
    src = HEAD + '''
class Net(nn.Module):
    def __init__(self, flag):
        super().__init__()
        self.norm = nn.LayerNorm(8) if flag.enabled else nn.Identity()

    def forward(self, x):
        return self.norm(x)


MODEL = Net(object()).eval()


# kpredict: example x=randn(2, 8)
def run(x):
    return MODEL(x)
'''
    f = analyze_source(src, "m.py", Settings(target="cpu"), only="run").functions[0]
    assert any("while building the model" in a and "LayerNorm" in a for a in f.assumptions), f.assumptions


def test_op_not_understood_while_building_is_said() -> None:
    """A torch op kpredict does not model, run while the model is built, made a buffer of unknown
    shape without a word (swin's meshgrid did): it is listed with the figures of the call."""
    src = HEAD + '''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("pairs", torch.cartesian_prod(torch.arange(2), torch.arange(2)))

    def forward(self, x):
        return x + self.pairs.sum()
''' + TAIL
    f = analyze_source(src, "m.py", Settings(target="cpu"), only="run").functions[0]
    assert any("torch.cartesian_prod not understood while building the model" in a for a in f.assumptions), \
        f.assumptions


def test_second_layout_for_a_kernel_computed_input() -> None:
    """Compiled on cpu: a tensor a generated kernel computes, read by a 3x3 convolution and by a 1x1
    one, is written channels-last for the first and copied by a kernel of its own for the other
    (torchvision's resnet18 after each downsample's add; squeezenet's fire modules). Two resnet
    BasicBlocks, the second with a 1x1 shortcut: 11 kernels by the CPU oracle (kpredict verify
    --device cpu, torch 2.13: torchvision.models.resnet.BasicBlock written out)."""
    src = HEAD + '''
class Block(nn.Module):
    def __init__(self, cin, cout, stride=1, down=False):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)) if down else None

    def forward(self, x):
        out = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
        return torch.relu(out + (self.down(x) if self.down is not None else x))


MODEL = nn.Sequential(Block(16, 16), Block(16, 32, 2, True)).eval()


# kpredict: example x=randn(1, 16, 16, 16)
def run(x):
    return MODEL(x)
'''
    f = analyze_source(src, "m.py", Settings(target="cpu"), only="run").functions[0]
    assert (f.eager.kernels, f.compiled.kernels) == (16, 11)


@pytest.mark.parametrize("second, kernels", [
    ("nn.Conv2d(8, 8, 3, padding=1)", 5),  # a dense 3x3 convolution reads a layout copy
    ("nn.Conv2d(8, 8, 7, padding=3, groups=8)", 4),  # a depthwise one reads the first's output as is
    ("nn.Conv2d(8, 8, 1)", 4),  # so does a 1x1 one
])
def test_convolution_after_convolution(second: str, kernels: int) -> None:
    """Compiled on cpu, a convolution right after another: no layout kernel between them unless the
    second is a dense kxk one (timm convnext's 2x2/2 downsample, then a depthwise 7x7). Counts by
    the CPU oracle (kpredict verify --device cpu, torch 2.13)."""
    src = HEAD + f'''
A = nn.Conv2d(8, 8, 3, padding=1).eval()
B = {second}.eval()


# kpredict: example x=randn(1, 8, 16, 16)
def run(x):
    return B(A(x))
'''
    f = analyze_source(src, "m.py", Settings(target="cpu"), only="run").functions[0]
    assert (f.eager.kernels, f.compiled.kernels) == (2, kernels)


def test_unknown_layer_count_while_building_is_said() -> None:
    """A loop whose count is not known while a model is built leaves the model with one layer; when
    its body builds something, that is listed with the figures (timm's rexnet came out as 15 kernels
    without a word); a loop that builds nothing (weight init) is not noise in the report."""
    src = HEAD + '''
class Net(nn.Module):
    def __init__(self, depths):
        super().__init__()
        self.blocks = nn.Sequential(*[nn.Linear(8, 8) for _ in range(depths.n)])
        for m in depths.items:
            pass

    def forward(self, x):
        return self.blocks(x)


MODEL = Net(object()).eval()


# kpredict: example x=randn(2, 8)
def run(x):
    return MODEL(x)
'''
    f = analyze_source(src, "m.py", Settings(target="cpu"), only="run").functions[0]
    said = [a for a in f.assumptions if "while building the model" in a]
    assert len(said) == 1 and "comprehension length" in said[0], f.assumptions


def test_len_of_a_shape_is_the_rank() -> None:
    """`len(mask.shape) == 4` (transformers' mask builders return a 4D mask as it is) is the rank, known
    with the shape. It was not known: the branch was guessed (the `if` taking the larger side, or, under
    `and`, the early return taken silently: create_bidirectional_mask made no op for a 2D mask)."""
    src = ("import torch\n\n\n# kpredict: example m=randint(0, 2, (2, 16))\ndef f(m):\n"
           "    if m is not None and len(m.shape) == 4:\n        return m\n"
           "    return m.to(dtype=torch.bool).all()\n")
    (fn,) = analyze_source(src, "rank.py", Settings()).functions
    assert [o.name for o in fn.graph.ops] == ["_to_copy", "all"]
    assert not any("condition not known" in a for a in fn.assumptions)


def _diffusers_tree(tmp_path):
    """The two diffusers helpers kpredict has facts for (rules/libraries.toml), as stand-ins."""
    pkg = tmp_path / "diffusers"
    (pkg / "models").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "models" / "__init__.py").write_text("")
    (pkg / "configuration_utils.py").write_text('''import functools


def register_to_config(init):
    @functools.wraps(init)
    def inner_init(self, *args, **kwargs):
        raise NotImplementedError  # binds the arguments with inspect.signature
    return inner_init
''')
    (pkg / "models" / "attention_dispatch.py").write_text('''
def dispatch_attention_fn(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                          enable_gqa=False, attention_kwargs=None, *, backend=None, parallel_config=None):
    return _AttentionBackendRegistry._backends[_AttentionBackendRegistry._active_backend](query, key, value)
''')


def test_diffusers_config_and_attention_dispatch(tmp_path) -> None:
    """diffusers' `@register_to_config` keeps the constructor's arguments (defaults filled in) on
    `self.config`, and `dispatch_attention_fn` runs torch's scaled_dot_product_attention on (B, S, H, D)
    (its backend table is filled by decorators at import): a Transformer2DModel-like block reads
    `self.config.num_attention_heads` and attends in one kernel."""
    _diffusers_tree(tmp_path)
    (tmp_path / "m.py").write_text('''import torch
import torch.nn as nn

from diffusers.configuration_utils import register_to_config
from diffusers.models.attention_dispatch import dispatch_attention_fn


class Block(nn.Module):
    @register_to_config
    def __init__(self, num_attention_heads: int = 16, attention_head_dim: int = 8):
        super().__init__()
        self.qkv = nn.Linear(num_attention_heads * attention_head_dim, 3 * num_attention_heads * attention_head_dim)

    @property
    def config(self):
        return self._internal_dict

    def forward(self, x):
        h, d = self.config.num_attention_heads, self.config["attention_head_dim"]
        q, k, v = self.qkv(x).unflatten(-1, (3, h, d)).unbind(2)
        return dispatch_attention_fn(q, k, v).flatten(2)


MODEL = Block(num_attention_heads=2).eval()


# kpredict: example x=randn(1, 6, 16)
def run(x):
    return MODEL(x)
''')
    r = analyze_file(tmp_path / "m.py", Settings(target="cpu"), only="run")
    f = r.functions[0]
    assert not f.lower_bound, [u.name for u in f.lower_bound_causes]
    ops = [o.op for o in f.ops if o.kernels]
    assert ops[:2] == ["linear", "scaled_dot_product_attention"] and ops.count("scaled_dot_product_attention") == 1, ops
    assert f.eager.bytes is not None  # the heads came from the config: every size is known
