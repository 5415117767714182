"""`kpredict diff BASE [HEAD]`: per changed function, eager and compiled kernels and bytes before and
after, for a review comment ("Block.forward: eager 14 -> 17 kernels (+3)").

The changed `.py` files come from `git diff --name-only BASE [HEAD]` (plus untracked files when HEAD
is the working tree); each side is read with `git show REV:path` (the working tree for the head by
default) and analyzed like any file, with the configuration that applies to it in the working tree.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from typing import Any

from kpredict import api
from kpredict.lint.baseline import METRICS, change_text, figures_of
from kpredict.lint.config import ConfigError, Overrides, resolve_for
from kpredict.lint.figures import plural
from kpredict.render.text_report import human_bytes, human_time

SCHEMA = "kpredict/diff/v1"
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


def changed_files(root: str, base: str, head: str | None) -> list[str]:
    revs = [base] if head is None else [base, head]
    out = git(root, "diff", "--name-only", "--no-renames", *revs, "--", "*.py").stdout.decode().split("\n")
    files = {p for p in out if p}
    if head is None:
        untracked = git(root, "ls-files", "--others", "--exclude-standard", "--", "*.py").stdout.decode().split("\n")
        files |= {p for p in untracked if p}
    return sorted(files)


def read_at(root: str, rev: str | None, path: str) -> bytes | None:
    """A file's bytes at `rev` (None: the working tree); None when it does not exist there."""
    if rev is None:
        try:
            with open(os.path.join(root, path), "rb") as fh:
                return fh.read()
        except FileNotFoundError:
            return None
    proc = git(root, "show", f"{rev}:{path}", check=False)
    return proc.stdout if proc.returncode == 0 else None


@dataclass
class FunctionDelta:
    qualname: str
    status: str  # changed | added | removed
    before: dict[str, Any] | None
    after: dict[str, Any] | None

    def delta(self) -> dict[str, dict[str, int | None]]:
        out: dict[str, dict[str, int | None]] = {}
        for mode, metric in METRICS:
            old = (self.before or {}).get(mode, {}).get(metric)
            new = (self.after or {}).get(mode, {}).get(metric)
            d = new - old if isinstance(old, int) and isinstance(new, int) else None
            out.setdefault(mode, {})[metric] = d
        return out

    def grew(self) -> bool:
        if self.status == "added":
            return False
        return any(v is not None and v > 0 for m in self.delta().values() for v in m.values())

    def text(self) -> str:
        if self.status == "removed":
            return f"{self.qualname}: removed (was {_figs(self.before)})"
        if self.status == "added":
            return f"{self.qualname}: new, {_figs(self.after)}"
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
        times = [f"{mode} {human_time(o)} -> {human_time(n)}" for mode in ("eager", "compiled")
                 if (o := self.before[mode].get("time_us")) != (n := self.after[mode].get("time_us"))]  # type: ignore[index]
        if times:
            parts.append("modelled time " + ", ".join(times))
        return f"{self.qualname}: " + "; ".join(parts)


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


@dataclass
class DiffResult:
    base: str
    head: str | None
    target: str
    files: list[FileDiff] = field(default_factory=list)

    def grew(self) -> bool:
        return any(fn.grew() for f in self.files for fn in f.functions)


def _analyze(data: bytes | None, path: str, settings, examples: dict[str, str] | None = None,
             inits: dict[str, str] | None = None) -> tuple[dict[str, dict[str, Any]], str | None]:
    if data is None:
        return {}, None
    try:
        rep = api.analyze_source(data, path, settings, examples=examples, inits=inits)
    except Exception as e:  # noqa: BLE001 - one bad file must not stop the diff
        return {}, f"internal error ({type(e).__name__}: {e})"
    if rep.error:
        return {}, rep.error
    return {fn.qualname: _with_time(figures_of(fn), fn) for fn in rep.functions}, None


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
    files = changed_files(root, base, head)
    if paths:
        wanted = [os.path.relpath(os.path.abspath(p), root).replace(os.sep, "/") for p in paths]
        files = [f for f in files if any(f == w or f.startswith(w.rstrip("/") + "/") or w == "." for w in wanted)]
    target = None
    result = DiffResult(base, head, "cuda")
    for rel in files:
        resolved = resolve_for(os.path.join(root, rel), cli)
        target = target or resolved.settings.target
        before, e1 = _analyze(read_at(root, base, rel), rel, resolved.settings, examples, inits)
        after, e2 = _analyze(read_at(root, head, rel), rel, resolved.settings, examples, inits)
        fd = FileDiff(rel, error=e1 or e2)
        for q in sorted(set(before) | set(after), key=lambda q: (q not in after, q)):
            b, a = before.get(q), after.get(q)
            if b is None:
                fd.functions.append(FunctionDelta(q, "added", None, a))
            elif a is None:
                fd.functions.append(FunctionDelta(q, "removed", b, None))
            elif a != b:
                fd.functions.append(FunctionDelta(q, "changed", b, a))
        if fd.functions or fd.error:
            result.files.append(fd)
    result.target = target or resolve_for(root, cli).settings.target
    return result


# ------------------------------------------------------------------------------------ rendering


def render_text(r: DiffResult) -> str:
    head = r.head or "working tree"
    out = [f"kpredict diff {r.base} -> {head} (target {r.target})"]
    if not r.files:
        out.append("no function changed its predicted kernels or bytes")
    for f in r.files:
        out.append(f.path)
        if f.error:
            out.append(f"  error: {f.error}")
        out += [f"  {fn.text()}" for fn in f.functions]
    return "\n".join(out) + "\n"


def render_json(r: DiffResult) -> str:
    doc = {"schema": SCHEMA, "base": r.base, "head": r.head, "target": r.target, "files": [
        {"path": f.path, "error": f.error, "functions": [
            {"qualname": fn.qualname, "status": fn.status, "before": fn.before, "after": fn.after,
             "delta": fn.delta() if fn.status == "changed" else None, "text": fn.text()}
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
                                                     " (removed)" if fn.status == "removed" else "")
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
