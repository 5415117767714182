#!/usr/bin/env python3
"""List every fixture function with its example inputs; with --measure, run each one eagerly and
show which aten ops torch really dispatches.

    python scripts/fixture_table.py                      # list fixtures/ (no torch needed)
    python scripts/fixture_table.py --measure            # + eager aten ops, one subprocess per file
    python scripts/fixture_table.py --measure fixtures/ops/views.py --json out.json

Listing reads the `# kpredict:` comments with `ast` and plain text; it never imports a fixture.
Measuring imports torch and the fixture module in a child process (a file whose module-level code
cannot run here, e.g. the seed script that needs CUDA, is loaded as its imports and defs only),
builds the example tensors (with kpredict.verify.examples when importable, else a minimal builder
here), and records the top-level aten ops seen by a TorchDispatchMode.
Views (`OpOverload.is_view`) and allocation-only ops (`empty*`, `new_empty*`) launch nothing and are
listed apart; `.item()`-like host syncs are listed apart too. This is an eyeballing aid for the team:
the figures the tests check come from the oracle in kpredict.verify, not from this script.

Comment syntax (on the comment lines directly above `def`, or above its decorators):
    # kpredict: example x=randn(64, 128) w=randn(128, 256, dtype=float16) n=4 flag=True
    # kpredict: cuda-only compiled=3 source=<where the CUDA figure comes from>
Constructors: randn, rand, randint(low, high, (shape)), zeros, ones, arange, full(shape, value);
keyword `dtype=<torch dtype name>`; plain ints, floats, bools and strings are passed as they are.
Several `example` lines above one def are joined.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_ROOTS = [REPO / "fixtures"]
MARK = re.compile(r"^\s*#\s*kpredict:\s*(\S+)\s*(.*?)\s*$")
CONSTRUCTORS = {"randn", "rand", "randint", "zeros", "ones", "arange", "full"}


# ---------------------------------------------------------------------------------------------
# Static part: find fixture functions and parse their comments (no torch, no import of fixtures)
# ---------------------------------------------------------------------------------------------


@dataclass
class Fixture:
    path: str
    qualname: str
    line: int
    params: list[str]
    example: dict[str, str] | None  # parameter -> source text of its value; None: no example line
    cuda_only: dict[str, str] | None = None
    problems: list[str] = field(default_factory=list)


def split_assignments(text: str) -> dict[str, str]:
    """'x=randn(64, 128) n=4' -> {'x': 'randn(64, 128)', 'n': '4'} (splits only at top level)."""
    out: dict[str, str] = {}
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        m = re.compile(r"([A-Za-z_]\w*)=").match(text, i)
        if not m:
            raise ValueError(f"expected name=value at {text[i:]!r}")
        name = m.group(1)
        j = m.end()
        depth, quote = 0, None
        start = j
        while j < n:
            ch = text[j]
            if quote:
                if ch == quote:
                    quote = None
            elif ch in "\"'":
                quote = ch
            elif ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif ch.isspace() and depth == 0:
                break
            j += 1
        value = text[start:j]
        if not value:
            raise ValueError(f"empty value for {name}")
        if name in out:
            raise ValueError(f"{name} given twice")
        out[name] = value
        i = j
    return out


def parse_value(src: str) -> tuple:
    """Check one example value and turn it into a plain description (no torch):
    ('tensor', ctor, args, {'dtype': name}) or ('py', value)."""
    node = ast.parse(src, mode="eval").body
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in CONSTRUCTORS:
            raise ValueError(f"unknown constructor in {src!r} (supported: {', '.join(sorted(CONSTRUCTORS))})")
        args = [ast.literal_eval(a) for a in node.args]
        kwargs: dict[str, object] = {}
        for kw in node.keywords:
            if kw.arg == "dtype":
                if isinstance(kw.value, ast.Name):
                    kwargs["dtype"] = kw.value.id
                elif isinstance(kw.value, ast.Attribute):  # torch.float16
                    kwargs["dtype"] = kw.value.attr
                else:
                    raise ValueError(f"dtype must be a name in {src!r}")
            else:
                raise ValueError(f"unsupported keyword {kw.arg!r} in {src!r}")
        if node.func.id == "randint":
            if len(args) != 3 or not isinstance(args[2], tuple):
                raise ValueError(f"randint needs (low, high, (shape)) in {src!r}")
        return ("tensor", node.func.id, args, kwargs)
    return ("py", ast.literal_eval(node))


def _comment_block_above(lines: list[str], first_line: int) -> list[str]:
    """The contiguous comment lines directly above 1-based line `first_line`."""
    block: list[str] = []
    i = first_line - 2
    while i >= 0 and lines[i].lstrip().startswith("#"):
        block.append(lines[i])
        i -= 1
    return list(reversed(block))


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = fn.args
    names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    return names


def scan_file(path: Path) -> list[Fixture]:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    tree = ast.parse(text, filename=str(path))
    found: list[Fixture] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, prefix + node.name + ".")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                fx = Fixture(str(path.relative_to(REPO) if path.is_relative_to(REPO) else path),
                             prefix + node.name, node.lineno, _params(node), None)
                example_parts: list[str] = []
                for raw in _comment_block_above(lines, first):
                    m = MARK.match(raw)
                    if not m:
                        continue
                    kind, rest = m.group(1), m.group(2)
                    if kind == "example":
                        example_parts.append(rest)
                    elif kind == "cuda-only":
                        mm = re.match(r"compiled=(\d+)\s+source=(.+)$", rest)
                        if not mm:
                            fx.problems.append(f"bad cuda-only line: {rest!r}")
                        else:
                            fx.cuda_only = {"compiled": mm.group(1), "source": mm.group(2)}
                    else:
                        fx.problems.append(f"unknown kpredict comment {kind!r}")
                if example_parts:
                    try:
                        fx.example = split_assignments(" ".join(example_parts))
                        for v in fx.example.values():
                            parse_value(v)
                    except (ValueError, SyntaxError) as e:
                        fx.problems.append(f"bad example: {e}")
                        fx.example = None
                    else:
                        names = set(fx.example)
                        wanted = set(fx.params) - ({"self"} if prefix else set())
                        if names != wanted:
                            fx.problems.append(
                                f"example names {sorted(names)} != parameters {sorted(wanted)}")
                else:
                    fx.problems.append("no '# kpredict: example' comment")
                found.append(fx)

    visit(tree.body, "")
    return found


def fixture_files(roots: list[Path]) -> list[Path]:
    files: list[Path] = []
    for r in roots:
        if r.is_dir():
            files.extend(sorted(p for p in r.rglob("*.py") if "__pycache__" not in p.parts))
        else:
            files.append(r)
    return files


# ---------------------------------------------------------------------------------------------
# Child process: import torch and one fixture file, run each function eagerly under a dispatch mode
# ---------------------------------------------------------------------------------------------

SYNC_OPS = {"_local_scalar_dense", "is_nonzero", "item"}
# Metadata-only ops whose schema carries no alias annotation, so OpOverload.is_view is False for them.
NON_ANNOTATED_VIEWS = {"_unsafe_view", "_reshape_alias", "alias"}


def _child(path_str: str) -> None:
    import importlib.util
    import io
    import contextlib

    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    path = Path(path_str)
    fixtures = scan_file(path)
    note = None
    mod_name = "kp_fixture_" + re.sub(r"\W", "_", str(path.with_suffix("")))
    namespace: dict[str, object]
    try:
        spec = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(spec)
        # Registered like a real import: torch.compile of a decorated fixture looks its module up.
        sys.modules[mod_name] = module
        with contextlib.redirect_stdout(io.StringIO()):
            spec.loader.exec_module(module)
        namespace = vars(module)
    except Exception as e:  # module-level code that cannot run here: keep imports and defs only
        sys.modules.pop(mod_name, None)
        note = f"module-level code skipped ({type(e).__name__}: {str(e).splitlines()[0][:80]})"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        keep = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        tree.body = [n for n in tree.body if isinstance(n, keep)]
        namespace = {"__name__": mod_name, "__file__": str(path)}
        exec(compile(tree, str(path), "exec"), namespace)

    # Prefer the package's own example builder (the one the oracle uses); fall back to the minimal
    # builder below when kpredict is not importable.
    sys.path.insert(0, str(REPO))
    try:
        from kpredict.verify.examples import build as kp_build, parse_examples as kp_parse
    except ImportError:
        kp_build = kp_parse = None

    def build_all(example: dict[str, str]) -> dict[str, object]:
        if kp_build is not None:
            return kp_build(kp_parse(" ".join(f"{k}={v}" for k, v in example.items())))
        return {k: build(v) for k, v in example.items()}

    def build(src: str):
        desc = parse_value(src)
        if desc[0] == "py":
            return desc[1]
        _, ctor, args, kwargs = desc
        kw = {}
        if "dtype" in kwargs:
            kw["dtype"] = getattr(torch, kwargs["dtype"])
        if ctor == "randint":
            low, high, shape = args
            return torch.randint(low, high, shape, **kw)
        if ctor == "full":
            return torch.full(args[0] if isinstance(args[0], tuple) else (args[0],), args[1], **kw)
        return getattr(torch, ctor)(*args, **kw)

    class Recorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops: list[tuple[str, str]] = []  # (kind, name)

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            packet = func.overloadpacket.__name__
            name = str(func).removeprefix("aten.")
            if packet in SYNC_OPS:
                kind = "sync"
            elif getattr(func, "is_view", False) or packet in NON_ANNOTATED_VIEWS:
                kind = "view"
            elif packet.startswith(("empty", "new_empty")):
                kind = "alloc"
            else:
                kind = "kernel"
            self.ops.append((kind, name))
            return func(*args, **(kwargs or {}))

    for fx in fixtures:
        rec = {"path": fx.path, "qualname": fx.qualname, "line": fx.line, "note": note,
               "error": None, "kernels": [], "syncs": [], "free": []}
        if fx.example is None or fx.problems:
            rec["error"] = "; ".join(fx.problems) or "no example"
        elif "." in fx.qualname:
            rec["error"] = "method: not measured"
        else:
            try:
                inputs = build_all(fx.example)
                fn = namespace[fx.qualname]
                r = Recorder()
                with contextlib.redirect_stdout(io.StringIO()), r:
                    fn(**inputs)
                for kind, name in r.ops:
                    key = {"kernel": "kernels", "sync": "syncs"}.get(kind, "free")
                    rec[key].append(name)
            except Exception as e:
                rec["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        print(json.dumps(rec), flush=True)


# ---------------------------------------------------------------------------------------------
# Parent: list, or spawn one child per file and print the table
# ---------------------------------------------------------------------------------------------


def _fmt_example(ex: dict[str, str] | None) -> str:
    if ex is None:
        return "-"
    return " ".join(f"{k}={v}" for k, v in ex.items()) or "(no inputs)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", type=Path, help="files or folders (default: fixtures/)")
    ap.add_argument("--measure", action="store_true", help="run each fixture eagerly (needs torch)")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON to this file")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per file when measuring")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child:
        _child(args.child)
        return 0

    files = fixture_files([p.resolve() for p in args.paths] or DEFAULT_ROOTS)
    problems = 0
    rows: list[dict] = []
    for f in files:
        fixtures = scan_file(f)
        if not args.measure:
            for fx in fixtures:
                cuda = f"  [cuda-only compiled={fx.cuda_only['compiled']}]" if fx.cuda_only else ""
                print(f"{fx.path}::{fx.qualname}:{fx.line}  {_fmt_example(fx.example)}{cuda}")
                for p in fx.problems:
                    problems += 1
                    print(f"    problem: {p}")
                rows.append(asdict(fx))
            continue
        proc = subprocess.run([sys.executable, __file__, "--child", str(f)], capture_output=True,
                              text=True, timeout=args.timeout, cwd=REPO)
        got = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        if proc.returncode != 0 or len(got) != len(fixtures):
            problems += 1
            tail = proc.stderr.strip().splitlines()[-1:] or ["?"]
            print(f"{f}: child failed (rc={proc.returncode}): {tail[0]}")
        notes = {r["note"] for r in got if r["note"]}
        for n in notes:
            print(f"# {f.relative_to(REPO) if f.is_relative_to(REPO) else f}: {n}")
        for r in got:
            rows.append(r)
            where = f"{r['path']}::{r['qualname']}"
            if r["error"]:
                problems += 1
                print(f"{where:55s}  ERROR {r['error']}")
                continue
            ops = ", ".join(r["kernels"]) or "-"
            extra = ""
            if r["syncs"]:
                extra += f"  syncs: {', '.join(r['syncs'])}"
            if r["free"]:
                extra += f"  free: {', '.join(r['free'])}"
            print(f"{where:55s} {len(r['kernels']):3d}  {ops}{extra}")
    if args.measure:
        n_fn = sum(1 for r in rows)
        n_k = sum(len(r["kernels"]) for r in rows)
        print(f"# {len(files)} files, {n_fn} functions, {n_k} eager aten compute ops, {problems} problems")
    else:
        print(f"# {len(files)} files, {len(rows)} functions, {problems} problems")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
