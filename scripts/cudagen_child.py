"""The measuring side of the scoreboards' cudagen runs, imported by their child processes (never by kpredict).

cudagen (../shared/tools/cudagen) traces a program on CPU tensors with Dynamo, moves the graph to fake CUDA
tensors and runs Inductor's CUDA code generation on it. It moves the device keyword of factory calls; a device
passed positionally stays the CPU the program was traced on (transformers' masks:
`mask(...).to(result.device)`), and the graph then mixes devices, which the GPU run of the same program never
does. `retarget_positional_devices()` moves those too, in the copy of the graph that is compiled for CUDA; the
program itself keeps running on the CPU.
"""

from __future__ import annotations

import copy
from typing import Any


def retarget_positional_devices(fakecuda: Any) -> None:
    """Wrap fakecuda.make_backend: a CPU `torch.device` among a node's positional arguments becomes cuda:0
    in the graph compiled for CUDA."""
    import torch

    inner_make = fakecuda.make_backend

    def make_backend(res: Any) -> Any:
        inner = inner_make(res)

        def backend(gm: Any, example_inputs: list) -> Any:
            moved = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
            cuda = torch.device("cuda", 0)
            for n in moved.graph.nodes:
                n.args = tuple(cuda if isinstance(a, torch.device) and a.type == "cpu" else a for a in n.args)
            moved.recompile()
            inner(moved, example_inputs)  # records the generated code in res
            return gm.forward  # the program goes on with its own (CPU) graph
        return backend

    fakecuda.make_backend = make_backend


def launches(res: Any, kp: Any) -> list[dict]:
    """The launches of a cudagen result as its cudagen.py counts them: views and as_strided fallbacks are
    no launch."""
    return [ln for code in res.codes for ln in kp.parse_launches(code)
            if not (ln["kind"] == "fallback" and ln["name"].split(".")[-1].startswith(("view", "_unsafe_view",
                                                                                        "as_strided")))]
