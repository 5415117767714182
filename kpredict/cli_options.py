"""Options shared by every command that analyzes many files (`report`, `check`, ...).

Usage in a command:

    @main.command()
    @click.argument("paths", nargs=-1, required=True)
    @common_options
    def check(paths, run: RunOptions, ...):
        settings = Settings(...)
        reports = analyze_paths(paths, settings, jobs=run.jobs, cache=run.cache(settings, lint), lint=lint)

(kpredict.parallel.analyze_paths; `lint` a kpredict.lint.engine.Linter, or None.)

`common_options` adds `-j/--jobs`, `--no-cache` and `--cache-dir` and hands the command one
`run: RunOptions` argument instead of three; `parse_dims` reads the `--dim NAME=INT` values;
`input_options` adds `--init` and `--example` (as verify has them) and `given_inputs` checks that
they go with one `FILE::QUALNAME` selection (`diff_inputs` reads diff's, which name their function); `strict_option` adds `--strict` (kpredict.strict).
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO, TypeVar

import click

from kpredict.cache import Cache
from kpredict.settings import Settings


@dataclass(frozen=True)
class RunOptions:
    jobs: int | None = None  # None: every core
    use_cache: bool = True
    cache_dir: str | None = None  # None: ./.kpredict_cache

    def cache(self, settings: Settings, lint: object | None = None) -> Cache | None:
        """The cache for these settings (and lint config, when findings are computed), or None with --no-cache."""
        if not self.use_cache:
            return None
        return Cache(self.cache_dir, settings, lint)


T = TypeVar("T")


@dataclass
class Progress:
    """`kpredict: 120/300 files, 45 s` on one stderr line rewritten in place, while a run goes: a whole
    tree takes minutes and printed nothing until the end. Only on a terminal and outside CI (a log
    would keep every rewrite); the line is erased when the run ends, however it ends."""

    total: int
    stream: TextIO
    env: Mapping[str, str]
    clock: Callable[[], float] = time.monotonic
    done: int = 0
    start: float = field(init=False, default=0.0)

    @property
    def enabled(self) -> bool:
        isatty = getattr(self.stream, "isatty", None)
        return self.total > 1 and bool(isatty and isatty()) and not self.env.get("CI")

    def track(self, items: Iterable[T]) -> Iterator[T]:
        """`items`, each counted as done when the next is asked for. The line is erased while the
        caller has an item (it may print it to the same terminal) and at the end, however it ends."""
        if not self.enabled:
            yield from items
            return
        self.start = self.clock()
        try:
            self._show()
            for item in items:
                self._erase()
                yield item
                self.done += 1
                self._show()
        finally:
            self._erase()

    def line(self) -> str:
        return f"kpredict: {self.done}/{self.total} files, {self.clock() - self.start:.0f} s"

    def _show(self) -> None:
        self.stream.write("\r" + self.line())
        self.stream.flush()

    def _erase(self) -> None:
        self.stream.write("\r\033[K")
        self.stream.flush()


def common_options(f: Callable[..., Any]) -> Callable[..., Any]:
    @click.option("-j", "--jobs", type=click.IntRange(min=0), default=None, metavar="N",
                  help="Worker processes (default: all cores; 1: no pool).")
    @click.option("--no-cache", "no_cache", is_flag=True, envvar="KPREDICT_NO_CACHE",
                  help="Neither read nor write the per-file result cache.")
    @click.option("--cache-dir", type=click.Path(file_okay=False), default=None, envvar="KPREDICT_CACHE_DIR",
                  help="Cache folder (default: .kpredict_cache in the current directory).")
    @functools.wraps(f)
    def wrapper(*args: Any, jobs: int | None, no_cache: bool, cache_dir: str | None, **kwargs: Any) -> Any:
        run = RunOptions(jobs=jobs or None, use_cache=not no_cache, cache_dir=cache_dir)
        return f(*args, run=run, **kwargs)

    return wrapper


def input_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """`--init` and `--example`: the selected function's constructor arguments and inputs."""
    f = click.option("--example", "example", default=None, metavar="'NAME=EXPR ...'",
                     help="Inputs of the selected function: --example \"idx=randint(0, 100, (8, 1024))\" "
                          "(needs one FILE::QUALNAME).")(f)
    return click.option("--init", "init", default=None, metavar="'NAME=EXPR ...'",
                        help="Constructor arguments of the selected method's class, Python expressions of the "
                             "file: --init \"config=GPTConfig(n_layer=2)\" (needs one FILE::QUALNAME).")(f)


