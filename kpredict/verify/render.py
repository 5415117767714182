"""Renderers for `kpredict verify`: a text table per function, and JSON (schema kpredict/verify/v1).

The JSON is a contract other tools read: its schema ships as kpredict/schema/verify.schema.json, and
the predicted blocks are the static report's own blocks (kpredict/report/v1), unchanged.
"""

from __future__ import annotations

import json
from typing import Any

from kpredict.render.json_report import function_dict
from kpredict.verify.runner import FunctionCheck, Row, VerifyResult

SCHEMA_ID = "kpredict/verify/v1"
OK, BAD, UNKNOWN = "✓", "✗", "?"


# --------------------------------------------------------------------------------------------
# text


def _fmt(label: str, v: Any) -> str:
    if v is None:
        return "-"
    if label == "eager transfers" and isinstance(v, tuple):
        r, w = v
        total = r + w if isinstance(r, int) and isinstance(w, int) else f"{r}+{w}"
        return f"{total} ({r}r+{w}w)"
    if label == "kernel names":
        return ", ".join(v) if v else "(none)"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def _mark(r: Row) -> str:
    mark = UNKNOWN if r.ok is None else OK if r.ok else BAD
    if r.lower_bound:
        mark += " (lower bound)"  # still a mismatch: what was not understood launched these
    return mark if r.decides else f"{mark} (info)"


def _table(fc: FunctionCheck, out: list[str], failed: bool = False) -> None:
    status = "match" if fc.match else "MISMATCH"
    if fc.match and fc.rows and not any(r.decides for r in fc.rows):
        status = "not compared"
    if failed:
        status += " (in what was measured before the error)"
    calls = f", ran {fc.calls}x" if fc.calls and fc.calls > 1 else ""
    where = f" (line {fc.line}{calls})" if fc.line else ""
    out.append(f"  {fc.qualname}{where}: {status}")
    names = [r for r in fc.rows if r.label == "kernel names"]
    rows = [r for r in fc.rows if r.label != "kernel names"]
    if rows:
        out.append(f"    {'':18} {'predicted':>22} {'measured':>22}")
        for r in rows:
            out.append(f"    {r.label:18} {_fmt(r.label, r.predicted):>22} {_fmt(r.label, r.measured):>22}  {_mark(r)}")
    for r in names:
        out.append(f"    kernel names, predicted: {_fmt(r.label, r.predicted)}")
        out.append(f"                  measured:  {_fmt(r.label, r.measured)}  {_mark(r)}")
    comp = fc.measured.get("compiled") or {}
    for b in comp.get("graph_breaks") or []:
        out.append(f"    graph break at line {b.get('line')}: {b.get('reason')}")
    if fc.example:
        out.append(f"    example inputs: {fc.example}")
    for n in fc.notes:
        out.append(f"    note: {n}")
    if fc.error:
        out.append(f"    error ({fc.error.get('kind')}): {fc.error.get('message')}")
        out.extend("      " + line for line in (fc.error.get("traceback") or "").splitlines())
    if not fc.match and fc.rows:
        _lines_view(fc, out)


def _lines_view(fc: FunctionCheck, out: list[str]) -> None:
    """Per source line: the ops that ran (eager) against the ops predicted; differing lines marked."""
    eager = fc.measured.get("eager") or {}
    measured: dict[int | None, list[dict]] = {}
    for op in eager.get("ops") or []:
        measured.setdefault(op.get("line"), []).append(op)
    predicted: dict[int | None, list[Any]] = {}
    for r in (fc.predicted.ops if fc.predicted else []):
        if r.kernels or r.reads or r.writes:
            predicted.setdefault(r.span.line, []).append(r)
    lines = sorted({k for k in measured} | {k for k in predicted}, key=lambda x: (x is None, x or 0))
    if not lines:
        return
    out.append(f"    by line: {'line':>6}  {'ran (eager)':<34} {'predicted':<34}")
    for ln in lines:
        m = [o for o in measured.get(ln, []) if o.get("kind") == "kernel"]
        s = [o for o in measured.get(ln, []) if o.get("kind") == "sync"]
        p = predicted.get(ln, [])
        mk, mx = sum(o.get("kernels", 1) for o in m), sum(o["reads"] + o["writes"] for o in m)
        pk, px = sum(r.kernels for r in p), sum(r.reads + r.writes for r in p)
        ran = ", ".join(o["name"] for o in m) + (f" +{len(s)} sync" if s else "")
        pred = ", ".join(r.op for r in p)
        ran = f"{mk}k/{mx}x {ran}".strip()
        pred = f"{pk}k/{px}x {pred}".strip() if p else "-"
        mark = OK if (mk, mx) == (pk, px) else BAD
        label = "?" if ln is None else str(ln)
        out.append(f"             {label:>6}  {ran:<34} {pred:<34} {mark}")
    comp = fc.measured.get("compiled") or {}
    if comp.get("names"):
        out.append(f"    compiled kernels that ran: {', '.join(comp['names'])}")


