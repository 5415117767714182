"""`--output-format json`: a JSON array of findings (ruff's field names where they exist).

Each object: code, name, severity, message, filename (as given), path (relative to the repository
root), qualname, location / end_location ({row, column}, 1-based, columns in code points), noqa_row,
figures (the numbers the message quotes), help, fingerprint, and fix (ruff's shape: null, or
{applicability: "safe" | "unsafe", message, edits: [{content, location, end_location}]}).

A file that could not be analyzed (a missing path, a syntax error) is an object of the same shape
with `"code": null` (as ruff writes a syntax error), `"name": "error"`, `"severity": "error"`, the
error as its message, its line when the error names one (else 1) and `"qualname": null`.
"""

from __future__ import annotations

import json
from typing import Any

from kpredict.lint.model import Diagnostic, FileResult, Fix, LintRun
from kpredict.render.findings_common import entries, error_fingerprint, error_line


def finding_dict(f: FileResult, d: Diagnostic) -> dict[str, Any]:
    return {
        "code": d.code, "name": d.name, "severity": d.severity, "message": d.message,
        "filename": f.path, "path": f.relpath, "qualname": d.qualname,
        "location": {"row": d.span.line, "column": d.span.col + 1},
        "end_location": {"row": d.span.end_line, "column": d.span.end_col + 1},
        "noqa_row": d.span.line, "figures": d.figures, "help": d.help, "fingerprint": d.fingerprint,
        "fix": fix_dict(d.fix),
    }


def fix_dict(fix: Fix | None) -> dict[str, Any] | None:
    if fix is None:
        return None
    return {"applicability": fix.applicability, "message": fix.message,
            "edits": [{"content": e.content, "location": {"row": e.span.line, "column": e.span.col + 1},
                       "end_location": {"row": e.span.end_line, "column": e.span.end_col + 1}} for e in fix.edits]}


def error_dict(f: FileResult) -> dict[str, Any]:
    row = error_line(f.error or "") or 1
    return {
        "code": None, "name": "error", "severity": "error", "message": f.error,
        "filename": f.path, "path": f.relpath, "qualname": None,
        "location": {"row": row, "column": 1}, "end_location": {"row": row, "column": 1},
        "noqa_row": None, "figures": None, "help": "", "fingerprint": error_fingerprint(f), "fix": None,
    }


def entry_dict(f: FileResult, d: Diagnostic | None) -> dict[str, Any]:
    return error_dict(f) if d is None else finding_dict(f, d)


def render(run: LintRun) -> str:
    return json.dumps([entry_dict(f, d) for f, d in entries(run)], indent=2, ensure_ascii=False) + "\n"
