"""`kpredict diff BASE [HEAD]`: per changed function, eager and compiled kernels and bytes before and
after, for a review comment ("Block.forward: eager 14 -> 17 kernels (+3)").

The changed `.py` files come from `git diff --name-status -M BASE [HEAD]` (plus untracked files when
HEAD is the working tree). Each revision's Python files are written out whole to a temporary folder
(`git archive`; the working tree is used as it is), so a file is analyzed among the files it imports
*at that revision*. Besides the changed files, the files that import one of them (up to
`CALLER_DEPTH` imports away, at most `MAX_CALLERS` files) are analyzed at both revisions: a change to
a layer shows in the model that calls it, in another file. A file renamed by git is compared with its
old self; within a file, a function removed and one added with the same body (or nearly: difflib's
ratio >= `RENAME_RATIO` for a body of `RENAME_MIN_CHARS` or more) are one function renamed. Each file gets the configuration that applies to
it in the working tree.
"""

from __future__ import annotations

import ast
import difflib
import io
import json
import os
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass, field
from typing import Any

from kpredict import api
from kpredict.frontend import imports
from kpredict.lint.baseline import METRICS, change_text, figures_of
from kpredict.lint.config import ConfigError, Overrides, resolve_for
from kpredict.lint.figures import plural
from kpredict.render.text_report import human_bytes, human_time

SCHEMA = "kpredict/diff/v1"
CALLER_DEPTH = 2
MAX_CALLERS = 200
RENAME_RATIO = 0.9  # for bodies of at least RENAME_MIN_CHARS; shorter ones must match exactly
RENAME_MIN_CHARS = 200
TIMES = (("eager", "time_us"), ("compiled", "time_us"))  # modelled, shown beside METRICS (not budgeted)


def git(root: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    try:
        proc = subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)
    except FileNotFoundError:
        raise ConfigError("git is not installed (kpredict diff needs it)") from None
    if check and proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ConfigError(f"git {' '.join(args)}: {msg[-1] if msg else 'failed'}")
    return proc


def repo_root(start: str = ".") -> str:
    proc = git(start, "rev-parse", "--show-toplevel", check=False)
    if proc.returncode != 0:
        raise ConfigError(f"{os.path.abspath(start)} is not inside a git repository")
    return proc.stdout.decode().strip()


def changed_files(root: str, base: str, head: str | None) -> list[tuple[str | None, str | None]]:
    """(path at BASE, path at HEAD) for each changed .py file: None where the file does not exist on
    that side; two different paths for a file git sees renamed (or renamed and edited)."""
    revs = [base] if head is None else [base, head]
    out = git(root, "diff", "--name-status", "-M", "-z", *revs, "--", "*.py").stdout.decode().split("\0")
    pairs: list[tuple[str | None, str | None]] = []
    i = 0
    while i < len(out) and out[i]:
        status = out[i]
        if status.startswith(("R", "C")):
            old, new = out[i + 1], out[i + 2]
            pairs.append((old if status.startswith("R") else None, new))
            i += 3
            continue
        path = out[i + 1]
        pairs.append((None if status == "A" else path, None if status == "D" else path))
        i += 2
    if head is None:
        untracked = git(root, "ls-files", "--others", "--exclude-standard", "--", "*.py").stdout.decode().split("\n")
        pairs += [(None, p) for p in untracked if p]
    return sorted(set(pairs), key=lambda p: (p[1] or p[0] or ""))


def materialize(root: str, rev: str, dest: str) -> str:
    """The .py files of `rev`, written under `dest` as git has them (`git archive`): analyzed there, a
    file imports its neighbours as they were at that revision."""
    data = git(root, "archive", "--format=tar", rev, "--", "*.py").stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def _imported_files(path: str, tree_root: str) -> set[str]:
    """The files of the tree that `path`'s imports name (relative, '/'-separated)."""
    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return set()
    out = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            targets = [base] + [f"{base}.{a.name}" if node.module else f"{base}{a.name}" for a in node.names]
        for dotted in targets:
            hit = imports.resolve(path, dotted)
            if hit is not None:
                rel = os.path.relpath(os.path.abspath(hit[0]), tree_root)
                if not rel.startswith(".."):
                    out.add(rel.replace(os.sep, "/"))
    return out


def _module_name(rel: str) -> str:
    """The name an import statement gives a file: its stem, or its package's for an `__init__.py`."""
    stem = os.path.splitext(os.path.basename(rel))[0]
    return os.path.basename(os.path.dirname(rel)) if stem == "__init__" else stem


