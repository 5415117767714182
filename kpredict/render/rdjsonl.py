"""`--output-format rdjsonl`: reviewdog's Diagnostic objects, one JSON per line (`reviewdog -f=rdjsonl`).

From reviewdog's proto/rdf/reviewdog.proto: `message`, `location{path, range{start, end}}` with
1-based lines and 1-based columns counted in UTF-8 bytes, `end` exclusive; `severity`
ERROR|WARNING|INFO; `source{name}`; `code{value}`.
"""

from __future__ import annotations

import json

from kpredict.lint.model import LintRun
from kpredict.render.findings_common import line_of, utf8_column

SEVERITY = {"error": "ERROR", "warning": "WARNING", "info": "INFO"}


def render(run: LintRun) -> str:
    out = []
    for f, d in run.diagnostics():
        s = d.span
        start = utf8_column(line_of(f.lines, s.line), s.col) + 1
        end = utf8_column(line_of(f.lines, s.end_line), s.end_col) + 1
        obj = {
            "message": d.message,
            "location": {"path": f.relpath, "range": {"start": {"line": s.line, "column": start},
                                                       "end": {"line": s.end_line, "column": end}}},
            "severity": SEVERITY.get(d.severity, "WARNING"),
            "source": {"name": "kpredict"},
            "code": {"value": d.code},
        }
        out.append(json.dumps(obj, ensure_ascii=False))
    return "".join(line + "\n" for line in out)
