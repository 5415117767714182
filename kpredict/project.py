"""The project's settings: `[tool.kpredict]` of its pyproject.toml, found by one rule, checked in one
place, and merged with the command line (the command line wins).

Which pyproject.toml: the nearest one that has a `[tool.kpredict]` table, from the analyzed file's
folder (or the analyzed folder) upwards, as ruff looks for `[tool.ruff]`. A pyproject.toml without
that table (a sub-package's packaging file) is passed over. `--config FILE` names the file instead
and `--isolated` uses none (`check` and `diff`). Every command (`report`, `check`, `diff`, `verify`)
and the Python API (kpredict.api) take target, mode, dims and all-files from here, and the analysis
of a file reads its `[tool.kpredict.examples]` and `[tool.kpredict.init]` entries from here
(`file_entries`), by the same rule.

    [tool.kpredict]
    target = "cuda"                 # cuda | cpu
    mode = "eval"                   # eval | train
    all-files = false               # also analyze files that reach no torch import
    gpu = "h100"                    # the time model's device preset (rules/devices.toml; --gpu wins)
    time-budget = 10                # CPU seconds per file; past it the rest is not followed (0: none)
    select = ["ALL"]                # the lint keys: see kpredict/lint/config.py
    ignore = ["KP601"]
    per-file-ignores = { "tests/*" = ["KP4"] }
    exclude = ["scripts/*"]
    output-format = "concise"
    baseline = ".kpredict-baseline.json"

    [tool.kpredict.dims]            # values for symbolic sizes (--dim NAME=INT wins)
    n_layer = 12

    [tool.kpredict.examples]        # example inputs; keys: path relative to this file's folder::qualname
    "model.py::add_relu" = "a=randn(8) b=randn(8)"

    [tool.kpredict.init]            # constructor arguments for a class's methods analyzed alone
    "model.py::MLP" = "d=128"

    [tool.kpredict.rules.KP101]     # rule options (kpredict/lint/config.py checks them)
    min-chain-length = 4

An unknown key, or a value of the wrong kind, is a ConfigError: one line naming the file and the key
(exit status 2 on the command line). The lint keys' codes and rule options are checked by
kpredict.lint.config, which builds on this module.

Layer: project settings and inputs. This module imports the standard library, kpredict.settings,
kpredict.devices (the preset names `gpu` may take) and kpredict.reads (to list the pyproject.toml
among the files an analysis read, for the per-file cache) only: nothing of the frontend, models,
api, lint, render, verify or cli.
"""

from __future__ import annotations

import functools
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kpredict.devices import default_devices
from kpredict.reads import note
from kpredict.settings import Settings

TARGETS = ("cuda", "cpu")
MODES = ("eval", "train")
PREDICTION_KEYS = ("target", "mode", "all-files", "dims", "examples", "init", "gpu", "time-budget")
LINT_KEYS = ("select", "ignore", "extend-select", "per-file-ignores", "extend-per-file-ignores", "exclude",
             "extend-exclude", "output-format", "baseline", "rules")
KEYS = PREDICTION_KEYS + LINT_KEYS
ENTRY_TABLES = ("examples", "init")  # "file.py::qualname" = "text"


class ConfigError(Exception):
    """A configuration or command-line value kpredict cannot use: exit status 2, one line."""


@dataclass(frozen=True)
class Options:
    """Command-line values; None (or empty) means 'not given': the project's value stands."""

    target: str | None = None
    mode: str | None = None
    dims: tuple[tuple[str, int], ...] = ()
    all_files: bool = False  # the flag can only turn it on, as the config file can
    time_budget: float | None = None  # --time-budget SECONDS
    config: str | None = None  # --config FILE: use it instead of discovery
    isolated: bool = False  # --isolated: no config file at all


@dataclass(frozen=True)
class Project:
    """What one pyproject.toml (or none) and the command line say for the files under it."""

    source: str | None  # the pyproject.toml used, if any
    root: str  # its folder (the current directory without one)
    settings: Settings
    table: dict[str, Any]  # the checked [tool.kpredict] table (not to be changed)

    def entries(self, table: str) -> dict[str, str]:
        """`[tool.kpredict.<table>]` (examples, init): "path::qualname" -> text."""
        return dict(self.table.get(table, {}))


