"""KP501 host-tensor-moved-to-device."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING


from kpredict.frontend.shapes import dtype_from_dotted
from kpredict.lint.context import FunctionContext, node_span
from kpredict.lint.figures import plural
from kpredict.lint import hotpath
from kpredict.lint.model import Edit, Example, Fix, Hit, Rule
from kpredict.lint.rewrite import RewriteSource, with_keywords
from kpredict.render.text_report import human_bytes

if TYPE_CHECKING:
    import libcst as cst

# constructors that accept device= and fill (or allocate) on that device
CREATORS = ("torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.rand", "torch.randn",
            "torch.randint", "torch.arange", "torch.linspace", "torch.logspace", "torch.eye")
# ... of which these draw from the device's random generator when made there: other numbers than the
# CPU's, so moving them to the device is an unsafe fix
RANDOM = ("torch.rand", "torch.randn", "torch.randint")
# `.to()` / `.cuda()` arguments a fix can carry over to the constructor (non_blocking has nothing to do there)
TO_KEYWORDS = ("device", "dtype", "non_blocking")


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
            "    return x + bias\n",
            fixed=(
                "import torch\n"
                "\n"
                "\n"
                "# kpredict: example x=randn(128, 64)\n"
                "def add_bias(x):\n"
                "    bias = torch.zeros(128, 64, device=\"cuda\")\n"
                "    return x + bias\n"
            ),
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(1000)\n"
            "def positions(x):\n"
            "    pos = torch.arange(1000)\n"
            "    pos = pos.to(x.device)  # expect: KP501\n"
            "    return x * pos\n",
            fixed=(
                "import torch\n"
                "\n"
                "\n"
                "# kpredict: example x=randn(1000)\n"
                "def positions(x):\n"
                "    pos = torch.arange(1000, device=x.device)\n"
                "    return x * pos\n"
            ),
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
        return Hit(node_span(move), message, {"host_to_device_bytes": nbytes, "device_kernels": kernels},
                   _create_there(fn, move, created))


def _create_there(fn: FunctionContext, move: ast.Call, created: ast.Call) -> Fix | None:
    """`torch.zeros(n).to(d)` -> `torch.zeros(n, device=d)`; for `t = torch.zeros(n)` then
    `t = t.to(d)` on the next line, the device goes to the constructor and the move's line goes.
    Safe when the argument is plainly a device (`.cuda()`, a string, `x.device`, a name that says
    device) and the constructor is not random; otherwise unsafe: a random constructor made on the
    device draws other numbers, and an argument we cannot read might be something else."""
    import libcst as cst  # lazy: libcst takes a fifth of a second to import; only a fix needs it

    found, made = fn.facts.cst_node(node_span(move), cst.Call), fn.facts.cst_node(node_span(created), cst.Call)
    if found is None or made is None:
        return None
    src, call = found
    creation = made[1]
    moved = _move_arguments(call)
    if moved is None:
        return None
    if any(a.keyword is not None and a.keyword.value in dict(moved) for a in creation.args):
        return None  # `torch.zeros(n, dtype=a).to(d, b)`: leave the two dtypes to the author
    new = with_keywords(creation, moved)
    if isinstance(call.func, cst.Attribute) and call.func.value is creation:
        edits: tuple[Edit, ...] = (src.replace(call, new),)
    else:
        later = _separate_move(fn, src, move, call, moved)
        if later is None:
            return None
        edits = (src.replace(creation, new), later)
    plain = (fn.facts.resolve(created.func) not in RANDOM
             and all(_plainly_device(v) for k, v in moved if k == "device"))
    return Fix("Create the tensor on the device", "safe" if plain else "unsafe", edits)


def _move_arguments(call: cst.Call) -> list[tuple[str, cst.BaseExpression]] | None:
    """(keyword, value) for the constructor, from `.cuda(...)` or `.to(device, dtype, ...)`; None
    when the call has an argument a constructor cannot take (copy=, memory_format=, *args)."""
    import libcst as cst  # lazy: libcst takes a fifth of a second to import; only a fix needs it

    assert isinstance(call.func, cst.Attribute)
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if any(a.star for a in call.args) or set(keywords) - set(TO_KEYWORDS):
        return None
    if call.func.attr.value == "cuda":
        if len(positional) > 1:
            return None
        device = positional[0] if positional else keywords.get("device", cst.SimpleString('"cuda"'))
        return [("device", device)]
    names = ("device", "dtype", "non_blocking")[:len(positional)]
    if len(positional) > 2 or set(names) & set(keywords):
        return None
    given = dict(zip(names, positional)) | keywords
    if "device" not in given:
        return None
    return [(k, given[k]) for k in ("device", "dtype") if k in given]


def _separate_move(fn: FunctionContext, src: RewriteSource, move: ast.Call, call: cst.Call,
                   moved: list[tuple[str, cst.BaseExpression]]) -> Edit | None:
    """The edit for `t = t.to(d)` on the line after `t = torch.zeros(n)`: the line goes. None when the
    move is not a whole statement of that kind, or its arguments read `t` (known only after the
    constructor ran)."""
    import libcst as cst  # lazy: libcst takes a fifth of a second to import; only a fix needs it

    stmt = fn.facts.statements_by_line.get(move.lineno)
    recv = move.func.value if isinstance(move.func, ast.Attribute) else None
    if not (isinstance(stmt, ast.Assign) and stmt.value is move and isinstance(recv, ast.Name)
            and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == recv.id):
        return None
    for _, value in moved:
        if any(isinstance(n, cst.Name) and n.value == recv.id for n in _walk(value)):
            return None
    found = fn.facts.cst_node(node_span(stmt), cst.Assign)
    return None if found is None else src.delete_line(found[1], fn.facts.lines)


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from _walk(child)


def _plainly_device(value: cst.BaseExpression) -> bool:
    """An argument that can only be a device: a string, an int (a CUDA ordinal), `x.device`,
    `torch.device(...)`, a name that says device."""
    import libcst as cst  # lazy: libcst takes a fifth of a second to import; only a fix needs it

    if isinstance(value, (cst.SimpleString, cst.Integer)):
        return True
    if isinstance(value, cst.Attribute):
        return "device" in value.attr.value.lower()
    if isinstance(value, cst.Name):
        return "device" in value.value.lower()
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        return value.func.attr.value == "device"
    return False


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
