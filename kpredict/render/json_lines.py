"""`--output-format json-lines`: the objects of the json format, one per line."""

from __future__ import annotations

import json

from kpredict.lint.model import LintRun
from kpredict.render.json_findings import finding_dict


def render(run: LintRun) -> str:
    return "".join(json.dumps(finding_dict(f, d), ensure_ascii=False) + "\n" for f, d in run.diagnostics())
