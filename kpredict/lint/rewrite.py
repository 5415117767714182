"""The analyzed file as a concrete syntax tree (libcst), for the rules that offer a fix.

The rules find what to report on the op graph and Python's `ast`; a fix must give back the user's
code with its comments, line breaks and parentheses as they were, which `ast` forgets and libcst
keeps. A rule asks for the libcst node at its finding's span, builds the replacement node, and gets
an `Edit` (a span and the new text): `check --fix` then splices the edits into the file, and the
JSON formats carry them (ruff's `fix.edits`). The tree is parsed only for a file with a fixable
finding (`ModuleFacts.rewrite_source` is lazy): libcst's parse costs more than kpredict's analysis
of most files.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any

from kpredict.ir import Span
from kpredict.lint.model import Edit

if TYPE_CHECKING:
    import libcst as cst
    from libcst.metadata import CodeRange


@cache
def _kinds() -> tuple[tuple[type, ...], tuple[type, ...]]:
    """(PRIMARY, LOOSE). PRIMARY: expressions that may stand before `.attr` or `(...)` without
    parentheses, so putting one where a call's receiver was keeps the meaning of the code around it.
    LOOSE: those whose parentheses may go in a free place (RewriteSource._free_place); not tuples
    (their parentheses may be theirs), lambdas, yields or walrus, which need them in some places."""
    import libcst as cst  # lazy: libcst takes a fifth of a second to import; only a fix needs it

    primary = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.Integer, cst.Float,
               cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.SetComp, cst.DictComp,
               cst.GeneratorExp, cst.FormattedString, cst.ConcatenatedString)
    loose = (cst.BinaryOperation, cst.UnaryOperation, cst.BooleanOperation, cst.Comparison, cst.IfExp,
             cst.Await, *primary)
    return primary, loose


class RewriteSource:
    """One module's libcst tree with each node's code-point span; build with `parse`."""

    def __init__(self, module: cst.Module, ranges: dict[cst.CSTNode, CodeRange],
                 parents: dict[cst.CSTNode, cst.CSTNode]) -> None:
        self.module = module
        self._ranges = ranges
        self._parents = parents
        self._by_span: dict[Span, list[cst.CSTNode]] = {}
        for node, r in ranges.items():
            self._by_span.setdefault(Span(r.start.line, r.start.column, r.end.line, r.end.column), []).append(node)

    @classmethod
    def parse(cls, text: str) -> RewriteSource | None:
        """None when libcst cannot parse the file (syntax it does not know yet): no fix is offered."""
        import libcst as cst  # lazy: libcst takes a fifth of a second to import; only a fix needs it
        from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

        try:
            wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
            ranges = dict(wrapper.resolve(PositionProvider))
            parents = dict(wrapper.resolve(ParentNodeProvider))
        except Exception:  # libcst's parser raises its own errors, and RecursionError on deep nesting
            return None
        return cls(wrapper.module, ranges, parents)

    def node_at(self, span: Span, kind: type[cst.CSTNode] | tuple[type[cst.CSTNode], ...]) -> cst.CSTNode | None:
        """The outermost node of `kind` whose code (its own parentheses excluded) is exactly `span`
        (code-point columns, as ast spans are once converted)."""
        found = [n for n in self._by_span.get(span, []) if isinstance(n, kind)]
        return found[0] if found else None

    def span_of(self, node: cst.CSTNode) -> Span:
        r = self._ranges[node]
        return Span(r.start.line, r.start.column, r.end.line, r.end.column)

    def code(self, node: cst.CSTNode) -> str:
        """The node's source as written, its own parentheses included."""
        return self.module.code_for_node(node)

    def replace(self, node: cst.CSTNode, new: cst.CSTNode) -> Edit:
        """An edit that puts `new` where `node` is; node's own parentheses stay, outside the span.
        `new`'s parentheses go where the place needs none: `y = (x * 2).clone()` becomes `y = x * 2`."""
        if getattr(new, "lpar", None) and isinstance(new, _kinds()[1]) and self._free_place(node):
            new = new.with_changes(lpar=[], rpar=[])
        if getattr(node, "lpar", None) and hasattr(new, "lpar"):  # deep_replace drops node's own: kept
            new = new.with_changes(lpar=[*node.lpar, *new.lpar], rpar=[*new.rpar, *node.rpar])  # type: ignore[attr-defined]
        # the whole module is rendered, not the node alone: a line break inside brackets takes its
        # indentation from the enclosing block, which only the module's rendering knows
        after = self.module.deep_replace(node, new).code  # type: ignore[union-attr]
        return self._edit(after)

    @cached_property
    def text(self) -> str:
        return self.module.code

    @cached_property
    def _line_starts(self) -> list[int]:
        return [0] + [i + 1 for i, c in enumerate(self.text) if c == "\n"]

    def _edit(self, after: str) -> Edit:
        """The one edit that turns the module's text into `after`: the part between their common
        prefix and suffix."""
        before = self.text
        p = 0
        n = min(len(before), len(after))
        while p < n and before[p] == after[p]:
            p += 1
        q = 0
        while q < n - p and before[-1 - q] == after[-1 - q]:
            q += 1
        return Edit(Span(*self._position(p), *self._position(len(before) - q)), after[p:len(after) - q])

    def _position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1]

    def _free_place(self, node: cst.CSTNode) -> bool:
        """Whether any expression of LOOSE's kinds may stand where `node` is without parentheses: in
        parentheses of its own, or the whole value of an assignment, a return, an argument, an element."""
        import libcst as cst  # lazy: libcst takes a fifth of a second to import; only a fix needs it

        if getattr(node, "lpar", None):
            return True
        parent = self._parents.get(node)
        if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return)):
            return parent.value is node
        if isinstance(parent, cst.Arg):
            return parent.value is node and not parent.star
        if isinstance(parent, cst.Element):
            return parent.value is node
        return False

    def delete_line(self, stmt: cst.BaseSmallStatement, lines: Sequence[str]) -> Edit | None:
        """An edit that removes the line a statement is alone on, or None when the line holds anything
        else (another statement, a comment) that removing it would lose."""
        span = self.span_of(stmt)
        if span.line != span.end_line or lines[span.line - 1].strip() != self.code(stmt).strip().rstrip(";"):
            return None
        return Edit(Span(span.line, 0, span.line + 1, 0), "")


