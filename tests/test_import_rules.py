"""The import rules of kpredict, read from the source with the ast (no kpredict module is imported).

Layers, lowest first; a module may import modules of its own layer or of a lower one, never of a
higher one:

    core types -> op facts -> project settings and inputs -> frontend -> models -> pipeline
    -> batch -> command options and renderers -> lint, verify, the report command -> cli

and besides:

- no cycle among kpredict modules, counting imports made inside functions (an import inside a
  function that only dodges a circle still makes one when it runs);
- no import of a kpredict module inside a function, unless LAZY lists it with the reason (speed of
  start-up); an import of torch or another third-party module inside a function is lazy by design
  (torch takes seconds to import, and only verify runs it) and needs a comment saying why; an
  import of the standard library inside a function has no reason to be there;
- `render` imports only core types (it draws reports and findings that someone else computed);
- only `cli` and `verify` itself import `verify`; nothing imports `cli` but `__main__`.

Two departures from the issue's wording, each for a reason:

- `render` is a layer below `lint` and `verify` rather than their peer: `lint` (the baseline's
  budget message, the --diff figures) and `verify` (its JSON report) draw with render's helpers,
  and render imports none of them, so the arrow runs one way only.
- the lint findings' data types (`lint.model`: Diagnostic, Hit, Rule's fields) are core types: a
  report carries findings, `render` draws them, and none of that needs the linter that computes
  them. `lint.model` imports only core types.

`if TYPE_CHECKING:` imports do not run, so they make no cycle; they still count as arrows for the
layers (an annotation that names a higher layer's type is a dependency on it).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "kpredict"

# module prefix -> layer; the longest matching prefix wins. Every kpredict module must match one.
LAYERS: dict[str, int] = {
    # 0. core types: the report's data (ir, lint findings), settings, symbolic figures, their plain
    #    form (serial), and helpers with no kpredict import (gc policy, reads log, deep recursion).
    "kpredict": 0,  # the package itself: __version__
    "kpredict.ir": 0,
    "kpredict.settings": 0,
    "kpredict.symbolic": 0,
    "kpredict.serial": 0,
    "kpredict.gcpolicy": 0,
    "kpredict.reads": 0,
    "kpredict.deep": 0,
    "kpredict.lint.model": 0,
    # 1. facts: the op table read from rules/*.toml, and the lint rules' precision table.
    "kpredict.opfacts": 1,
    # the time model's facts: device presets (rules/devices.toml) and FLOP formulas by op (rules/flops.toml)
    "kpredict.devices": 1,
    # the lint rules' measured precision (rules/lint_precision.toml), which decides the default
    # selection: a table of rules/ as the op facts are, read by the linter and the SARIF renderer.
    "kpredict.lint.precision": 1,
    # 2. project settings and inputs: pyproject settings (dims, examples and init among them), and
    #    example inputs and the `# kpredict:` comments above a def that hold them (kpredict.examples).
    "kpredict.project": 2,
    "kpredict.examples": 2,
    # 3. frontend: parse and interpret the analyzed code into op graphs.
    "kpredict.frontend": 3,
    # 4. models: kernels and traffic of an op graph, eager and compiled.
    "kpredict.models": 4,
    # 5. pipeline: one file in, one report out.
    "kpredict.api": 5,
    "kpredict.report": 5,
    "kpredict.traffic": 5,
    "kpredict.cost": 5,
    # 6. batch: many files (discovery, the per-file cache, worker processes).
    "kpredict.walk": 6,
    "kpredict.cache": 6,
    "kpredict.parallel": 6,
    # 7. renderers (core types only, see the docstring) and the options every command shares.
    "kpredict.render": 7,
    "kpredict.cli_options": 7,
    # 8. the linter, the verifier and the report command: peers; lint and verify do not import each
    #    other, and the report command imports lint (its findings are part of the report).
    "kpredict.lint": 8,
    "kpredict.verify": 8,
    "kpredict.report_command": 8,
    "kpredict.graph_command": 8,
    # 9. the command line.
    "kpredict.cli": 9,
    "kpredict.__main__": 9,
}

# (importer, imported) -> why the import is inside a function. Only speed of start-up qualifies.
STARTUP = ("start-up time: cli loads a command's module when that command runs (click's lazy group), "
           "so `kpredict --help` loads none of the analysis and `report` none of verify")
LAZY: dict[tuple[str, str], str] = {
    ("kpredict.cli", "kpredict.report_command"): STARTUP,
    ("kpredict.cli", "kpredict.lint.commands"): STARTUP,
    ("kpredict.cli", "kpredict.verify.command"): STARTUP,
    ("kpredict.cli", "kpredict.graph_command"): STARTUP,
}

# (importer, imported) -> why an annotation names a type of a higher layer (`if TYPE_CHECKING:` only).
TYPE_ONLY: dict[tuple[str, str], str] = {
    ("kpredict.lint.model", "kpredict.lint.context"):
        "Rule.check(fn: FunctionContext): the rule interface names the context the engine hands each rule",
}

@dataclass(frozen=True)
class Edge:
    src: str
    dst: str
    line: int
    in_function: bool
    type_checking: bool
    comment: bool  # a comment on the import's line or on the import/comment lines just above it

    def where(self) -> str:
        return f"{self.src.replace('.', '/')}.py:{self.line}: {self.src} -> {self.dst}"


def modules() -> dict[str, Path]:
    out = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        parts = p.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _has_comment(lines: list[str], lineno: int) -> bool:
    if "#" in lines[lineno - 1]:
        return True
    i = lineno - 2
    while i >= 0:
        s = lines[i].strip()
        if not (s.startswith(("import ", "from ", "#"))):
            return False
        if "#" in s:
            return True
        i -= 1
    return False


def imports_of(name: str, path: Path, mods: dict[str, Path]) -> list[tuple[str, Edge]]:
    """(target, Edge) for every import statement in the module; target is the module named, kpredict or not."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[str, Edge]] = []

    def targets(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [a.name for a in node.names]
        base = node.module or ""
        if node.level:
            parts = package.split(".")
            parts = parts[:len(parts) - node.level + 1]
            base = ".".join(parts + ([base] if base else []))
        # `from pkg import mod` imports the module pkg.mod; `from mod import name` imports mod
        return [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]

    def visit(node: ast.AST, in_function: bool, type_checking: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for t in dict.fromkeys(targets(child)):
                    out.append((t, Edge(name, t, child.lineno, in_function, type_checking,
                                        _has_comment(lines, child.lineno))))
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for n in child.body:
                    visit(ast.Module(body=[n], type_ignores=[]), in_function, True)
                for n in child.orelse:
                    visit(ast.Module(body=[n], type_ignores=[]), in_function, type_checking)
            else:
                visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)),
                      type_checking)

    visit(ast.parse(source, str(path)), False, False)
    return out


