"""`--output-format gitlab`: GitLab Code Quality (a JSON array of Code Climate issues).

Each issue: `description`, `check_name` (the rule code), `fingerprint` (unique per issue: GitLab
shows one issue per fingerprint), `severity` (info|minor|major|critical|blocker) and
`location{path, positions{begin{line, column}, end{line, column}}}` with a repository-relative path
and 1-based columns. CI: `artifacts: reports: codequality: gl-code-quality-report.json`. A file
that could not be analyzed is a `critical` issue with check_name `error`.
"""

from __future__ import annotations

import hashlib
import json

from kpredict.lint.model import LintRun
from kpredict.render.findings_common import error_fingerprint, error_line

SEVERITY = {"error": "critical", "warning": "major", "info": "info"}


def render(run: LintRun) -> str:
    issues = []
    for f, d in run.diagnostics():
        s = d.span
        key = d.fingerprint or f"{d.code}:{f.relpath}:{s.line}:{s.col}"
        issues.append({
            "description": f"{d.code} {d.message}",
            "check_name": d.code,
            "fingerprint": hashlib.md5(f"{f.relpath}\0{key}".encode(), usedforsecurity=False).hexdigest(),
            "severity": SEVERITY.get(d.severity, "major"),
            "location": {"path": f.relpath, "positions": {"begin": {"line": s.line, "column": s.col + 1},
                                                          "end": {"line": s.end_line, "column": s.end_col + 1}}},
        })
    for f in run.errors:
        line = error_line(f.error or "") or 1
        issues.append({
            "description": f"error: {f.error}",
            "check_name": "error",
            "fingerprint": hashlib.md5(f"{f.relpath}\0{error_fingerprint(f)}".encode(), usedforsecurity=False).hexdigest(),
            "severity": "critical",
            "location": {"path": f.relpath, "positions": {"begin": {"line": line, "column": 1},
                                                          "end": {"line": line, "column": 1}}},
        })
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
