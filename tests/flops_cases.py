"""The FLOP oracle's store (issue 29): what torch.utils.flop_counter.FlopCounterMode counted for each
fixture with example inputs, kept as data like the CPU oracle's answers (kpredict.verify.recorded).

An entry is keyed by the digest of the files the fixture runs (the fixture and the local modules it
imports), of the measuring code (kpredict/verify/flops.py and the child helpers it calls) and by
torch's version; tests/test_flops_oracle.py reads current entries and measures stale or missing ones
live, and `python scripts/record_flops.py` writes them.
"""

from __future__ import annotations

import ast
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from kpredict.verify import recorded
from oracle_cases import FIXTURE_FILES, MODEL_FILES, MODELS

REPO = Path(__file__).resolve().parent.parent
# the CPU oracle's fixtures with example inputs, and the model fixtures (eval mode); not the training
# steps (fixtures/training/): FlopCounterMode runs under no_grad, and a step's backward FLOPs are not
# predicted yet (issue 30)
FILES: list[Path] = [*(p for p in FIXTURE_FILES if p.parent.name != "training"), *(MODELS / n for n in MODEL_FILES)]
MEASURING = ("verify/flops.py", *recorded.MEASURING)


def store_path(torch: str | None = None) -> Path:
    return recorded.STORE / f"flops-cpu-torch-{torch or recorded.torch_version()}.json"


def measuring_version() -> str:
    """A digest of the measuring code's syntax trees (comments and formatting do not count)."""
    pkg = REPO / "kpredict"
    h = hashlib.sha256()
    for rel in MEASURING:
        h.update(rel.encode())
        h.update(ast.dump(ast.parse((pkg / rel).read_text(encoding="utf-8"))).encode())
    return h.hexdigest()[:16]


def rel(path: Path) -> str:
    return path.resolve().relative_to(REPO).as_posix()


def file_key(path: Path) -> str:
    """What a file's answer depends on: the code it runs and the code that measures it."""
    h = hashlib.sha256(measuring_version().encode())
    for f in recorded.input_files(path, REPO / "fixtures"):
        h.update(f.relative_to(REPO).as_posix().encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def load() -> dict[str, Any]:
    p = store_path()
    return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else {"files": {}}


def current(store: dict[str, Any], path: Path) -> dict[str, Any] | None:
    """The stored answer for `path` while its key holds, else None."""
    e = store.get("files", {}).get(rel(path))
    return e["answer"] if e is not None and e.get("key") == file_key(path) else None


def measure(paths: list[Path]) -> dict[str, Any]:
    """Measure live, in a child process (it runs the fixtures' code): relative path -> answer."""
    if not paths:
        return {}
    out = subprocess.run([sys.executable, "-m", "kpredict.verify.flops", *(rel(p) for p in paths)],
                         cwd=REPO, capture_output=True, text=True, timeout=1200, check=True)
    return json.loads(out.stdout)


def answers(update: bool = False) -> dict[str, Any]:
    """Every file's answer: current entries read back, the rest measured (and written with `update`)."""
    store = load()
    got = {rel(p): a for p in FILES if (a := current(store, p)) is not None}
    stale = [p for p in FILES if rel(p) not in got]
    fresh = measure(stale)
    got.update(fresh)
    if update and fresh:
        files = {k: v for k, v in store.get("files", {}).items() if k in {rel(p) for p in FILES}}
        for p in stale:
            files[rel(p)] = {"key": file_key(p), "answer": fresh[rel(p)]}
        doc = {"torch": recorded.torch_version(), "measuring": measuring_version(),
               "files": dict(sorted(files.items()))}
        store_path().write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return got
