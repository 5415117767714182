"""The JSON report (schema kpredict/report/v1): a contract other tools read; see kpredict/schema/report.schema.json.

`ops=False` leaves out each function's op rows (`"ops"`): `kpredict --output-format json` writes them
only with `--detail` (or `-v`), since on a whole tree they are most of the bytes (fixtures/: 903 KB
with them, 267 KB without)."""

from __future__ import annotations

import json

from kpredict.ir import FileReport, Figures, FunctionReport, ModeCost, Report

SCHEMA_ID = "kpredict/report/v1"


def _figures(f: Figures, lower_bound: bool = False) -> dict:
    return {"kernels": f.kernels, "reads": f.reads, "writes": f.writes, "bytes": f.bytes, "syncs": f.syncs,
            "lower_bound": lower_bound}


def _us(t: float | None) -> float | None:
    return None if t is None else round(t, 3)


def _cost(m: ModeCost) -> dict:
    """The time model's totals for a mode (kpredict.cost)."""
    return {"flops": m.flops, "flops_elementwise": m.flops_elementwise, "time_us": _us(m.time_us)}


def kernel_costs(m: ModeCost) -> list[dict]:
    """Per kernel: FLOPs, bytes, modelled time and what bounds it (written with the op rows, --detail)."""
    return [{"name": k.name, "flops": k.flops, "flops_elementwise": k.flops_elementwise, "bytes": k.bytes,
             "time_us": _us(k.time_us), "bound": k.bound, "launches": k.launches} for k in m.kernels]


def function_dict(fn: FunctionReport, ops: bool = True) -> dict:
    c = fn.compiled
    d: dict = {
        "qualname": fn.qualname,
        "line": fn.line,
        "eager": {**_figures(fn.eager, fn.lower_bound), **_cost(fn.eager_cost)},
        "compiled": {
            "kernels": c.kernels, "reads": c.reads, "writes": c.writes, "bytes": c.bytes,
            "graphs": c.graphs,
            "graph_breaks": [{"line": b.line, "reason": b.reason} for b in c.graph_breaks],
            "kernel_names": list(c.kernel_names),
            "lower_bound": fn.lower_bound,
            **_cost(fn.compiled_cost),
        },
        "speedup": None if fn.speedup is None else round(fn.speedup, 3),
        "device": fn.device,
        "lower_bound_causes": [{"line": u.line, "what": u.name} for u in fn.lower_bound_causes],
    }
    if ops:
        d["eager"]["kernel_costs"] = kernel_costs(fn.eager_cost)
        d["compiled"]["kernel_costs"] = kernel_costs(fn.compiled_cost)
        d["ops"] = [
            {"line": r.span.line, "col": r.span.col, "end_line": r.span.end_line, "end_col": r.span.end_col,
             "op": r.op, "kind": r.kind, "kernels": r.kernels, "reads": r.reads, "writes": r.writes, "group": r.group}
            for r in fn.ops
        ]
    d["unknown"] = [{"line": u.line, "name": u.name} for u in fn.unknown]
    d["assumptions"] = list(fn.assumptions)
    return d


def file_dict(f: FileReport, ops: bool = True) -> dict:
    return {
        "path": f.path,
        "error": f.error,
        "skipped": f.skipped,
        "functions": [function_dict(fn, ops) for fn in f.functions],
        "findings": [
            {"code": x.code, "severity": x.severity, "qualname": x.qualname, "line": x.span.line,
             "col": x.span.col, "end_line": x.span.end_line, "end_col": x.span.end_col, "message": x.message}
            for x in f.findings
        ],
    }


def report_dict(r: Report, ops: bool = True) -> dict:
    return {"schema": SCHEMA_ID, "target": r.target, "files": [file_dict(f, ops) for f in r.files]}


def render(r: Report, ops: bool = True) -> str:
    return json.dumps(report_dict(r, ops), indent=2, ensure_ascii=False) + "\n"
