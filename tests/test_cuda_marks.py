"""CUDA figures that the CPU oracle cannot check, held against their recorded source.

A fixture line `# kpredict: cuda-only compiled=<n> source=<where>` records what Inductor's own CUDA
code generator produced for that pattern (docs/notes/inductor-rules.md, S-CUDA rows: Inductor 2.13
lowered on fake CUDA tensors) until a GPU run replaces it with an observation in fixtures/observed/.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kpredict.api import analyze_file
from kpredict.settings import Settings

REPO = Path(__file__).resolve().parent.parent
MARK = re.compile(r"#\s*kpredict:\s*cuda-only\s+compiled=(\d+)\s+source=(.+)")


def _marks() -> list[tuple[Path, str, int, str]]:
    out = []
    for path in sorted((REPO / "fixtures").rglob("*.py")):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            m = MARK.search(line)
            if not m:
                continue
            j = i + 1
            while j < len(lines) and not lines[j].lstrip().startswith("def "):
                j += 1
            name = lines[j].split("def ", 1)[1].split("(", 1)[0]
            out.append((path, name, int(m.group(1)), m.group(2).strip()))
    return out


MARKS = _marks()


def test_marks_exist() -> None:
    assert MARKS, "fixtures lost their cuda-only marks"


@pytest.mark.parametrize("path,qual,expected,source", MARKS, ids=[f"{p.name}::{q}" for p, q, _, _ in MARKS])
def test_cuda_compiled_kernels_match_recorded_source(path: Path, qual: str, expected: int, source: str) -> None:
    rep = analyze_file(path, Settings(target="cuda"), only=qual)
    assert rep.error is None, rep.error
    fn = rep.functions[0]
    assert fn.compiled.kernels == expected, f"{qual}: predicted {fn.compiled.kernel_names}, source: {source}"
