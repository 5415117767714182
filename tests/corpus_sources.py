"""The public model code behind the labelled findings (tests/data/labelled_findings.toml): fetched as
wheels with `pip download --no-deps` (PyPI's own, pinned; nothing installed or imported) and unpacked,
only their `.py` files, under the benchmark cache (`KPREDICT_BENCH_DIR`, default
~/.cache/kpredict-bench/corpus/). scripts/label_corpus.py samples the findings; tests/test_precision.py
re-runs check on the labelled files and measures precision per rule."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tomllib
import zipfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from kpredict.ir import Span
from kpredict.lint import fixes
from kpredict.lint.model import Edit, Fix

# project -> pinned version; the wheel's top-level package has the project's name
PROJECTS: dict[str, str] = {
    "transformers": "5.25.0",
    "timm": "1.0.31",
    "torchvision": "0.28.0",
    "diffusers": "0.42.1",
}


def cache_root() -> Path:
    return Path(os.environ.get("KPREDICT_BENCH_DIR", Path.home() / ".cache" / "kpredict-bench"))


def wheel(project: str, version: str) -> Path:
    """The project's wheel, downloaded once (torchvision's is per platform; its .py files are not)."""
    wheels = cache_root() / "wheels"
    pattern = str(wheels / f"{project}-{version}-*.whl")
    found = sorted(glob.glob(pattern))
    if not found:
        wheels.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                        "-q", "-d", str(wheels), f"{project}=={version}"], check=True)
        found = sorted(glob.glob(pattern))
    if not found:
        raise FileNotFoundError(f"no wheel {pattern} after pip download")
    return Path(found[-1])


def source_root(project: str, version: str | None = None) -> Path:
    """The folder holding the unpacked package (`<root>/<project>/...`): only source text."""
    version = version or PROJECTS[project]
    dest = cache_root() / "corpus" / f"{project}-{version}"
    done = dest / ".unpacked"
    if not done.exists():
        with zipfile.ZipFile(wheel(project, version)) as z:
            members = [m for m in z.namelist() if m.startswith(f"{project}/") and m.endswith(".py")]
            z.extractall(dest, members=members)
        done.write_text("ok\n")
    return dest


def run_check(files: list[Path], jobs: int = 2, cwd: Path | None = None) -> list[dict]:
    """Every finding of every rule (`--select ALL`, no configuration file) on `files`, as json-lines
    records; files are named relative to their project root so paths match the labels."""
    if not files:
        return []
    # no time budget: what a file reports must not depend on the machine's speed here
    cmd = [sys.executable, "-m", "kpredict", "check", "--isolated", "--time-budget", "0", "--select", "ALL",
           "--exit-zero", "--output-format", "json-lines", "-j", str(jobs), *map(str, files)]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"kpredict check exited {out.returncode}: {out.stderr.strip()[-2000:]}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


# ------------------------------------------------------------------------------ labels and precision

LABELS = Path(__file__).resolve().parent / "data" / "labelled_findings.toml"
KINDS = ("true", "false", "useless")


def snippet(root: Path, path: str, line: int) -> str:
    """The flagged line, whitespace-normalised and cut at 100 characters (what a label stores)."""
    text = (root / path).read_text(encoding="utf-8").splitlines()
    return " ".join(text[line - 1].split())[:100] if 0 < line <= len(text) else ""


@dataclass
class Measure:
    """One rule's labelled findings as check reports them now."""

    true: int = 0
    false: int = 0
    useless: int = 0
    gone: list[str] = field(default_factory=list)  # labelled, no longer reported
    fixes: int = 0  # findings of the rule (labelled or not) that carry a fix, safe or unsafe
    applied: int = 0  # of those, applied in one round of every fix of the file (overlapping ones wait)
    unparsable: list[str] = field(default_factory=list)  # files whose fixed text would not parse
    unlabelled: list[str] = field(default_factory=list)  # reported, neither labelled nor seen when sampled

    @property
    def sampled(self) -> int:
        return self.true + self.false + self.useless

    @property
    def precision(self) -> float | None:
        return self.true / self.sampled if self.sampled else None


def _by_file(found: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for d in found:
        if d["code"] and d.get("fix"):
            out[d["filename"]].append(d)
    return out


def _apply_fixes(path: Path, name: str, found: list[dict], out: dict[str, Measure]) -> None:
    """Every fix check offered in one file (safe and unsafe: `--fix --unsafe-fixes`), applied to its
    text in memory as one round of `--fix` would; the text must still parse."""
    text = path.read_text(encoding="utf-8")
    wanted = {}
    for d in found:
        edits = tuple(Edit(Span(e["location"]["row"], e["location"]["column"] - 1, e["end_location"]["row"],
                                       e["end_location"]["column"] - 1), e["content"]) for e in d["fix"]["edits"])
        wanted[id(d)] = (d["code"], Fix(d["fix"]["message"], d["fix"]["applicability"], edits))
        out[d["code"]].fixes += 1
    new, applied = fixes.apply(text, [f for _, f in wanted.values()])
    for code, fix in wanted.values():
        out[code].applied += any(fix is a for a in applied)
    if not fixes.parses(new):
        for code in {c for c, _ in wanted.values()}:
            out[code].unparsable.append(name)


def measure(labels_path: Path = LABELS, jobs: int = 2) -> dict[str, Measure]:
    """Re-run check on every labelled file and match its findings to the labels, per rule.

    A finding matches a label of the same project, path and rule whose snippet equals the finding's
    flagged line (the nearest labelled line wins, each label matched once)."""
    data = tomllib.loads(labels_path.read_text(encoding="utf-8"))
    seen = {k: set(v) for k, v in data.get("seen", {}).items()}
    by_key: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for e in data["finding"]:
        if e["label"] not in KINDS:
            raise ValueError(f"{e['path']}:{e['line']}: label must be one of {KINDS}, not {e['label']!r}")
        by_key[(e["project"], e["path"], e["code"])].append(e)
    out: dict[str, Measure] = defaultdict(Measure)
    matched: set[int] = set()
    projects = sorted({(e["project"], e["version"]) for e in data["finding"]})
    for project, version in projects:
        root = source_root(project, version)
        paths = sorted({e["path"] for e in data["finding"] if e["project"] == project})
        # paths as the labels name them, relative to the project root
        found = run_check([Path(p) for p in paths], jobs, cwd=root)
        for d in found:
            code, path, line = d["code"], d["filename"], d["location"]["row"]
            if not code:
                continue
            text = snippet(root, path, line)
            cands = [e for e in by_key.get((project, path, code), ())
                     if id(e) not in matched and e["snippet"] == text]
            if cands:
                e = min(cands, key=lambda e: abs(e["line"] - line))
                matched.add(id(e))
                m = out[code]
                setattr(m, e["label"], getattr(m, e["label"]) + 1)
            elif f"{d['fingerprint'].split(':')[0]}:{code}" not in seen.get(f"{project}/{path}", set()):
                out[code].unlabelled.append(f"{project}/{path}:{line}: {code} {d['message'][:120]}")
        for path, found_here in _by_file(found).items():
            _apply_fixes(root / path, f"{project}/{path}", found_here, out)
    for e in data["finding"]:
        if id(e) not in matched:
            out[e["code"]].gone.append(f"{e['project']}/{e['path']}:{e['line']}: {e['code']} {e['snippet']} "
                                       f"(labelled {e['label']})")
    return dict(out)
