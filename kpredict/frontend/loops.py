"""What a loop's source says about how it can end, read from the syntax alone.

A `while` whose test reads only names the body never rebinds (and constants) keeps its test's value
for good; if nothing in the body leaves the loop either, it ends only by an exception raised in
code it calls (a `next()` past a data loader's end). Following it to the interpreter's iteration
cap cost seconds and gave a made-up count (`while True: x = x * 0.5` said 4096 kernels as a fact).
"""

from __future__ import annotations

import ast

_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
# test expressions whose value rests only on the names and constants they read
_PURE = (ast.Constant, ast.Name, ast.Attribute, ast.BoolOp, ast.UnaryOp, ast.Compare, ast.BinOp, ast.IfExp,
         ast.Dict, ast.List, ast.Tuple, ast.Set, ast.Subscript, ast.boolop, ast.unaryop, ast.cmpop,
         ast.operator, ast.expr_context, ast.Slice)
_LITERALS = (ast.Dict, ast.List, ast.Tuple, ast.Set, ast.Constant)


def _walk_scope(nodes: list[ast.stmt], into_loops: bool = True) -> list[ast.AST]:
    """Every node under `nodes` that runs in the same scope (nested defs and classes left out;
    nested loops left out when into_loops is False)."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(nodes)
    while todo:
        n = todo.pop()
        out.append(n)
        for c in ast.iter_child_nodes(n):
            if isinstance(c, _NESTED_SCOPES) or (not into_loops and isinstance(c, _LOOPS)):
                continue
            todo.append(c)
    return out


def leaves(body: list[ast.stmt]) -> bool:
    """Whether a statement of the loop body can leave the loop: a break of this loop, a return, a
    raise or a yield (a generator's consumer may stop taking items)."""
    for n in _walk_scope(body):
        if isinstance(n, (ast.Return, ast.Raise, ast.Yield, ast.YieldFrom)):
            return True
    return any(isinstance(n, ast.Break) for n in _walk_scope(body, into_loops=False))


def test_roots(test: ast.expr) -> list[ast.expr] | None:
    """The names and dotted names a side-effect-free test reads (`n`, `torch.float16`), or None when
    the test could compute anything (a call, a subscript of a variable, a comprehension)."""
    roots: list[ast.expr] = []
    todo: list[ast.AST] = [test]
    while todo:
        n = todo.pop()
        if not isinstance(n, _PURE):
            return None
        if isinstance(n, ast.Subscript) and not isinstance(n.value, _LITERALS):
            return None
        if isinstance(n, (ast.Name, ast.Attribute)):
            base = n
            while isinstance(base, ast.Attribute):
                base = base.value
            if not isinstance(base, ast.Name):
                return None
            roots.append(n)
            continue
        todo.extend(ast.iter_child_nodes(n))
    return roots


def rebound(body: list[ast.stmt], names: set[str]) -> bool:
    """Whether the body binds or deletes one of `names` (assignment, loop target, `with ... as`,
    import, walrus, `except ... as`) or declares it global or nonlocal anywhere inside."""
    for n in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and n.id in names:
            return True
        if isinstance(n, (ast.Global, ast.Nonlocal)) and names.intersection(n.names):
            return True
        if isinstance(n, ast.ExceptHandler) and n.name in names:
            return True
        if isinstance(n, (ast.Import, ast.ImportFrom)) and any(
                (a.asname or a.name.split(".")[0]) in names for a in n.names):
            return True
    return False