def callers(root: str, tree_root: str, changed: set[str]) -> list[str]:
    """Files of the tree (tracked, at HEAD's side) that import a changed file, or import a file that
    does, up to CALLER_DEPTH imports away; at most MAX_CALLERS. Candidates are found by `git grep`
    for the changed modules' names, then kept only when an import of theirs resolves to one."""
    found: list[str] = []
    frontier = set(changed)
    seen = set(changed)
    for _ in range(CALLER_DEPTH):
        names = sorted(filter(None, map(_module_name, frontier)))
        if not names:
            break
        args = [a for n in names for a in ("-e", n)]
        grep = git(root, "grep", "-l", "-w", *args, "--", "*.py", check=False).stdout.decode().split("\n")
        nxt = set()
        for rel in sorted(p for p in grep if p and p not in seen):
            if _imported_files(os.path.join(tree_root, rel), tree_root) & frontier:
                nxt.add(rel)
        seen |= nxt
        found += sorted(nxt)
        frontier = nxt
        if not frontier or len(found) >= MAX_CALLERS:
            break
    return found[:MAX_CALLERS]


@dataclass
class FunctionDelta:
    qualname: str
    status: str  # changed | added | removed | renamed (from `old_name`, its figures compared)
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    old_name: str | None = None

    def delta(self) -> dict[str, dict[str, int | None]]:
        out: dict[str, dict[str, int | None]] = {}
        for mode, metric in METRICS:
            old = (self.before or {}).get(mode, {}).get(metric)
            new = (self.after or {}).get(mode, {}).get(metric)
            d = new - old if isinstance(old, int) and isinstance(new, int) else None
            out.setdefault(mode, {})[metric] = d
        return out

    def grew(self) -> bool:
        if self.status in ("added", "removed"):
            return False
        return any(v is not None and v > 0 for m in self.delta().values() for v in m.values())

    def text(self) -> str:
        if self.status == "removed":
            return f"{self.qualname}: removed (was {_figs(self.before)})"
        if self.status == "added":
            return f"{self.qualname}: new, {_figs(self.after)}"
        name = f"{self.qualname} (renamed from {self.old_name})" if self.old_name else self.qualname
        if self.before == self.after:
            return f"{name}: unchanged, {_figs(self.after)}"
        parts = []
        for mode in ("eager", "compiled"):
            old, new = self.before[mode], self.after[mode]  # type: ignore[index]
            bits = []
            for metric in ("kernels", "bytes"):
                o, n = old.get(metric), new.get(metric)
                if o == n:
                    continue
                if isinstance(o, int) and isinstance(n, int):
                    bits.append(change_text(mode, metric, o, n).split(" ", 1)[1])
                else:
                    unit = " kernels" if metric == "kernels" else ""
                    bits.append(f"{_v(o, metric)} -> {_v(n, metric)}{unit}")
            if bits:
                parts.append(f"{mode} " + ", ".join(bits))
            else:  # a reviewer reads the other mode too: the same figures said, never left out
                parts.append(f"{mode} unchanged ({plural(new.get('kernels'), 'kernel')}, {_v(new.get('bytes'), 'bytes')})")
        times = [f"{mode} {human_time(o)} -> {human_time(n)}" for mode in ("eager", "compiled")
                 if (o := self.before[mode].get("time_us")) != (n := self.after[mode].get("time_us"))]  # type: ignore[index]
        if times:
            parts.append("modelled time " + ", ".join(times))
        return f"{name}: " + "; ".join(parts)


def _v(x: Any, metric: str) -> str:
    if metric == "bytes":
        return human_bytes(x)
    return "?" if x is None else str(x)


def _figs(f: dict[str, Any] | None) -> str:
    if not f:
        return "?"
    return (f"eager {plural(f['eager']['kernels'], 'kernel')}, {human_bytes(f['eager']['bytes'])}; "
            f"compiled {plural(f['compiled']['kernels'], 'kernel')}, {human_bytes(f['compiled']['bytes'])}")


@dataclass
class FileDiff:
    path: str
    functions: list[FunctionDelta] = field(default_factory=list)
    error: str | None = None
    old_path: str | None = None  # a file git sees renamed: its path at BASE
    caller: bool = False  # unchanged itself: it imports a changed file (its figures change with it)


@dataclass
class DiffResult:
    base: str
    head: str | None
    target: str
    files: list[FileDiff] = field(default_factory=list)

    def grew(self) -> bool:
        return any(fn.grew() for f in self.files for fn in f.functions)


