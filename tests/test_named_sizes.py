"""Named sizes (issue 26, items 2 and 3): `--dim NAME=N` reaches every size of that name (a loop count, a
config field's default, a named dim of an input), and an input whose sizes are named but not given has
its bytes as a formula in the names, which must equal both a concrete analysis and torch's measurement
at the same sizes."""

from __future__ import annotations

from pathlib import Path

import pytest

from kpredict.api import analyze_file, analyze_source
from kpredict.ir import FileReport
from kpredict.render import text_report
from kpredict.settings import Settings
from oracle_cases import ASSUMED, ASSUMED_CASES, SIZED_INIT, SIZED_VALUES, SIZES, assumed_request, sized_request

GPT = SIZES / "gpt_sizes.py"


def _fn(path: Path | str, qual: str, dims: dict[str, int] | None = None, init: str | None = None,
        example: str | None = None, target: str = "cuda"):
    s = Settings(target=target, dims=tuple((dims or {}).items()))
    rep = analyze_file(str(path), s, only=qual, inits={qual: init} if init else None,
                       examples={qual: example} if example else None)
    assert rep.error is None, rep.error
    return rep.functions[0]


def _at(formula: object, values: dict[str, int]) -> int:
    """A byte formula's value (names, +, -, *, ** and /): evaluated as Python with the sizes bound."""
    assert isinstance(formula, str), formula
    got = eval(formula, {"__builtins__": {}}, dict(values))  # noqa: S307 - our own formula text
    assert got == int(got), (formula, got)
    return int(got)


# --------------------------------------------------------------------------- item 2: --dim everywhere

def test_dim_reaches_a_dataclass_field_default() -> None:
    """`--dim n_layer=2` when n_layer comes from GPTConfig's default (12): before, silently ignored."""
    by_dim = _fn(GPT, "GPT.forward", {"n_layer": 2, "B": 2, "T": 16})
    by_init = _fn(GPT, "GPT.forward", {"B": 2, "T": 16}, init="config=GPTConfig(n_layer=2)")
    twelve = _fn(GPT, "GPT.forward", {"B": 2, "T": 16})
    assert by_dim.eager == by_init.eager and by_dim.compiled.kernels == by_init.compiled.kernels
    assert twelve.eager.kernels > by_dim.eager.kernels
    assert any("n_layer=2 (--dim)" in a for a in by_dim.assumptions), by_dim.assumptions


def test_an_explicit_constructor_argument_wins_over_dim() -> None:
    """--dim replaces a default only: a value written in the constructor call is not a symbol."""
    given = _fn(GPT, "GPT.forward", {"n_layer": 5, "B": 2, "T": 16}, init="config=GPTConfig(n_layer=2)")
    assert given.eager == _fn(GPT, "GPT.forward", {"B": 2, "T": 16}, init="config=GPTConfig(n_layer=2)").eager


CFG_INIT = """import torch.nn as nn

class NetConfig:
    depth = 12

    def __init__(self, width=64, n_layer=12):
        self.width = width
        self.n_layer = n_layer

class Net(nn.Module):
    def __init__(self, config: NetConfig):
        super().__init__()
        self.h = nn.ModuleList([nn.Linear(config.width, config.width) for _ in range(config.n_layer)])
        self.g = nn.ModuleList([nn.ReLU() for _ in range(config.depth)])

    def forward(self, x):
        for b in self.h:
            x = b(x)
        for b in self.g:
            x = b(x)
        return x
"""


@pytest.mark.parametrize("dims, kernels", [({}, 24), ({"n_layer": 2}, 14), ({"depth": 1}, 13),
                                           ({"n_layer": 2, "depth": 1}, 3)])
def test_dim_reaches_init_defaults_and_class_attributes(dims: dict[str, int], kernels: int) -> None:
    """A config's `__init__(n_layer=12)` default and its class-level `depth = 12` take --dim too."""
    rep = analyze_source(CFG_INIT, "net.py", Settings(dims=tuple(dims.items())), only="Net.forward")
    assert rep.functions[0].eager.kernels == kernels


