"""Measured time of a function, eager and compiled, to calibrate the time model (issue 29).

    python -m kpredict.verify.timing --device cuda FILE [FILE ...]     # one JSON document on stdout

For each function of a file with example inputs (as the CPU oracle picks them): the median wall time
of one call over `runs` calls after `warmup` calls, eager and under torch.compile (default mode),
synchronizing the device around each call; on cuda each call is timed with CUDA events. What the
median includes is what the time model means by a function's time: its kernels back to back plus the
host work the device waits on. This runs the user's code: only scripts/record_times.py calls it.
"""

from __future__ import annotations

import argparse
import inspect
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from kpredict.examples import merged_text
from kpredict.verify import child
from kpredict.verify.each_example import each_example_function
from kpredict.verify.annotations import annotations_for
from kpredict.verify.examples import evaluate


def median_us(call: Callable[[], Any], device: str, warmup: int, runs: int) -> float:
    """The median of `runs` timed calls after `warmup` untimed ones, in microseconds."""
    import torch  # lazy: torch takes seconds to import; only the oracle runs it

    cuda = device.startswith("cuda")
    for _ in range(warmup):
        call()
    if cuda:
        torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) * 1000.0)
        else:
            t0 = time.perf_counter()
            call()
            times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def time_function(mod: Any, path: str, qualname: str, device: str, warmup: int = 3, runs: int = 20,
                  compiled: bool = True) -> dict[str, Any]:
    import torch  # lazy: torch takes seconds to import; only the oracle runs it

    ann = annotations_for(path, qualname)
    fn = child.resolve(mod, qualname, merged_text(ann.init, None), device, "eval")
    values = evaluate(merged_text(ann.example, None), vars(mod), device)
    try:
        args, kwargs = child._call_args(inspect.signature(fn), values)
    except (TypeError, ValueError):
        args, kwargs = (), values
    out: dict[str, Any] = {}
    with torch.no_grad():
        out["eager_us"] = median_us(lambda: fn(*args, **kwargs), device, warmup, runs)
        if compiled:
            torch._dynamo.reset()
            cfn = torch.compile(fn)
            out["compiled_us"] = median_us(lambda: cfn(*args, **kwargs), device, max(warmup, 2), runs)
            torch._dynamo.reset()
    return out


def time_file(path: str, device: str, warmup: int, runs: int, compiled: bool) -> dict[str, Any]:
    return each_example_function(
        path, lambda mod, p, q: time_function(mod, p, q, device, warmup, runs, compiled))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--eager-only", action="store_true")
    a = ap.parse_args(argv)
    import torch  # lazy: torch takes seconds to import; only the oracle runs it

    name = torch.cuda.get_device_name() if a.device.startswith("cuda") else "cpu"
    doc = {"device": a.device, "device_name": name, "torch": torch.__version__, "warmup": a.warmup, "runs": a.runs,
           "files": {p: time_file(p, a.device, a.warmup, a.runs, not a.eager_only) for p in a.paths}}
    json.dump(doc, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
