"""The JSON report (schema kpredict/report/v1): a contract other tools read; see kpredict/schema/report.schema.json.

`ops=False` leaves out what is listed per op or per kernel: each function's op rows (`"ops"`), its
compiled kernel names and the kernels' costs. `kpredict --output-format json` writes them only with
`--detail` (or `-v`), since on a whole tree they are most of the bytes (fixtures/: 903 KB with the op
rows, 267 KB without; 300 of transformers' modeling files: 35.2 MB with the kernel names, of which they
were 10.6 MB before indentation, 20.4 MB without).

`write` streams the report file by file (`render` is its text at once): a whole tree's JSON text is
never held, and each file's report can be dropped once written. The layout (`dumps`) puts each flat
object on one line."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

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
            "lower_bound": fn.compiled_lower_bound,
            **_cost(fn.compiled_cost),
        },
        "speedup": None if fn.speedup is None else round(fn.speedup, 3),
        "device": fn.device,
        "lower_bound_causes": [{"line": u.line, "what": u.name} for u in fn.lower_bound_causes],
    }
    if fn.compiled_causes:
        d["compiled"]["lower_bound_causes"] = [{"line": u.line, "what": u.name} for u in fn.compiled_causes]
    if fn.phases:  # a training step: eager figures per phase (compiled: not split yet)
        d["phases"] = {name: {"eager": _figures(f, fn.lower_bound)} for name, f in fn.phases.items()}
        d["activation_bytes"] = fn.activation_bytes
    if ops:
        d["compiled"]["kernel_names"] = list(c.kernel_names)
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


def _flat(v: object) -> bool:
    """A scalar, or a container of scalars and empty containers: written on one line."""
    if not isinstance(v, dict | list):
        return True
    return all(not isinstance(c, dict | list) or not c for c in (v.values() if isinstance(v, dict) else v))


def dumps(v: object, indent: int = 0) -> str:
    """JSON text, indented by 2 as json.dumps(indent=2) but with each flat container on one line (a
    function's eager figures, its assumptions, each op row, each finding): the same document in 16.0
    MB instead of 20.4 MB on 300 of transformers' modeling files, and a line per row to grep."""
    if _flat(v):
        return json.dumps(v, ensure_ascii=False)
    inner = " " * (indent + 2)
    if isinstance(v, dict):
        body = ",\n".join(f"{inner}{json.dumps(k, ensure_ascii=False)}: {dumps(c, indent + 2)}" for k, c in v.items())
        return "{\n" + body + "\n" + " " * indent + "}"
    assert isinstance(v, list)
    return "[\n" + ",\n".join(inner + dumps(c, indent + 2) for c in v) + "\n" + " " * indent + "]"


def render(r: Report, ops: bool = True) -> str:
    out: list[str] = []
    write(out.append, r.target, r.files, ops)
    return "".join(out)


def write(emit: Callable[[str], None], target: str, files: Iterable[FileReport], ops: bool = True) -> None:
    """Emit the report of `files` piece by piece as each comes (the text of `dumps(report_dict(...))`):
    the caller need not hold a whole tree's reports, nor its JSON text."""
    head = {"schema": SCHEMA_ID, "target": target}
    n = 0
    for f in files:
        if n == 0:
            emit("{\n" + "".join(f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},\n" for k, v in head.items())
                 + '  "files": [\n')
        else:
            emit(",\n")
        emit("    " + dumps(file_dict(f, ops), 4))
        n += 1
    emit("\n  ]\n}\n" if n else dumps({**head, "files": []}) + "\n")