def test_dim_reaches_named_dims_of_an_input() -> None:
    f = _fn(GPT, "GPT.forward", {"B": 8, "T": 1024}, init="config=GPTConfig(n_layer=2)")
    g = _fn(GPT, "GPT.forward", init="config=GPTConfig(n_layer=2)", example="idx=randint(0, 50304, (8, 1024))")
    assert isinstance(f.eager.bytes, int) and f.eager == g.eager and f.compiled.bytes == g.compiled.bytes


# --------------------------------------------------------------------------- item 3: names and formulas

NAMED = '''import torch
from torch import Tensor
from jaxtyping import Float


def annotated(x: Float[Tensor, "B T 64"]):
    return (x * 2).sum(-1)


def commented(
    x,  # shape: (N, D)
):
    return torch.relu(x) + 1


def unpacked(x):
    bsz, q_len, _ = x.size()
    return x.softmax(-1)


def ids(self_emb, input_ids):
    return input_ids + 1


def unknown_rank(x):
    return x * 2


def rotary(q, cos):
    return q * cos.unsqueeze(1)
'''


@pytest.mark.parametrize("qual, dims, why", [
    ("annotated", "(B, T, 64)", "its annotation"),
    ("commented", "(N, D)", "its # shape: comment"),
    ("unpacked", "(bsz, q_len, x_2)", "unpacked from x.size() in the body"),
    ("ids", "(B, T)", "token ids, batch by sequence, by convention"),
])
def test_where_dim_names_come_from(qual: str, dims: str, why: str) -> None:
    f = analyze_source(NAMED, "named.py", Settings(target="cpu"), only=qual).functions[0]
    name = "input_ids" if qual == "ids" else "x"
    assert f"{name}: shape {dims} ({why})" in f.assumptions, f.assumptions
    assert isinstance(f.eager.bytes, str) and isinstance(f.compiled.bytes, str), (f.eager, f.compiled)


GUESSED = '''
import torch
from torch import nn


class Norm(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))

    def forward(self, hidden_states):
        return self.weight * hidden_states


class Image(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 1)

    def forward(self, pixel_values):
        return self.conv(pixel_values).relu()


class Output(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(32, 16)

    def forward(self, hidden_states, input_tensor):
        return self.dense(hidden_states) + input_tensor


def permuted(x):
    return x.permute(0, 2, 3, 1).contiguous()


def pair(position_embeddings):
    cos, sin = position_embeddings
    return cos * sin


def unknown_rank(x):
    return x * 2


def rotary(q, cos):
    return q * cos.unsqueeze(1)
'''


def _guessed(qual: str, target: str = "cpu"):
    return analyze_source(GUESSED, "guessed.py", Settings(target=target), only=qual).functions[0]


@pytest.mark.parametrize("qual, name, dims, why, eager", [
    # no rank in the code: a sequence model's (B, T, C); x * 2 reads and writes it once
    ("unknown_rank", "x", "(B, T, C)", "no rank in the code", "8*B*T*C"),
    # C meets the weight's hidden_size (a name of the code): the input's dim is that name
    ("Norm.forward", "hidden_states", "(B, T, hidden_size)", "no rank in the code",
     "8*B*T*hidden_size + 4*hidden_size"),
    # a 2-d convolution reached: (B, C, H, W), and C meets the conv's 3 input channels
    ("Image.forward", "pixel_values", "(B, C, H, W)", "it reaches a 2-d convolution or pooling", None),
    ("permuted", "x", "(B, C, H, W)", "its permute()", "8*B*C*H*W"),
])
def test_an_input_nobody_sized_gets_assumed_names(qual: str, name: str, dims: str, why: str,
                                                   eager: str | None) -> None:
    """Issue 26, item 3 on real code: transformers' `hidden_states` says nothing of its shape (90% of
    its forward methods had bytes `?`); the names are assumed from the layout the code needs, said."""
    f = _guessed(qual)
    said = [a for a in f.assumptions if a.startswith(f"{name}: shape {dims} (assumed: ")]
    assert said and why in said[0], f.assumptions
    assert isinstance(f.eager.bytes, str) and isinstance(f.compiled.bytes, str), (f.eager, f.compiled)
    if eager is not None:
        assert f.eager.bytes == eager


