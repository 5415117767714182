"""KP702 optimizer-for-loop-on-device."""

from __future__ import annotations

from collections.abc import Iterator

from kpredict.ir import Span
from kpredict.lint.context import FunctionContext
from kpredict.lint.figures import plural
from kpredict.lint.model import Example, Hit, Rule
from kpredict.render.text_report import human_bytes

# the catalogue functions of rules/libraries.toml that run torch.optim's single-tensor (for-loop) path
FOR_LOOP_PATHS = ("_kp_single_tensor_sgd", "_kp_single_tensor_adam")


class OptimizerForLoopOnDevice(Rule):
    """
    ## What it does
    Finds an optimizer `step()` that runs torch.optim's for-loop (single-tensor) path on cuda: an
    SGD, Adam or AdamW built with `foreach=False`.

    ## Why it costs
    The for-loop path launches each of the step's ops once per parameter: a few hundred small
    kernels per step for a transformer, each too short to fill the GPU. torch's default on cuda,
    `foreach`, runs each op once over the list of parameters (multi_tensor_apply packs hundreds of
    tensors in one launch), and `fused=True` runs the whole update as one kernel per chunk group.
    On cpu the for-loop path is torch's default and is not reported.
    """

    code = "KP702"
    name = "optimizer-for-loop-on-device"
    severity = "warning"
    summary = "An optimizer step on the for-loop path (foreach=False) on cuda: one launch per parameter per op"
    fix = "Drop foreach=False (foreach is torch's default on cuda), or pass fused=True."

    INVALID = [
        Example(
            "import torch\n"
            "\n"
            "model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Linear(64, 64))\n"
            "opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(8, 64)\n"
            "def step(x):\n"
            "    model(x).sum().backward()\n"
            "    opt.step()  # expect: KP702\n"
            "    opt.zero_grad()\n"
        ),
    ]
    VALID = [
        Example(
            "import torch\n"
            "\n"
            "model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Linear(64, 64))\n"
            "opt = torch.optim.AdamW(model.parameters(), lr=1e-3)\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(8, 64)\n"
            "def step(x):\n"
            "    model(x).sum().backward()\n"
            "    opt.step()\n"
            "    opt.zero_grad()\n"
        ),
        Example(  # the for-loop path is torch's default on cpu
            "import torch\n"
            "\n"
            "model = torch.nn.Linear(64, 64)\n"
            "opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(8, 64)\n"
            "def step(x):\n"
            "    model(x).sum().backward()\n"
            "    opt.step()\n",
            target="cpu",
        ),
    ]

    def check(self, fn: FunctionContext) -> Iterator[Hit]:
        if fn.target != "cuda":
            return
        by_span: dict[Span, list] = {}
        for op in fn.fg.ops:
            if op.phase == "optimizer" and any(v.rsplit(".", 1)[-1] in FOR_LOOP_PATHS for v in op.via):
                by_span.setdefault(op.span, []).append(op)
        for span, ops in by_span.items():
            kernels = sum(fn.launches(op) for op in ops)
            if not kernels:
                continue
            params = len({v for op in ops for v in op.mutates if v in fn.fg.values and fn.fg.values[v].requires_grad})
            sizes = [fn.fg.values[v].meta.nbytes for op in ops if fn.launches(op)
                     for v in (*op.inputs, *op.outputs) if v in fn.fg.values]
            nbytes = None if any(b is None for b in sizes) else sum(sizes)
            moved = f", {human_bytes(nbytes)} moved" if nbytes is not None else ""
            message = (f"`{fn.text(span, 40)}` runs torch.optim's for-loop path on cuda (built with "
                       f"foreach=False): {plural(kernels, 'kernel')}{moved}, each op launched once per "
                       f"parameter ({plural(params, 'parameter')}); with foreach (torch's default on cuda) "
                       "each op is one multi-tensor launch over the list, with fused=True the update is one")
            yield Hit(span, message, {"kernels": kernels, "bytes": nbytes, "parameters": params})
