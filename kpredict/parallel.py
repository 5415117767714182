"""Analyze many files: in parallel worker processes, through the per-file cache, in input order.

- `jobs=None` uses every core this process may run on; `jobs=1`, or a single file, runs in this
  process without starting a pool.
- Results come back in the order of the input, whatever order the workers finish in.
- One file can never stop the others: a worker catches everything (api.analyze_data turns any
  exception into a FileReport with `error="internal error (...)"`), and if a worker process itself
  dies (a crash in C code, the OOM killer), the file it was on is reported as an internal error and
  the remaining files go on in a fresh pool.
- Reports that come back from workers or from the cache have `graph=None` on their functions (the op
  graphs are not sent between processes); analysis in this process keeps them only when asked.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import InvalidStateError, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from kpredict import project
from kpredict import serial
from kpredict.api import Check, analyze_data, read_source
from kpredict.cache import Cache, code_fingerprint, rules_fingerprint
from kpredict.gcpolicy import analyzing_file
from kpredict.ir import FileReport
from kpredict.opfacts import default_table
from kpredict.reads import recording
from kpredict.settings import Settings
from kpredict.walk import Target, discover


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def analyze_target(target: Target, settings: Settings, cache: Cache | None = None,
                   keep_graphs: bool = False, lint: Check | None = None, lookup: bool = True,
                   examples: dict[str, str] | None = None, inits: dict[str, str] | None = None) -> FileReport:
    """One file: read it, look it up in the cache (unless lookup=False), else analyze it (never raises).
    `examples`, `inits` (qualname -> `name=expr` text, kpredict.api): values given on the command
    line; a report made with them is neither looked up in nor written to the cache."""
    with analyzing_file():  # a cached report is many small containers too: the hits also gain
        return _analyze_target(target, settings, None if (examples or inits) else cache, keep_graphs, lint, lookup,
                               examples, inits)


def _analyze_target(target: Target, settings: Settings, cache: Cache | None, keep_graphs: bool,
                    lint: Check | None, lookup: bool, examples: dict[str, str] | None = None,
                    inits: dict[str, str] | None = None) -> FileReport:
    if target.error:
        return FileReport(path=target.path, error=target.error)
    data = read_source(target.path)
    if isinstance(data, FileReport):
        return data
    if examples or inits:
        report = analyze_data(data, target.path, settings, only=target.only, lint=lint, examples=examples,
                              inits=inits)
        if not keep_graphs:
            for fn in report.functions:
                fn.graph = None
        return report
    if cache is not None and lookup:
        hit = cache.get(target.path, data, target.only)
        if hit is not None:
            return hit
    if cache is not None:
        with recording() as reads:
            report = analyze_data(data, target.path, settings, only=target.only, lint=lint)
        cache.put(target.path, data, report, target.only, reads=reads)
    else:
        report = analyze_data(data, target.path, settings, only=target.only, lint=lint)
    if not keep_graphs:
        for fn in report.functions:
            fn.graph = None
    return report


# -- worker processes ------------------------------------------------------------------------

_WORKER: tuple[Settings, Cache | None, Check | None] | None = None


def _init_worker(settings: Settings, cache_dir: str | None, lint: Check | None) -> None:
    global _WORKER
    # Ctrl-C is the parent's to handle (it stops the pool, _stop); a worker that caught it went on with
    # its queue, and the pool's shutdown waited for all of it (25 s on transformers' tree)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER = (settings, Cache(cache_dir, settings, lint) if cache_dir is not None else None, lint)


def _work(target: Target) -> dict:
    """A worker's report for `target`, as the cache's plain form (kpredict/serial.py): pickling the
    report's objects (thousands of op rows per model file) and unpickling them in the parent took
    3.2 s per 109 transformers model files, plain lists and dicts with the op rows as a table of
    distinct rows 1.2 s (a -j2 run 10% faster)."""
    assert _WORKER is not None
    settings, cache, lint = _WORKER
    try:
        report = analyze_target(target, settings, cache, lint=lint)
    except BaseException as e:  # noqa: BLE001 - analyze_target should not raise; be sure
        report = FileReport(path=target.path,
                            error=f"internal error ({type(e).__name__}: {e}); please report it with this file")
    return serial.file_report_to_dict(report)


def _received(d: dict) -> FileReport:
    """A worker's report back as objects; one that cannot be read is that file's internal error."""
    try:
        with analyzing_file():  # many small objects, as a cache hit is
            return serial.file_report_from_dict(d)
    except Exception as e:  # noqa: BLE001 - one bad report must never stop the others
        return FileReport(path=str(d.get("path", "?")),
                          error=f"internal error ({type(e).__name__}: {e}); please report it with this file")


def _pool(jobs: int, settings: Settings, cache: Cache | None, lint: Check | None) -> ProcessPoolExecutor:
    # fork where it is safe and cheap (Linux): workers inherit the loaded op table
    method = "fork" if sys.platform.startswith("linux") else None
    ctx = multiprocessing.get_context(method)
    return ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker,
                               initargs=(settings, str(cache.dir) if cache is not None else None, lint))


def _stop(ex: ProcessPoolExecutor) -> None:
    """End the pool at once: end the workers (they ignore SIGINT), then shut it down. A plain
    shutdown would let them finish every file already handed out (10 s on 8 files here, 25 s on
    transformers' tree). The workers go first: the pool then fails what is pending as a broken pool,
    and its shutdown returns at once (cancelling first made the pool's thread fail on the cancelled
    futures, a traceback on stderr). Executor.map's own iterator still cancels its pending futures when
    the interrupt passes through it, so the pool's thread may yet fail on one (InvalidStateError,
    a race in CPython 3.11's pool): that one error is kept off stderr while the pool shuts down."""
    hook = threading.excepthook

    def quiet(args: threading.ExceptHookArgs) -> None:
        if not isinstance(args.exc_value, InvalidStateError):
            hook(args)

    threading.excepthook = quiet
    try:
        for w in list((getattr(ex, "_processes", None) or {}).values()):  # no public handle before Python 3.14
            try:
                w.terminate()
            except (OSError, ValueError, AttributeError):  # already gone
                pass
        ex.shutdown(wait=True)
    finally:
        threading.excepthook = hook


def slim(report: FileReport) -> FileReport:
    """What a command keeps of a report once it is drawn (its path, error, findings, and functions
    with their figures and assumptions): without the op rows, kernel lists and graphs, which are
    most of its memory, a whole tree's results stay small."""
    for fn in report.functions:
        fn.ops = []
        fn.graph = None
        fn.kernel_lists = None
        fn.compiled.kernel_names = []
    return report


def _chunksize(n: int, jobs: int) -> int:
    return max(1, min(32, n // (jobs * 8)))


def _crashed(target: Target) -> FileReport:
    return FileReport(path=target.path,
                      error="internal error (the worker process analyzing it died); please report it with this file")


def _parallel(targets: Sequence[Target], settings: Settings, jobs: int, cache: Cache | None,
              lint: Check | None) -> Iterator[FileReport]:
    default_table()  # load once in the parent: forked workers share it
    if lint is not None:
        lint.load()  # in the parent too: forked workers share what it loads
    if cache is not None:
        code_fingerprint(), rules_fingerprint()
    start = 0
    while start < len(targets):
        rest = targets[start:]
        workers = min(jobs, len(rest))
        done = 0
        ex = _pool(workers, settings, cache, lint)
        try:
            for d in ex.map(_work, rest, chunksize=_chunksize(len(rest), workers)):
                done += 1
                yield _received(d)
            ex.shutdown()
            return
        except BrokenProcessPool:
            ex.shutdown()
        except BaseException:  # Ctrl-C, or the consumer stopped early (GeneratorExit): stop now
            _stop(ex)
            raise
        # a worker died while results [start + done, ...) were pending; find the culprit alone
        start += done
        with _pool(1, settings, cache, lint) as ex:
            try:
                report = _received(ex.submit(_work, targets[start]).result())
            except BrokenProcessPool:
                report = _crashed(targets[start])
        yield report
        start += 1


def analyze_targets(targets: Sequence[Target], settings: Settings | None = None, jobs: int | None = None,
                    cache: Cache | None = None, keep_graphs: bool = False,
                    lint: Check | None = None, examples: dict[str, str] | None = None,
                    inits: dict[str, str] | None = None) -> Iterator[FileReport]:
    """Reports for `targets`, in their order. `keep_graphs` applies to in-process analysis only.

    `cache` must have been made for the same settings and lint check (Cache(dir, settings, lint)).
    `examples`, `inits`: values given on the command line (see analyze_target), analyzed in this process.
    """
    settings = settings or Settings()
    jobs = default_jobs() if jobs is None or jobs <= 0 else jobs
    todo = [t for t in targets if not t.error]
    if jobs == 1 or len(todo) <= 1 or examples or inits:
        for t in targets:
            yield analyze_target(t, settings, cache, keep_graphs=keep_graphs, lint=lint, examples=examples,
                                 inits=inits)
        return
    if cache is None:
        yield from _parallel(targets, settings, jobs, cache, lint)
        return
    # cache hits are answered here, cheaply; only the misses go to workers (and no pool starts for
    # an unchanged tree). Hits are read when their turn comes, not all at once: a warm run over a
    # million lines held every report (1.2 GB) before handing out the first.
    # a hit's key is kept from the probe: the file is read and hashed once (a warm -j2 run read and
    # hashed every file twice, 40% more than -j1 on the standard library)
    keys = [_probe(t, cache) for t in targets]
    misses = [i for i, k in enumerate(keys) if k is None]

    def answer(i: int) -> FileReport:
        t = targets[i]
        hit = _cached(t, cache, keys[i])  # None: the entry went stale (a file it read changed); analyze here
        return hit if hit is not None else analyze_target(t, settings, cache, keep_graphs=keep_graphs,
                                                           lint=lint, lookup=False)

    if len(misses) <= 1:
        for i, t in enumerate(targets):
            yield analyze_target(t, settings, cache, keep_graphs=keep_graphs, lint=lint, lookup=False) \
                if i in misses else answer(i)
        return
    miss_set = set(misses)
    done: dict[int, FileReport] = {}
    ready = 0
    for i, report in zip(misses, _parallel([targets[i] for i in misses], settings, jobs, cache, lint)):
        done[i] = report
        while ready < len(targets) and (ready in done or ready not in miss_set):
            yield done.pop(ready) if ready in miss_set else answer(ready)
            ready += 1
    while ready < len(targets):
        yield answer(ready)
        ready += 1


_ANSWER_HERE = ""  # _probe's mark for a target reported here without an entry (an error, an unreadable file)


def _probe(target: Target, cache: Cache) -> str | None:
    """The key of the file's entry as it is now (whether it is still valid is checked when read),
    _ANSWER_HERE for a target whose error is reported here, None for a miss."""
    if target.error:
        return _ANSWER_HERE
    data = read_source(target.path)
    if isinstance(data, FileReport):
        return _ANSWER_HERE
    return cache.probe(target.path, data, target.only)


def _cached(target: Target, cache: Cache, key: str | None = None) -> FileReport | None:
    """The cached report of target (from the entry under `key`, when the probe found one)."""
    if target.error:
        return None
    if key:
        with analyzing_file():
            return cache.get_key(target.path, key)
    data = read_source(target.path)
    if isinstance(data, FileReport):
        return None  # the worker reports it
    with analyzing_file():
        return cache.get(target.path, data, target.only)


def analyze_paths(paths: Iterable[str], settings: Settings | None = None, jobs: int | None = None,
                  cache: Cache | None = None, keep_graphs: bool = False,
                  lint: Check | None = None) -> Iterator[FileReport]:
    """Reports for every file under `paths` (see kpredict.walk), in a deterministic order.

    jobs: worker processes (None or 0: all cores; 1: this process). cache: a kpredict.cache.Cache made
    with the same settings and lint check, or None for none. Reports from workers or the cache have
    graph=None on their functions; in-process analysis keeps the graphs only with keep_graphs=True.
    lint: run these lint rules too (a kpredict.lint.engine.Linter; findings land in each FileReport,
    computed inside the worker).
    settings None: the project's settings for the first path (kpredict.project); a configuration
    error raises kpredict.project.ConfigError.
    """
    paths = list(paths)
    if settings is None and paths:
        settings = project.settings_for(paths[0])
    yield from analyze_targets(discover(paths), settings, jobs=jobs, cache=cache, keep_graphs=keep_graphs,
                               lint=lint)
