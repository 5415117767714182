"""`check --fix --unsafe-fixes` on the labelled corpus's files (issue 32): what the fixing rules offer,
what is applied, whether every rewritten file still parses, and which labels the fixed findings had
(a fix on a finding labelled false would be a wrong rewrite).

Each project's tree is mirrored in a temporary folder (symbolic links, the labelled files copied) so
the analysis sees the same package around each file and the corpus cache is never written.

    python scripts/fix_corpus.py [--json OUT]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import corpus_sources  # noqa: E402

FIXING = ("KP302", "KP501", "KP502", "KP601", "KP602")


def mirror(src: Path, dest: Path, copies: set[str]) -> None:
    for dirpath, _, files in os.walk(src):
        rel = Path(dirpath).relative_to(src)
        (dest / rel).mkdir(parents=True, exist_ok=True)
        for name in files:
            target = (rel / name).as_posix()
            if target in copies:
                shutil.copyfile(Path(dirpath) / name, dest / rel / name)
            else:
                os.symlink(Path(dirpath) / name, dest / rel / name)


def check(files: list[str], cwd: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kpredict", "check", "--isolated", "--no-cache", "--time-budget", "0",
                           "--select", ",".join(FIXING), "-j", "2", *extra, *files],
                          cwd=cwd, capture_output=True, text=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    labels = tomllib.loads(corpus_sources.LABELS.read_text(encoding="utf-8"))["finding"]
    by_project: dict[tuple[str, str], dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for f in labels:
        if f["code"] in FIXING:
            by_project[(f["project"], f["version"])][f["path"]].append(f)
    totals: Counter[str] = Counter()
    fixed_labels: Counter[tuple[str, str]] = Counter()
    broken: list[str] = []
    for (project, version), files in sorted(by_project.items()):
        root = corpus_sources.source_root(project, version)
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            mirror(root, work, set(files))
            names = sorted(files)
            before = [json.loads(line) for line in check(names, work, "--unsafe-fixes", "--exit-zero",
                                                         "--output-format", "json-lines").stdout.splitlines()]
            offered = [d for d in before if d.get("fix")]
            snippets = {id(d): " ".join(corpus_sources.snippet(root, d["path"], d["location"]["row"]).split())
                        for d in offered}
            done = check(names, work, "--fix", "--unsafe-fixes", "--exit-zero", "--output-format", "json-lines")
            if done.returncode not in (0, 1):
                print(f"{project}: check --fix exited {done.returncode}: {done.stderr.strip()[-500:]}", file=sys.stderr)
                return 2
            after = {(d["path"], d["code"]) for d in
                     (json.loads(line) for line in done.stdout.splitlines())}
            for name in names:
                text = (work / name).read_text(encoding="utf-8")
                try:
                    ast.parse(text)
                except SyntaxError as e:
                    broken.append(f"{project}/{name}: {e}")
                if text != (root / name).read_text(encoding="utf-8"):
                    totals["files rewritten"] += 1
            totals["files"] += len(names)
            totals["findings"] += len(before)
            totals["fixes offered"] += len(offered)
            totals["safe fixes offered"] += sum(d["fix"]["applicability"] == "safe" for d in offered)
            for d in offered:
                totals[f"{d['code']} {d['fix']['applicability']} fixes"] += 1
            totals["findings left"] += len(after)
            for d in offered:
                snippet = snippets[id(d)]
                label = next((f["label"] for f in files.get(d["path"], []) if f["code"] == d["code"]
                              and " ".join(f["snippet"].split()) == snippet), "unlabelled")
                fixed_labels[(d["code"], label)] += 1
    report = {"totals": dict(totals), "fixed_by_label": {f"{c} {lab}": n for (c, lab), n in sorted(fixed_labels.items())},
              "unparsable": broken}
    print(json.dumps(report, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
