"""FileReport <-> plain JSON-able dicts, for the per-file cache and for worker processes.

The conversion follows the dataclass fields of kpredict.ir, so a field added there (with a default)
round-trips without a change here. `FunctionReport.graph` (the op graph, kept in memory for lint
rules) is never serialized: a report read back from the cache has `graph=None`. Whatever needs the
graph (findings) must therefore be computed before a report is stored, inside the analysis.

Instances of subclasses defined outside kpredict.ir (lint's Diagnostic, a Finding) carry a
`__type__` tag ("module:qualname") and come back as that class; only kpredict classes are accepted.
This is an internal format (the cache's), not the public JSON report (kpredict/render/json_report.py).
"""

from __future__ import annotations

import dataclasses
import importlib
import types
import typing
from functools import lru_cache

from kpredict import ir
from kpredict.ir import FileReport

FORMAT = "kpredict/cache-report/v4"
_TYPE = "__type__"  # marks an instance of a subclass defined outside kpredict.ir
_NOT_SERIALIZED = frozenset({"graph", "kernel_lists"})


_SCALARS = frozenset({int, float, str, bool, type(None)})


def _to_plain(v: object) -> object:
    t = type(v)
    if t in _SCALARS:
        return v
    enc = _encoder(t)
    if enc is not None:
        return enc(v)
    if t is list or t is tuple:
        return [x if type(x) in _SCALARS else _to_plain(x) for x in v]  # type: ignore[union-attr]
    return _to_plain_general(v)


def _op_rows_to_table(rows: list[ir.OpRow]) -> dict:
    """A function's op rows as a table of distinct rows (all fields but the kernel group) and, per row,
    its index there and its group: a model's forward repeats each layer's rows once per layer, and the
    109-file transformers sample's 482,893 rows hold 54,249 distinct ones."""
    index: dict[tuple, int] = {}
    distinct: list[list] = []
    at: list[int] = []
    groups: list[int | None] = []
    for r in rows:
        s = r.span
        k = (id(s), r.op, r.kind, r.kernels, r.reads, r.writes)  # spans are shared by the ops of one line
        i = index.get(k)
        if i is None:
            i = index[k] = len(distinct)
            distinct.append([s.line, s.col, s.end_line, s.end_col, r.op, r.kind, r.kernels, r.reads, r.writes])
        at.append(i)
        groups.append(r.group)
    return {"rows": distinct, "at": at, "group": groups}


def _op_rows_from_table(v: dict) -> list[ir.OpRow]:
    made = [(ir.Span(line, col, end_line, end_col), op, kind, kernels, reads, writes)
            for line, col, end_line, end_col, op, kind, kernels, reads, writes in v["rows"]]
    row = ir.OpRow
    return [row(*made[i], g) for i, g in zip(v["at"], v["group"], strict=True)]


# Tables, not a dict per item, for the one type there are hundreds of thousands of (a function's op
# rows): a warm run spent 85% of its time building OpRows and their Spans from dicts, and a cold one
# 8% encoding them. A field added to OpRow must be added here (tests/test_robustness.py
# test_op_rows_are_stored_as_a_table_with_every_field fails until it is).
def _costs_to_table(costs: list[ir.KernelCost]) -> dict:
    """A mode's kernel costs (one per kernel: as many as its op rows) as rows of their fields."""
    return {"rows": [[c.name, c.flops, c.flops_elementwise, c.bytes, c.time_us, c.bound, c.launches] for c in costs]}


def _costs_from_table(v: dict) -> list[ir.KernelCost]:
    cost = ir.KernelCost
    return [cost(*row) for row in v["rows"]]


_TABLES: dict[type, tuple[typing.Callable[[typing.Any], dict], typing.Callable[[typing.Any], list]]] = {
    ir.OpRow: (_op_rows_to_table, _op_rows_from_table),
    ir.KernelCost: (_costs_to_table, _costs_from_table),
}


def _list_item(tp: object) -> object:
    """X for list[X], else None."""
    if typing.get_origin(tp) is list:
        args = typing.get_args(tp)
        return args[0] if args else None
    return None


@lru_cache(maxsize=None)
def _encoder(cls: type) -> typing.Callable[[object], object] | None:
    """`_to_plain` for one dataclass (None for other types), its field names looked up once: a cold
    run writes every report to the cache, and asking dataclasses for the fields of millions of ops
    cost 15% of it."""
    if not dataclasses.is_dataclass(cls):
        return None
    names = tuple(f.name for f in dataclasses.fields(cls) if f.name not in _NOT_SERIALIZED)
    hints = _hints(cls)
    tables = {n: _TABLES[item][0] for n in names if (item := _list_item(hints.get(n))) in _TABLES}
    tag = f"{cls.__module__}:{cls.__qualname__}" if cls.__module__ != ir.__name__ else None
    scalars = _SCALARS

    def enc(v: object) -> dict:
        d = {}
        for n in names:
            x = getattr(v, n)
            if type(x) in scalars:
                d[n] = x
            elif n in tables and type(x) is list:
                d[n] = tables[n](x)
            else:
                d[n] = _to_plain(x)
        if tag is not None:  # a subclass from elsewhere (lint's Diagnostic is a Finding)
            d[_TYPE] = tag
        return d

    return enc