def _analyze(tree_root: str, rel: str | None, settings, examples: dict[str, str] | None = None,
             inits: dict[str, str] | None = None) -> tuple[dict[str, tuple[dict[str, Any], str]], str | None]:
    """Per qualname: (figures, the function's body as source, for rename matching), of the file `rel`
    in the tree at `tree_root` (a revision written out, or the working tree)."""
    if rel is None:
        return {}, None
    path = os.path.join(tree_root, rel)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return {}, None
    try:
        rep = api.analyze_source(data, path, settings, examples=examples, inits=inits)
    except Exception as e:  # noqa: BLE001 - one bad file must not stop the diff
        return {}, f"internal error ({type(e).__name__}: {e})"
    if rep.error:
        return {}, rep.error
    bodies = _bodies(data)
    return {fn.qualname: (_with_time(figures_of(fn), fn), bodies.get(fn.qualname, "")) for fn in rep.functions}, None


def _bodies(data: bytes) -> dict[str, str]:
    """qualname -> the function's arguments and body as normalised source (its name left out)."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return {}
    out: dict[str, str] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = prefix + child.name
                out[q] = ast.unparse(child.args) + "\n" + "\n".join(ast.unparse(b) for b in child.body)
                walk(child, q + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                walk(child, prefix + child.name + ".")

    walk(tree, "")
    return out


def _with_time(figs: dict[str, dict[str, Any]], fn: Any) -> dict[str, dict[str, Any]]:
    """The figures a diff compares, with each mode's modelled time (kpredict.cost; rounded to
    0.1 µs, as shown, so that noise in the last digits is no change)."""
    for mode, cost in (("eager", fn.eager_cost), ("compiled", fn.compiled_cost)):
        figs[mode]["time_us"] = None if cost.time_us is None else round(cost.time_us, 1)
    return figs


def compute(base: str, head: str | None, cli: Overrides, start: str = ".", paths: tuple[str, ...] = (),
            examples: dict[str, str] | None = None, inits: dict[str, str] | None = None) -> DiffResult:
    """`examples`, `inits`: per qualname, its inputs and its class's constructor arguments as
    `name=expr` text (diff's --example and --init), given to that function in every changed file
    that defines it, at both revisions."""
    root = repo_root(start)
    git(root, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
    if head is not None:
        git(root, "rev-parse", "--verify", "--quiet", f"{head}^{{commit}}")
    pairs = changed_files(root, base, head)
    if paths:
        wanted = [os.path.relpath(os.path.abspath(p), root).replace(os.sep, "/") for p in paths]
        pairs = [p for p in pairs if any(_under(x, wanted) for x in p if x)]
    result = DiffResult(base, head, resolve_for(root, cli).settings.target)
    with tempfile.TemporaryDirectory(prefix="kpredict-diff-") as tmp:
        base_root = materialize(root, base, os.path.join(tmp, "base"))
        head_root = root if head is None else materialize(root, head, os.path.join(tmp, "head"))
        changed = {new for _, new in pairs if new}
        entries = [(old, new, False) for old, new in pairs]
        entries += [(rel, rel, True) for rel in callers(root, head_root, changed)]
        targets = set()
        for old, new, caller in entries:
            rel = new or old
            assert rel is not None
            resolved = resolve_for(os.path.join(root, rel), cli)
            targets.add(resolved.settings.target)
            before, e1 = _analyze(base_root, old, resolved.settings, examples, inits)
            after, e2 = _analyze(head_root, new, resolved.settings, examples, inits)
            fd = FileDiff(rel, error=e1 or e2, old_path=old if old and new and old != new else None, caller=caller)
            fd.functions = _compare(before, after)
            if caller:
                fd.functions = [f for f in fd.functions if f.status == "changed"]
            if fd.functions or fd.error:
                result.files.append(fd)
        if len(targets) == 1:
            result.target = targets.pop()
    return result


def _under(path: str, wanted: list[str]) -> bool:
    return any(path == w or path.startswith(w.rstrip("/") + "/") or w == "." for w in wanted)


def _compare(before: dict[str, tuple[dict[str, Any], str]], after: dict[str, tuple[dict[str, Any], str]]) -> list[FunctionDelta]:
    """Functions of one file at both sides: changed, added, removed, and renamed (a removed and an
    added function whose bodies match, exactly or by RENAME_RATIO)."""
    out = []
    for q in sorted(set(before) & set(after)):
        if before[q][0] != after[q][0]:
            out.append(FunctionDelta(q, "changed", before[q][0], after[q][0]))
    gone = [q for q in before if q not in after]
    new = [q for q in after if q not in before]
    scored = sorted(((_likeness(before[g][1], after[n][1]), g, n) for g in gone for n in new), reverse=True)
    for ratio, g, n in scored:
        if ratio < RENAME_RATIO or g not in gone or n not in new:
            continue
        gone.remove(g)
        new.remove(n)
        out.append(FunctionDelta(n, "renamed", before[g][0], after[n][0], old_name=g))
    out += [FunctionDelta(q, "added", None, after[q][0]) for q in sorted(new) if _launches(after[q][0])]
    out += [FunctionDelta(q, "removed", before[q][0], None) for q in sorted(gone) if _launches(before[q][0])]
    return out


def _launches(figs: dict[str, Any]) -> bool:
    """Whether a function does tensor work: one that launches nothing in either mode (a helper that
    only moves Python values, a test) is left out of the added and removed lists."""
    return any(figs[mode].get("kernels") != 0 for mode in ("eager", "compiled"))


def _likeness(a: str, b: str) -> float:
    """1.0 for the same body; difflib's ratio for long ones (a short body differs from another by a
    few characters whatever they do: `x.exp()` is not `x.abs()` renamed)."""
    if a == b:
        return 1.0
    if min(len(a), len(b)) < RENAME_MIN_CHARS:
        return 0.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
# ------------------------------------------------------------------------------------ rendering


def render_text(r: DiffResult) -> str:
    head = r.head or "working tree"
    out = [f"kpredict diff {r.base} -> {head} (target {r.target})"]
    if not r.files:
        out.append("no function changed its predicted kernels or bytes")
    for f in r.files:
        out.append(_file_title(f))
        if f.error:
            out.append(f"  error: {f.error}")
        out += [f"  {fn.text()}" for fn in f.functions]
    return "\n".join(out) + "\n"


def _file_title(f: FileDiff) -> str:
    if f.old_path:
        return f"{f.path} (renamed from {f.old_path})"
    return f"{f.path} (unchanged; it imports changed code)" if f.caller else f.path


def render_json(r: DiffResult) -> str:
    doc = {"schema": SCHEMA, "base": r.base, "head": r.head, "target": r.target, "files": [
        {"path": f.path, "old_path": f.old_path, "caller": f.caller, "error": f.error, "functions": [
            {"qualname": fn.qualname, "status": fn.status, "old_name": fn.old_name, "before": fn.before,
             "after": fn.after, "delta": fn.delta() if fn.status in ("changed", "renamed") else None,
             "text": fn.text()}
            for fn in f.functions]}
        for f in r.files]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _cell(before: dict | None, after: dict | None, mode: str, metric: str) -> str:
    o = (before or {}).get(mode, {}).get(metric)
    n = (after or {}).get(mode, {}).get(metric)
    show = {"bytes": human_bytes, "time_us": human_time}.get(metric, lambda x: "?" if x is None else str(x))
    if metric == "time_us" and before is not None and after is not None and o != n:
        return f"{show(o)} → {show(n)}"  # no signed difference: a model's time, not a count
    if before is None:
        return show(n)
    if after is None:
        return f"~~{show(o)}~~"
    if o == n:
        return show(n)
    text = f"{show(o)} → {show(n)}"
    if isinstance(o, int) and isinstance(n, int):
        d = n - o
        text += f" ({'+' if d > 0 else '-'}{show(abs(d))})"
    return text


def render_markdown(r: DiffResult) -> str:
    head = f"`{r.head}`" if r.head else "the working tree"
    out = [f"### kpredict: kernels and bytes, `{r.base}` → {head}", ""]
    rows = []
    for f in r.files:
        for fn in f.functions:
            name = f"`{f.path}::{fn.qualname}`" + (" (new)" if fn.status == "added" else
                                                     " (removed)" if fn.status == "removed" else
                                                     f" (renamed from `{fn.old_name}`)" if fn.old_name else
                                                     " (calls changed code)" if f.caller else "")
            rows.append("| " + " | ".join([name.replace("|", "\\|")] + [
                _cell(fn.before, fn.after, m, k) for m, k in METRICS + TIMES]) + " |")
    if rows:
        out += ["| function | eager kernels | eager bytes | compiled kernels | compiled bytes | eager time | compiled time |",
                "|---|---:|---:|---:|---:|---:|---:|", *rows, ""]
    else:
        out += ["No function changed its predicted kernels or bytes.", ""]
    errors = [f for f in r.files if f.error]
    if errors:
        out += ["Not analyzed:", ""] + [f"- `{f.path}`: {f.error}" for f in errors] + [""]
    out.append(f"Predicted for `{r.target}`, per call; times are a roofline model on the default device preset "
               "(docs/time.md), unchecked against a measurement.")
    return "\n".join(out) + "\n"
