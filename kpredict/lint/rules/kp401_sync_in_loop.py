"""KP401 host-sync-in-loop."""

from __future__ import annotations

from collections.abc import Iterator

from kpredict.lint.context import FunctionContext
from kpredict.lint.figures import plural
from kpredict.lint import hotpath
from kpredict.lint.model import Example, Hit, Rule
from kpredict.lint.syncs import sync_sites


class HostSyncInLoop(Rule):
    """
    ## What it does
    Finds host-device synchronizations inside a Python loop: `.item()`, `.cpu()`, `.tolist()`,
    `.numpy()`, `print(tensor)`, `if tensor:` and `bool(tensor)`, in code that does not run under
    `torch.compile` (there KP201 reports them as graph breaks).

    ## Why it costs
    Kernel launches are asynchronous: the host normally queues work and runs ahead of the GPU. A
    sync makes the host wait until every queued kernel has finished and the value has been copied
    back, so the GPU idles while Python prepares the next launches. Once per iteration, this
    serializes the whole loop.
    """

    code = "KP401"
    name = "host-sync-in-loop"
    severity = "warning"
    summary = "A host-device sync (.item(), .cpu(), .tolist(), print, if tensor) inside a loop"
    fix = "Keep values on the device inside the loop (accumulate in a tensor) and read them once after it."
    options = {hotpath.OPTION: False}
    option_docs = {hotpath.OPTION: hotpath.OPTION_DOC}

    INVALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example losses=randn(16, 128)\n"
            "def total_loss(losses):\n"
            "    total = 0.0\n"
            "    for row in losses:\n"
            "        total += row.mean().item()  # expect: KP401\n"
            "    return total\n"
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(256)\n"
            "def iterate(x):\n"
            "    for _ in range(4):\n"
            "        x = x * 0.5\n"
            "        if x.abs().max() < 1e-3:  # expect: KP401\n"
            "            break\n"
            "    return x\n"
        ),
    ]
    VALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example losses=randn(16, 128)\n"
            "def total_loss(losses):\n"
            "    return losses.mean(dim=1).sum().item()\n"
        ),
        Example(  # state-dict keys are strings: comparing them waits for nothing
            "import torch\n"
            "\n"
            "\n"
            "def filter_keys(state_dict):\n"
            "    out = {}\n"
            "    for k in state_dict:\n"
            "        if k.startswith('head.') or k == 'fc.bias':\n"
            "            continue\n"
            "        out[k] = state_dict[k]\n"
            "    return out\n"
        ),
        Example(  # a CPU random draw (no device=): the host reads its own memory
            "import torch\n"
            "\n"
            "\n"
            "def crop_params(height: int, width: int, size: int):\n"
            "    for _ in range(10):\n"
            "        i = torch.randint(0, height - size + 1, size=(1,)).item()\n"
            "        j = torch.randint(0, width - size + 1, size=(1,)).item()\n"
            "    return i, j\n"
        ),
        Example(  # a parameter with no annotation compared with Python ints: nothing says it is a tensor
            "import torch\n"
            "\n"
            "PROGRAMS = {'piano': 0, 'organ': 16, 'guitar': 24}\n"
            "\n"
            "\n"
            "def to_class(program):\n"
            "    for first in sorted(PROGRAMS.values(), reverse=True):\n"
            "        if program >= first:\n"
            "            return first\n"
        ),
    ]

    def check(self, fn: FunctionContext) -> Iterator[Hit]:
        if fn.compiled:
            return
        for site in sync_sites(fn):
            loops = fn.enclosing_loops(site.span)
            if not loops:
                continue
            loop_kernels = sum(fn.launches(op) for op in fn.ops_in(loops[0]))
            what = fn.text(site.span, 40)
            if site.count is not None and site.count > 1:
                times = f"{site.count} times per call, once per iteration"
            else:
                times = "once per iteration"
            message = (f"`{what}` inside a loop makes the host wait for the device {times} ({site.reason})"
                       + (f"; each wait drains the kernels queued so far (the loop launches "
                          f"{plural(loop_kernels, 'kernel')})" if loop_kernels else ""))
            yield Hit(site.span, message, {"syncs": site.count, "loop_kernels": loop_kernels})
