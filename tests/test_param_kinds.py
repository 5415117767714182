"""Parameter kinds by annotation, default and use (issue 26, item 5; kpredict/frontend/params.py):
a function analyzed alone, with no example, takes token ids as int64 tensors, bool flags and
Python scalars as non-tensors, and lists each kind among its assumptions."""
from __future__ import annotations

import ast

from kpredict.api import analyze_source
from kpredict.frontend.params import annotation_kind, use_kind
from kpredict.settings import Settings

SRC = '''
from typing import Optional, Union
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(100, 16)
        self.proj = nn.Linear(16, 16)

    def flags(self, x: torch.Tensor, output_attentions):
        y = self.proj(x)
        if output_attentions:
            y = y * 2
        return y

    def annotated(self, input_ids: torch.LongTensor, mask: torch.BoolTensor, scale: Optional[float],
                  n: int | None, name: str):
        return self.wte(input_ids)

    def untyped(self, idx, targets):
        logits = self.wte(idx)
        return F.cross_entropy(logits.view(-1, 16), targets.view(-1))

    def forward(self, input_ids: Optional[torch.LongTensor] = None, attention_mask: Optional[torch.Tensor] = None,
                output_attentions: Optional[bool] = None, return_dict: bool = True):
        h = self.proj(self.wte(input_ids))
        if output_attentions:
            h = h + 1
        if attention_mask is not None:
            h = h * attention_mask
        return h if return_dict else (h,)


class Plain(Net):
    def forward(self, input_ids: torch.Tensor | None = None, pixel_values: torch.Tensor | None = None):
        return self.proj(self.wte(input_ids))


class Embeddings(Net):
    def forward(self, input_ids=None, inputs_embeds=None):
        if input_ids is not None:
            shape = input_ids.size()
        else:
            shape = inputs_embeds.size()[:-1]
        if inputs_embeds is None:
            inputs_embeds = self.wte(input_ids)
        return self.proj(inputs_embeds) * shape[1]


class Patches(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_embeddings = nn.Conv2d(3, 8, 4, stride=4)

    def forward(self, pixel_values: torch.Tensor):
        return self.patch_embeddings(pixel_values)
'''


def _fn(name: str):
    rep = analyze_source(SRC, "net.py", Settings(target="cpu"), only=f"Net.{name}")
    return rep.functions[0]


def test_untyped_bool_flag_is_no_tensor():
    fn = _fn("flags")
    assert fn.eager.syncs == 0 and not fn.compiled.graph_breaks
    assert any(a.startswith("output_attentions: a bool flag") and "used only as a condition" in a
               for a in fn.assumptions), fn.assumptions


def test_annotations_are_honoured():
    fn = _fn("annotated")
    text = "\n".join(fn.assumptions)
    assert "input_ids: int64 tensor of unknown shape (annotation torch.LongTensor)" in text
    assert "mask: bool tensor of unknown shape (annotation torch.BoolTensor)" in text
    assert "scale: a float, not known statically (annotation float)" in text
    assert "n: an int, not known statically (annotation int; symbol n)" in text
    assert "name: not known statically" in text  # a bare str: as before, no tensor
    dtypes = {v.name: v.meta.dtype for v in fn.graph.values.values() if v.name}
    assert dtypes.get("input_ids") == "int64" and dtypes.get("mask") == "bool"
    assert fn.eager.syncs == 0


def test_use_gives_token_ids_and_targets():
    fn = _fn("untyped")
    text = "\n".join(fn.assumptions)
    assert "idx: int64 tensor of unknown shape (fed to self.wte, line" in text
    assert "targets: int64 tensor of unknown shape (the target of cross_entropy, line" in text


def test_forward_defaults():
    fn = _fn("forward")
    text = "\n".join(fn.assumptions)
    # the first optional tensor of forward is the input, with its annotation's dtype
    assert "input_ids: int64 tensor of unknown shape (annotation Optional[torch.LongTensor]; its default is None)" in text
    assert "return_dict = True (its default)" in text
    assert fn.eager.syncs == 0 and not fn.compiled.graph_breaks
    assert fn.eager.kernels  # embedding and linear are counted


def _ann(text: str):
    return annotation_kind(ast.parse(f"def f(x: {text}): pass").body[0].args.args[0].annotation)


def test_annotation_forms():
    assert _ann("Optional[torch.LongTensor]")[0].dtype == "int64"
    assert _ann("torch.LongTensor | None") == (_ann("torch.LongTensor")[0], True)
    assert _ann("Union[None, int]")[0].what == "int"
    assert _ann("'torch.BoolTensor'")[0].dtype == "bool"
    assert _ann("torch.Tensor")[0].dtype == "float32"
    assert _ann("list[int]")[0] is None and _ann("dict")[0] is None
    assert _ann("tuple[torch.Tensor, torch.Tensor]")[0] is None


def test_use_kinds():
    f = ast.parse("def f(a, b, c, d, e):\n"
                  "    if not a and b: pass\n"
                  "    y = t[c] + x.gather(1, d) + b\n"
                  "    while e: pass\n").body[0]
    assert use_kind(f, "a").what == "bool"
    assert use_kind(f, "b") is None  # also used as a value
    assert use_kind(f, "c").dtype == "int64" and use_kind(f, "d").dtype == "int64"
    assert use_kind(f, "e").what == "bool"


def test_a_plain_tensor_annotation_takes_the_dtype_its_name_gives():
    """`input_ids: torch.Tensor | None = None` (CLIP's text model): `Tensor` names no dtype, so the name
    does, as for an untyped parameter: token ids, int64, batch by sequence (it was a float32 tensor of
    unknown shape, and the model's bytes `?`)."""
    fn = analyze_source(SRC, "net.py", Settings(target="cpu"), only="Plain.forward").functions[0]
    text = "\n".join(fn.assumptions)
    assert "input_ids: int64 tensor of unknown shape (fed to self.wte, line" in text, text
    assert "input_ids: shape (B, T)" in text
    assert isinstance(fn.eager.bytes, str) and "B*T" in fn.eager.bytes
    # an image fed to a module named *embeddings* (a convolution) stays a float image: only an index's
    # name or an index use makes an annotated Tensor int64 (FocalNet's pixel_values were taken for ids)
    img = analyze_source(SRC, "net.py", Settings(target="cpu"), only="Patches.forward").functions[0]
    assert "pixel_values: tensor of unknown shape, float32" in img.assumptions, img.assumptions


def test_untyped_ids_defaulting_to_none_are_the_input():
    """BERT-like embeddings' `forward(self, input_ids=None, inputs_embeds=None)`: with every input None
    the body would call `.size()` on None (Python raises); the first optional parameter that its name
    and use make token ids is the input, and the bytes get their formula in its dims."""
    fn = analyze_source(SRC, "net.py", Settings(target="cpu"), only="Embeddings.forward").functions[0]
    text = "\n".join(fn.assumptions)
    assert "input_ids: int64 tensor of unknown shape (fed to self.wte, line 50; its default is None)" in text
    assert "inputs_embeds" not in text.split("input_ids: int64")[0]
    assert fn.eager.bytes is not None and "B*T" in str(fn.eager.bytes)

