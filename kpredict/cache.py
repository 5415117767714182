"""Per-file result cache: an unchanged file is not analyzed twice.

Layout: `<cache dir>/CACHEDIR.TAG` (so backup tools skip it), `<cache dir>/.gitignore` (`*`), and one
file per entry under `<cache dir>/v1/<2 hex>/<key>.pickle`. The default folder is
`.kpredict_cache/` in the current working directory (`--cache-dir` moves it, `--no-cache` turns it off).

The key is sha256 over: the file's bytes, its absolute path and the requested qualname, kpredict's
version and a digest of its own source (so an edited checkout never reads stale results), the rules
version (`default_table().version`) and a digest of every rules/*.toml, and `Settings.key()` (which
covers every option that changes predictions or findings). The value is the FileReport serialized by
kpredict.serial, so a cached report has `graph=None` on its functions.

An entry also lists the other files the analysis read (imported modules of the same tree, the
pyproject.toml it took examples from), each with its size, mtime and sha256, and is used only while
they are unchanged (kpredict/reads.py).

An entry is the entry's plain form (dicts, lists, strings and numbers, as kpredict.serial makes it)
pickled: 5x faster to write than the JSON it was (json.dumps was 1.6% of a cold run on transformers)
and read back with an unpickler that refuses every class and function, so a crafted file in a cache
folder can make a miss, never run code.

Entries are written atomically (a temporary file in the same folder, then os.replace), so parallel
workers never see half an entry; an entry that cannot be read or decoded is ignored and rewritten.
Reports with an internal error are never stored. Any failure to write is silent: the cache is only
ever an optimization.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import pickle
import shutil
import sys
import sysconfig
import tempfile
from functools import lru_cache
from pathlib import Path

from kpredict import __version__
from kpredict.ir import FileReport
from kpredict.opfacts import _rules_dir, default_table
from kpredict.serial import FORMAT, file_report_from_dict, file_report_to_dict
from kpredict.settings import Settings

DEFAULT_DIR = ".kpredict_cache"
LAYOUT = "v1"
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by kpredict.\n"
    "# For information about cache directory tags, see https://bford.info/cachedir/\n"
)


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """kpredict's version plus a digest of all its own .py files (cheap: read once per process)."""
    h = hashlib.sha256(__version__.encode())
    pkg = Path(__file__).resolve().parent
    for p in sorted(pkg.rglob("*.py")):
        rel = p.relative_to(pkg).as_posix()
        try:
            h.update(rel.encode() + b"\0" + p.read_bytes() + b"\0")
        except OSError:
            pass
    return h.hexdigest()[:16]


@lru_cache(maxsize=1)
def rules_fingerprint() -> str:
    """The op table's version and a digest of every rules/*.toml file."""
    h = hashlib.sha256(default_table().version.encode())
    d = _rules_dir()
    for p in sorted(d.glob("*.toml")):
        try:
            h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
        except OSError:
            pass
    return h.hexdigest()[:16]


def _canonical(v: object) -> object:
    """A JSON-able form of a config value that does not depend on set order or hash seeds."""
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {"__class__": type(v).__qualname__,
                **{f.name: _canonical(getattr(v, f.name)) for f in dataclasses.fields(v)}}
    if isinstance(v, (set, frozenset)):
        return sorted((_canonical(x) for x in v), key=lambda x: json.dumps(x, sort_keys=True, default=repr))
    if isinstance(v, (list, tuple)):
        return [_canonical(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _canonical(x) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return repr(v)


def config_digest(config: object | None) -> str:
    """A stable digest of a settings-like object (None: 'none'); uses its key() method when it has one."""
    if config is None:
        return "none"
    key = getattr(config, "key", None)
    if callable(key):
        return str(key())
    return hashlib.sha256(json.dumps(_canonical(config), sort_keys=True).encode()).hexdigest()[:16]


# -- other files an analysis reads (imported modules of the same tree, pyproject.toml) ---------------
#
# The analysis of one file may read others (`from .layers import Block`); the readers note each such
# file (kpredict/reads.py), and the entry is valid only while each of those files is unchanged (same
# size and mtime, else same sha256) and each file noted while absent is still absent. Files of
# kpredict itself, its rules and the Python installation are left out (the key already covers
# kpredict and its rules).


@lru_cache(maxsize=1)
def _ignored_prefixes() -> tuple[str, ...]:
    roots = {str(Path(__file__).resolve().parent), str(Path(_rules_dir()).resolve())}
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix):
        roots.add(os.path.realpath(p))
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            roots.add(os.path.realpath(p))
    return tuple(sorted(r.rstrip(os.sep) + os.sep for r in roots))


def _file_state(path: str) -> list | None:
    """[size, mtime_ns, sha256] of a regular file, or None when there is none."""
    try:
        st = os.stat(path)
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, digest]


def dependency_states(paths: set[str], own: str) -> list[list]:
    """[[absolute path, state or None], ...] for the files an analysis read, besides its own file."""
    own_abs = os.path.abspath(own)
    ignored = _ignored_prefixes()
    out = []
    for p in sorted({os.path.abspath(p) for p in paths}):
        if p == own_abs or p.endswith((".pyc", ".so")) or os.path.realpath(p).startswith(ignored):
            continue
        out.append([p, _file_state(p)])
    return out


