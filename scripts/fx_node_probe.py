"""FX nodes per op in the graph Inductor lowers (the count decide_layout_opt weighs against the
convolutions): each probe is compiled by cudagen (../shared/tools/cudagen, fake H100 tensors) with
GraphLowering.decide_layout_opt observed; placeholders and the output node are left out. Feeds the
`fx_nodes` entries of rules/ops.toml.

    CUDAGEN_PYLIB=~/.cache/cudagen-pylib python scripts/fx_node_probe.py
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT.parent / "shared" / "tools" / "cudagen"), os.environ.get("CUDAGEN_PYLIB", "")]

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import fakecuda  # noqa: E402
from torch._inductor.graph import GraphLowering  # noqa: E402

x4 = torch.randn(2, 16, 8, 8)
x3 = torch.randn(2, 8, 32)
w, b = torch.randn(64, 32), torch.randn(64)
g, beta = torch.randn(32), torch.randn(32)
c, rm, rv = torch.randn(16), torch.randn(16), torch.rand(16)
q = torch.randn(2, 4, 8, 16)
PROBES = {
    "layer_norm": lambda: F.layer_norm(x3, (32,), g, beta),
    "gelu": lambda: F.gelu(x3),
    "silu": lambda: F.silu(x3),
    "sigmoid": lambda: torch.sigmoid(x3),
    "hardswish": lambda: F.hardswish(x3),
    "_softmax": lambda: x3.softmax(-1),
    "_native_batch_norm_legit_no_training": lambda: F.batch_norm(x4, rm, rv, c, c, False),
    "group_norm": lambda: F.group_norm(x4, 4, c, c),
    "linear (2-D)": lambda: F.linear(x3[0], w, b),
    "linear (3-D)": lambda: F.linear(x3, w, b),
    "mean": lambda: x4.mean((2, 3)),
    "unbind": lambda: q.unbind(0),
    "scaled_dot_product_attention": lambda: F.scaled_dot_product_attention(q, q, q),
}


def main() -> None:
    seen: list[int] = []
    orig = GraphLowering.decide_layout_opt

    def spy(gm, *, is_inference):
        seen.append(sum(n.op not in ("placeholder", "output") for n in gm.graph.nodes))
        return orig(gm, is_inference=is_inference)

    GraphLowering.decide_layout_opt = staticmethod(spy)
    for name, fn in PROBES.items():
        seen.clear()
        with torch.no_grad():
            fakecuda.cuda_compile(lambda: fn() if not isinstance(r := fn(), tuple) else r)
        print(f"{name:<40} {seen[0] if seen else '?'}")


if __name__ == "__main__":
    main()
