"""The CPU oracle's answers kept as data, keyed by everything a measurement depends on.

Measuring a fixture means importing torch, running its functions under a dispatch mode and compiling
them with Inductor: about 15 s a file, 93% of the test suite. What the child answers depends only on
the request (file, qualname, mode, inputs given), the files it runs (the fixture and the local modules
it imports), the code that measures (MEASURING below) and torch's version. So an answer is
stored with those as its key, one JSON file an entry under `fixtures/oracle/<device>-torch-<version>/`,
and the tests read it back while the key still holds; an entry whose key moved is measured again.

    KPREDICT_ORACLE=recorded  (default) read current entries, measure the rest live, write nothing
    KPREDICT_ORACLE=update    as recorded, and write what was measured live (stale or missing entries)
    KPREDICT_ORACLE=live      always measure, write nothing (to check the store against torch)
    KPREDICT_ORACLE=record    always measure, and write every entry

`scripts/record_oracle.py` runs the oracle tests in `update` (or `record`) mode; a test checks that
every entry is current and that every oracle fixture has one, so CI fails on a stale store.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from kpredict.verify.runner import run_child

REPO = Path(__file__).resolve().parent.parent.parent
STORE = REPO / "fixtures" / "oracle"
MODES = ("recorded", "update", "live", "record")
_CHILD = Path(__file__).resolve().parent / "child.py"
# The modules whose code decides what the child measures (how it runs, counts, and which inputs it
# builds from which text): their syntax trees are the oracle's version. The child imports the others
# too, but they decide nothing measured (types, file reading, settings); tests/test_oracle_store.py
# fails when the child comes to import a module that is in neither list, so each is a decision.
MEASURING = ("verify/child.py", "verify/oracle.py", "verify/examples.py", "verify/annotations.py", "examples.py")
NOT_MEASURING = {
    "__init__.py": "the package's docstring",
    "verify/__init__.py": "the package's docstring",
    "ir.py": "the report's dataclasses and dtype sizes, which the parser names but the child takes from torch",
    "reads.py": "reading files and recording which were read",
    "settings.py": "the static side's settings",
    "project.py": "finding pyproject.toml (the fixtures give their inputs in comments, which annotations.py reads)",
    "devices.py": "the time model's device presets, which project.py checks a `gpu =` setting against",
    "opfacts.py": "reading rules/ (devices.py finds the presets and the targets through it); the child counts "
                  "what torch runs, not what the op table says",
}

Child = Callable[[dict[str, Any], float], tuple[dict[str, Any], str]]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _local_imports(path: Path, root: Path) -> list[Path]:
    """Files under `root` that `path` imports by absolute or relative name, found from the syntax only."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return []
    names: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend((0, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names.append((node.level, base))
            names.extend((node.level, f"{base}.{a.name}" if base else a.name) for a in node.names)
    found: list[Path] = []
    for level, name in names:
        start = path.parent
        for _ in range(max(level - 1, 0)):
            start = start.parent
        parts = [p for p in name.split(".") if p]
        cands = [start.joinpath(*parts[:i], "__init__.py") for i in range(1, len(parts) + 1)]
        cands.append(start.joinpath(*parts).with_suffix(".py") if parts else start / "__init__.py")
        for cand in cands:
            if cand.is_file() and root in cand.resolve().parents:
                found.append(cand.resolve())
    return found


def input_files(path: Path, root: Path | None = None) -> list[Path]:
    """`path` and the local modules it imports, transitively (the code the child runs)."""
    path = path.resolve()
    root = (root or path.parent).resolve()
    seen: dict[Path, None] = {path: None}
    todo = [path]
    while todo:
        for dep in _local_imports(todo.pop(), root):
            if dep not in seen:
                seen[dep] = None
                todo.append(dep)
    return sorted(seen)


def _kpredict_closure() -> list[Path]:
    """The child module and every kpredict module it imports, transitively."""
    pkg = _CHILD.parent.parent
    seen: dict[Path, None] = {_CHILD: None}
    todo = [_CHILD]
    while todo:
        tree = ast.parse(todo.pop().read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                    [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
                    if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            for mod in mods:
                if not mod.startswith("kpredict."):
                    continue
                rel = Path(*mod.split(".")[1:])
                for cand in (pkg / rel.with_suffix(".py"), pkg / rel / "__init__.py"):
                    if cand.is_file() and cand not in seen:
                        seen[cand] = None
                        todo.append(cand)
    return sorted(seen)


def child_modules() -> list[str]:
    """The child's kpredict modules, relative to the package (what MEASURING and NOT_MEASURING split)."""
    pkg = _CHILD.parent.parent
    return [p.relative_to(pkg).as_posix() for p in _kpredict_closure()]


@lru_cache(maxsize=1)
def oracle_version() -> str:
    """A digest of the measuring code's syntax trees (comments and formatting do not count)."""
    pkg = _CHILD.parent.parent
    h = hashlib.sha256()
    for rel in MEASURING:
        h.update(rel.encode())
        h.update(ast.dump(ast.parse((pkg / rel).read_text(encoding="utf-8"))).encode())
    return h.hexdigest()[:16]


def torch_version() -> str:
    """The installed torch's version, read from its metadata (torch is not imported)."""
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "none"


def _rel(path: Path) -> str | None:
    try:
        return path.resolve().relative_to(REPO).as_posix()
    except ValueError:
        return None


def entry_id(request: dict[str, Any]) -> str:
    """A readable, stable name for a request. A file outside the repository (a test's temporary
    copy) is named by its base name and the content of what it runs, so the same text in another
    folder is the same entry, and an edit is another."""
    path = Path(request["path"])
    rel = _rel(path)
    if rel is None:
        content = json.dumps(_inputs(request), sort_keys=True).encode()
        rel = f"tmp/{path.stem}-{_digest(content)}{path.suffix}"
    opts = [f"{k}={request[k]}" for k in ("qualname", "mode", "example", "init", "compiled", "grad", "device")
            if request.get(k) is not None]
    return f"{rel}::" + " ".join(opts)


def _slug(ident: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", ident).strip("_")[:120] + "-" + _digest(ident.encode())[:8]


def _inputs(request: dict[str, Any]) -> dict[str, str]:
    path = Path(request["path"]).resolve()
    root = REPO / "fixtures" if _rel(path) else path.parent
    out = {}
    for f in input_files(path, root):
        out[_rel(f) or f.name] = _digest(f.read_bytes())
    return out


@dataclass
class Store:
    """The entries for one device and torch version."""

    folder: Path

    @classmethod
    def for_device(cls, device: str = "cpu", torch: str | None = None) -> Store:
        return cls(STORE / f"{device}-torch-{torch or torch_version()}")

    def file_of(self, ident: str) -> Path:
        return self.folder / f"{_slug(ident)}.json"

    def get(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The entry for the request, whether current or not (None: never recorded)."""
        f = self.file_of(entry_id(request))
        try:
            return json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def current(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The recorded answer while its key holds, else None."""
        entry = self.get(request)
        if entry is None or why_stale(entry) is not None:
            return None
        return entry["answer"]

    def put(self, request: dict[str, Any], answer: dict[str, Any]) -> Path:
        ident = entry_id(request)
        req = {k: v for k, v in request.items() if k not in ("progress", "path")}
        answer = dict(answer)
        answer["path"] = _rel(Path(request["path"])) or Path(request["path"]).name
        entry = {"id": ident, "request": req, "inputs": _inputs(request), "oracle": oracle_version(),
                 "torch": torch_version(), "answer": answer}
        self.folder.mkdir(parents=True, exist_ok=True)
        f = self.file_of(ident)
        tmp = f.with_suffix(".tmp")
        tmp.write_text(json.dumps(entry, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, f)
        return f

    def entries(self) -> list[dict[str, Any]]:
        return [json.loads(f.read_text(encoding="utf-8")) for f in sorted(self.folder.glob("*.json"))]


def why_stale(entry: dict[str, Any]) -> str | None:
    """None while the entry's key holds; else what moved."""
    if entry.get("oracle") != oracle_version():
        return f"the measuring code changed (oracle {entry.get('oracle')} -> {oracle_version()})"
    if entry.get("torch") != torch_version():
        return f"torch {entry.get('torch')} recorded, {torch_version()} installed"
    for rel, digest in (entry.get("inputs") or {}).items():
        f = REPO / rel
        if "/" not in rel and not f.is_file():
            continue  # a temporary file's base name: its content is in the entry's id
        if not f.is_file():
            return f"{rel} no longer exists"
        if _digest(f.read_bytes()) != digest:
            return f"{rel} changed"
    path = entry["id"].split("::")[0]
    if not path.startswith("tmp/"):
        now = {rel: d for rel, d in _inputs({"path": str(REPO / path)}).items()}
        if set(now) != set(entry.get("inputs") or {}):
            return f"{path} imports other local files now"
    return None


def mode() -> str:
    value = os.environ.get("KPREDICT_ORACLE", "recorded")
    if value not in MODES:
        raise ValueError(f"KPREDICT_ORACLE={value!r}: expected one of {', '.join(MODES)}")
    return value


def child(store: Store | None = None, live: Child | None = None) -> Child:
    """A drop-in for `runner.run_child` that reads and writes the store as KPREDICT_ORACLE says.
    Only cpu requests are recorded: a GPU's answers are observations of their own (fixtures/observed)."""
    measure = live or run_child

    def run(request: dict[str, Any], timeout: float) -> tuple[dict[str, Any], str]:
        how = mode()
        if request.get("device") != "cpu" or request.get("qualname") is None:
            return measure(request, timeout)
        st = store or Store.for_device("cpu")
        if how in ("recorded", "update"):
            answer = st.current(request)
            if answer is not None:
                return dict(answer, path=request["path"]), ""
        answer, err = measure(request, timeout)
        if how in ("update", "record") and not answer.get("error"):
            st.put(request, answer)
        elif how in ("update", "record"):
            print(f"kpredict oracle: not recorded ({entry_id(request)}): {answer.get('error')}", file=sys.stderr)
        return answer, err

    return run