STRICT_HELP = ("Exit 2, one line per function on stderr, when a function's figures rest on an assumed input "
               "or config (a parameter of unknown shape or value, a config built with its defaults) rather "
               "than values given.")


def strict_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """`--strict`: assumed inputs and configs are errors (kpredict.strict)."""
    return click.option("--strict", is_flag=True, help=STRICT_HELP)(f)


def given_inputs(init: str | None, example: str | None, selections: list[tuple[str, str | None]]
                 ) -> tuple[dict[str, str] | None, dict[str, str] | None]:
    """(examples, inits) for kpredict.api from `--example` and `--init`: they apply to the one
    function selected as FILE::QUALNAME, and are a usage error without exactly one selection (a
    whole file has many functions, and one constructor's arguments would not fit the others)."""
    if init is None and example is None:
        return None, None
    opt = "--init" if init is not None else "--example"
    chosen = [only for _, only in selections if only]
    if len(selections) != 1 or len(chosen) != 1:
        raise click.UsageError(f"{opt} applies to one function: name it as FILE::QUALNAME "
                               f"(e.g. model.py::GPT.forward), and only it")
    q = chosen[0]
    return ({q: example} if example else None), ({q: init} if init else None)


def diff_inputs(values: tuple[str, ...], opt: str) -> dict[str, str] | None:
    """diff's repeatable `--init` / `--example` values, `QUALNAME: NAME=EXPR ...`, as qualname ->
    its `NAME=EXPR ...` text. diff analyzes whole files, so each value names its function as
    report's FILE::QUALNAME does after the `::` (GPT.forward), and applies to that function in every
    changed file that defines it, at the base and at the head alike."""
    out: dict[str, str] = {}
    for v in values:
        m = re.match(r"\s*([A-Za-z_][\w.]*)\s*:(?!:)\s*(.*)\Z", v, re.S)
        if m is None or not m.group(2).strip():
            raise click.BadParameter(f"expected 'QUALNAME: NAME=EXPR ...' (e.g. \"GPT.forward: config=GPTConfig("
                                     f"n_layer=2)\"), got {v!r}", param_hint=opt)
        q, items = m.group(1), m.group(2).strip()
        out[q] = f"{out[q]} {items}" if q in out else items
    return out or None


def parse_sweep(values: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, list[int]] | None]:
    """`report`'s `--dim` values split into the fixed ones (NAME=INT, for parse_dims) and the one swept
    size (`--dim T=128,1024,8192`), if any; two swept sizes are a usage error."""
    fixed, swept = [], []
    for v in values:
        name, _, nums = v.partition("=")
        if "," not in nums:
            fixed.append(v)
            continue
        parts = [n.strip() for n in nums.split(",") if n.strip()]
        if not name.strip() or not parts or not all(p.lstrip("-").isdigit() for p in parts):
            raise click.BadParameter(f"expected NAME=INT or NAME=INT,INT,..., got {v!r}", param_hint="--dim")
        swept.append((name.strip(), [int(p) for p in parts]))
    if len(swept) > 1:
        raise click.BadParameter("one size can be swept at a time (NAME=A,B,C); fix the others with NAME=INT",
                                 param_hint="--dim")
    return tuple(fixed), (swept[0] if swept else None)


def parse_dims(values: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    """`--dim NAME=INT` values (repeatable), for `report`, `check` and `diff`."""
    out = []
    for v in values:
        name, _, num = v.partition("=")
        if not name or not num.strip().lstrip("-").isdigit():
            raise click.BadParameter(f"expected NAME=INT, got {v!r}", param_hint="--dim")
        out.append((name.strip(), int(num)))
    return tuple(out)


def time_budget_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """`--time-budget SECONDS` (kpredict.project's `time-budget`): CPU seconds one file may take."""
    return click.option("--time-budget", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
                        help="CPU seconds one file's analysis may take; past them the rest is not followed "
                             "and its figures are lower bounds [config: time-budget; default 10; 0: none].")(f)
