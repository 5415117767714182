"""`# kpredict:` comments and `[tool.kpredict.examples]`: where example inputs are written down.

    # kpredict: example a=randn(8) b=randn(8)      (above a def, or above its first decorator)
    # kpredict: init d=128                         (above a class, or above the method)
    # kpredict: cuda-only compiled=3 source=...    (any other tag is kept as free text)

The comment block is the run of `#` lines directly above the definition, with no blank line in
between; several lines with the same tag are joined (kpredict/examples.py reads a block, for the
frontend too). Plain text scanning plus the standard `ast` module to find where definitions start:
no torch, no libcst, and nothing of the file is run.

pyproject.toml (the project's: the nearest one above the file with a [tool.kpredict] table, see
kpredict/project.py):

    [tool.kpredict.examples]
    "model.py::add_relu" = "a=randn(8) b=randn(8)"
    [tool.kpredict.init]
    "model.py::MLP" = "d=128"

Keys are paths relative to the pyproject.toml's folder, `::`, and a qualname.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from kpredict.examples import comment_block, joined
from kpredict.project import file_entries


@dataclass
class Annotations:
    """What the comments and pyproject.toml say about one qualname (None: nothing written)."""

    example: str | None = None
    init: str | None = None
    tags: dict[str, list[str]] = field(default_factory=dict)  # every tag of the def's block
    example_source: str | None = None  # "comment" | "pyproject"
    init_source: str | None = None


def definitions(source: str) -> dict[str, tuple[int, str]]:
    """qualname -> (first line incl. decorators, 'def' | 'class'); nested functions get `<locals>`."""
    tree = ast.parse(source)
    out: dict[str, tuple[int, str]] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{prefix}{node.name}"
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                out.setdefault(qual, (first, "class" if isinstance(node, ast.ClassDef) else "def"))
                inner = f"{qual}." if isinstance(node, ast.ClassDef) else f"{qual}.<locals>."
                visit(node.body, inner)
            elif isinstance(node, (ast.If, ast.Try, ast.With)):  # defs under `if TYPE_CHECKING:` etc.
                for part in ("body", "orelse", "finalbody"):
                    visit(getattr(node, part, []) or [], prefix)
                for h in getattr(node, "handlers", []) or []:
                    visit(h.body, prefix)

    visit(tree.body, "")
    return out


def pyproject_entry(path: Path, qualname: str, table: str) -> str | None:
    """`[tool.kpredict.<table>]` value for this file and qualname in the project's pyproject.toml."""
    return file_entries(path).get(table, {}).get(qualname)


def annotations_for(path: str | Path, qualname: str, source: str | None = None) -> Annotations:
    """Example and init strings for `qualname` in `path`: comments first, then pyproject.toml.

    For a method `Cls.meth`, `init` is read above the method first, then above the class.
    """
    p = Path(path)
    if source is None:
        source = p.read_text(encoding="utf-8")
    lines = source.splitlines()
    try:
        defs = definitions(source)
    except SyntaxError:
        defs = {}
    ann = Annotations()
    if qualname in defs:
        ann.tags = comment_block(lines, defs[qualname][0])
        ann.example = joined(ann.tags, "example")
        ann.init = joined(ann.tags, "init")
    if ann.example is not None:
        ann.example_source = "comment"
    if ann.init is None and "." in qualname:
        cls = qualname.rsplit(".", 1)[0]
        if cls in defs:
            ann.init = joined(comment_block(lines, defs[cls][0]), "init")
    if ann.init is not None:
        ann.init_source = "comment"
    if ann.example is None:
        ann.example = pyproject_entry(p, qualname, "examples")
        ann.example_source = "pyproject" if ann.example is not None else None
    if ann.init is None:
        for q in [qualname] + ([qualname.rsplit(".", 1)[0]] if "." in qualname else []):
            ann.init = pyproject_entry(p, q, "init")
            if ann.init is not None:
                ann.init_source = "pyproject"
                break
    return ann
