"""What the interpreter's parts share: the frame of a running function, the signals that end a
block (return, raise, break, continue, a spent budget), the limits on one analysis, py() (the
Python value of an abstract value, when known) and the source span of a node.

interp.py (the Interpreter), objects.py (its object model), summaries.py, opsem.py and entry.py
all import from here; this module imports only values.py and ir.py.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from kpredict.frontend.values import Py, Seq, Unknown
from kpredict.ir import Span

MAX_OPS = 50_000  # ops recorded for one entry function (the largest model forwards seen: about 5,000)
MAX_ITEMS = 100_000  # longest Python sequence (range, list, str) whose items are enumerated


class _Return(Exception):
    def __init__(self, value: object) -> None:
        self.value = value


class _Raise(_Return):
    """`raise`: the function ends here; a branch that raises is never the one the figures take."""

    def __init__(self) -> None:
        super().__init__(Unknown("raise"))


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Budget(Exception):
    pass


class _Idle(_Budget):
    """IDLE_STEPS statements in a row without tensor work: pure-Python code, not followed further."""


class _Late(_Budget):
    """The file's time budget (Settings.time_budget, CPU seconds) is spent: not followed further."""


@dataclass(slots=True)
class Frame:
    env: dict[str, object]
    qualname: str
    imports: dict[str, str] = field(default_factory=dict)
    cls: str | None = None
    mod: str | None = None  # module the code belongs to (None: the analyzed file)
    self_name: str | None = None  # first parameter of a method, for super()


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING = _Missing()


def py(v: object, default: object = None) -> object:
    """The Python value of an abstract value, or `default` when it is not known."""
    if isinstance(v, Py):
        return v.value
    if isinstance(v, Seq):
        items = [py(x, MISSING) for x in v.items]
        if any(i is MISSING for i in items):
            return default
        return tuple(items)
    return default


def _span(node: ast.AST) -> Span:
    return Span(
        getattr(node, "lineno", 0), getattr(node, "col_offset", 0),
        getattr(node, "end_lineno", None) or getattr(node, "lineno", 0),
        getattr(node, "end_col_offset", None) or getattr(node, "col_offset", 0),
    )
