"""`--dim NAME=A,B,C`: one size swept, each function's modelled eager and compiled time and speedup per
value (issue 29), to show where compile stops paying and where a model turns from launch-bound to
bandwidth- or compute-bound. Draws reports computed elsewhere: core types only."""

from __future__ import annotations

import json

from kpredict.ir import FileReport, FunctionReport, ModeCost
from kpredict.render.text_report import human_time

SCHEMA_ID = "kpredict/sweep/v1"
Points = list[tuple[int, list[FileReport]]]  # (value of the swept size, the reports at that value)


def dominant(cost: ModeCost) -> tuple[str, float] | None:
    """The bound that takes the largest share of a mode's modelled time, and that share."""
    if cost.time_us is None or cost.time_us <= 0:
        return None
    by: dict[str, float] = {}
    for k in cost.kernels:
        by[k.bound] = by.get(k.bound, 0.0) + (k.time_us or 0.0)
    bound = max(by, key=by.__getitem__)
    return bound, by[bound] / cost.time_us


def _rows(points: Points) -> list[tuple[str, list[tuple[FunctionReport, list[tuple[int, FunctionReport | None]]]]]]:
    """Per file (in the first point's order), per function, its report at each value."""
    out = []
    first = points[0][1] if points else []
    for i, f in enumerate(first):
        if f.error or f.skipped:
            continue
        fns = []
        for fn in f.functions:
            at = []
            for value, files in points:
                other = files[i] if i < len(files) else None
                same = next((g for g in (other.functions if other else []) if g.qualname == fn.qualname), None)
                at.append((value, same))
            fns.append((fn, at))
        out.append((f.path, fns))
    return out


def _bound_text(cost: ModeCost) -> str:
    d = dominant(cost)
    return "?" if d is None else f"{d[0]} {d[1]:.0%}"


def render_text(name: str, target: str, points: Points) -> str:
    device = next((fn.device for _, files in points for f in files for fn in f.functions if fn.device), "?")
    lines = [f"target: {target}",
             f"sweep of {name} on {device}: times are a roofline model, unchecked against a measurement"]
    for path, fns in _rows(points):
        lines.append(path)
        for fn, at in fns:
            if not any(g is not None and (g.eager.kernels or g.compiled.kernels) for _, g in at):
                continue
            lines.append(f"  {fn.qualname} (line {fn.line})")
            lines.append(f"    {name:>10} {'eager':>10} {'compiled':>10} {'speedup':>8}  {'eager bound':<16} compiled bound")
            for value, g in at:
                if g is None:
                    lines.append(f"    {value:>10} (not analyzed at this size)")
                    continue
                e, c = g.eager_cost, g.compiled_cost
                sp = "?" if g.speedup is None or g.lower_bound else f"{g.speedup:.2f}x"
                ge = ">= " if g.lower_bound else ""
                lines.append(f"    {value:>10} {ge + human_time(e.time_us):>10} {ge + human_time(c.time_us):>10} "
                             f"{sp:>8}  {_bound_text(e):<16} {_bound_text(c)}")
    return "\n".join(lines) + "\n"


def render_json(name: str, target: str, points: Points) -> str:
    files = []
    for path, fns in _rows(points):
        out = []
        for fn, at in fns:
            pts = []
            for value, g in at:
                if g is None:
                    pts.append({"value": value, "analyzed": False})
                    continue
                e, c = g.eager_cost, g.compiled_cost
                pts.append({"value": value, "analyzed": True, "eager_time_us": e.time_us, "compiled_time_us": c.time_us,
                            "speedup": g.speedup, "eager_bytes": g.eager.bytes, "compiled_bytes": g.compiled.bytes,
                            "flops": e.flops, "eager_bound": (dominant(e) or (None,))[0],
                            "compiled_bound": (dominant(c) or (None,))[0], "lower_bound": g.lower_bound})
            out.append({"qualname": fn.qualname, "line": fn.line, "device": fn.device, "points": pts})
        files.append({"path": path, "functions": out})
    doc = {"schema": SCHEMA_ID, "target": target, "dim": name, "values": [v for v, _ in points], "files": files}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