def _owner(target: str, mods: dict[str, Path]) -> str | None:
    """The kpredict module a dotted name refers to (a name imported from a module is that module)."""
    while target and target not in mods:
        target = target.rpartition(".")[0]
    return target or None


def scan() -> tuple[dict[str, Path], list[Edge], list[Edge]]:
    """(modules, edges between kpredict modules, imports of other modules made inside functions)."""
    mods = modules()
    edges: list[Edge] = []
    foreign: list[Edge] = []
    for name, path in mods.items():
        for target, e in imports_of(name, path, mods):
            if target == "kpredict" or target.startswith("kpredict."):
                dst = _owner(target, mods)
                if dst and dst != name:
                    edges.append(Edge(name, dst, e.line, e.in_function, e.type_checking, e.comment))
            elif e.in_function:
                foreign.append(e)
    return mods, edges, foreign


def layer_of(module: str) -> int | None:
    best = None
    for prefix, layer in LAYERS.items():
        if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, layer)
    return best[1] if best else None


def cycles(edges: list[Edge]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), over edges that run."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        if not e.type_checking:
            graph.setdefault(e.src, set()).add(e.dst)
            graph.setdefault(e.dst, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def violations(edges: list[Edge]) -> list[str]:
    """Every arrow that breaks a layer rule."""
    out = []
    for e in edges:
        if e.type_checking and (e.src, e.dst) in TYPE_ONLY:
            continue
        src, dst = layer_of(e.src), layer_of(e.dst)
        if src is None or dst is None:
            continue  # reported by test_every_module_has_a_layer
        if dst > src:
            out.append(f"{e.where()}: layer {src} imports layer {dst}")
        if e.src.startswith("kpredict.render") and dst != 0 and not e.dst.startswith("kpredict.render"):
            out.append(f"{e.where()}: render imports only core types (layer 0)")
        if e.dst.startswith("kpredict.verify") and not (e.src.startswith("kpredict.verify") or e.src == "kpredict.cli"):
            out.append(f"{e.where()}: only cli and verify import verify")
        if e.dst == "kpredict.cli" and e.src != "kpredict.__main__":
            out.append(f"{e.where()}: nothing imports cli")
        if e.src.startswith("kpredict.lint") and e.dst.startswith("kpredict.verify"):
            out.append(f"{e.where()}: lint and verify are peers")
    return out


def test_every_module_has_a_layer() -> None:
    mods = modules()
    assert [m for m in mods if layer_of(m) is None] == []


def test_no_cycles() -> None:
    _, edges, _ = scan()
    assert cycles(edges) == []


def test_no_arrow_runs_up() -> None:
    _, edges, _ = scan()
    assert violations(edges) == []


def test_allow_lists_name_imports_that_exist() -> None:
    """An entry of LAZY or TYPE_ONLY whose import is gone is removed with it."""
    _, edges, _ = scan()
    lazy = {(e.src, e.dst) for e in edges if e.in_function}
    assert [k for k in LAZY if k not in lazy] == []
    typed = {(e.src, e.dst) for e in edges if e.type_checking}
    assert [k for k in TYPE_ONLY if k not in typed] == []


def test_no_kpredict_import_inside_a_function() -> None:
    _, edges, _ = scan()
    bad = [e.where() for e in edges
           if e.in_function and (e.src, e.dst) not in LAZY]
    assert bad == []


def test_lazy_imports_of_other_modules_say_why() -> None:
    """torch and other third-party modules may be imported inside a function, with a comment why;
    the standard library is imported at the top of the module."""
    _, _, foreign = scan()
    stdlib = [f"{e.where()}" for e in foreign if e.dst.partition(".")[0] in sys.stdlib_module_names]
    silent = [f"{e.where()}" for e in foreign
              if e.dst.partition(".")[0] not in sys.stdlib_module_names and not e.comment]
    assert stdlib == []
    assert silent == []


if __name__ == "__main__":
    mods, edges, foreign = scan()
    print("cycles:", cycles(edges))
    print("\n".join(violations(edges)))
    inner = [e for e in edges if e.in_function]
    print(f"{len(inner)} kpredict imports inside functions, {len(foreign)} others")
    for e in inner:
        print("  F", e.where(), "(lazy)" if (e.src, e.dst) in LAZY else "")
    for e in foreign:
        print("  O", e.where(), "(commented)" if e.comment else "")
