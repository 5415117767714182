"""The human report: one table per function, then its ops by source line with their fused group."""

from __future__ import annotations

from kpredict.ir import FileReport, FunctionReport, Report


def human_bytes(n: object) -> str:
    if n is None:
        return "?"
    if isinstance(n, str):
        return n
    v = float(n)  # type: ignore[arg-type]
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(v) < 1000 or unit == "TB":
            return f"{v:.0f} {unit}" if unit == "B" else f"{v:.1f} {unit}"
        v /= 1000
    return f"{v:.1f} TB"


def _function(fn: FunctionReport, lines: list[str], verbose: bool) -> None:
    e, c = fn.eager, fn.compiled
    lines.append(f"  {fn.qualname} (line {fn.line})")
    lines.append(f"    {'':10} {'kernels':>8} {'transfers':>10} {'bytes':>10}  {'syncs':>5}")
    et = e.reads + e.writes if isinstance(e.reads, int) and isinstance(e.writes, int) else f"{e.reads}+{e.writes}"
    ct = c.reads + c.writes if isinstance(c.reads, int) and isinstance(c.writes, int) else f"{c.reads}+{c.writes}"
    lines.append(f"    {'eager':10} {e.kernels!s:>8} {et!s:>10} {human_bytes(e.bytes):>10}  {e.syncs!s:>5}")
    graphs = f"  graphs: {c.graphs}" if c.graphs != 1 else ""
    lines.append(f"    {'compiled':10} {c.kernels!s:>8} {ct!s:>10} {human_bytes(c.bytes):>10}  {c.syncs!s:>5}{graphs}")
    if c.kernel_names:
        names = []
        for n in c.kernel_names:
            if names and names[-1][0] == n:
                names[-1][1] += 1
            else:
                names.append([n, 1])
        lines.append("    kernels: " + ", ".join(f"{n} x{k}" if k > 1 else n for n, k in names))
    for b in c.graph_breaks:
        lines.append(f"    graph break at line {b.line}: {b.reason}")
    shown = [r for r in fn.ops if r.kernels or r.group is not None or verbose]
    if shown:
        lines.append(f"    {'line':>6}  {'op':<22} {'kind':<10} {'eager':>5} {'xfer':>5}  group")
        for r in shown:
            g = "-" if r.group is None else str(r.group)
            lines.append(f"    {r.span.line:>6}  {r.op:<22} {r.kind:<10} {r.kernels:>5} {r.reads + r.writes:>5}  {g}")
    for u in fn.unknown:
        lines.append(f"    not understood at line {u.line}: {u.name} (counted as 0 kernels)")
    for a in fn.assumptions:
        lines.append(f"    assumed: {a}")


def render_file(f: FileReport, verbose: bool = False) -> str:
    if f.error:
        return f"{f.path}: error: {f.error}\n"
    if f.skipped:
        return f"{f.path}: skipped: {f.skipped}\n"
    lines = [f"{f.path}"]
    if not f.functions:
        lines.append("  (no functions with tensor operations)")
    for fn in f.functions:
        _function(fn, lines, verbose)
        for x in f.findings:
            if x.qualname == fn.qualname:
                lines.append(f"    {x.code} line {x.span.line}:{x.span.col + 1}: {x.message}")
    shown = {fn.qualname for fn in f.functions}
    for x in f.findings:
        if x.qualname not in shown:
            lines.append(f"  {x.code} line {x.span.line}:{x.span.col + 1}: {x.message}")
    return "\n".join(lines) + "\n"


def render(r: Report, verbose: bool = False) -> str:
    """Skipped files (not PyTorch code) are one line in all, or one line each with --verbose: a
    mixed repository has many, and listing each would bury the files that matter."""
    out = [f"target: {r.target}"]
    skipped = [f for f in r.files if f.skipped and not f.error]
    for f in r.files:
        if verbose or not f.skipped or f.error:
            out.append(render_file(f, verbose))
    if skipped and not verbose:
        one = len(skipped) == 1
        which = skipped[0].path if one else f"{len(skipped)} files"
        out.append(f"{which}: not analyzed: no torch import reached (--all-files analyzes "
                   f"{'it' if one else 'them'}{'' if one else ', -v lists them'})\n")
    return "\n".join(out)