def test_assumed_names_meet_the_widths_they_reach() -> None:
    """BertOutput's shape: dense(hidden_states) + input_tensor, both (B, T, C): C cannot be 32 for one and 16
    for the other, so the figures are not a formula in one C (reading 4*B*T*C twice would be wrong)."""
    f = _guessed("Output.forward")
    assert f.eager.bytes is None or "C" not in str(f.eager.bytes), f.eager.bytes


def test_an_assumed_layout_that_makes_the_batch_twice_gives_no_bytes() -> None:
    """apply_rotary_pos_emb's q is (B, H, T, D); taken for (B, T, C) and broadcast against cos.unsqueeze(1)
    it made a (B, B, T, C) tensor, a formula in B**2 that the check run cannot catch (it is one)."""
    f = _guessed("rotary")
    assert f.eager.bytes is None and f.compiled.bytes is None
    assert any("the batch twice" in a for a in f.assumptions), f.assumptions


def test_a_tuple_parameter_gets_no_assumed_shape() -> None:
    f = _guessed("pair")
    assert not any(a.startswith("position_embeddings: shape") for a in f.assumptions), f.assumptions
    assert f.eager.bytes is None


def test_assumed_names_agree_with_sizes_given() -> None:
    """The formula of an assumed layout, evaluated at B, T, C, equals the analysis with the same sizes
    given by --dim (which the shape then takes: the rerun's own route)."""
    f = _guessed("Norm.forward")
    sizes = {"B": 2, "T": 5, "hidden_size": 7}
    given = analyze_source(GUESSED, "guessed.py", Settings(target="cpu", dims=tuple(sizes.items())),
                           only="Norm.forward").functions[0]
    assert given.eager.bytes is None or isinstance(given.eager.bytes, (int, str))
    assert _at(f.eager.bytes, sizes) == 8 * 2 * 5 * 7 + 4 * 7


def test_a_simple_formula_is_exact() -> None:
    """(x * 2).sum(-1) on float32 (B, T, 64): eager reads x, writes x*2, reads it, writes the sums."""
    f = analyze_source(NAMED, "named.py", Settings(target="cpu"), only="annotated").functions[0]
    assert f.eager.bytes == "772*B*T"


@pytest.mark.parametrize("qual, init, names", [
    ("GPT.forward", "config=GPTConfig(n_layer=2)", ("B", "T")),
    ("GPT.forward", None, ("B", "T", "n_layer")),  # a formula in the loop count too, with --dim n_layer
    ("Block.forward", "config=GPTConfig(n_head=4, n_embd=64)", ("B", "T", "C")),
])
@pytest.mark.parametrize("target", ["cuda", "cpu"])
def test_formula_equals_concrete_analyses(qual: str, init: str | None, names: tuple[str, ...], target: str) -> None:
    """The formula, evaluated at two sets of sizes, equals the analysis given those sizes."""
    if "n_layer" in names:  # a loop count: the formula is linear in it; drop the default of 12 by --dim
        symbolic = _fn(GPT, qual, target=target)
        assert "n_layer" not in str(symbolic.eager.bytes)  # 12 from the class default, a number in the formula
        names = names[:2]
    else:
        symbolic = _fn(GPT, qual, init=init, target=target)
    assert isinstance(symbolic.eager.bytes, str) and isinstance(symbolic.compiled.bytes, str)
    for values in ({"B": 2, "T": 16, "C": 64}, {"B": 5, "T": 48, "C": 64}):
        values = {k: v for k, v in values.items() if k in names}
        concrete = _fn(GPT, qual, values, init=init, target=target)
        assert _at(symbolic.eager.bytes, values) == concrete.eager.bytes
        assert _at(symbolic.compiled.bytes, values) == concrete.compiled.bytes
        assert (symbolic.eager.kernels, symbolic.compiled.kernels) == (concrete.eager.kernels, concrete.compiled.kernels)


