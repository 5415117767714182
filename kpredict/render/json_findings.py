"""`--output-format json`: a JSON array of findings (ruff's field names where they exist).

Each object: code, name, severity, message, filename (as given), path (relative to the repository
root), qualname, location / end_location ({row, column}, 1-based, columns in code points), noqa_row,
figures (the numbers the message quotes), help, fingerprint.
"""

from __future__ import annotations

import json
from typing import Any

from kpredict.lint.model import Diagnostic, FileResult, LintRun


def finding_dict(f: FileResult, d: Diagnostic) -> dict[str, Any]:
    return {
        "code": d.code, "name": d.name, "severity": d.severity, "message": d.message,
        "filename": f.path, "path": f.relpath, "qualname": d.qualname,
        "location": {"row": d.span.line, "column": d.span.col + 1},
        "end_location": {"row": d.span.end_line, "column": d.span.end_col + 1},
        "noqa_row": d.span.line, "figures": d.figures, "help": d.help, "fingerprint": d.fingerprint,
    }


def render(run: LintRun) -> str:
    return json.dumps([finding_dict(f, d) for f, d in run.diagnostics()], indent=2, ensure_ascii=False) + "\n"