# ----------------------------------------------------------------------------------- discovery


def _has_table(pp: Path) -> bool:
    try:
        data = tomllib.loads(pp.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        try:  # a broken file that means to configure kpredict is taken, to report its error
            return b"[tool.kpredict" in pp.read_bytes()
        except OSError:
            return False
    tool = data.get("tool")
    return isinstance(tool, dict) and "kpredict" in tool


@functools.lru_cache(maxsize=1024)
def _has_table_cached(pp: str, mtime_ns: int, size: int) -> bool:
    return _has_table(Path(pp))


def start_dir(path: str | os.PathLike[str]) -> Path:
    """Where the search starts for `path` (a file, a folder, or `file.py::qualname`)."""
    p = Path(os.fspath(path).partition("::")[0] or ".").resolve()
    return p if p.is_dir() else p.parent


def find(path: str | os.PathLike[str], seen: list[Path] | None = None) -> Path | None:
    """THE search rule: the nearest pyproject.toml with a `[tool.kpredict]` table, from `path`'s
    folder upwards (None when there is none). `seen` collects every pyproject.toml looked at."""
    d = start_dir(path)
    for cand in (d, *d.parents):
        pp = cand / "pyproject.toml"
        try:
            st = pp.stat()
        except OSError:
            continue
        if not pp.is_file():
            continue
        if seen is not None:
            seen.append(pp)
        if _has_table_cached(str(pp), st.st_mtime_ns, st.st_size):
            return pp
    return None


def source_for(path: str | os.PathLike[str], options: Options = Options()) -> str | None:
    """The pyproject.toml that applies to `path` under these options (None: no file)."""
    if options.isolated:
        return None
    if options.config:
        if not os.path.isfile(options.config):
            raise ConfigError(f"{options.config}: no such configuration file")
        return options.config
    found = find(path)
    return str(found) if found is not None else None


def stamp(path: str | None) -> tuple[int, int] | None:
    if path is None:
        return None
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size


# ----------------------------------------------------------------------------------- reading


def read_table(path: str) -> dict[str, Any]:
    """The checked `[tool.kpredict]` table of `path` (read again only when the file changed)."""
    try:
        st = stamp(path)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    return _read_table(path, st)


@functools.lru_cache(maxsize=64)
def _read_table(path: str, st: tuple[int, int] | None) -> dict[str, Any]:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    tool = data.get("tool", {})
    table = tool.get("kpredict", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.kpredict] must be a table")
    check_table(table, path)
    return table


def check_table(table: dict[str, Any], where: str) -> None:
    """Key names, and the values of the keys this module uses; raises ConfigError (one line)."""
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) in [tool.kpredict]: {', '.join(unknown)} "
                          f"(known: {', '.join(KEYS)})")
    _choice(table, "target", TARGETS, where)
    _choice(table, "mode", MODES, where)
    _choice(table, "gpu", tuple(sorted(default_devices())), where)
    if not isinstance(table.get("all-files", False), bool):
        raise ConfigError(f"{where}: all-files must be true or false, not {table['all-files']!r}")
    budget = table.get("time-budget", 0)
    if not isinstance(budget, (int, float)) or isinstance(budget, bool) or budget < 0:
        raise ConfigError(f"{where}: time-budget must be a number of seconds >= 0, not {budget!r}")
    dims = table.get("dims", {})
    if not isinstance(dims, dict):
        raise ConfigError(f"{where}: dims must be a table of name = integer")
    for name, value in dims.items():
        if not isinstance(value, int) or isinstance(value, bool):
            raise ConfigError(f"{where}: dims.{name} must be an integer, not {value!r}")
    for name in ENTRY_TABLES:
        raw = table.get(name, {})
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: [tool.kpredict.{name}] must be a table of \"file.py::qualname\" = \"...\"")
        for key, value in raw.items():
            if "::" not in key or not key.partition("::")[2]:
                raise ConfigError(f"{where}: [tool.kpredict.{name}] key {key!r} must be \"file.py::qualname\"")
            if not isinstance(value, str):
                raise ConfigError(f"{where}: [tool.kpredict.{name}] {key!r} must be a string, not {value!r}")


