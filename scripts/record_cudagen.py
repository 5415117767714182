"""Record what torch.compile launches on CUDA for the fixtures' functions, found without a GPU by cudagen
(../shared/tools/cudagen: Inductor's own Triton code generation on fake H100 tensors).

    pip install --no-deps --target ~/.cache/cudagen-pylib triton==3.9.0     # once (cudagen's README)
    CUDAGEN_PYLIB=~/.cache/cudagen-pylib python scripts/record_cudagen.py fixtures/ops/scatter_sort.py ...
    CUDAGEN_PYLIB=~/.cache/cudagen-pylib python scripts/record_cudagen.py --all     # every fixtures/ops file

Each top-level function with a `# kpredict: example ...` comment is compiled with its example inputs (built
as `kpredict verify` builds them, on the CPU; cudagen moves the graph to fake CUDA tensors). Its launches
(generated Triton kernels, extern and fallback calls; views are no launch) are stored in
fixtures/observed/cudagen-torch-<version>.json under `file::function`, with a digest of the file's text:
tests/test_cudagen_fixtures.py holds kpredict's --target cuda compiled counts to them and asks for a new
recording when a file changes. Runs the fixtures (a child process per file): never part of kpredict.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CUDAGEN = ROOT.parent / "shared" / "tools" / "cudagen"
OUT_DIR = ROOT / "fixtures" / "observed"

CHILD = r"""
import importlib, json, os, re, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import torch, fakecuda, kp, cudagen_child
from kpredict.verify.examples import evaluate
path = sys.argv[3]
sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
mod = importlib.import_module(os.path.basename(path)[:-3])
out = {}
for m in re.finditer(r"^# kpredict: example(.*)\ndef (\w+)\(", open(path).read(), re.M):
    name = m.group(2)
    torch._dynamo.reset()
    try:
        kwargs = evaluate(m.group(1).strip(), vars(mod))
        fn = getattr(mod, name)
        with torch.no_grad():
            res = fakecuda.cuda_compile(lambda: fn(**kwargs))
        launches = cudagen_child.launches(res, kp)
        out[name] = {"kernels": len(launches), "graphs": res.graphs, "names": [ln["name"] for ln in launches],
                     "errors": [e.strip().splitlines()[-1][:200] for e in res.errors]}
    except Exception as e:  # a function cudagen cannot compile: said in the store
        out[name] = {"error": (str(e).strip().splitlines() or [type(e).__name__])[-1][:200]}
print(json.dumps(out))
"""


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def torch_version() -> str:
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                         text=True)
    return out.stdout.strip() or "unknown"


def store_path(version: str) -> Path:
    return OUT_DIR / f"cudagen-torch-{version}.json"


def record(path: Path, timeout: int) -> dict:
    """cudagen's launches for each example function of one fixture file (a child process)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in [str(ROOT), os.environ.get("CUDAGEN_PYLIB", "")]
                                                       if p)}
    res = subprocess.run([sys.executable, "-c", CHILD, str(CUDAGEN), str(ROOT / "scripts"), str(path)],
                         capture_output=True, text=True, env=env, timeout=timeout)
    try:
        return json.loads(res.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        raise SystemExit(f"{path}: cudagen child failed: {(res.stderr or '').strip().splitlines()[-1:]}") from None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--all", action="store_true", help="every fixtures/ops/*.py file")
    ap.add_argument("--timeout", type=int, default=900)
    a = ap.parse_args()
    files = sorted((ROOT / "fixtures" / "ops").glob("*.py")) if a.all else a.files
    if not os.environ.get("CUDAGEN_PYLIB"):
        raise SystemExit("set CUDAGEN_PYLIB to the folder holding triton (../shared/tools/cudagen/README.md)")
    version = torch_version()
    out = store_path(version)
    store = json.loads(out.read_text()) if out.is_file() else {"torch": version, "device": "fake H100 (cudagen)",
                                                              "files": {}}
    for f in files:
        rel = f.resolve().relative_to(ROOT).as_posix()
        got = record(f, a.timeout)
        store["files"][rel] = {"digest": digest(f), "functions": got}
        n = sum(1 for v in got.values() if "kernels" in v)
        print(f"{rel}: {n} of {len(got)} functions recorded", file=sys.stderr)
    out.write_text(json.dumps(store, indent=1, sort_keys=True) + "\n")
    print(f"written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
