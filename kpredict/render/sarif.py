"""`--output-format sarif`: SARIF 2.1.0, as GitHub code scanning accepts it.

- One run; `tool.driver` with `name`, `semanticVersion` and every enabled rule (`id`, `name`,
  `shortDescription`, `fullDescription`, `help` with text and markdown, `defaultConfiguration.level`,
  `properties` tags/precision/problem.severity).
- Results: `ruleId`/`ruleIndex`, `level`, `message.text`, one `physicalLocation` whose
  `artifactLocation.uri` is relative to the repository root with `uriBaseId` %SRCROOT% (resolved by
  `run.originalUriBaseIds`), a 1-based `region` (`run.columnKind` unicodeCodePoints, endColumn one
  past the last character), and `partialFingerprints.primaryLocationLineHash` from kpredict's
  line-independent fingerprint, so that alerts survive code moving.
- Files that could not be analyzed become error notifications of the invocation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from kpredict import __version__
from kpredict.lint.model import LintRun, Rule, rule_markdown

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}
PROBLEM = {"error": "error", "warning": "warning", "info": "recommendation"}
BASE = "%SRCROOT%"


def rule_descriptor(rule: type[Rule], default: str = "") -> dict[str, Any]:
    doc = rule.doc_sections()
    md = rule_markdown(rule, None, default)  # without the examples' findings: the renderer runs no analysis
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": " ".join(doc.get("What it does", rule.summary).split())},
        "help": {"text": " ".join(doc.get("Why it costs", "").split()) + " " + rule.fix, "markdown": md},
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {"tags": ["performance"], "precision": "medium",
                       "problem.severity": PROBLEM[rule.severity]},
    }


def root_uri(root: str) -> str:
    uri = Path(root).resolve().as_uri() if root else "file:///"
    return uri if uri.endswith("/") else uri + "/"


def render(run: LintRun) -> str:
    rules = sorted(run.rules, key=lambda r: r.code)
    index = {r.code: i for i, r in enumerate(rules)}
    results = []
    for f, d in run.diagnostics():
        s = d.span
        result: dict[str, Any] = {
            "ruleId": d.code,
            "level": LEVEL.get(d.severity, "warning"),
            "message": {"text": d.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": quote(f.relpath), "uriBaseId": BASE},
                "region": {"startLine": s.line, "startColumn": s.col + 1,
                           "endLine": s.end_line, "endColumn": s.end_col + 1},
            }}],
            "partialFingerprints": {"primaryLocationLineHash": d.fingerprint},
            "properties": {"qualname": d.qualname},
        }
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        if d.figures:
            result["properties"]["figures"] = d.figures
        if run.fixable(d):  # SARIF 2.1.0 section 3.55: a fix is artifact changes, each a set of replacements
            assert d.fix is not None
            result["fixes"] = [{"description": {"text": d.fix.message}, "artifactChanges": [{
                "artifactLocation": {"uri": quote(f.relpath), "uriBaseId": BASE},
                "replacements": [{"deletedRegion": {"startLine": e.span.line, "startColumn": e.span.col + 1,
                                                    "endLine": e.span.end_line, "endColumn": e.span.end_col + 1},
                                  "insertedContent": {"text": e.content}} for e in d.fix.edits]}]}]
        results.append(result)
    notes = [{"level": "error", "message": {"text": f"{f.relpath}: {f.error}"},
              "locations": [{"physicalLocation": {"artifactLocation": {"uri": quote(f.relpath), "uriBaseId": BASE}}}]}
             for f in run.errors]
    doc = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "kpredict", "semanticVersion": __version__,
                                "rules": [rule_descriptor(r, run.defaults.get(r.code, "")) for r in rules]}},
            "invocations": [{"executionSuccessful": not notes, "toolExecutionNotifications": notes}],
            "originalUriBaseIds": {BASE: {"uri": root_uri(run.root)}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