def test_a_size_plus_a_few_is_read_as_such() -> None:
    """T + 1 after a cat (a convolution's H + 2*padding - kernel + 1 alike) is a name plus a constant:
    cat reads x (4BT) and x[:, :1] (4B), writes 4B(T+1); the product reads and writes 4B*T/3 each."""
    src = ("import torch\n\ndef f(x):\n    B, T = x.size()\n"
           "    y = torch.cat([x, x[:, :1]], dim=1)\n    return y[:, : T // 3] * 2\n")
    f = analyze_source(src, "fit.py", Settings(target="cpu"), only="f").functions[0]
    assert f.eager.bytes == "32*B*T/3 + 8*B"


def test_a_formula_that_does_not_fit_is_not_shown() -> None:
    """T // 7 is no polynomial in T (the markers hold no 7): the check run catches it."""
    src = ("import torch\n\ndef f(x):\n    B, T = x.size()\n    return x[:, : T // 7] * 2\n")
    f = analyze_source(src, "fit.py", Settings(target="cpu"), only="f").functions[0]
    assert f.eager.bytes is None
    assert any("not a sum of products" in a for a in f.assumptions), f.assumptions


def test_formula_equals_the_cpu_oracle_at_two_sizes() -> None:
    """gpt_sizes.py's GPT.forward at a 2-layer config: its eager byte formula and kernel counts, from no
    sizes at all, equal what torch measured at (B, T) = (2, 16) and (3, 40) (recorded in fixtures/oracle/)."""
    pytest.importorskip("torch")
    from kpredict.verify import recorded

    f = _fn(GPT, "GPT.forward", init=SIZED_INIT, target="cpu")
    assert isinstance(f.eager.bytes, str) and set(f.eager.bytes) & {"B"} and "T" in f.eager.bytes
    for values in SIZED_VALUES:
        answer, err = recorded.child()(sized_request(values), 900)
        assert not answer.get("error"), (answer.get("error"), err[-2000:])
        e, c = answer["measured"]["eager"], answer["measured"]["compiled"]
        assert _at(f.eager.bytes, values) == e["bytes"], (f.eager.bytes, values, e["bytes"])
        assert (f.eager.kernels, f.eager.reads, f.eager.writes) == (e["kernels"], e["reads"], e["writes"])
        assert f.compiled.kernels == c["kernels"]


@pytest.mark.parametrize("qual, init, example, values", ASSUMED_CASES, ids=[c[0] for c in ASSUMED_CASES])
def test_assumed_layout_formula_equals_the_cpu_oracle(qual: str, init: str | None, example: str,
                                                      values: dict[str, int]) -> None:
    """fixtures/sizes/assumed_layouts.py analyzed with nothing given (a layout assumed, a width met,
    names split, `H - 2` and a pool's half read): the eager byte formula at the sizes of a run equals
    what torch measured in it, and the counts equal its counts (recorded in fixtures/oracle/)."""
    pytest.importorskip("torch")
    from kpredict.verify import recorded

    f = _fn(ASSUMED, qual, target="cpu")
    assert any(": shape (" in a and "(assumed: " in a for a in f.assumptions), f.assumptions
    answer, err = recorded.child()(assumed_request(qual, init, example), 900)
    assert not answer.get("error"), (answer.get("error"), err[-2000:])
    e, c = answer["measured"]["eager"], answer["measured"]["compiled"]
    assert _at(f.eager.bytes, values) == e["bytes"], (f.eager.bytes, values, e["bytes"])
    assert (f.eager.kernels, f.eager.reads, f.eager.writes) == (e["kernels"], e["reads"], e["writes"])
    assert f.compiled.kernels == c["kernels"]
    # the assumed names given with --dim: the figures are numbers, and the same
    given = _fn(ASSUMED, qual, dims=values, target="cpu")
    assert given.eager.bytes == e["bytes"], (given.eager.bytes, e["bytes"])
    assert (given.eager.kernels, given.compiled.kernels) == (e["kernels"], c["kernels"])