def _deps_unchanged(deps: object) -> bool:
    if not isinstance(deps, list):
        return False
    for item in deps:
        path, state = item
        try:
            st = os.stat(path)
            exists = os.path.isfile(path)
        except OSError:
            exists = False
        if state is None or not exists:
            if (state is None) != (not exists):
                return False
            continue
        if [st.st_size, st.st_mtime_ns] == state[:2]:
            continue
        now = _file_state(path)
        if now is None or now[2] != state[2]:
            return False
    return True


class _PlainUnpickler(pickle.Unpickler):
    """Loads plain data only: an entry never names a class or function, so one that does (a file
    that is no entry of ours) fails to load instead of running anything."""

    def find_class(self, module: str, name: str) -> object:
        raise pickle.UnpicklingError(f"{module}.{name}: a cache entry holds plain data only")


def load_entry(raw: bytes) -> object:
    """A cache entry's plain form; raises on anything else."""
    return _PlainUnpickler(io.BytesIO(raw)).load()


class Cache:
    """One cache folder, bound to one Settings (whose key is part of every entry's key)."""

    def __init__(self, directory: str | os.PathLike[str] | None = None, settings: Settings | None = None,
                 lint: object | None = None) -> None:
        self.dir = Path(directory) if directory is not None else Path.cwd() / DEFAULT_DIR
        self.settings = settings or Settings()
        self.lint = lint  # a kpredict.lint.config.LintConfig (findings depend on it) or None
        self._prefix: bytes | None = None
        self._ready = False
        self.hits = 0
        self.misses = 0

    # -- keys

    def _salt(self) -> bytes:
        if self._prefix is None:
            self._prefix = "\0".join(
                (FORMAT, LAYOUT, code_fingerprint(), rules_fingerprint(), self.settings.key(),
                 config_digest(self.lint))
            ).encode() + b"\0"
        return self._prefix

    def key(self, path: str, data: bytes, only: str | None = None) -> str:
        h = hashlib.sha256(self._salt())
        h.update(os.path.abspath(path).encode("utf-8", "surrogateescape") + b"\0")
        h.update((only or "").encode("utf-8", "surrogateescape") + b"\0")
        h.update(data)
        return h.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.dir / LAYOUT / key[:2] / f"{key}.pickle"

    # -- read / write

    def probe(self, path: str, data: bytes, only: str | None = None) -> str | None:
        """The key of the entry for this content when one exists (cheap: no read; `get_key` reads and
        validates it)."""
        key = self.key(path, data, only)
        return key if self._entry(key).is_file() else None

    def get(self, path: str, data: bytes, only: str | None = None) -> FileReport | None:
        return self.get_key(path, self.key(path, data, only))

    def get_key(self, path: str, key: str) -> FileReport | None:
        """The entry stored under `key` (Cache.key of the file's content as it was read), validated."""
        try:
            raw = self._entry(key).read_bytes()
            d = load_entry(raw)
            if not isinstance(d, dict) or d.get("key") != key or d.get("format") != FORMAT:
                raise ValueError("stale or foreign entry")
            if d.get("deps") and not _deps_unchanged(d["deps"]):
                raise ValueError("a file it read has changed")
            report = file_report_from_dict(d["report"])
        except FileNotFoundError:
            self.misses += 1
            return None
        except Exception:  # noqa: BLE001 - a corrupt entry is a miss; put() rewrites it
            self.misses += 1
            return None
        report.path = path
        self.hits += 1
        return report

    def put(self, path: str, data: bytes, report: FileReport, only: str | None = None,
            reads: set[str] | None = None) -> None:
        """Store a report; `reads`: the other files its analysis read (see kpredict/reads.py)."""
        if report.error and report.error.startswith("internal error"):
            return
        key = self.key(path, data, only)
        target = self._entry(key)
        try:
            self._prepare()
            target.parent.mkdir(parents=True, exist_ok=True)
            deps = dependency_states(reads, path) if reads else []
            payload = pickle.dumps({"format": FORMAT, "key": key, "deps": deps, "report": file_report_to_dict(report)},
                                   protocol=5)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".pickle", dir=target.parent)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(payload)
                os.chmod(tmp, 0o644)  # mkstemp makes 0600; entries are as shareable as the tree
                os.replace(tmp, target)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except (OSError, TypeError, ValueError, pickle.PicklingError):
            return

    def _prepare(self) -> None:
        """Create the folder with its CACHEDIR.TAG and .gitignore (idempotent, race-safe)."""
        if self._ready:
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        for name, text in (("CACHEDIR.TAG", CACHEDIR_TAG), (".gitignore", "# created by kpredict\n*\n")):
            p = self.dir / name
            if not p.exists():
                fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self.dir)
                with os.fdopen(fd, "w") as f:
                    f.write(text)
                os.chmod(tmp, 0o644)
                os.replace(tmp, p)
        self._ready = True

    def clear(self) -> None:
        """Remove every entry (the folder, its tag and .gitignore stay)."""
        shutil.rmtree(self.dir / LAYOUT, ignore_errors=True)
