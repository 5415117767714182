"""KP302 growing-cat-in-loop."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING


from kpredict.ir import Span
from kpredict.lint.context import FunctionContext, node_span
from kpredict.lint.figures import as_dict, describe, eager_figures
from kpredict.lint import hotpath
from kpredict.lint.model import Edit, Example, Fix, Hit, Rule

if TYPE_CHECKING:
    import libcst as cst

GROWERS = ("torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.vstack", "torch.hstack")
# the growers whose pieces can be gathered and joined by one call of the same function: cat of cats is a cat
JOINS = ("torch.cat", "torch.concat", "torch.concatenate")


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
            "    return acc\n",
            fixed=(
                "import torch\n"
                "\n"
                "\n"
                "# kpredict: example x=randn(8, 256)\n"
                "def gather_rows(x):\n"
                "    acc = torch.zeros(0, 256)\n"
                "    acc_parts = [acc]\n"
                "    for i in range(8):\n"
                "        acc_parts.append(x[i:i + 1] * 2)\n"
                "    acc = torch.cat(acc_parts)\n"
                "    return acc\n"
            ),
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(4, 6, 8)\n"
            "def scan(x):\n"
            "    out = x[:, :1]\n"
            "    for t in range(1, 6):\n"
            "        if t % 2:\n"
            "            h = x[:, t:t + 1].relu()\n"
            "            out = torch.cat((out, h), dim=1)  # expect: KP302\n"
            "    return out\n",
            fixed=(
                "import torch\n"
                "\n"
                "\n"
                "# kpredict: example x=randn(4, 6, 8)\n"
                "def scan(x):\n"
                "    out = x[:, :1]\n"
                "    out_parts = [out]\n"
                "    for t in range(1, 6):\n"
                "        if t % 2:\n"
                "            h = x[:, t:t + 1].relu()\n"
                "            out_parts.append(h)\n"
                "    out = torch.cat(out_parts, dim=1)\n"
                "    return out\n"
            ),
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
                yield Hit(span, message, {"calls": len(ops), "eager": as_dict(eager), "once": once},
                          _gather_then_join(fn, node, which))


def _gather_then_join(fn: FunctionContext, grow: ast.Assign, which: str | None) -> Fix | None:
    """`acc = torch.cat([acc, piece], dim=d)` in a loop -> `acc_parts = [acc]` before the loop,
    `acc_parts.append(piece)` in it, `acc = torch.cat(acc_parts, dim=d)` after it: the same values (a
    cat of cats is one cat; dtypes promote the same), one kernel instead of one per iteration. Only the
    mechanical case: a cat appending one piece, `acc` read nowhere else in the innermost loop around it
    (which would see the partial result), no `else:` on the loop, a dim that the loop does not set."""
    import libcst as cst  # lazy: libcst takes a fifth of a second to import; only a fix needs it

    call = grow.value
    assert isinstance(call, ast.Call) and isinstance(grow.targets[0], ast.Name)
    acc = grow.targets[0].id
    parts = call.args[0]
    if which not in JOINS or not isinstance(parts, (ast.List, ast.Tuple)) or len(parts.elts) != 2:
        return None
    first, piece = parts.elts
    if not (isinstance(first, ast.Name) and first.id == acc) or isinstance(piece, ast.Starred):
        return None
    loops = fn.enclosing_loops(node_span(grow))
    if not loops:
        return None
    loop = max(loops, key=lambda lp: (lp.lineno, lp.col_offset))  # type: ignore[attr-defined]
    if getattr(loop, "orelse", None) or loop.end_lineno is None or loop.end_lineno >= len(fn.facts.lines):
        return None
    inside = {id(n) for n in ast.walk(grow)}
    if any(isinstance(n, ast.Name) and n.id == acc and id(n) not in inside for n in ast.walk(loop)):
        return None
    dims = call.args[1:] + [k.value for k in call.keywords if k.arg in ("dim", "axis")]
    if len(call.args) > 2 or len(dims) > 1 or len(call.keywords) > len(dims) - len(call.args[1:]):
        return None
    bound = {n.id for n in ast.walk(loop) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    if dims and any(isinstance(n, ast.Name) and n.id in bound for n in ast.walk(dims[0])):
        return None
    names = {n.id for n in ast.walk(fn.scope or loop) if isinstance(n, ast.Name)}
    gathered = f"{acc}_parts"
    if gathered in names:
        return None
    found = fn.facts.cst_node(node_span(grow), cst.Assign)
    piece_found = fn.facts.cst_node(node_span(piece), cst.BaseExpression)
    if found is None or piece_found is None:
        return None
    src, assign = found
    append = cst.Expr(cst.Call(cst.Attribute(cst.Name(gathered), cst.Name("append")), [cst.Arg(piece_found[1])]))
    func = fn.facts.text(node_span(call.func), None)
    dim = ""
    if dims:
        dim_text = fn.facts.text(node_span(dims[0]), None)
        dim = f", {dim_text}" if call.args[1:] else f", {call.keywords[0].arg}={dim_text}"
    first = fn.facts.lines[loop.lineno - 1]
    indent = first[:len(first) - len(first.lstrip())]
    return Fix("Gather the pieces in a list and concatenate once after the loop", "safe", (
        Edit(Span(loop.lineno, 0, loop.lineno, 0), f"{indent}{gathered} = [{acc}]\n"),
        src.replace(assign, append),
        Edit(Span(loop.end_lineno + 1, 0, loop.end_lineno + 1, 0), f"{indent}{acc} = {func}({gathered}{dim})\n"),
    ))


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