SCAN = '''
import torch


def scan(x: torch.Tensor):
    b, t, c = x.shape
    a = x.sigmoid()
    h = torch.zeros(b, c)
    outs = []
    for i in range(t):
        h = a[:, i] * h + x[:, i]
        outs.append(h)
    return torch.stack(outs, dim=1)
'''


def test_a_loop_over_a_named_dim_is_counted_as_the_first_analysis_counts_it() -> None:
    """A loop over `range(t)`, t a named dim with no size given: the first analysis counts its body once
    (and says so); the byte-formula reruns, which give t a marker size (2496), count it once too. Before,
    they followed 2,496 iterations (mamba's scan: 15 s for zamba's file) and showed their counts, 4,995
    eager kernels "for t=2496", as the function's."""
    fn = analyze_source(SCAN, "scan.py", Settings()).functions[0]
    assert fn.eager.kernels == 5 and fn.compiled.kernels == 1
    assert any("loop count not known statically" in a for a in fn.assumptions)
    at = analyze_source(SCAN, "scan.py", Settings(dims=(("b", 2), ("t", 3), ("c", 4)))).functions[0]
    assert at.eager.kernels == 3 + 2 * 3  # sizes given: the loop is followed


ENC = '''
import torch
from torch import nn


class Enc(nn.Module):
    def __init__(self, n_layers: int):
        super().__init__()
        if n_layers > 2:
            self.convs = nn.ModuleList([nn.Linear(8, 8) for _ in range(n_layers)])
        else:
            self.convs = nn.ModuleList([nn.Linear(8, 8)] + [nn.Linear(8, 8) for _ in range(n_layers - 1)])

    def forward(self, x: torch.Tensor):
        b, t, c = x.shape
        for layer in self.convs:
            x = layer(x).relu()
        return x
'''


def test_a_short_loop_a_loop_count_gives_is_followed_in_the_reruns() -> None:
    """`range(n_layers - 1)` has no count in the first analysis, and 0 or 1 in the loop-count reruns:
    followed there (wav2vec2's feature encoder), not frozen like a loop over a marker size (3bc59b5
    showed 4 kernels for any n_layers)."""
    fn = analyze_source(ENC, "enc.py", Settings(), only="Enc.forward").functions[0]
    assert fn.eager.kernels == "2*n_layers"


UNION_CONFIG = '''
import torch
from torch import nn


class VisionConfig:
    def __init__(self, hidden_size=32, intermediate_size=64):
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size


class TextConfig:
    def __init__(self, hidden_size=16, intermediate_size=48):
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size


class MLP(nn.Module):
    def __init__(self, config: VisionConfig | TextConfig):
        super().__init__()
        self.fc1 = nn.Linear(config.hidden_size, config.intermediate_size)
        self.fc2 = nn.Linear(config.intermediate_size, config.hidden_size)

    def forward(self, hidden_states):
        return self.fc2(torch.relu(self.fc1(hidden_states)))
'''


def test_a_config_annotated_with_a_union_takes_its_first_class() -> None:
    """CLIP's layers take `config: CLIPVisionConfig | CLIPTextConfig`: the first class's defaults are
    used and said (before, every field was an unknown symbol, and its activation ACT2FN[?] unknown)."""
    f = analyze_source(UNION_CONFIG, "union.py", Settings(target="cpu"), only="MLP.forward").functions[0]
    text = "\n".join(f.assumptions)
    assert "config: annotated VisionConfig | TextConfig; the first class taken" in text, text
    assert "config: VisionConfig() with its default values" in text
    # the widths are the config's numbers: the bytes are a formula in the activation's B and T alone
    assert isinstance(f.eager.bytes, str) and set(f.eager.bytes) - set("0123456789*+ BT") == set(), f.eager.bytes


