"""The human report: one table per function, then its ops by source line with their fused group."""

from __future__ import annotations

import re

from kpredict.ir import FileReport, FunctionReport, Report
from kpredict.render.runs import runs
from kpredict.symbolic import add_counts

_INDEX = re.compile(r"_\d+$")  # Inductor's kernel index at the end of a generated kernel's name


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


def human_time(us: float | None) -> str:
    """Modelled microseconds as `13.4 µs`, `2.05 ms`, `1.20 s`; `?` when unknown."""
    if us is None:
        return "?"
    if us < 1000:
        return f"{us:.1f} µs"
    if us < 1_000_000:
        return f"{us / 1000:.2f} ms"
    return f"{us / 1_000_000:.2f} s"


def human_flops(n: int | None) -> str:
    """Matrix FLOPs as `4.2 GF`; `0`; `?` when unknown."""
    if n is None:
        return "?"
    if n == 0:
        return "0"
    v = float(n)
    for unit in ("", "K", "M", "G", "T", "P"):
        if abs(v) < 1000 or unit == "P":
            return f"{v:.0f}" if unit == "" else f"{v:.1f} {unit}F"
        v /= 1000
    return f"{v:.1f} PF"


def speedup_line(fn: FunctionReport) -> str | None:
    """`speedup 1.79x (eager 10.0 µs -> compiled 5.6 µs): roofline model on h100, unchecked against a measurement`."""
    e, c = fn.eager_cost.time_us, fn.compiled_cost.time_us
    if fn.device is None or (e is None and c is None) or (fn.eager.kernels == 0 and fn.compiled.kernels == 0):
        return None
    lb = fn.lower_bound
    sp = "?" if fn.speedup is None or lb else f"{fn.speedup:.2f}x"
    clb = fn.compiled_lower_bound
    return (f"speedup {sp} (eager {at_least(human_time(e), lb)} -> compiled {at_least(human_time(c), clb)}): "
            f"roofline model on {fn.device}, unchecked against a measurement")


def at_least(v: object, lower: bool) -> str:
    """A figure as text: `>= 12` when it is a lower bound (something not understood may launch
    more); an unknown figure (`?`) stays `?`."""
    text = str(v)
    return f">= {text}" if lower and text != "?" else text


CAUSES_SHOWN = 3


def causes_line(fn: FunctionReport) -> str:
    """`lower bounds: not understood at line 12 (torch.nn.LSTM), line 20 (foo) and 2 more`."""
    cs = fn.lower_bound_causes
    parts = [f"line {u.line} ({u.name})" for u in cs[:CAUSES_SHOWN]]
    more = f" and {len(cs) - CAUSES_SHOWN} more" if len(cs) > CAUSES_SHOWN else ""
    return "figures are lower bounds (>=): not understood at " + ", ".join(parts) + more


def _function(fn: FunctionReport, lines: list[str], verbose: bool) -> None:
    e, c = fn.eager, fn.compiled
    lb = fn.lower_bound
    lines.append(f"  {fn.qualname} (line {fn.line})")
    lines.append(f"    {'':10} {'kernels':>8} {'transfers':>10} {'bytes':>10}  {'syncs':>5} {'flops':>9} {'time':>10}")
    et, ct = add_counts(e.reads, e.writes), add_counts(c.reads, c.writes)
    lines.append(f"    {'eager':10} {at_least(e.kernels, lb):>8} {at_least(et, lb):>10} "
                 f"{at_least(human_bytes(e.bytes), lb):>10}  {at_least(e.syncs, lb):>5} "
                 f"{at_least(human_flops(fn.eager_cost.flops), lb):>9} {at_least(human_time(fn.eager_cost.time_us), lb):>10}")
    graphs = f"  graphs: {c.graphs}" if c.graphs != 1 else ""
    clb = fn.compiled_lower_bound
    lines.append(f"    {'compiled':10} {at_least(c.kernels, clb):>8} {at_least(ct, clb):>10} "
                 f"{at_least(human_bytes(c.bytes), clb):>10}  {at_least(c.syncs, clb):>5} "
                 f"{at_least(human_flops(fn.compiled_cost.flops), clb):>9} {at_least(human_time(fn.compiled_cost.time_us), clb):>10}{graphs}")
    for name, f in fn.phases.items():
        lines.append(f"    {'  ' + name:10} {at_least(f.kernels, lb):>8} {at_least(add_counts(f.reads, f.writes), lb):>10} "
                     f"{at_least(human_bytes(f.bytes), lb):>10}  (eager)")
    if fn.phases:
        lines.append(f"    activations saved for backward: {at_least(human_bytes(fn.activation_bytes), lb)}")
    sp = speedup_line(fn)
    if sp:
        lines.append("    " + sp)
    if lb:
        lines.append("    " + causes_line(fn))
    for u in fn.compiled_causes:
        lines.append(f"    compiled figures are lower bounds (>=): line {u.line}: {u.name}")
    if c.kernel_names:
        lines.append("    kernels: " + _kernel_names(list(c.kernel_names), verbose))
    if verbose:
        _kernel_costs(fn, lines)
    breaks: dict[tuple[int, str], int] = {}  # one line per break site (a loop breaks once per pass), -v each
    for b in c.graph_breaks:
        if verbose:
            lines.append(f"    graph break at line {b.line}: {b.reason}")
        else:
            breaks[b.line, b.reason] = breaks.get((b.line, b.reason), 0) + 1
    for (line, reason), n in breaks.items():
        lines.append(f"    graph break at line {line}{f' ({n} times)' if n > 1 else ''}: {reason}")
    shown = [r for r in fn.ops if r.kernels or r.group is not None or verbose]
    if shown:
        lines.append(f"    {'line':>6}  {'op':<22} {'kind':<10} {'eager':>5} {'xfer':>5}  group")
        spans = [(0, len(shown), 1)] if verbose else runs(_row_keys(shown))
        for start, period, count in spans:
            for r in shown[start:start + period]:
                g = "-" if r.group is None else str(r.group)
                lines.append(f"    {r.span.line:>6}  {r.op:<22} {r.kind:<10} {r.kernels:>5} {r.reads + r.writes:>5}  {g}")
            if count > 1:
                what = "row above repeats" if period == 1 else f"{period} rows above repeat"
                times = "1 more time" if count == 2 else f"{count - 1} more times"
                lines.append(f"    {'':>6}  ... the {what} {times} ({period * count} rows; -v shows each)")
    for u in fn.unknown:
        lines.append(f"    not understood at line {u.line}: {u.name} (counted as 0 kernels)")
    for a in fn.assumptions:
        lines.append(f"    assumed: {a}")


