"""The other files one analysis reads, for the per-file cache (kpredict/cache.py).

Analyzing a file may read others: imported modules of the same tree (frontend/imports.py,
frontend/relevance.py) and the nearest pyproject.toml (verify/annotations.py). Each of those places
calls `note(path)`, also when it serves the file from memory (a parse or a table read earlier in the
process), and the file's cache entry stays valid only while every noted file is as it was.

Until stop 15 an audit hook (PEP 578) on `open` collected these paths without the readers' help. But
a Python-level audit hook runs on every audited event of the process for the rest of its life, and
`id()` is one (builtins.id): the analysis calls it millions of times, and the hook alone took 14% of
a cold run (109-file transformers sample through the cache: 36.2 s against 31.2 s without it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

# the paths being collected while recording() runs; a module global rather than a context variable
# because a deeply nested file is analyzed again in a thread of its own (deep.run_deep)
_recording: set[str] | None = None


def note(path: str | os.PathLike[str]) -> None:
    """The analysis running now read `path` (or found it absent, if it does not exist)."""
    if _recording is not None:
        _recording.add(os.fsdecode(path))


@contextmanager
def recording() -> Iterator[set[str]]:
    """Collect the paths noted while the block runs (nested blocks also report to the outer one)."""
    global _recording
    outer = _recording
    paths: set[str] = set()
    _recording = paths
    try:
        yield paths
    finally:
        _recording = outer
        if outer is not None:
            outer |= paths
