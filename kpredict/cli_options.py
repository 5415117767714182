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
`run: RunOptions` argument instead of three; `parse_dims` reads the `--dim NAME=INT` values.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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


def parse_dims(values: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    """`--dim NAME=INT` values (repeatable), for `report`, `check` and `diff`."""
    out = []
    for v in values:
        name, _, num = v.partition("=")
        if not name or not num.strip().lstrip("-").isdigit():
            raise click.BadParameter(f"expected NAME=INT, got {v!r}", param_hint="--dim")
        out.append((name.strip(), int(num)))
    return tuple(out)
