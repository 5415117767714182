"""KP501 host-tensor-moved-to-device."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kpredict.frontend.shapes import dtype_from_dotted
from kpredict.lint.context import FunctionContext, node_span
from kpredict.lint.figures import plural
from kpredict.lint import hotpath
from kpredict.lint.model import Example, Hit, Rule
from kpredict.render.text_report import human_bytes

# constructors that accept device= and fill (or allocate) on that device
CREATORS = ("torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.rand", "torch.randn",
            "torch.randint", "torch.arange", "torch.linspace", "torch.logspace", "torch.eye")


class HostTensorMovedToDevice(Rule):
    """
    ## What it does
    Finds tensors created on the host and then moved to the device, such as
    `torch.zeros(n).cuda()` or `torch.arange(n).to(device)` (directly, or assigned on one line and
    moved on the next), where the constructor could have made them on the device.

    ## Why it costs
    The constructor fills the tensor with the CPU, then `.cuda()`/`.to()` copies every byte over
    PCIe (from pageable memory, so the host waits for the copy). Created with `device=`, the fill is
    one kernel on the device and nothing crosses the bus.
    """

    code = "KP501"
    name = "host-tensor-moved-to-device"
    severity = "warning"
    summary = "A tensor built on the host and then copied to the device instead of created there"
    fix = "Pass device= (and dtype=) to the constructor: torch.zeros(n, device=x.device)."
    options = {hotpath.OPTION: False}
    option_docs = {hotpath.OPTION: hotpath.OPTION_DOC}

    INVALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(128, 64)\n"
            "def add_bias(x):\n"
            "    bias = torch.zeros(128, 64).cuda()  # expect: KP501\n"
            "    return x + bias\n"
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(1000)\n"
            "def positions(x):\n"
            "    pos = torch.arange(1000)\n"
            "    pos = pos.to(x.device)  # expect: KP501\n"
            "    return x * pos\n"
        ),
    ]
    VALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(128, 64)\n"
            "def add_bias(x):\n"
            "    bias = torch.zeros(128, 64, device=x.device)\n"
            "    h = torch.ones(4).to(torch.float16)\n"
            "    return x + bias\n"
        ),
        Example(  # optimizer state built on the first step only (kpredict.lint.hotpath)
            "import torch\n"
            "\n"
            "\n"
            "class Opt:\n"
            "    # kpredict: example p=randn(64)\n"
            "    def step(self, p):\n"
            "        state = self.state[p]\n"
            "        if len(state) == 0:\n"
            "            state['exp_avg_sq'] = torch.zeros([]).to(p.device)\n"
            "        return p * 2\n"
        ),
        Example(  # weight initialization runs once
            "import torch\n"
            "\n"
            "\n"
            "class Model(torch.nn.Module):\n"
            "    # kpredict: example w=randn(64)\n"
            "    def _init_weights(self, w):\n"
            "        w.copy_(torch.linspace(3.0, 6.0, 64).to(w.device))\n"
        ),
    ]

    def check(self, fn: FunctionContext) -> Iterator[Hit]:
        if fn.scope is None:
            return
        last_assign: dict[str, ast.Call] = {}
        for block in _blocks(fn.scope):
            last_assign.clear()
            for stmt in block:
                for call in _own_calls(stmt):
                    created = self._moved_creation(fn, call, last_assign)
                    if created is not None:
                        yield self._hit(fn, call, created)
                last_assign.clear()
                if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                        and isinstance(stmt.value, ast.Call) and self._creation(fn, stmt.value)):
                    last_assign[stmt.targets[0].id] = stmt.value

    @staticmethod
    def _creation(fn: FunctionContext, call: ast.Call) -> bool:
        return fn.facts.resolve(call.func) in CREATORS and not any(k.arg == "device" for k in call.keywords)

    def _moved_creation(self, fn: FunctionContext, call: ast.Call, previous: dict[str, ast.Call]) -> ast.Call | None:
        """The host constructor that `call` (a `.cuda()` / `.to(device)`) moves, if any."""
        f = call.func
        if not isinstance(f, ast.Attribute) or f.attr not in ("cuda", "to"):
            return None
        if f.attr == "to" and not _is_device_move(fn, call):
            return None
        recv = f.value
        if isinstance(recv, ast.Call) and self._creation(fn, recv):
            return recv
        if isinstance(recv, ast.Name):
            return previous.get(recv.id)
        return None

    def _hit(self, fn: FunctionContext, move: ast.Call, created: ast.Call) -> Hit:
        cspan = node_span(created)
        ops = [op for op in fn.fg.ops if op.span == cspan and op.outputs]
        nbytes = None
        kernels = 1
        if ops:
            v = fn.fg.values.get(ops[0].outputs[0])
            nbytes = v.meta.nbytes if v is not None else None
            kernels = fn.launches(ops[0])
        what = fn.text(cspan, 40)
        size = human_bytes(nbytes) if nbytes is not None else "all of it"
        how = "`.cuda()`" if isinstance(move.func, ast.Attribute) and move.func.attr == "cuda" else "`.to()`"
        message = (f"`{what}` is filled on the host and then moved by {how}: the CPU fills it and "
                   f"{size} cross to the device while the host waits; created with device= it is "
                   f"{plural(kernels, 'kernel')} on the device and no copy")
        return Hit(node_span(move), message, {"host_to_device_bytes": nbytes, "device_kernels": kernels})


def _own_calls(stmt: ast.stmt):
    """The calls in a statement's own expressions (not in the statements nested in its body)."""
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call):
            yield node
        stack.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.stmt))


def _blocks(scope: ast.AST):
    """Every statement list in a scope (its body, and the bodies of its if/for/while/with/try)."""
    stack = [scope]
    while stack:
        node = stack.pop()
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block
                stack.extend(s for s in block if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                     ast.ClassDef)))
        for h in getattr(node, "handlers", []) or []:
            yield h.body
            stack.extend(h.body)


def _is_device_move(fn: FunctionContext, call: ast.Call) -> bool:
    """`.to(device)`, `.to("cuda")`, `.to(x.device)`, `.to(device=...)`; not `.to(torch.float16)` or `.to("cpu")`."""
    if any(k.arg == "device" for k in call.keywords):
        return True
    if not call.args:
        return False
    a = call.args[0]
    if isinstance(a, ast.Constant):
        return isinstance(a.value, str) and not a.value.startswith("cpu")
    dotted = fn.facts.resolve(a)
    if dotted is not None and dtype_from_dotted(dotted) is not None:
        return False
    if isinstance(a, ast.Attribute) and a.attr in ("dtype",):
        return False
    if isinstance(a, ast.Name) and a.id.lower().endswith("dtype"):
        return False  # `.to(dtype)`, `.to(default_dtype)`: a cast, nothing moves to a device
    return True
