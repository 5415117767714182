"""Sample findings from public model code for labelling (issue 32): every rule, stratified over
projects, with a fixed seed, written as unlabelled entries of a TOML file to be judged by hand.

    python scripts/label_corpus.py sample FINDINGS.jsonl... --per-rule 38 -o new_entries.toml
    python scripts/label_corpus.py measure --write     # re-run check, write rules/lint_precision.toml

Each FINDINGS.jsonl is `kpredict check --isolated --select ALL --output-format json-lines` run in
a project root of tests/corpus_sources.py (its name starts with `<project>-<version>`). `show` prints
each entry of a labels file with its source around the line, for reading."""

from __future__ import annotations

import argparse
import json
import random
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import corpus_sources  # noqa: E402

SEED = 32


def snippet_of(root: Path, path: str, line: int) -> str:
    text = (root / path).read_text(encoding="utf-8").splitlines()
    return " ".join(text[line - 1].split())[:100] if 0 < line <= len(text) else ""


def toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def entry_toml(e: dict) -> str:
    keys = ("project", "version", "path", "code", "line", "snippet", "label", "reason")
    body = "\n".join(f"{k} = {e[k] if k == 'line' else toml_str(str(e[k]))}" for k in keys)
    return "[[finding]]\n" + body + "\n"


def sample(paths: list[str], per_rule: int) -> list[dict]:
    by_rule: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for p in paths:
        project, version = Path(p).name.split("-")[:2]
        version = version.removesuffix(".jsonl")
        root = corpus_sources.source_root(project, version)
        for line in open(p, encoding="utf-8"):
            d = json.loads(line)
            if not d.get("code"):
                continue
            row = d["location"]["row"]
            by_rule[d["code"]][project].append({
                "project": project, "version": version, "path": d["filename"], "code": d["code"],
                "line": row, "snippet": snippet_of(root, d["filename"], row), "label": "", "reason": "",
                "message": d["message"]})
    rng = random.Random(SEED)
    out = []
    for code in sorted(by_rule):
        pools = {p: sorted(v, key=lambda e: (e["path"], e["line"])) for p, v in sorted(by_rule[code].items())}
        for pool in pools.values():
            rng.shuffle(pool)
        picked: list[dict] = []
        while len(picked) < per_rule and any(pools.values()):  # round robin over projects
            for pool in pools.values():
                if pool and len(picked) < per_rule:
                    picked.append(pool.pop())
        out += picked
    return out


def show(labels: Path, context: int) -> None:
    data = tomllib.loads(labels.read_text(encoding="utf-8"))
    for i, e in enumerate(data["finding"]):
        root = corpus_sources.source_root(e["project"], e["version"])
        lines = (root / e["path"]).read_text(encoding="utf-8").splitlines()
        print(f"=== {i} {e['code']} {e['project']} {e['path']}:{e['line']}  {e.get('message', '')}")
        for n in range(max(1, e["line"] - context), min(len(lines), e["line"] + context) + 1):
            print(f"{'>' if n == e['line'] else ' '}{n:5} {lines[n - 1]}")


PRECISION = Path(__file__).resolve().parent.parent / "rules" / "lint_precision.toml"
CORPUS = "transformers 5.25.0, timm 1.0.31, torchvision 0.28.0 and diffusers 0.42.1"


def precision_toml(measures: dict[str, corpus_sources.Measure]) -> str:
    """rules/lint_precision.toml: what kpredict.lint.precision reads to decide each rule's default."""
    out = ["# Written by `python scripts/label_corpus.py measure --write` from tests/data/labelled_findings.toml:",
           "# per rule, the labelled findings check still reports (precision = true / sampled).",
           "# tests/test_precision.py fails when this file and check's findings disagree.",
           f"corpus = {toml_str(CORPUS)}", ""]
    for code in sorted(measures):
        m = measures[code]
        out += [f"[rules.{code}]", f"sampled = {m.sampled}", f"true = {m.true}", f"false = {m.false}",
                f"useless = {m.useless}", ""]
    return "\n".join(out)


def markdown(measures: dict[str, corpus_sources.Measure]) -> str:
    rows = ["| rule | sampled | true | false | useless | precision |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for code in sorted(measures):
        m = measures[code]
        p = f"{m.precision:.0%}" if m.precision is not None else "-"
        rows.append(f"| {code} | {m.sampled} | {m.true} | {m.false} | {m.useless} | {p} |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("findings", nargs="+")
    s.add_argument("--per-rule", type=int, default=38)
    s.add_argument("-o", "--output", required=True)
    v = sub.add_parser("show")
    v.add_argument("labels")
    v.add_argument("--context", type=int, default=4)
    m = sub.add_parser("measure")
    m.add_argument("--write", action="store_true", help="write rules/lint_precision.toml")
    a = ap.parse_args()
    if a.cmd == "measure":
        measures = corpus_sources.measure()
        print(markdown(measures))
        for code, mm in sorted(measures.items()):
            for line in mm.gone:
                print(f"no longer reported: {line}")
            for line in mm.unlabelled:
                print(f"unlabelled: {line}")
        if a.write:
            PRECISION.write_text(precision_toml(measures), encoding="utf-8")
        return
    if a.cmd == "sample":
        entries = sample(a.findings, a.per_rule)
        with open(a.output, "w", encoding="utf-8") as f:
            for e in entries:
                f.write(f"# {e['message']}\n" + entry_toml(e) + "\n")
        print(f"{len(entries)} entries -> {a.output}")
    else:
        show(Path(a.labels), a.context)


if __name__ == "__main__":
    main()
