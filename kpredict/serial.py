"""FileReport <-> plain JSON-able dicts, for the per-file cache and for worker processes.

The conversion follows the dataclass fields of kpredict.ir, so a field added there (with a default)
round-trips without a change here. `FunctionReport.graph` (the op graph, kept in memory for lint
rules) is never serialized: a report read back from the cache has `graph=None`. Whatever needs the
graph (findings) must therefore be computed before a report is stored, inside the analysis.

This is an internal format (the cache's), not the public JSON report (kpredict/render/json_report.py).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import lru_cache

from kpredict import ir
from kpredict.ir import FileReport

FORMAT = "kpredict/cache-report/v1"
_NOT_SERIALIZED = frozenset({"graph"})


def _to_plain(v: object) -> object:
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: _to_plain(getattr(v, f.name)) for f in dataclasses.fields(v) if f.name not in _NOT_SERIALIZED}
    if isinstance(v, (list, tuple)):
        return [_to_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _to_plain(x) for k, x in v.items()}
    return v


@lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, object]:
    return typing.get_type_hints(cls, vars(ir))


def _from_plain(tp: object, v: object) -> object:
    if v is None:
        return None
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        # prefer a dataclass member for dicts, then the first member whose kind matches
        for a in args:
            if a is type(None):
                continue
            if isinstance(v, dict) and dataclasses.is_dataclass(a):
                return _from_plain(a, v)
        for a in args:
            if a is not type(None) and isinstance(a, type) and isinstance(v, a):
                return v
        return v
    if origin is list:
        (item,) = typing.get_args(tp) or (object,)
        return [_from_plain(item, x) for x in v]  # type: ignore[union-attr]
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_from_plain(args[0], x) for x in v)  # type: ignore[union-attr]
        if args:
            return tuple(_from_plain(a, x) for a, x in zip(args, v))  # type: ignore[arg-type]
        return tuple(v)  # type: ignore[arg-type]
    if origin is dict:
        kt, vt = typing.get_args(tp) or (str, object)
        return {k: _from_plain(vt, x) for k, x in v.items()}  # type: ignore[union-attr]
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        kwargs = {}
        names = {f.name for f in dataclasses.fields(tp) if f.init}
        for k, x in v.items():  # type: ignore[union-attr]
            if k in names:  # fields this version does not know are dropped
                kwargs[k] = _from_plain(hints.get(k, object), x)
        return tp(**kwargs)
    return v


def file_report_to_dict(r: FileReport) -> dict:
    """Everything in a FileReport except the functions' op graphs."""
    d = _to_plain(r)
    assert isinstance(d, dict)
    return d


def file_report_from_dict(d: dict) -> FileReport:
    """The inverse of file_report_to_dict (functions come back with graph=None)."""
    r = _from_plain(FileReport, d)
    assert isinstance(r, FileReport)
    return r
