"""Python that calls through a value (issue 27, item 3): lambdas, functools.partial, map() and
filter(). The calls run what they wrap; none is dropped, and what cannot be followed inside them
still makes the figures lower bounds. fixtures/ops/lambdas.py holds the same against the CPU oracle."""

from __future__ import annotations

from pathlib import Path

from kpredict.api import analyze_file, analyze_source
from kpredict.ir import FunctionReport
from kpredict.settings import Settings

REPO = Path(__file__).resolve().parent.parent


def _fns(src: str) -> dict[str, FunctionReport]:
    rep = analyze_source(src, "m.py", Settings(target="cpu"))
    assert rep.error is None, rep.error
    return {f.qualname: f for f in rep.functions}


def test_every_lambda_fixture_is_understood() -> None:
    rep = analyze_file(REPO / "fixtures" / "ops" / "lambdas.py", Settings(target="cpu"))
    assert rep.error is None, rep.error
    fns = {f.qualname: f for f in rep.functions}
    for f in fns.values():
        assert not f.lower_bound and not f.unknown, (f.qualname, f.unknown)
    # the probe of the issue: map(lambda b: b(x), self.blocks) counted 0 kernels
    assert (fns["MapBlocks.forward"].eager.kernels, fns["MapBlocks.forward"].compiled.kernels) == (5, 4)
    assert (fns["StoredLambda.forward"].eager.kernels, fns["StoredLambda.forward"].compiled.kernels) == (3, 2)
    assert fns["partial_softmax"].eager.kernels == 2
    assert fns["filter_none"].eager.kernels == 1


MAP_BLOCKS = """import torch
import torch.nn as nn

class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])

    def forward(self, x):
        x = list(map(lambda b: b(x), self.blocks))
        return sum(x)
"""


def test_map_of_a_lambda_over_a_module_list_runs_each_module() -> None:
    f = _fns(MAP_BLOCKS)["M.forward"]
    assert f.eager.kernels == 6 and not f.lower_bound  # 3 addmm, then 0 + y0 + y1 + y2


SELF_LAMBDA = """import torch.nn as nn
import torch.nn.functional as F

class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = lambda t: F.gelu(t)

    def forward(self, x):
        return self.act(self.fc(x))
"""


def test_a_lambda_stored_on_self_is_called_later() -> None:
    f = _fns(SELF_LAMBDA)["M.forward"]
    assert f.eager.kernels == 2 and not f.lower_bound


PARTIALS = """import functools
from functools import partial
import torch
import torch.nn as nn
import torch.nn.functional as F

def soft(x):
    f = partial(F.softmax, dim=-1)
    return f(x)

def clamp(x):
    g = functools.partial(functools.partial(torch.clamp, min=0.0), max=1.0)
    return g(x)

class Block(nn.Module):
    def __init__(self, d, norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.norm = norm_layer(d)

    def forward(self, x):
        return self.norm(x)
"""


def test_partial_calls_what_it_wraps_with_its_arguments() -> None:
    fns = _fns(PARTIALS)
    assert fns["soft"].eager.kernels == 1 and not fns["soft"].lower_bound
    assert fns["clamp"].eager.kernels == 1 and not fns["clamp"].lower_bound
    assert fns["Block.forward"].eager.kernels == 1 and not fns["Block.forward"].lower_bound


LAZY_FOR = """import torch.nn as nn

class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])

    def forward(self, x):
        for y in map(lambda b: b(x), self.blocks):
            x = x + y
        return x
"""


def test_a_for_loop_over_map_runs_each_call_before_its_body() -> None:
    """map() is lazy: the second block reads the x the loop body made from the first."""
    rep = analyze_source(LAZY_FOR, "m.py", Settings(target="cpu"))
    f = next(f for f in rep.functions if f.qualname == "M.forward")
    assert f.compiled.kernels == 4  # addmm, add, addmm, add: the adds cannot fuse into one kernel


UNKNOWN_INSIDE = """import torch
from mystery import op

def f(a, b):
    return torch.cat(list(map(lambda t: op(t), [a, b])))
"""


def test_what_a_lambda_cannot_follow_makes_a_lower_bound() -> None:
    f = _fns(UNKNOWN_INSIDE)["f"]
    assert f.lower_bound and any(c.line == 5 for c in f.lower_bound_causes), f.lower_bound_causes


def test_filter_keeps_what_its_function_keeps() -> None:
    src = ("import torch\n"
           "def f(a):\n"
           "    for k in filter(None, [0, 2, 3]):\n"
           "        a = a * k\n"
           "    ks = list(filter(lambda k: k > 2, [1, 2, 3, 4]))\n"
           "    return a * len(ks)\n")
    f = _fns(src)["f"]
    assert f.eager.kernels == 3 and not f.lower_bound  # two products (0 is dropped), then one more