def _to_plain_general(v: object) -> object:
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        d = {f.name: _to_plain(getattr(v, f.name)) for f in dataclasses.fields(v) if f.name not in _NOT_SERIALIZED}
        cls = type(v)
        if cls.__module__ != ir.__name__:  # a subclass from elsewhere (lint's Diagnostic is a Finding)
            d[_TYPE] = f"{cls.__module__}:{cls.__qualname__}"
        return d
    if isinstance(v, (list, tuple)):
        return [_to_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _to_plain(x) for k, x in v.items()}
    return v


@lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, object]:
    try:
        return typing.get_type_hints(cls)
    except NameError:
        return typing.get_type_hints(cls, localns=vars(ir))


def _tagged_class(tag: object, declared: type) -> type:
    """The class named by a _TYPE tag: only a kpredict dataclass that is a subclass of the declared one."""
    if not isinstance(tag, str) or ":" not in tag:
        raise ValueError(f"bad type tag {tag!r}")
    module, _, qual = tag.partition(":")
    if module != "kpredict" and not module.startswith("kpredict."):
        raise ValueError(f"refusing type tag {tag!r}")
    obj: object = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    if not (isinstance(obj, type) and dataclasses.is_dataclass(obj) and issubclass(obj, declared)):
        raise ValueError(f"type tag {tag!r} is not a {declared.__name__}")
    return obj


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
        if item in _TABLES:
            return _TABLES[item][1](v)  # type: ignore[index]
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
        if isinstance(v, dict) and _TYPE in v:
            tp = _tagged_class(v[_TYPE], tp)
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
    r = _converter(FileReport)(d)
    assert isinstance(r, FileReport)
    return r


def _identity(v: object) -> object:
    return v


@lru_cache(maxsize=None)
def _converter(tp: object) -> typing.Callable[[object], object]:
    """`_from_plain(tp, .)` specialized once per type: a warm run reads every cached report, and
    looking up type hints and fields for each of millions of values cost 90% of it."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(tp) if a is not type(None)]
        dc = next((a for a in members if dataclasses.is_dataclass(a)), None)
        if dc is None:
            return _identity
        return lambda v: _converter(dc)(v) if isinstance(v, dict) else v
    if origin is list:
        (item,) = typing.get_args(tp) or (object,)
        if item in _TABLES:
            table = _TABLES[item][1]
            return lambda v: None if v is None else table(v)
        c = _converter(item)
        if c is _identity:
            return lambda v: None if v is None else list(v)  # type: ignore[call-overload]
        return lambda v: None if v is None else [c(x) for x in v]  # type: ignore[union-attr]
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            c = _converter(args[0])
            if c is _identity:
                return lambda v: None if v is None else tuple(v)  # type: ignore[arg-type]
            return lambda v: None if v is None else tuple(c(x) for x in v)  # type: ignore[union-attr]
        if args:
            cs = [_converter(a) for a in args]
            return lambda v: None if v is None else tuple(c(x) for c, x in zip(cs, v))  # type: ignore[arg-type]
        return lambda v: None if v is None else tuple(v)  # type: ignore[arg-type]
    if origin is dict:
        _, vt = typing.get_args(tp) or (str, object)
        c = _converter(vt)
        return lambda v: None if v is None else {k: c(x) for k, x in v.items()}  # type: ignore[union-attr]
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _DataclassConverter(tp)
    return _identity


class _DataclassConverter:
    """Builds one dataclass from its dict; field converters are resolved on first use (a type may
    refer to itself)."""

    def __init__(self, tp: type) -> None:
        self.tp = tp
        self.fields: dict[str, typing.Callable[[object], object]] | None = None

    def __call__(self, v: object) -> object:
        if v is None:
            return None
        if _TYPE in v:  # type: ignore[operator]
            return _from_plain(self.tp, v)  # a tagged subclass: the general path
        fields = self.fields
        if fields is None:
            hints = _hints(self.tp)
            fields = self.fields = {f.name: _converter(hints.get(f.name, object))
                                    for f in dataclasses.fields(self.tp) if f.init}
        kwargs = {}
        for k, x in v.items():  # type: ignore[union-attr]
            c = fields.get(k)
            if c is not None:  # fields this version does not know are dropped
                kwargs[k] = x if c is _identity or x is None else c(x)
        return self.tp(**kwargs)
