"""Two kpredict checkouts timed on the same corpus at the same time, file by file.

The machine's speed drifts by 10-30% within an hour, and `throughput.py`'s ratio moved by a few
percent between runs of the same code (2.20x, 2.24x, 2.29x at stop 17), so a change worth 1-5%
shows only when the old and the new code run side by side, each on one core, on the same files.
This runs a cold one-core analysis (empty cache, entries written, as throughput.py's `kpredict cold
-j1`) of each checkout at once, in two child processes, and prints both CPU totals, the difference
by kind of file and the files that moved most. Judge a speed change on the whole tree: at stop 17 a
change that made every fifth modeling file 4% faster made the whole transformers tree no faster.

    python benchmarks/side_by_side.py OLD_CHECKOUT NEW_CHECKOUT [--corpus transformers] [--limit N]

A checkout is a directory holding the `kpredict` package (a `git worktree` or a copy of the repo).
Two identical checkouts differ by about 1% in total; single files by up to 0.05 s.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from throughput import file_kind, spread, stdlib_files, transformers_files

MOST_MOVED = 12


def child(tree: str, files_list: str, out: str) -> None:
    """In a child process: one checkout's cold run over the files, CPU seconds per file."""
    sys.path.insert(0, tree)
    try:
        from kpredict.parallel import analyze_paths
    except ImportError:  # a checkout from before analyze_paths moved from kpredict.api
        from kpredict.api import analyze_paths
    from kpredict.cache import Cache
    from kpredict.settings import Settings

    files = Path(files_list).read_text().split("\n")
    settings = Settings()
    per_file: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="kpredict-side-") as cache_dir:
        t0 = last = time.process_time()
        for r in analyze_paths(files, settings, jobs=1, cache=Cache(cache_dir, settings)):
            now = time.process_time()
            per_file[r.path] = now - last
            last = now
        total = time.process_time() - t0
    Path(out).write_text(json.dumps({"total": total, "per_file": per_file}))


def compare(old: dict, new: dict, root: str) -> list[str]:
    """The report: totals, the difference by kind of file, the files that moved most."""
    a, b = old["per_file"], new["per_file"]
    change = 100 * (new["total"] - old["total"]) / old["total"]
    lines = [f"old {old['total']:.1f} s CPU, new {new['total']:.1f} s CPU: {change:+.1f}%", "",
             "by kind of file (new - old):"]
    kinds: dict[str, float] = {}
    for f in a.keys() & b.keys():
        kinds[file_kind(f)] = kinds.get(file_kind(f), 0.0) + b[f] - a[f]
    lines += [f"  {k:20s} {v:+7.2f} s" for k, v in sorted(kinds.items(), key=lambda kv: kv[1])]
    moved = sorted(a.keys() & b.keys(), key=lambda f: b[f] - a[f])
    lines += ["", "files that moved most (old -> new):"]
    for f in moved[:MOST_MOVED // 2] + moved[-(MOST_MOVED // 2):]:
        lines.append(f"  {b[f] - a[f]:+.2f} s  {a[f]:.2f} -> {b[f]:.2f}  {os.path.relpath(f, root)}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--corpus", choices=["transformers", "stdlib"], default="transformers")
    ap.add_argument("--limit", type=int, default=None, help="at most N files (spread evenly)")
    ap.add_argument("--wheel", default=None, help="a local transformers-*.whl instead of pip download")
    ap.add_argument("--_child", nargs=3, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._child:
        child(*args._child)
        return
    for tree in (args.old, args.new):
        if not (Path(tree) / "kpredict" / "__init__.py").is_file():
            sys.exit(f"side_by_side.py: error: {tree}: no kpredict package there")
    files, _ = transformers_files(args.wheel) if args.corpus == "transformers" else stdlib_files()
    files = spread(files, args.limit)
    root = os.path.commonpath(files)
    with tempfile.TemporaryDirectory(prefix="kpredict-side-") as tmp:
        listing = Path(tmp) / "files.txt"
        listing.write_text("\n".join(files))
        outs = [Path(tmp) / "old.json", Path(tmp) / "new.json"]
        procs = [subprocess.Popen([sys.executable, __file__, "x", "x", "--_child", tree, str(listing), str(out)])
                 for tree, out in zip((args.old, args.new), outs)]
        if any(p.wait() != 0 for p in procs):
            sys.exit("side_by_side.py: error: a child run failed (its error is above)")
        old, new = (json.loads(o.read_text()) for o in outs)
    print(f"{len(files)} files of {args.corpus}; old: {args.old}; new: {args.new}")
    print("\n".join(compare(old, new, root)))


if __name__ == "__main__":
    main()