def render_text(res: VerifyResult) -> str:
    out: list[str] = []
    dev = f"{res.device} ({res.device_name})" if res.device_name else (res.device or "?")
    mode = ", train mode" if res.mode == "train" else ""
    out.append(f"{res.path}: verify on {dev}, torch {res.torch or '?'}{mode}")
    if res.example:
        out.append(f"  example inputs: {res.example}")
    for n in res.notes:
        out.append(f"  note: {n}")
    for fc in res.functions:
        _table(fc, out, failed=res.error is not None)
    if res.error:
        out.append(f"  error ({res.error.get('kind')}): {res.error.get('message')}")
        tb = res.error.get("traceback")
        if tb:
            out.extend("    " + line for line in tb.splitlines())
    elif not res.functions:
        out.append("  nothing ran: no function of the file was called, so nothing was compared")
    elif res.nothing_ran:
        out.append("  nothing ran: the functions measured ran no tensor op, so nothing was compared")
    verdict = {0: "all figures match", 1: "mismatch", 2: "could not run", 3: "device absent"}[res.exit_code]
    if res.nothing_ran:
        verdict = "nothing ran"
    out.append(f"  => {verdict}")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# JSON


def _measured_json(m: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    e = m.get("eager")
    if e is not None:
        out["eager"] = {k: e.get(k) for k in ("kernels", "reads", "writes", "bytes", "syncs", "names", "ops")}
        for k in ("memcpy", "memset", "library_extra", "kernel_names"):
            if k in e:
                out["eager"][k] = e[k]
    else:
        out["eager"] = None
    c = m.get("compiled")
    if c is not None:
        out["compiled"] = {k: c.get(k) for k in ("kernels", "names", "graphs", "graph_breaks", "syncs", "detail")}
        for k in ("memcpy", "memset", "library_extra"):
            if k in c:
                out["compiled"][k] = c[k]
    else:
        out["compiled"] = None
    return out


def _row_json(r: Row) -> dict[str, Any]:
    def plain(v: Any) -> Any:
        return list(v) if isinstance(v, tuple) else v

    return {"figure": r.label, "predicted": plain(r.predicted), "measured": plain(r.measured), "ok": r.ok,
            "decides": r.decides, "lower_bound": r.lower_bound}


def function_json(fc: FunctionCheck) -> dict[str, Any]:
    predicted = None
    if fc.predicted is not None:
        d = function_dict(fc.predicted)
        predicted = {"eager": d["eager"], "compiled": d["compiled"], "lower_bound_causes": d["lower_bound_causes"],
                     "ops": d["ops"]}
    return {
        "path": fc.path, "qualname": fc.qualname, "line": fc.line, "calls": fc.calls,
        "predicted": predicted, "measured": _measured_json(fc.measured), "match": fc.match,
        "rows": [_row_json(r) for r in fc.rows], "notes": list(fc.notes), "error": fc.error,
        "example": fc.example,
    }


def result_dict(res: VerifyResult) -> dict[str, Any]:
    return {
        "schema": SCHEMA_ID, "path": res.path, "device": res.device, "device_name": res.device_name,
        "torch": res.torch, "mode": res.mode, "example": res.example, "functions": [function_json(f) for f in res.functions],
        "error": res.error, "notes": list(res.notes), "exit_code": res.exit_code, "nothing_ran": res.nothing_ran,
    }


def render_json(res: VerifyResult) -> str:
    return json.dumps(result_dict(res), indent=2, ensure_ascii=False) + "\n"