VIT_GUARD = '''
import torch
from torch import nn


class Embed(nn.Module):
    def __init__(self, image_size=32, patch=8):
        super().__init__()
        self.image_size = image_size
        self.proj = nn.Conv2d(3, 16, patch, stride=patch)

    def forward(self, pixel_values):
        height, width = pixel_values.shape[2], pixel_values.shape[3]
        if height != self.image_size or width != self.image_size:
            raise ValueError("wrong image size")
        return self.proj(pixel_values)
'''


def test_a_size_a_raise_guards_is_that_size() -> None:
    """`if height != self.image_size ...: raise` (ViT and CLIP embeddings): at marker sizes the call
    raised and no bytes were known; a working call has H = W = image_size, so the names meet it, and
    the convolution's in-channels fix C: bytes in B alone (fixtures/sizes/assumed_layouts.py's
    PatchEmbed holds the same against the CPU oracle)."""
    f = analyze_source(VIT_GUARD, "guard.py", Settings(target="cpu"), only="Embed.forward").functions[0]
    text = "\n".join(f.assumptions)
    assert "H = 32, W = 32: the size each meets" in text and "C = 3:" in text, text
    assert isinstance(f.eager.bytes, str) and set(f.eager.bytes) - set("0123456789*+ B") == set(), f.eager.bytes


def test_size_names() -> None:
    """Ints nobody gave whose name reads as a size are varied by the reruns; a method's name read as an
    attribute (bit's config.set_output_features_output_indices) is none, nor are flags and indices."""
    from kpredict.frontend.dimnames import size_name

    assert all(size_name(n) for n in ("hidden_size", "num_channels", "n_embd", "embed_dim", "out_features"))
    assert all(size_name(n) for n in ("dim_feedforward", "num_experts_per_tok", "seq_len", "B", "d_model"))
    assert not any(size_name(n) for n in ("set_output_features_output_indices", "get_head_dim", "layer_idx",
                                          "_attn_implementation", "use_cache", "_experts_implementation_internal",
                                          "prefix_allowed_tokens_fn"))


def test_rotary_tuple_and_optional_mask_of_an_attention_layer() -> None:
    """transformers' attention layers take `position_embeddings: tuple[Tensor, Tensor]` and a required
    `attention_mask: Tensor | None`: the tuple is two inputs with layouts of their own, the mask None
    (sdpa's causal path), and `cos[..., : C // 2]` meeting the 4 rotary pairs fixes C = 8 (before: an
    input of unknown rank and an unsized mask, bytes '?'). The formula against torch: the oracle test."""
    f = _fn(ASSUMED, "RopeAttention.forward", target="cpu")
    text = "\n".join(f.assumptions)
    assert "position_embeddings: a tuple of 2 tensors (annotation tuple[torch.Tensor, torch.Tensor])" in text
    assert "position_embeddings_0: shape (B, T, C)" in text and "attention_mask: None (annotated" in text
    assert "C = 8: the size it meets" in text
    assert isinstance(f.eager.bytes, str) and set(f.eager.bytes) - set("0123456789*+ BT") == set(), f.eager.bytes


def test_unpacking_a_tensor_of_marker_rows_is_not_followed() -> None:
    """udop's `rows, cols = zip(*ind)` over a tensor of B*T rows: the first analysis cannot unpack it (its
    size is unknown); a rerun at marker sizes unpacked 2112*2496 rows, 5.3 million select views, 103 of
    the file's 105 s CPU. Unpacking is counted like a loop over a marker size: not followed in a rerun."""
    src = ("import torch\n\n"
           "def f(x, ind):\n"
           "    b, t = x.shape\n"
           "    rows, cols = zip(*ind.view(b * t, 2))\n"
           "    return x * 2\n")
    f = analyze_source(src, "unpack.py", Settings(target="cpu"), only="f").functions[0]
    assert f.eager.kernels == 1 and isinstance(f.eager.bytes, str) and "b*t" in f.eager.bytes, f.eager.bytes


