"""Source bytes -> a parsed module with its import table and definitions.

Parsing uses the standard library's `ast`: it carries every node's position for free and parses
about ten times faster than libcst here (255k vs 22k lines/s on torch/nn), whereas libcst needs its
PositionProvider (about 1.8x its own parse) to give the same positions. Imports and aliases are
resolved with our own table, not a qualified-name provider (7x the parse, per the team's notes).
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, field


class ParseError(Exception):
    """A file that cannot be analyzed: the message is one line, ready for `path: error: ...`."""


SETTER = "<setter>"  # suffix of the qualname a property's setter is kept under


def _property_accessor(fdef: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """'setter' / 'deleter' for `@name.setter` / `@name.deleter` methods, else None."""
    for d in fdef.decorator_list:
        if isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter") and isinstance(d.value, ast.Name) \
                and d.value.id == fdef.name:
            return d.attr
    return None


@dataclass(slots=True)
class ModuleInfo:
    path: str
    tree: ast.Module
    lines: list[str]
    imports: dict[str, str] = field(default_factory=dict)  # local name -> dotted target
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    constants: dict[str, ast.expr] = field(default_factory=dict)  # module-level NAME = literal


def node_text(node: ast.AST) -> str:
    """ast.unparse(node), kept on the node: a function's annotations and the expressions it reports
    are described again each time the function runs (every layer, every call recorded), and
    unparsing cost 1.3% of a cold run over transformers."""
    text = node.__dict__.get("_kp_text")
    if text is None:
        text = node._kp_text = ast.unparse(node)  # type: ignore[attr-defined]
    return text


def type_base(text: str) -> str:
    """An annotation's type name without module or parameters: `torch.LongTensor | None` -> `LongTensor | None`,
    `typing.Optional[int]` -> `Optional`, `int` -> `int`."""
    return text.split("[")[0].split(".")[-1]


def decode_source(source: bytes | str) -> str:
    if isinstance(source, str):
        return source
    if b"\x00" in source[:8192]:
        raise ParseError("binary file (contains NUL bytes), not Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    except SyntaxError as e:
        raise ParseError(f"bad encoding declaration: {e.msg if hasattr(e, 'msg') else e}") from None
    try:
        return source.decode(encoding)
    except (UnicodeDecodeError, LookupError) as e:
        reason = e.reason if isinstance(e, UnicodeDecodeError) else str(e)
        raise ParseError(f"cannot decode as {encoding}: {reason}") from None


def import_table(body: list[ast.stmt], table: dict[str, str] | None = None) -> dict[str, str]:
    """Map local names to dotted targets for the import statements directly in `body`."""
    table = {} if table is None else table
    for node in body:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    table[a.asname] = a.name
                else:
                    top = a.name.split(".")[0]
                    table[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                if a.name != "*":
                    table[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            mod = "." * node.level + (node.module or "")
            for a in node.names:
                if a.name != "*":
                    table[a.asname or a.name] = f"{mod}.{a.name}" if node.module else f"{mod}{a.name}"
        elif isinstance(node, (ast.If, ast.Try)):
            # `try: import x / except ImportError:` and `if TYPE_CHECKING:` blocks
            import_table(node.body, table)
            for h in getattr(node, "handlers", []):
                import_table(h.body, table)
            import_table(node.orelse, table)
    return table


def parse_module(source: bytes | str, path: str = "<string>") -> ModuleInfo:
    text = decode_source(source)
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as e:
        where = f"line {e.lineno}: " if e.lineno else ""
        raise ParseError(f"{where}syntax error: {e.msg}") from None
    except (RecursionError, MemoryError):
        raise ParseError("expression nested too deeply for the Python parser") from None
    except ValueError as e:  # e.g. source code string cannot contain null bytes
        raise ParseError(str(e)) from None
    info = ModuleInfo(path=path, tree=tree, lines=text.splitlines(), imports=import_table(tree.body))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            info.functions[node.name] = node
        elif isinstance(node, ast.ClassDef):
            info.classes[node.name] = node
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    accessor = _property_accessor(item)
                    if accessor == "deleter":
                        continue
                    # `@x.setter def x(...)` must not replace the getter `x`: kept as `Cls.x<setter>`
                    info.functions[f"{node.name}.{item.name}{SETTER if accessor else ''}"] = item
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if isinstance(node.value, (ast.Constant, ast.Tuple)):
                info.constants[node.targets[0].id] = node.value
    return info
