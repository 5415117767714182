"""KP402 host-sync-in-forward."""

from __future__ import annotations

from collections.abc import Iterator

from kpredict.lint.context import FunctionContext
from kpredict.lint.figures import plural
from kpredict.lint import hotpath
from kpredict.lint.model import Example, Hit, Rule
from kpredict.lint.syncs import sync_sites


class HostSyncInForward(Rule):
    """
    ## What it does
    Finds host-device synchronizations in a module's `forward` or in a training step (a function
    that runs a backward), outside loops, which KP401 reports: `.item()`, `.cpu()`, `.tolist()`,
    `.numpy()`, `print(tensor)`, `if tensor:`, `bool(tensor)`, such as logging `loss.item()` or
    moving gradients to the host on every step. Compiled functions are left to KP201, where these
    are graph breaks.

    ## Why it costs
    `forward` and a training step run on every step. A sync in it stops the host until the GPU has finished every
    kernel queued so far, so the next step's launches cannot overlap with this step's work: the GPU
    idles for the Python time between them, on every call.
    """

    code = "KP402"
    name = "host-sync-in-forward"
    severity = "warning"
    summary = "A host-device sync (.item(), .cpu(), .tolist(), print, if tensor) in a forward method or a training step"
    fix = "Keep the value on the device (torch.where, masks, clamp) or compute it outside the training step."
    options = {hotpath.OPTION: False}
    option_docs = {hotpath.OPTION: hotpath.OPTION_DOC}

    INVALID = [
        Example(
            "import torch\n"
            "from torch import nn\n"
            "\n"
            "\n"
            "class Gate(nn.Module):\n"
            "    # kpredict: example x=randn(64, 64)\n"
            "    def forward(self, x):\n"
            "        if x.sum() > 0:  # expect: KP402\n"
            "            return x.relu()\n"
            "        return x\n"
        ),
        Example(
            "import torch\n"
            "\n"
            "model = torch.nn.Linear(64, 1)\n"
            "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(8, 64)\n"
            "def train_step(x):\n"
            "    loss = model(x).pow(2).mean()\n"
            "    loss.backward()\n"
            "    opt.step()\n"
            "    opt.zero_grad()\n"
            "    return loss.item()  # expect: KP402\n"
        ),
    ]
    VALID = [
        Example(
            "import torch\n"
            "from torch import nn\n"
            "\n"
            "\n"
            "class Gate(nn.Module):\n"
            "    # kpredict: example x=randn(64, 64)\n"
            "    def forward(self, x):\n"
            "        return torch.where(x.sum() > 0, x.relu(), x)\n"
        ),
        Example(  # a parameter with no annotation that is only ever a flag: nothing says it is a tensor
            "import torch\n"
            "from torch import nn\n"
            "\n"
            "\n"
            "class Layer(nn.Module):\n"
            "    def forward(self, x, output_attentions):\n"
            "        attn = () if output_attentions else None\n"
            "        return x * 2, attn\n"
        ),
        Example(  # the scores go to numpy by design, and the raise runs only when a check fails
            "import torch\n"
            "from torch import nn\n"
            "\n"
            "\n"
            "class Checker(nn.Module):\n"
            "    # kpredict: example x=randn(4, 64) ids=randn(4)\n"
            "    def forward(self, x, ids):\n"
            "        if ids.numel() > 1000:\n"
            "            raise ValueError(f'bad ids {ids.tolist()}')\n"
            "        return (x @ x.T).cpu().float().numpy()\n"
        ),
    ]

    def check(self, fn: FunctionContext) -> Iterator[Hit]:
        if fn.compiled or not (fn.is_forward or fn.is_training_step):
            return
        for site in sync_sites(fn):
            if fn.enclosing_loops(site.span):
                continue
            before = sum(fn.launches(op) for op in fn.own_ops if site.ops and op.oid < site.ops[0].oid)
            what = fn.text(site.span, 40)
            where = f"`{fn.qualname}`" + (" (a training step)" if not fn.is_forward else "")
            message = (f"`{what}` in {where} makes the host wait for the device on every call "
                       f"({site.reason})" + (f"; it drains the {plural(before, 'kernel')} queued before it"
                                             if before else ""))
            yield Hit(site.span, message, {"syncs": site.count or 1, "kernels_before": before})