def test_bytes_left_unknown_with_the_inputs_sized_say_what_keeps_them_unknown() -> None:
    """An input's assumed layout gives no bytes when the function moves a tensor whose shape stays
    unknown at every size (a weight loaded from a file): said, with its line, never a silent '?'."""
    src = (b"import torch\nfrom torch import nn\n\n\nclass Head(nn.Module):\n    def __init__(self, path):\n"
           b"        super().__init__()\n        self.w = nn.Parameter(torch.load(path))\n\n"
           b"    def forward(self, x):\n        return torch.matmul(x, self.w).relu()\n")
    (fn,) = analyze_source(src, "m.py", Settings(), only="Head.forward").functions
    assert fn.eager.bytes is None
    assert "bytes not worked out with the inputs sized: line 11: matmul writes a tensor of unknown shape" \
        in fn.assumptions


def test_bytes_left_unknown_in_a_loop_say_so_too() -> None:
    """The same with a loop count nobody gave (`for _ in range(n)`) and a call not understood: the
    counts become a + b*n and are lower bounds, and so are the bytes, which leave out the transfers of
    the tensor of unknown shape the call returns (they were `?`: CLIPEncoder.forward with its layer
    count and an activation not known), and say so."""
    src = ("import torch\nfrom somewhere import mystery\n\n\ndef f(x, n: int):\n    for _ in range(n):\n"
           "        x = x * 2\n    return mystery(x) + 1\n")
    (fn,) = analyze_source(src, "m.py", Settings(target="cpu"), only="f").functions
    assert fn.lower_bound and (fn.eager.bytes, fn.eager.kernels) == ("8*B*T*C*n", "1 + n"), (fn.eager, fn.lower_bound)
    assert isinstance(fn.compiled.bytes, str), fn.compiled
    said = [a for a in fn.assumptions if "bytes" in a]
    assert any(a.startswith("bytes count only tensors of known size: 2 eager and ")
               for a in said), said
    text = text_report.render_file(FileReport("m.py", functions=[fn]))
    assert ">= 8*B*T*C*n" in text, text


def test_a_class_token_before_the_patches_of_an_image_is_a_formula() -> None:
    """A ViT's embeddings: the patch grid of a 16x16 convolution, flattened, after a class token (a
    cat): the token dim is 1 + H*W/256, a product of names plus a constant. Its bytes were `?` ("not a
    sum of products"; DINOv3ViTEmbeddings and every ViT-style embedding of transformers); each dim is
    now read as a product with coefficient 1/2**k plus a few tokens, and the check run at other sizes
    still decides. At B=1, H=W=32 the formula gives the bytes of the analysis with those sizes."""
    src = '''import torch
from torch import nn


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv2d(3, 64, 16, stride=16)
        self.cls = nn.Parameter(torch.zeros(1, 1, 64))

    def forward(self, x):
        p = self.proj(x).flatten(2).transpose(1, 2)
        return torch.cat([self.cls.expand(x.shape[0], -1, -1), p], dim=1)
'''
    (fn,) = analyze_source(src, "m.py", Settings(target="cpu"), only="Embed.forward").functions
    assert isinstance(fn.eager.bytes, str) and "B*H*W" in fn.eager.bytes, (fn.eager.bytes, fn.assumptions)
    sized = Settings(target="cpu", dims=(("B", 1), ("H", 32), ("W", 32)))
    (exact,) = analyze_source(src, "m.py", sized, only="Embed.forward").functions
    formula = fn.eager.bytes.replace("B", "1").replace("H", "32").replace("W", "32")
    assert eval(formula) == exact.eager.bytes, (fn.eager.bytes, exact.eager.bytes)  # noqa: S307 - our own formula
