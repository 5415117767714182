"""Whole-tree output and memory (issue 32): what `kpredict report` and `kpredict check` write and hold
on a large tree, and how fast Ctrl-C stops them. Goals per 300 files: JSON report <= 20 MB by default,
the markdown review comment <= 64 KB, peak memory < 1 GiB at -j 2, Ctrl-C stops within 1 s.

Each command runs cold (its own empty cache) in a fresh child process, so peak RSS is that command's
(the largest single process of it: the parent or one worker). The figures are printed as a table.

  python benchmarks/whole_tree.py --models ~/.cache/kpredict-bench/transformers-5.25.0-py3-none-any/transformers/models
  python benchmarks/whole_tree.py --files LIST.txt --checkout OTHER_CHECKOUT   # a fixed list; another checkout's code
"""

from __future__ import annotations

import argparse
import glob
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOALS = {"json_bytes": 20_000_000, "markdown_bytes": 65_536, "rss_kb": 1 << 20, "stop_s": 1.0}
# the child that runs one command and reports its children's peak RSS (KiB on Linux)
MEASURE = ("import resource, subprocess, sys\n"
           "with open(sys.argv[1], 'wb') as out:\n"
           "    rc = subprocess.run(sys.argv[2:], stdout=out).returncode\n"
           "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")


def spread(paths: list[str], n: int) -> list[str]:
    """n paths spread evenly over the sorted list."""
    paths = sorted(paths)
    return paths if len(paths) <= n else [paths[i * len(paths) // n] for i in range(n)]


def measure(checkout: Path, args: list[str], out: Path) -> tuple[int, int, int, float]:
    """(exit status, output bytes, peak RSS KiB, wall seconds) of `python -m kpredict ARGS`."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    env.pop("CI", None)
    t = time.monotonic()
    done = subprocess.run([sys.executable, "-c", MEASURE, str(out), sys.executable, "-m", "kpredict", *args],
                          capture_output=True, text=True, cwd=checkout, env=env, check=True)
    rc, rss = (int(x) for x in done.stdout.split())
    return rc, out.stat().st_size, rss, time.monotonic() - t


def default_sigint() -> None:
    """In the child: Ctrl-C as in a terminal. A shell starts a background job (`cmd &`) with SIGINT
    ignored, which its children inherit, and Python then never raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def time_to_stop(checkout: Path, files: list[str], after: float) -> tuple[float, int, str]:
    """Seconds from Ctrl-C (SIGINT to the process group, as a terminal sends it) to the end of a -j 2
    report begun `after` seconds earlier; its exit status and last stderr line."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    p = subprocess.Popen([sys.executable, "-m", "kpredict", "report", "-j", "2", "--no-cache", *files],
                         cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         start_new_session=True, preexec_fn=default_sigint)
    time.sleep(after)
    t = time.monotonic()
    os.killpg(p.pid, signal.SIGINT)
    try:
        _, err = p.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        _, err = p.communicate()
    lines = err.decode(errors="replace").strip().splitlines()
    return time.monotonic() - t, p.returncode, lines[-1] if lines else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--models", help="transformers' models/ folder: its modeling_*.py files, spread evenly")
    src.add_argument("--files", help="a file listing the paths to analyze, one a line")
    ap.add_argument("--limit", type=int, default=300, help="files taken from --models (default 300)")
    ap.add_argument("--checkout", default=str(REPO), help="the kpredict checkout to run (default: this one)")
    ap.add_argument("--skip", default="", help="comma-separated measurements to skip: json,markdown,stop")
    a = ap.parse_args()
    if a.models:
        files = spread(glob.glob(os.path.join(os.path.expanduser(a.models), "*", "modeling_*.py")), a.limit)
    else:
        files = [ln.strip() for ln in Path(a.files).read_text().splitlines() if ln.strip()]
    files = [os.path.abspath(f) for f in files]
    checkout, skip = Path(a.checkout).resolve(), set(a.skip.split(","))
    print(f"{len(files)} files, checkout {checkout}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        if "json" not in skip:
            rc, size, rss, wall = measure(checkout, ["report", "-j", "2", "--no-cache", "--output-format", "json",
                                                     *files], out)
            rows.append(("report --output-format json -j 2", rc, size, rss, wall, "json_bytes"))
        if "markdown" not in skip:
            for label, sel in (("check markdown (default rules)", []), ("check markdown --select ALL",
                                                                          ["--select", "ALL"])):
                rc, size, rss, wall = measure(checkout, ["check", "-j", "2", "--cache-dir", str(Path(tmp) / label[-3:]),
                                                         "--output-format", "markdown", *sel, *files], out)
                rows.append((label, rc, size, rss, wall, "markdown_bytes"))
        print(f"{'command':<36} {'exit':>4} {'output bytes':>14} {'peak RSS MiB':>13} {'wall s':>7}  goal")
        for label, rc, size, rss, wall, goal in rows:
            ok = "PASS" if size <= GOALS[goal] and rss <= GOALS["rss_kb"] else "FAIL"
            print(f"{label:<36} {rc:>4} {size:>14,} {rss / 1024:>13.0f} {wall:>7.1f}  {ok}")
    if "stop" not in skip:
        stop, rc, last = time_to_stop(checkout, files, after=10.0)
        ok = "PASS" if stop <= GOALS["stop_s"] else "FAIL"
        print(f"Ctrl-C after 10 s of a -j 2 report: stopped in {stop:.2f} s, exit {rc}, stderr {last!r}  {ok}")


if __name__ == "__main__":
    main()