def _choice(table: dict[str, Any], key: str, choices: tuple[str, ...], where: str) -> None:
    if key in table and table[key] not in choices:
        raise ConfigError(f"{where}: {key} must be one of {', '.join(choices)}, not {table[key]!r}")


# ----------------------------------------------------------------------------------- merging


def merge(table: dict[str, Any], options: Options = Options()) -> Settings:
    """Settings from a checked table with the command line on top."""
    dims = dict(table.get("dims", {}))
    dims.update(dict(options.dims))
    target = options.target or table.get("target", "cuda")
    gpu = table.get("gpu")
    if gpu is not None and default_devices()[gpu].target != target:
        gpu = None  # a preset of another target (an h100 while --target cpu): the target's own default
    return Settings(target=target,
                    mode=options.mode or table.get("mode", "eval"),
                    dims=tuple(sorted(dims.items())),
                    all_files=bool(table.get("all-files", False)) or options.all_files,
                    time_budget=float(options.time_budget if options.time_budget is not None
                                      else table.get("time-budget", Settings.time_budget)),
                    gpu=gpu)


def load(path: str | os.PathLike[str], options: Options = Options()) -> Project:
    """The project that applies to `path` (a file, a folder or `file.py::qualname`), with `options`
    on top. Raises ConfigError."""
    source = source_for(path, options)
    table = read_table(source) if source else {}
    root = str(Path(source).resolve().parent) if source else os.getcwd()
    return Project(source=source, root=root, settings=merge(table, options), table=table)


def settings_for(path: str | os.PathLike[str], options: Options = Options()) -> Settings:
    """load(path, options).settings. Raises ConfigError."""
    return load(path, options).settings


# ----------------------------------------------------------------------------------- per file


def file_entries(path: str | os.PathLike[str]) -> dict[str, dict[str, str]]:
    """The `[tool.kpredict.examples]` and `[tool.kpredict.init]` entries of the project's
    pyproject.toml that name this file: table -> qualname -> text. For the analysis, which never
    stops on a configuration error (the commands report it): an unreadable file gives nothing.

    Every pyproject.toml looked at is noted as a file the analysis read (kpredict.reads), also when
    the table comes from memory, so that the per-file cache sees an edit to any of them."""
    resolved = Path(path).resolve()
    seen: list[Path] = []
    pp = find(resolved, seen)
    for p in seen:
        note(p)
    if pp is None:
        return {}
    try:
        data = _entry_tables(str(pp), pp.stat().st_mtime_ns)
    except OSError:
        return {}
    try:
        rel = resolved.relative_to(pp.parent).as_posix()
    except ValueError:
        return {}
    out: dict[str, dict[str, str]] = {}
    for table, entries in data.items():
        for key, value in entries.items():
            kpath, _, kqual = key.partition("::")
            if kqual and Path(kpath).as_posix() in (rel, f"./{rel}"):
                out.setdefault(table, {}).setdefault(kqual, value)
    return out


@functools.lru_cache(maxsize=64)
def _entry_tables(pp: str, mtime_ns: int) -> dict[str, dict[str, str]]:
    """The entry tables of one pyproject.toml, read once per version of the file (every function of
    every file asks for its examples and inits: reading the TOML each time cost 5% of a cold run).
    Entries that are not "path::qualname" = "text" are left out here; the commands report them."""
    try:
        data = tomllib.loads(Path(pp).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    tool = data.get("tool", {})
    table = tool.get("kpredict", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        return {}
    out: dict[str, dict[str, str]] = {}
    for name in ENTRY_TABLES:
        raw = table.get(name, {})
        if isinstance(raw, dict):
            out[name] = {str(k): v for k, v in raw.items() if isinstance(v, str)}
    return out
