"""Lint configuration: the lint keys of `[tool.kpredict]`, with the command line on top.

Which pyproject.toml applies, its key names and the prediction settings (target, mode, dims,
all-files, examples, init) are kpredict.project's: this module adds rule selection, rule options,
per-file-ignores, exclude, output-format and baseline on top of it.

Rule selection follows ruff: `select`, `extend-select` and `ignore` take codes or prefixes (`KP1`,
`KP101`) or `ALL`. Within one layer (the config file, then the command line) the most specific
selector wins and an ignore beats a select of the same length; a layer with `select` starts over,
a layer without it adjusts the one below.

    [tool.kpredict]
    select = ["ALL"]                # default: the rules on by default (kpredict.lint.precision)
    ignore = ["KP601"]
    extend-select = []
    per-file-ignores = { "tests/*" = ["KP4"] }
    exclude = ["scripts/*"]
    output-format = "concise"
    baseline = ".kpredict-baseline.json"

    [tool.kpredict.rules.KP101]     # or [tool.kpredict.rules.unfused-elementwise-chain]
    min-chain-length = 4

The rules' codes, names and options come from kpredict.lint.registry (no rule imports this module).
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from kpredict import project
from kpredict.lint.registry import by_code, codes, default_codes, get
from kpredict.project import KEYS, ConfigError  # noqa: F401 - re-exported (every command catches ConfigError)
from kpredict.settings import Settings

OUTPUT_FORMATS = ("full", "concise", "json", "json-lines", "github", "sarif", "rdjsonl", "gitlab", "markdown")


@dataclass(frozen=True)
class LintConfig:
    """What the engine needs to lint one file (picklable, hashable: it travels to worker processes)."""

    enabled: frozenset[str]
    options: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = ()
    root: str = "."  # per-file-ignores globs are relative to this directory

    @classmethod
    def default(cls, **overrides: Any) -> LintConfig:
        return cls(enabled=frozenset(default_codes()), **overrides)

    def rule_options(self, code: str) -> dict[str, Any]:
        rule = by_code()[code]
        out = dict(rule.options)
        for c, opts in self.options:
            if c == code:
                out.update(dict(opts))
        return out

    def enabled_for(self, path: str) -> frozenset[str]:
        """The enabled codes less those that per-file-ignores turn off for `path`."""
        if not self.per_file_ignores:
            return self.enabled
        rel = relative_to(path, self.root)
        off: set[str] = set()
        for pattern, ignored in self.per_file_ignores:
            if path_matches(rel, pattern):
                off |= ignored
        return self.enabled - off


@dataclass(frozen=True)
class Overrides:
    """Command-line values; None means 'not given' (the config file's value stands)."""

    target: str | None = None
    mode: str | None = None
    dims: tuple[tuple[str, int], ...] = ()
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    options: tuple[tuple[str, str, Any], ...] = ()  # (code, option, value)
    exclude: tuple[str, ...] = ()
    config: str | None = None  # --config FILE: use it instead of discovery
    isolated: bool = False  # --isolated: ignore every config file
    all_files: bool = False  # --all-files (the config file can only turn it on, as the flag can)
    time_budget: float | None = None  # --time-budget SECONDS


@dataclass
class Resolved:
    """Everything that applies to the files under one configuration."""

    settings: Settings
    lint: LintConfig
    exclude: tuple[str, ...] = ()
    source: str | None = None  # the pyproject.toml used, if any
    output_format: str | None = None
    baseline: str | None = None
    root: str = "."
    raw: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------------- discovery


def find_config(directory: str) -> str | None:
    """The pyproject.toml that applies under `directory` (kpredict.project.find, the one search rule)."""
    found = project.find(Path(directory) / "x.py")
    return str(found) if found is not None else None


def load_table(path: str) -> dict[str, Any]:
    """The checked [tool.kpredict] table of `path` (kpredict.project.read_table)."""
    return project.read_table(path)


def resolve_for(path: str, cli: Overrides) -> Resolved:
    """The configuration that applies to `path` (a file or a directory)."""
    source = project.source_for(path, project.Options(config=cli.config, isolated=cli.isolated))
    return _resolve(source, project.stamp(source), cli, default_codes())


@lru_cache(maxsize=64)
def _resolve(source: str | None, stamp: tuple[int, int] | None, cli: Overrides,
             defaults: tuple[str, ...]) -> Resolved:
    table = project.read_table(source) if source else {}
    root = str(Path(source).resolve().parent) if source else os.getcwd()
    where = source or "command line"
    settings = project.merge(table, project.Options(target=cli.target, mode=cli.mode, dims=cli.dims,
                                                    all_files=cli.all_files, time_budget=cli.time_budget))

    layers = [Layer(select=defaults)]
    layers.append(Layer(select=_codes_list(table, "select", where, none_ok=True),
                        extend_select=_codes_list(table, "extend-select", where) or (),
                        ignore=_codes_list(table, "ignore", where) or ()))
    layers.append(Layer(select=cli.select, extend_select=cli.extend_select, ignore=cli.ignore))
    enabled = select_codes(layers)

    pfi: list[tuple[str, frozenset[str]]] = []
    for key in ("per-file-ignores", "extend-per-file-ignores"):
        raw = table.get(key, {})
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: {key} must be a table of glob = [codes]")
        for pattern, sels in raw.items():
            if not isinstance(sels, list) or not all(isinstance(s, str) for s in sels):
                raise ConfigError(f"{where}: {key}.{pattern!r} must be a list of codes")
            pfi.append((pattern, frozenset(expand(tuple(sels)))))

    options = _rule_options(table.get("rules", {}), where)
    for code, name, value in cli.options:
        options.setdefault(code, {})[name] = value
    _check_options(options, "--rule-option" if cli.options else where)
    opt_tuple = tuple(sorted((c, tuple(sorted(o.items()))) for c, o in options.items()))

    exclude = tuple(_str_list(table, "exclude", where)) + tuple(_str_list(table, "extend-exclude", where)) + cli.exclude
    fmt = table.get("output-format")
    if fmt is not None and fmt not in OUTPUT_FORMATS:
        raise ConfigError(f"{where}: output-format must be one of {', '.join(OUTPUT_FORMATS)}, not {fmt!r}")
    baseline = table.get("baseline")
    if baseline is not None and not isinstance(baseline, str):
        raise ConfigError(f"{where}: baseline must be a path")
    if baseline is not None and not os.path.isabs(baseline):
        baseline = os.path.join(root, baseline)
    lint = LintConfig(enabled=enabled, options=opt_tuple, per_file_ignores=tuple(pfi), root=root)
    return Resolved(settings=settings, lint=lint, exclude=exclude, source=source, output_format=fmt,
                    baseline=baseline, root=root, raw=table)


# ----------------------------------------------------------------------------------- selection


@dataclass(frozen=True)
class Layer:
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


def _specificity(selector: str, code: str) -> int:
    """-1: does not match; else how specific the match is (ALL = 0, 'KP' = 2, 'KP101' = 5)."""
    s = selector.strip().upper()
    if s == "ALL":
        return 0
    return len(s) if code.startswith(s) else -1


def validate_selectors(selectors: tuple[str, ...] | list[str], where: str) -> None:
    all_codes = codes()
    for s in selectors:
        u = s.strip().upper()
        if u == "ALL" or any(c.startswith(u) for c in all_codes) or get(s) is not None:
            continue
        raise ConfigError(f"{where}: unknown rule selector {s!r} (codes look like KP101; see `kpredict rules`)")


def _normalize(selectors: tuple[str, ...]) -> tuple[str, ...]:
    """Rule names stand for their codes."""
    out = []
    for s in selectors:
        r = get(s) if not s.strip().upper().startswith("KP") and s.strip().upper() != "ALL" else None
        out.append(r.code if r is not None else s)
    return tuple(out)


def select_codes(layers: list[Layer]) -> frozenset[str]:
    enabled: set[str] = set()
    for layer in layers:
        sel = _normalize(layer.select) if layer.select is not None else None
        ext = _normalize(layer.extend_select)
        ign = _normalize(layer.ignore)
        base = set(enabled) if sel is None else set()
        for code in codes():
            s = max((_specificity(x, code) for x in (sel or ()) + ext), default=-1)
            i = max((_specificity(x, code) for x in ign), default=-1)
            if s > i:
                base.add(code)
            elif i >= 0:
                base.discard(code)
        enabled = base
    return frozenset(enabled)


def expand(selectors: tuple[str, ...]) -> list[str]:
    """Codes matched by selectors (prefixes, ALL, names)."""
    sels = _normalize(selectors)
    return [c for c in codes() if any(_specificity(s, c) >= 0 for s in sels)]


# ----------------------------------------------------------------------------------- values


def _str_list(table: dict, key: str, where: str) -> list[str]:
    v = table.get(key, [])
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ConfigError(f"{where}: {key} must be a list of strings")
    return v


def _codes_list(table: dict, key: str, where: str, none_ok: bool = False) -> tuple[str, ...] | None:
    if key not in table:
        return None if none_ok else ()
    v = tuple(_str_list(table, key, where))
    validate_selectors(v, f"{where}: {key}")
    return v


def _rule_options(raw: Any, where: str) -> dict[str, dict[str, Any]]:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [tool.kpredict.rules] must hold one table per rule")
    out: dict[str, dict[str, Any]] = {}
    for key, opts in raw.items():
        rule = get(key)
        if rule is None:
            raise ConfigError(f"{where}: [tool.kpredict.rules.{key}]: no such rule")
        if not isinstance(opts, dict):
            raise ConfigError(f"{where}: [tool.kpredict.rules.{key}] must be a table of options")
        out.setdefault(rule.code, {}).update(opts)
    return out


def _check_options(options: dict[str, dict[str, Any]], where: str) -> None:
    for code, opts in options.items():
        rule = by_code()[code]
        for name, value in opts.items():
            if name not in rule.options:
                known = ", ".join(rule.options) or "none"
                raise ConfigError(f"{where}: {code} has no option {name!r} (its options: {known})")
            default = rule.options[name]
            if type(default) is int and (not isinstance(value, int) or isinstance(value, bool)):
                raise ConfigError(f"{where}: {code} option {name} must be an integer, not {value!r}")
            if type(default) is bool and not isinstance(value, bool):
                raise ConfigError(f"{where}: {code} option {name} must be true or false, not {value!r}")


def parse_rule_option(text: str) -> tuple[str, str, Any]:
    """`KP101.min-chain-length=4` (or `unfused-elementwise-chain.min-chain-length=4`)."""
    head, eq, value = text.partition("=")
    rule_key, dot, name = head.rpartition(".")
    rule = get(rule_key) if dot else None
    if not eq or rule is None or not name:
        raise ConfigError(f"--rule-option: expected CODE.OPTION=VALUE (e.g. KP101.min-chain-length=4), got {text!r}")
    v: Any = value.strip()
    if isinstance(rule.options.get(name), bool):  # `cold-code=true`; bool before int: a bool is an int
        if v.lower() not in ("true", "false", "1", "0"):
            raise ConfigError(f"--rule-option {text}: {name} must be true or false")
        v = v.lower() in ("true", "1")
    elif isinstance(rule.options.get(name), int):
        try:
            v = int(v)
        except ValueError:
            raise ConfigError(f"--rule-option {text}: {name} must be an integer") from None
    return rule.code, name, v


# ----------------------------------------------------------------------------------- paths


def relative_to(path: str, root: str) -> str:
    """`path` relative to `root`, '/'-separated (the absolute path when it is not below root)."""
    ap = os.path.abspath(path)
    try:
        rel = os.path.relpath(ap, root)
    except ValueError:  # another drive on Windows
        return Path(ap).as_posix()
    return Path(ap).as_posix() if rel.startswith("..") else Path(rel).as_posix()


def path_matches(rel: str, pattern: str) -> bool:
    """gitignore-like: the pattern matches the path, one of its leading directories, or (without a
    '/') any single component."""
    pattern = pattern.rstrip("/")
    parts = rel.split("/")
    for i in range(1, len(parts) + 1):
        prefix = "/".join(parts[:i])
        if fnmatch.fnmatchcase(prefix, pattern):
            return True
        if "/" not in pattern and fnmatch.fnmatchcase(parts[i - 1], pattern):
            return True
    return False
