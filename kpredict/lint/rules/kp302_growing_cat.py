"""KP302 growing-cat-in-loop."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from kpredict.lint.context import FunctionContext, node_span
from kpredict.lint.figures import as_dict, describe, eager_figures
from kpredict.lint import hotpath
from kpredict.lint.model import Example, Hit, Rule

GROWERS = ("torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.vstack", "torch.hstack")


class GrowingCatInLoop(Rule):
    """
    ## What it does
    Finds `x = torch.cat([x, piece])` (or `torch.stack`) inside a loop: a tensor that grows by one
    piece per iteration, copied whole every time.

    ## Why it costs
    Each `torch.cat` allocates a new tensor and copies everything gathered so far plus the new
    piece, so the bytes moved grow with the square of the number of iterations (a loop of n
    iterations copies about n²/2 pieces), and every iteration is another kernel. Appending the
    pieces to a Python list (no kernel) and concatenating once after the loop moves each piece once.
    """

    code = "KP302"
    name = "growing-cat-in-loop"
    severity = "warning"
    summary = "A tensor grown by torch.cat/torch.stack inside a loop: quadratic memory traffic"
    fix = "Append the pieces to a list inside the loop and call torch.cat once after it."
    options = {hotpath.OPTION: False}
    option_docs = {hotpath.OPTION: hotpath.OPTION_DOC}

    INVALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(8, 256)\n"
            "def gather_rows(x):\n"
            "    acc = torch.zeros(0, 256)\n"
            "    for i in range(8):\n"
            "        acc = torch.cat([acc, x[i:i + 1] * 2])  # expect: KP302\n"
            "    return acc\n"
        ),
    ]
    VALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(8, 256)\n"
            "def gather_rows(x):\n"
            "    return torch.cat([x[i:i + 1] * 2 for i in range(8)])\n"
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(8, 256) y=randn(8, 256)\n"
            "def pair(x, y):\n"
            "    for _ in range(2):\n"
            "        z = torch.cat([x, y])\n"
            "    return z\n"
        ),
    ]

    def check(self, fn: FunctionContext) -> Iterator[Hit]:
        seen: set[ast.AST] = set()
        for loop in fn.loops:
            for node in ast.walk(loop):
                if node in seen or not isinstance(node, ast.Assign) or len(node.targets) != 1:
                    continue
                target, call = node.targets[0], node.value
                if not (isinstance(target, ast.Name) and isinstance(call, ast.Call) and call.args):
                    continue
                which = fn.facts.resolve(call.func)
                parts = call.args[0]
                if which not in GROWERS or not isinstance(parts, (ast.List, ast.Tuple)):
                    continue
                if not any(isinstance(p, ast.Name) and p.id == target.id for p in parts.elts):
                    continue
                if _rebuilt_in_loop(loop, node, target.id):
                    continue  # the name is set afresh each iteration: the cat pads it, nothing grows
                seen.add(node)
                span = node_span(call)
                ops = [op for op in fn.own_ops if op.span == span and fn.launches(op) > 0]
                if not ops:
                    continue
                eager = eager_figures(fn, {op.oid for op in ops})
                final = fn.fg.values.get(ops[-1].outputs[0]) if ops[-1].outputs else None
                final_bytes = final.meta.nbytes if final is not None else None
                pieces = 1 + len(ops) * (len(parts.elts) - 1)
                once = {"kernels": 1, "transfers": pieces + 1,
                        "bytes": 2 * final_bytes if final_bytes is not None else None}
                fname = which.split(".")[-1]
                before = as_dict(eager)
                if (before["kernels"], before["transfers"]) != (once["kernels"], once["transfers"]):
                    message = (f"`torch.{fname}` grows `{target.id}` inside a loop: {len(ops)} calls launch "
                               f"{describe(eager, 'move')}, copying everything gathered so far each time; "
                               f"collected in a list and concatenated once it would be {describe(once)}")
                else:  # the loop is counted once: the quadratic part is per iteration, never "before = after"
                    message = (f"`torch.{fname}` grows `{target.id}` inside a loop: each iteration launches "
                               f"{describe(eager, 'moves')} and copies everything gathered so far again, so n "
                               f"iterations copy about n\u00b2/2 pieces; collected in a list and concatenated "
                               f"once, each piece is copied once")
                yield Hit(span, message, {"calls": len(ops), "eager": as_dict(eager), "once": once})


def _rebuilt_in_loop(loop: ast.AST, grow: ast.Assign, name: str) -> bool:
    """Whether `name` is bound in the loop other than by the growing assignment itself (`x = f(...)`,
    `for x in`, `x += ...`): then each iteration starts from a fresh value and the cat does not grow it."""
    for node in ast.walk(loop):
        if node is grow:
            continue
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
            targets = [node.target]
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            targets = [node.target]
        for t in targets:
            if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(t)):
                return True
    return False
