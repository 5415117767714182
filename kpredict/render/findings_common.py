"""What the lint renderers share: the figures of a finding as text, and column conversions.

Diagnostics carry 0-based code-point columns (ir.Span); each renderer converts to its format's unit.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from typing import Any

from kpredict.lint.model import Diagnostic, FileResult, LintRun
from kpredict.render.text_report import human_bytes


def figures_text(figures: dict[str, Any] | None) -> str:
    """`eager: 8 kernels, 18 transfers, 294.9 KB; fused: 1 kernel, 2 transfers, 32.8 KB`."""
    if not figures:
        return ""
    parts = []
    for key, value in figures.items():
        label = key.replace("_", " ")
        if isinstance(value, dict) and "kernels" in value:
            bits = [f"{value['kernels']} kernel{'' if value['kernels'] == 1 else 's'}"]
            if "transfers" in value:
                bits.append(f"{value['transfers']} transfer{'' if value['transfers'] == 1 else 's'}")
            if value.get("bytes") is not None:
                bits.append(human_bytes(value["bytes"]))
            if "graphs" in value:
                bits.append(f"{value['graphs']} graph{'' if value['graphs'] == 1 else 's'}")
            parts.append(f"{label}: {', '.join(bits)}")
        elif isinstance(value, list):
            parts.append(f"{label}: {' -> '.join(str(v) for v in value)}")
        elif value is not None and "bytes" in key:
            parts.append(f"{label}: {human_bytes(value)}")
        elif value is not None:
            parts.append(f"{label}: {value}")
    return "; ".join(parts)


def utf8_column(line_text: str, cp_col: int) -> int:
    """0-based code-point column -> 0-based UTF-8 byte column."""
    return len(line_text[:cp_col].encode("utf-8"))


def line_of(lines: list[str], n: int) -> str:
    return lines[n - 1] if 0 < n <= len(lines) else ""


# Files that could not be analyzed (a missing path, a syntax error, a crash): every format shows
# them as an error entry, never drops them. Errors name their line when they have one ("line 3: ...").
ERROR_LINE = re.compile(r"^line (\d+):")


def error_line(error: str) -> int | None:
    """The 1-based line an analysis error names, or None ("no such file or directory")."""
    m = ERROR_LINE.match(error)
    return int(m.group(1)) if m else None


def error_fingerprint(f: FileResult) -> str:
    """A stable id for a file's error entry: the file and the error, as findings' ids are."""
    return hashlib.sha256("\0".join(("error", f.relpath, f.error or "")).encode("utf-8")).hexdigest()[:16] + ":1"


def entries(run: LintRun) -> Iterator[tuple[FileResult, Diagnostic | None]]:
    """Files in order: (file, diagnostic) per finding, and (file, None) for a file that could not be analyzed."""
    for f in run.files:
        if f.error:
            yield f, None
        for d in f.diagnostics:
            yield f, d
