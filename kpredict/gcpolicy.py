"""Python's cyclic garbage collector while one file is analyzed.

The analysis allocates millions of small objects (AST nodes, abstract values, ops), most of them
freed by reference counting, and keeps large structures alive while it runs (parsed imported modules,
built objects, call summaries). With the interpreter's default thresholds (700, 10, 10) the collector
runs every 700 net allocations and walks the long-lived objects again and again: on the 109-file
transformers sample (every fifth modeling_*.py) analyzed one file after another as the CLI does,
35.2 s -> 29.4 s of CPU with the thresholds below, for the same reports and about the same peak
memory (208 vs 213 MiB): reference counting, not the collector, frees almost all of the garbage.
Turning the collector off gains about 1 s more and would leave nothing to bound a pathological file.

So while a file is analyzed the young generation is collected rarely and the old ones almost never;
afterwards the previous thresholds come back and the garbage cycles the file left are collected
young, before they reach the old generation (whose collection costs a walk over everything alive).
A report read from the cache is many small lists and dataclasses too: the sample's warm run took
1.81 s at the default thresholds and 0.91 s under these.

The analysis itself makes no reference cycles (a test holds it to that): two did, a recursive
closure and exceptions kept in a frame their traceback holds, and they kept 3.9M objects alive per
109 files until this module's collection after each file (1.7 s of it); without them the collection
after a file finds almost nothing, and the sample takes 17.9 s here with these thresholds, the
same as with the collector off (24.0 s at the interpreter's defaults).

The young threshold was 100,000 until stop 20: on a 300-file spread of transformers the collections
of the young generation (gc.callbacks) still took 0.9 s in 40 runs, each walking the file's live
graphs and objects before they had aged; at 1,000,000 they took 0.001 s, peak memory the same
(204 MB), and the whole tree (2,632 files, side by side with the old value) went 163.0 -> 159.6 s.
A million container allocations without a collection bounds a pathological file's cycles at a few
hundred MB.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

FILE_THRESHOLDS = (1_000_000, 1_000, 1_000)


@contextmanager
def analyzing_file() -> Iterator[None]:
    """The collector tuned for one file's analysis or cache lookup, restored (and run on the young
    generations) after."""
    old = gc.get_threshold()
    gc.set_threshold(*FILE_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*old)
        if gc.isenabled():
            gc.collect(1)
