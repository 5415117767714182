"""`--output-format json-lines`: the objects of the json format (files that could not be analyzed
included), one per line."""

from __future__ import annotations

import json

from kpredict.lint.model import LintRun
from kpredict.render.findings_common import entries
from kpredict.render.json_findings import entry_dict


def render(run: LintRun) -> str:
    return "".join(json.dumps(entry_dict(f, d), ensure_ascii=False) + "\n" for f, d in entries(run))