def receiver(call: cst.Call, method: str) -> cst.BaseExpression | None:
    """`x` of `x.method()` called with no arguments."""
    import libcst as cst  # lazy: libcst takes a fifth of a second to import; only a fix needs it

    f = call.func
    if isinstance(f, cst.Attribute) and f.attr.value == method and not call.args:
        return f.value
    return None


def as_operand(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`expr`, in parentheses unless it already is a primary (or parenthesized) expression."""
    import libcst as cst  # lazy: libcst takes a fifth of a second to import; only a fix needs it

    if isinstance(expr, _kinds()[0]) or getattr(expr, "lpar", None):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def with_keywords(call: cst.Call, keywords: Sequence[tuple[str, cst.BaseExpression]]) -> cst.Call:
    """`call` with `name=value` arguments appended in the call's own layout: one per line when its
    arguments are, a trailing comma kept where it had one, a comment after the last argument kept there."""
    import libcst as cst  # lazy: libcst takes a fifth of a second to import; only a fix needs it

    args = list(call.args)
    eq = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
    new = [cst.Arg(value=v, keyword=cst.Name(k), equal=eq) for k, v in keywords]
    if not args:
        sep: cst.BaseParenthesizableWhitespace = cst.SimpleWhitespace(" ")
        return call.with_changes(args=[a.with_changes(comma=cst.Comma(whitespace_after=sep)) for a in new[:-1]]
                                 + new[-1:])
    if len(args) >= 2 and isinstance(args[-2].comma, cst.Comma):
        sep = args[-2].comma.whitespace_after
    elif isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        sep = call.whitespace_before_args
    else:
        sep = cst.SimpleWhitespace(" ")
    sep = _without_comment(sep)
    last = args[-1]
    if isinstance(last.comma, cst.Comma):  # a trailing comma: its whitespace leads to `)`
        to_paren = last.comma.whitespace_after
        between = (to_paren.with_changes(indent=sep.indent, last_line=sep.last_line)
                   if isinstance(to_paren, cst.ParenthesizedWhitespace) and isinstance(sep, cst.ParenthesizedWhitespace)
                   else sep)
        args[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=between))
        end = [cst.Comma(whitespace_after=_without_comment(to_paren)), last.whitespace_after_arg]
    else:
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=sep), whitespace_after_arg=cst.SimpleWhitespace(""))
        end = [cst.MaybeSentinel.DEFAULT, last.whitespace_after_arg]
    new = [a.with_changes(comma=cst.Comma(whitespace_after=sep)) for a in new[:-1]] + [
        new[-1].with_changes(comma=end[0], whitespace_after_arg=end[1])]
    return call.with_changes(args=[*args, *new])


def _without_comment(ws: cst.BaseParenthesizableWhitespace) -> cst.BaseParenthesizableWhitespace:
    import libcst as cst  # lazy: libcst takes a fifth of a second to import; only a fix needs it

    if isinstance(ws, cst.ParenthesizedWhitespace) and ws.first_line.comment is not None:
        return ws.with_changes(first_line=cst.TrailingWhitespace(newline=ws.first_line.newline), empty_lines=[])
    return ws