def _kernel_costs(fn: FunctionReport, lines: list[str]) -> None:
    """-v: each kernel's modelled cost, eager then compiled: bytes, FLOPs, time and what bounds it."""
    for mode, cost in (("eager", fn.eager_cost), ("compiled", fn.compiled_cost)):
        if not cost.kernels:
            continue
        lines.append(f"    {mode + ' kernels, model on ' + str(fn.device):<42} {'bytes':>10} {'flops':>9} {'time':>10}  bound")
        for k in cost.kernels:
            times = f" x{k.launches}" if k.launches > 1 else ""
            lines.append(f"      {(k.name + times)[:40]:<40} {human_bytes(k.bytes):>10} {human_flops(k.flops):>9} "
                         f"{human_time(k.time_us):>10}  {k.bound}")


def _row_keys(rows: list) -> list[tuple]:
    """What makes two op rows the same for finding repeated layers: the op, its line and figures,
    and how its fused group relates to the rows before it (a new group, the previous row's group,
    or an earlier one); group numbers themselves differ in every layer."""
    keys = []
    seen: set[int] = set()
    prev: int | None = None
    for r in rows:
        if r.group is None:
            rel = "-"
        else:
            rel = "prev" if r.group == prev else ("earlier" if r.group in seen else "new")
            seen.add(r.group)
            prev = r.group
        keys.append((r.span.line, r.op, r.kind, r.kernels, r.reads + r.writes, rel))
    return keys


def _exact(names: list[str]) -> list[str]:
    """`aten::mm x6` for a name repeated in a row."""
    out: list[list] = []
    for n in names:
        if out and out[-1][0] == n:
            out[-1][1] += 1
        else:
            out.append([n, 1])
    return [f"{n} x{k}" if k > 1 else n for n, k in out]


def _kernel_names(names: list[str], verbose: bool) -> str:
    """Kernel names with a repeated block (a layer's kernels, N times) shown once as `(...) xN`,
    with the names of its first repeat: generated names differ between repeats only in Inductor's
    kernel index (`triton_poi_fused_mul_2`, `_4`, ...), which is left out when comparing."""
    if verbose:
        return ", ".join(_exact(names))
    parts: list[str] = []
    for start, period, count in runs([_INDEX.sub("", n) for n in names]):
        if count == 1 or period == 1:
            parts.extend(_exact(names[start:start + period * count]))
        else:
            parts.append(f"({', '.join(_exact(names[start:start + period]))}) x{count}")
    return ", ".join(parts)


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


def skipped_line(paths: list[str]) -> str:
    """The one line for the files left out as not PyTorch code (without -v)."""
    one = len(paths) == 1
    which = paths[0] if one else f"{len(paths)} files"
    return (f"{which}: not analyzed: no torch import reached (--all-files analyzes "
            f"{'it' if one else 'them'}{'' if one else ', -v lists them'})\n")


def render(r: Report, verbose: bool = False) -> str:
    """Skipped files (not PyTorch code) are one line in all, or one line each with --verbose: a
    mixed repository has many, and listing each would bury the files that matter."""
    out = [f"target: {r.target}"]
    skipped = [f for f in r.files if f.skipped and not f.error]
    for f in r.files:
        if verbose or not f.skipped or f.error:
            out.append(render_file(f, verbose))
    if skipped and not verbose:
        out.append(skipped_line([f.path for f in skipped]))
    text = "\n".join(out)
    return text if text.endswith("\n") else text + "\n"  # no file: the target line alone
