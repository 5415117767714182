"""The Inductor model schedules a stack of equal layers once (models/repeats.py): the kernels must
be those of the whole graph scheduled op by op, on both targets, whether the shortcut is taken or
refused. Sizes are kept small here by lowering the shortcut's minimum graph size; the transformers
corpus (4,489 graphs, 344k ops in stacks) was compared the same way when it was written."""

from __future__ import annotations

import pytest

from kpredict.frontend.entry import build_graphs
from kpredict.frontend.parse import parse_module
from kpredict.ir import FunctionGraph
from kpredict.models import repeats
from kpredict.models.inductor import Scheduler, compiled_kernels, prepared
from kpredict.opfacts import default_targets, load_table
from kpredict.settings import Settings

HEAD = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
'''


def _model(layer: str, result: str) -> str:
    """Ten copies of a layer with one Linear, whose forward runs `layer`; the model's forward
    returns `result` (of x, the last layer's output, and states, every layer's)."""
    return HEAD + f'''
class Layer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        {layer}


class Model(nn.Module):
    def __init__(self, d=32, n=10):
        super().__init__()
        self.layers = nn.ModuleList([Layer(d) for _ in range(n)])

    def forward(self, x):  # kpredict: x=(8, 32)
        states = []
        for layer in self.layers:
            x = layer(x)
            states.append(x)
        return {result}
'''


STACKS = {
    # pre-norm residual layers: the residual add fuses with the next layer's norm across copies
    "residual": HEAD + '''
class Layer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


class Model(nn.Module):
    def __init__(self, d=64, n=12):
        super().__init__()
        self.layers = nn.ModuleList([Layer(d) for _ in range(n)])
        self.norm = nn.LayerNorm(d)

    def forward(self, x):  # kpredict: x=(4, 16, 64)
        x = x * 2
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)
''',
    # two kinds of layers, alternating: the stack's copy is two layers long
    "alternating": HEAD + '''
class Layer(nn.Module):
    def __init__(self, d, i):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.gated = i % 2 == 1

    def forward(self, x, bias):
        h = self.fc(x)
        if self.gated:
            h = h * torch.sigmoid(h + bias)
        else:
            h = torch.relu(h) + bias
        return x + h


class Model(nn.Module):
    def __init__(self, d=32, n=20):
        super().__init__()
        self.layers = nn.ModuleList([Layer(d, i) for i in range(n)])

    def forward(self, x):  # kpredict: x=(8, 32)
        bias = x.mean(dim=0)
        for layer in self.layers:
            x = layer(x, bias)
        return x
''',
    # every layer's output returned: each copy writes it, the copies left out too
    "all_returned": _model("return torch.tanh(self.fc(x)) * 0.5 + x", "tuple(states)"),
    # every layer's output read after the stack: the shortcut is refused, the whole graph scheduled
    "read_after": _model("return torch.relu(self.fc(x)) + x", "torch.stack(states).sum(0)"),
    # a graph break in every layer: each copy starts a later compiled graph
    "graph_breaks": _model("h = torch.relu(self.fc(x))\n        scale = h.abs().max().item()\n        return x + h / scale",
                           "x * 2"),
}

TAKEN = {"residual", "alternating", "all_returned", "graph_breaks"}  # where the shortcut must be taken


def _graph(source: str, target: str) -> FunctionGraph:
    module = parse_module(source, "m.py")
    return next(fg for fg in build_graphs(module, load_table(), Settings(target=target)) if fg.qualname == "Model.forward")


@pytest.mark.parametrize("target", ["cuda", "cpu"])
@pytest.mark.parametrize("name", sorted(STACKS))
def test_a_stack_scheduled_once_gets_the_kernels_of_the_whole_graph(name: str, target: str) -> None:
    conf = default_targets()[target]
    fg = prepared(_graph(STACKS[name], target), conf)
    whole = Scheduler(fg, target, conf, ready=True).schedule()
    assert whole, "nothing was scheduled"
    shortened: list[FunctionGraph] = []

    def schedule(small: FunctionGraph) -> list:
        shortened.append(small)
        return Scheduler(small, target, conf, ready=True).schedule()

    got = repeats.schedule_repeats(fg, schedule, min_ops=0)
    if name in TAKEN:
        assert got is not None, "the shortcut was not taken"
        assert len(shortened[0].ops) < len(fg.ops)
        assert got == whole
    else:
        assert got is None


@pytest.mark.parametrize("name", sorted(STACKS))
def test_compiled_kernels_are_the_same_with_the_shortcut(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fg = _graph(STACKS[name], "cuda")
    shortened: list[int] = []
    real = repeats._reduced

    def spy(graph: FunctionGraph, stack: repeats.Stack) -> FunctionGraph | None:
        small = real(graph, stack)
        if small is not None:
            shortened.append(len(small.ops))
        return small

    monkeypatch.setattr(repeats, "_reduced", spy)
    monkeypatch.setattr(repeats, "MIN_OPS", 0)
    fast = compiled_kernels(fg, "cuda")
    assert bool(shortened) == (name in TAKEN)
    monkeypatch.setattr(repeats, "MIN_OPS", 10**9)
    assert fast == compiled_kernels(fg, "cuda")
    assert len(shortened) == (name in TAKEN)  # not searched again below MIN_OPS


def test_the_copies_found_and_their_ids() -> None:
    fg = prepared(_graph(STACKS["residual"], "cuda"), default_targets()["cuda"])
    st = repeats.find_stack(fg, min_ops=0)
    assert st is not None
    assert st.count >= 11  # the first layer reads the input's scaling, not a layer: it may differ
    assert len({len(made) for made in st.made}) == 1  # every copy makes as many values
    names = [op.name for op in fg.ops[st.start:st.start + st.period]]
    assert names == [op.name for op in fg.ops[st.start + 5 * st.period:st.start + 6 * st.period]]
    # a graph without repetition has no stack
    single = prepared(_graph(STACKS["residual"].replace("n=12", "n=1"), "cuda"), default_targets()["cuda"])
    assert repeats.find_stack(single, min_ops=0) is None
