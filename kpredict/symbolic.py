"""Figures that depend on a trip count not known statically: `for block in range(config.n_layer)`.

Kernel counts, transfers and bytes are linear in the trip counts of loops (each iteration adds
the same ops, and Inductor's fusion at iteration boundaries repeats identically), so a function
whose loops run `n_layer` times is analyzed again with `n_layer` = 1 and 2 and each figure becomes
`a + b*n_layer`: the JSON report shows the string "4 + 13*n_layer", the text table shows it as is,
and `--dim n_layer=12` (or `[tool.kpredict.dims]`) makes it a number again. With one symbol a
third run (n = 3) checks that the figure really is linear; when it is not, the report says so.

Named dims of inputs (`B, T, C = x.size()`, kpredict.frontend.dimnames) make bytes a polynomial:
each transfer moves one tensor, whose bytes are itemsize x the product of its dims. The function is
analyzed again with each name set to a marker, 192 x a distinct prime (divisible by the usual head
counts, so `C // n_head` stays exact), and each transfer's bytes are factored into a monomial by
counting the primes in it; the sum is the formula (`8*B*T*C + 4*C`). A check run at other markers
must give the formula's value exactly, else the bytes are not shown (a dim that was divided, a sum
of sizes such as `T + 1`); kernel counts that differ between the two runs (a reduction that splits
only when large) are listed as depending on the sizes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction

from kpredict.ir import DTYPE_SIZES, Count, FunctionGraph, FunctionReport, Kernel, ModeCost
from kpredict.settings import Settings

MAX_SYMBOLS = 4
FIELDS = ("kernels", "reads", "writes", "bytes", "syncs")



@dataclass(slots=True)
class Run:
    """One analysis under other settings: its graph, and its report, modelled when first read. A met run
    (_met_sizes) whose sizes send the function on to other runs is never read: modelling it was a third
    of the Inductor model's time in the reruns."""

    graph: FunctionGraph
    predict: Callable[[], FunctionReport]
    made: FunctionReport | None = None

    @property
    def report(self) -> FunctionReport:
        if self.made is None:
            self.made = self.predict()
        return self.made


# analyze the function again under other settings; with `met` (marker size -> set), also fill it with the
# fixed sizes each watched marker meets (kpredict.frontend.shapes.meet); FLOPs and times (kpredict.cost)
# only with costs=True: a run at marker sizes or loop counts 1, 2 shows none (symbolic_report)
Rebuild = Callable[..., Run | None]


def linear_text(a: int, terms: list[tuple[int, str]]) -> Count:
    """`4 + 13*n_layer`; a plain int when no term depends on a symbol."""
    parts = [(b, name) for b, name in terms if b]
    if not parts:
        return a
    out = str(a) if a else ""
    for b, name in parts:
        coef = name if abs(b) == 1 else f"{abs(b)}*{name}"
        if not out:
            out = coef if b > 0 else f"-{coef}"
        else:
            out += f" + {coef}" if b > 0 else f" - {coef}"
    return out


def _terms(c: Count) -> tuple[int, dict[str, int]] | None:
    """`4 + 13*n_layer - n_head` -> (4, {n_layer: 13, n_head: -1}); None for anything else."""
    if isinstance(c, int):
        return c, {}
    const, coefs = 0, {}
    for sign, term in re.findall(r"([+-]?)\s*([^+-]+)", str(c).replace(" ", "")):
        k = -1 if sign == "-" else 1
        num, _, name = term.partition("*")
        if not name:
            if num.isdigit():
                const += k * int(num)
                continue
            num, name = "1", num
        if not num.isdigit() or not name.isidentifier():
            return None
        coefs[name] = coefs.get(name, 0) + k * int(num)
    return const, coefs


def add_counts(a: Count, b: Count) -> Count:
    """a + b for figures that may be `a + b*n` expressions (reads + writes in the text table)."""
    ta, tb = _terms(a), _terms(b)
    if ta is None or tb is None:
        return f"{a} + {b}"
    names = list(dict.fromkeys([*ta[1], *tb[1]]))
    return linear_text(ta[0] + tb[0], [(ta[1].get(n, 0) + tb[1].get(n, 0), n) for n in names])


def _value(rep: FunctionReport, mode: str, field: str) -> int | None:
    v = getattr(rep.eager if mode == "eager" else rep.compiled, field)
    return v if isinstance(v, int) else None


def symbolic_report(fg: FunctionGraph, report: FunctionReport, settings: Settings, rebuild: Rebuild
                    ) -> FunctionReport:
    """The report of `fg`, with figures as expressions in the loop symbols left unknown by `settings`
    (and bytes as a polynomial in the named dims of its inputs). FLOPs and modelled times are not fitted
    as formulas: where a size or loop count stays unknown they are unknown (None), never the figures of
    a run at marker sizes or of a loop counted once."""
    exact: list[FunctionReport] = []
    out = _symbolic_report(fg, report, settings, rebuild, exact)
    fixed = settings.dim_map
    open_syms = [s for s in fg.loop_symbols if s not in fixed]
    open_dims = [s for s in fg.shape_symbols if s not in fixed]
    if (open_syms or open_dims) and not any(out is r for r in exact):
        _unknown_costs(out)
    return out


def _unknown_costs(rep: FunctionReport) -> None:
    rep.eager_cost, rep.compiled_cost = ModeCost(), ModeCost()
    # the reruns model no costs (Rebuild): a function that launches a kernel in either mode says why
    if rep.speedup is not None or rep.eager.kernels not in (0, None) or rep.compiled.kernels not in (0, None):
        rep.speedup = None
        rep.assumptions = list(rep.assumptions) + [
            "FLOPs and times not shown: they need every size and loop count (give them with --dim)"]


def _symbolic_report(fg: FunctionGraph, report: FunctionReport, settings: Settings, rebuild: Rebuild,
                     exact: list[FunctionReport]) -> FunctionReport:
    """symbolic_report's work; `exact` gets a report rerun with every size and count known. With named
    dims, each step watches its first run (the met run, which is the base run when nothing is met) and
    recurses with what it learnt (a size fixed, a name split or renamed) until nothing new is met."""
    fixed = settings.dim_map
    syms = [s for s in fg.loop_symbols if s not in fixed][:MAX_SYMBOLS]
    dims = [s for s in fg.shape_symbols if s not in fixed and s not in syms][:len(_PRIMES_A)]
    if dims and unsized_use(fg):
        dims = []  # an input of unknown rank reaches an op: its bytes stay unknown whatever the names are
    if dims:
        sizes, first, same, clash = _met_sizes(settings, rebuild, syms, dims)
        if first is None:
            return report
        assumed = {d for _, ds, _ in settings.shapes for d in ds}
        if clash & assumed:
            # an assumed name meets two widths (BertOutput: dense(hidden_states) + input_tensor, 3072 and
            # 768): one name per input, each then meets its own; where that cannot be, no formula
            split = _split(settings, clash & assumed)
            if split is None:
                return report
            again, new = split
            fg2 = replace(fg, shape_symbols=[d for d in fg.shape_symbols if d not in clash] + new)
            return _symbolic_report(fg2, report, again, rebuild, exact)
        renamed, gone = _renamed(settings, same)
        if gone:
            # an assumed name that must equal a name of the code (C and hidden_size): the code's name
            fg2 = replace(fg, shape_symbols=[d for d in fg.shape_symbols if d not in gone])
            return _symbolic_report(fg2, report, renamed, rebuild, exact)
        if sizes:
            # a named dim that meets a fixed size (a Linear's width) is that size: analyze with it given
            again = replace(settings, dims=settings.dims + tuple(sizes.items()))
            if all(d in sizes for d in dims) and not syms:
                run = rebuild(again, costs=True)  # every size known: its FLOPs and times are shown
                if run is None or run.graph.cut_short:
                    return report
                out = replace(run.report, kernel_lists=None)
                exact.append(out)
            else:
                out = _symbolic_report(fg, report, again, rebuild, exact)
            said = ", ".join(f"{d} = {v}" for d, v in sizes.items())
            out.assumptions = list(out.assumptions) + [
                f"{said}: the size {'it meets' if len(sizes) == 1 else 'each meets'} in the code (a weight's width, "
                "a broadcast), found by a run with the sizes unknown"]
            return out
        return shape_report(report, settings, rebuild, syms, dims, first.report, first.graph)
    if not syms:
        return report

    def at(values: dict[str, int]) -> Run | None:
        return rebuild(replace(settings, dims=settings.dims + tuple(values.items())))

    base_values = {s: 1 for s in syms}
    base = at(base_values)
    if base is None:
        return report
    # loops revealed only once an outer loop is unrolled get a symbol of their own
    extra = [s for s in base.graph.loop_symbols if s not in fixed and s not in syms][: MAX_SYMBOLS - len(syms)]
    if extra:
        syms += extra
        base_values = {s: 1 for s in syms}
        base = at(base_values)
        if base is None:
            return report
    base_rep = base.report
    bumped: dict[str, FunctionReport] = {}
    for s in syms:
        run = at({**base_values, s: 2})
        if run is None:
            return report
        bumped[s] = run.report
    third = at({**base_values, syms[0]: 3}) if len(syms) == 1 else None

    out = replace(base_rep, eager=replace(base_rep.eager), compiled=replace(base_rep.compiled))
    nonlinear = False
    for mode in ("eager", "compiled"):
        target = out.eager if mode == "eager" else out.compiled
        for field in FIELDS:
            v1 = _value(base_rep, mode, field)
            vs = {s: _value(r, mode, field) for s, r in bumped.items()}
            if v1 is None or any(v is None for v in vs.values()):
                setattr(target, field, None if field == "bytes" else getattr(target, field))
                continue
            slopes = {s: vs[s] - v1 for s in syms}  # type: ignore[operator]
            a = v1 - sum(slopes.values())
            if third is not None:
                v3 = _value(third.report, mode, field)
                if v3 is not None and v3 - vs[syms[0]] != slopes[syms[0]]:  # type: ignore[operator]
                    nonlinear = True
            setattr(target, field, linear_text(a, [(slopes[s], s) for s in syms]))
    names = ", ".join(syms)
    notes = [f"loop counts not known statically ({names}): figures are a + b*{syms[0]} from runs with "
             f"{names} = 1 and 2; give a value with --dim {syms[0]}=N; kernel names and ops are for {names} = 1"]
    if nonlinear:
        notes.append(f"the figures are not exactly linear in {syms[0]} (checked at {syms[0]} = 3): an estimate")
    out.assumptions = [a for a in base_rep.assumptions if "counted once" not in a] + notes
    return out


# Markers for named dims: 192 x a prime. 192 = 64 x 3 keeps `C // n_head` exact for 1, 2, 3, 4, 6, 8,
# 12, 16, 32 or 64 heads; the primes are rare in model sizes (a size that holds one is caught by the
# check run at the second set, whose primes differ).
_MULT = 192
_NEAR_MARKER = 64  # how far from a marker size a size can be and still be made from it (padding, a kernel's width)
_PRIMES_A = (11, 13, 17, 19, 23, 29)
_PRIMES_B = (31, 37, 41, 43, 47, 53)

Monomial = tuple[tuple[str, int], ...]
Poly = dict[Monomial, Fraction]


def transfer_bytes(kernels: list[Kernel], fg: FunctionGraph, partial: bool = False
                   ) -> dict[tuple[tuple[int, ...], int], int] | None:
    """How many transfers move each tensor shape and item size ((shape, itemsize) -> count), as
    kpredict.traffic counts them; None when a transfer's size is unknown, unless `partial` (a lower
    bound: such transfers are left out, as traffic.figures does). Split reductions' partials (ref -1,
    0 bytes) are left out."""
    by_storage: dict[int, int] = {}
    out: dict[tuple[tuple[int, ...], int], int] = {}
    for k in kernels:
        for ref in k.reads + k.writes:
            if ref == -1:
                continue
            v = fg.values.get(ref)
            if v is None:  # a buffer given by storage id
                if not by_storage:
                    for val in fg.values.values():
                        by_storage.setdefault(val.storage, val.vid)
                v = fg.values.get(by_storage.get(ref, -2))
            b = v.meta.nbytes if v is not None else None
            if b is None:
                if partial:
                    continue
                return None
            if b:
                key = (v.meta.shape, DTYPE_SIZES[v.meta.dtype])  # type: ignore[union-attr, index]
                out[key] = out.get(key, 0) + k.launches  # type: ignore[index]
    return out


# a dim that is a marker's fraction plus a few (a convolution's `H + 2*padding - kernel + 1`, a stride's
# `(H - 1) // 2 + 1`) is read as that: `H + 2`, `H/2 - 1`; the check run at other markers confirms it
_AFFINE_FRACTIONS = (Fraction(1), Fraction(1, 2))  # smaller ones meet fixed widths (2112/32 - 2 = 64)
_AFFINE_SLACK = 8


def dim_poly(d: int, primes: dict[str, int], strict: bool = False) -> Poly:
    """One dim of a run at the markers as a polynomial in the names: a product of names (with a
    rational coefficient), a name's fraction plus a small constant, or a constant."""
    for name, p in primes.items():
        m = _MULT * p
        for a in _AFFINE_FRACTIONS:
            k = d - a * m
            if k and abs(k) <= _AFFINE_SLACK and k.denominator == 1:
                return {((name, 1),): a, (): Fraction(k)}
    key, coef = _product(d, primes, strict)
    if not key and not strict and d > _MULT:
        # no name divides it: a product of names plus a few tokens? (a ViT's class token + the H*W/256
        # patches of a cat). The product's coefficient must be 1/2**k, as a patch grid's is (5/32*H - 6 is
        # no reading of a width of 384); the check run at other markers rejects a wrong one
        for k in range(1, _AFFINE_SLACK + 1):
            for c in (k, -k):
                key2, coef2 = _product(d - c, primes, strict)
                if key2 and coef2.numerator == 1 and coef2.denominator & (coef2.denominator - 1) == 0 \
                        and coef2.denominator <= 4096:
                    return {key2: coef2, (): Fraction(c)}
    return {key: coef}


def _product(d: int, primes: dict[str, int], strict: bool) -> tuple[Monomial, Fraction]:
    """d as a rational times a product of names: the names whose primes divide it."""
    rest, mono = d, []
    for name, p in primes.items():
        if strict and d % (3 * p):
            # the second reading: a dim made from a marker (192 x p) keeps its factor 3 x p unless it was
            # divided by 3; one that merely holds the prime is a fixed size (jais2's 26 heads, 2 x 13,
            # and its 3328 = 256 x 13 width are not T/96 and 4T/3)
            continue
        e = 0
        while rest and rest % p == 0:
            rest //= p
            e += 1
        if e:
            mono.append((name, e))
    key = tuple(mono)  # in the order the names were met (B, T, C)
    return key, Fraction(d, _mono_value(key, primes))


def _mul(a: Poly, b: Poly, order: dict[str, int]) -> Poly:
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            exps = dict(ma)
            for n, e in mb:
                exps[n] = exps.get(n, 0) + e
            key = tuple(sorted(exps.items(), key=lambda ne: order[ne[0]]))
            out[key] = out.get(key, Fraction(0)) + ca * cb
    return {m: c for m, c in out.items() if c}


def byte_poly(rep: FunctionReport, mode: str, primes: dict[str, int], strict: bool = False) -> Poly | None:
    """The bytes of a run with dim `name` = 192 x primes[name], as a polynomial in the names: each
    transfer's tensor, dim by dim (dim_poly), times its item size. None when a transfer's size is unknown."""
    if rep.kernel_lists is None or rep.graph is None:
        return None
    per = (transfer_bytes(rep.kernel_lists[0], rep.graph, rep.lower_bound) if mode == "eager"
           else transfer_bytes(rep.kernel_lists[1], rep.kernel_lists[2], rep.lower_bound))
    if per is None:
        return None
    order = {n: i for i, n in enumerate(primes)}
    poly: Poly = {}
    for (shape, itemsize), times in per.items():
        p: Poly = {(): Fraction(itemsize * times)}
        for d in shape:
            p = _mul(p, dim_poly(d, primes, strict), order)
        poly = _add(poly, p)
    return poly


def _mono_value(mono: Monomial, primes: dict[str, int]) -> int:
    """A monomial's value at the markers (192 x prime per name)."""
    n = 1
    for name, e in mono:
        n *= (_MULT * primes[name]) ** e
    return n


def evaluate(poly: Poly, values: dict[str, int]) -> Fraction:
    total = Fraction(0)
    for mono, c in poly.items():
        t = c
        for name, e in mono:
            t *= values[name] ** e
        total += t
    return total


def poly_text(poly: Poly) -> Count:
    """`8*B*T*C + 4*C`: highest degree first; a plain int when no term has a name."""
    if not poly:
        return 0
    if set(poly) == {()} and poly[()].denominator == 1:
        return int(poly[()])
    parts = []
    for mono, c in sorted(poly.items(), key=lambda mc: -sum(e for _, e in mc[0])):
        names = "*".join(n if e == 1 else f"{n}**{e}" for n, e in mono)
        num, den = abs(c.numerator), c.denominator
        if not names:
            body = str(num) if den == 1 else f"{num}/{den}"
        else:
            body = (names if num == 1 else f"{num}*{names}") + (f"/{den}" if den != 1 else "")
        parts.append(("-" if c < 0 else "+", body))
    out = parts[0][1] if parts[0][0] == "+" else f"-{parts[0][1]}"
    return out + "".join(f" {sign} {body}" for sign, body in parts[1:])


def _times(poly: Poly, name: str) -> Poly:
    """poly x name (a loop count: degree one)."""
    return {tuple(dict(m, **{name: dict(m).get(name, 0) + 1}).items()): c for m, c in poly.items()}


def _sub(a: Poly, b: Poly) -> Poly:
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, Fraction(0)) - c
    return {m: c for m, c in out.items() if c}


def _add(a: Poly, b: Poly) -> Poly:
    return _sub(a, {m: -c for m, c in b.items()})


def unsized_use(fg: FunctionGraph) -> bool:
    """Whether an op reads an input whose shape is unknown and has no named dims (or a view of it)."""
    if not fg.unsized_inputs:
        return False
    names = set(fg.unsized_inputs)
    storages = {v.storage for v in fg.values.values() if v.is_input and v.name in names}
    if not storages:
        return False
    values = fg.values
    return any(values[i].storage in storages for op in fg.ops for i in op.inputs if i in values)


def _met_sizes(settings: Settings, rebuild: Rebuild, loops: list[str], dims: list[str]
               ) -> tuple[dict[str, int], Run | None, list[tuple[str, str]], set[str]]:
    """The named dims that meet exactly one fixed size where torch needs equal sizes, with that size;
    that run (at the first markers, loop counts 1: the base run when none met); the
    pairs of names that meet each other and nothing else (two names for one size); and the names that
    meet more than one fixed size."""
    marks = {d: _MULT * p for d, p in zip(dims, _PRIMES_A)}
    met: dict[int, set[int]] = {m: set() for m in marks.values()}
    run = rebuild(replace(settings, dims=settings.dims + tuple({**marks, **{s: 1 for s in loops}}.items())), met)
    if run is None or run.graph.cut_short:
        return {}, None, [], set()
    by_mark = {m: d for d, m in marks.items()}
    # a size within a few of the marker is the marker's own (a causal conv's padding: seq_len + 1), not a
    # fixed size it meets (mamba2's seq_len was fixed at 2497)
    fixed = {m: {v for v in met[m] if abs(v - m) > _NEAR_MARKER and v not in by_mark} for m in marks.values()}
    same = [(d, by_mark[v]) for d, m in marks.items() if not fixed[m] for v in met[m] if v in by_mark]
    return ({d: v for d, m in marks.items() if len(fixed[m]) == 1 for v in fixed[m]}, run, same,
            {d for d, m in marks.items() if len(fixed[m]) > 1})


def _batch_twice(poly: Poly, settings: Settings) -> bool:
    """Whether an assumed batch name appears squared: `q` taken for (B, T, C) when it is (B, H, T, D),
    broadcast against `cos.unsqueeze(1)`, makes a (B, B, T, C) tensor. No real tensor has two batch dims."""
    if not any("B" in dims for _, dims, _ in settings.shapes):
        return False
    return any(n == "B" and e > 1 for mono in poly for n, e in mono)


def _split(settings: Settings, names: set[str]) -> tuple[Settings, list[str]] | None:
    """`settings` with each assumed name in `names` made one name per input that has it (`C` ->
    `C_hidden_states`, `C_input_tensor`), and the new names; None when a name is one input's only."""
    new: list[str] = []
    shapes = []
    for n, dims, why in settings.shapes:
        out = []
        for d in dims:
            if d in names:
                if sum(1 for _, ds, _ in settings.shapes if d in ds) < 2:
                    return None  # one input whose dim meets two widths: the assumed layout is wrong
                d = f"{d}_{n}"
                new.append(d)
            out.append(d)
        shapes.append((n, tuple(out), why))
    return replace(settings, shapes=tuple(shapes)), new


def _renamed(settings: Settings, same: list[tuple[str, str]]) -> tuple[Settings, set[str]]:
    """`settings` with each assumed input dim (Settings.shapes) that meets one other name, and only it,
    written as that name (`hidden_states: (B, T, hidden_size)`); and the names so replaced."""
    order = list(dict.fromkeys(d for _, dims, _ in settings.shapes for d in dims))
    to: dict[str, str] = {}
    for a, b in same:
        if a not in order or sum(1 for x, _ in same if x == a) != 1:
            continue
        # the code's name; between two assumed ones (`a @ b`: C meets T), the first met
        if b not in order or order.index(b) < order.index(a):
            to[a] = b
    if not to:
        return settings, set()
    return replace(settings, shapes=tuple((n, tuple(to.get(d, d) for d in dims), why)  # type: ignore[arg-type]
                                          for n, dims, why in settings.shapes)), set(to)


def unsized_transfer(graph: FunctionGraph) -> str:
    """The first op of a graph that moves a tensor of unknown shape or dtype (what keeps its bytes unknown:
    with its inputs sized, a weight built from a config value nobody knows), or ""."""
    for op in graph.ops:
        if op.category == "view":
            continue
        for vid in (*op.inputs, *op.outputs):
            v = graph.values.get(vid)
            if v is not None and (v.meta.shape is None or None in v.meta.shape or v.meta.dtype is None):
                role = "reads" if vid in op.inputs else "writes"
                what = "a parameter" if v.name == "param" else f"input {v.name}" if v.is_input and v.name \
                    else "a tensor"
                unknown = "shape" if v.meta.shape is None or None in v.meta.shape else "dtype"
                return f"line {op.span.line}: {op.name} {role} {what} of unknown {unknown}"
    return ""


def shape_report(report: FunctionReport, settings: Settings, rebuild: Rebuild, loops: list[str],
                 dims: list[str], base: FunctionReport, base_graph: FunctionGraph | None = None) -> FunctionReport:
    """Figures for a function whose inputs have named dims (and maybe loop counts): counts as
    a + b*n in the loop counts, bytes as a polynomial in the dims and loop counts (module docstring).
    `base`: the run at the first markers with loop counts 1 (_met_sizes' run), `base_graph` its graph
    (what in it moves a tensor of unknown shape is said where that leaves the bytes unknown)."""
    primes_a = dict(zip(dims, _PRIMES_A))
    primes_b = dict(zip(dims, _PRIMES_B))
    marks_a = {d: _MULT * p for d, p in primes_a.items()}
    marks_b = {d: _MULT * p for d, p in primes_b.items()}

    def at(marks: dict[str, int], counts: dict[str, int]) -> FunctionReport | None:
        run = rebuild(replace(settings, dims=settings.dims + tuple({**marks, **counts}.items())))
        if run is None or run.graph.cut_short:
            return None
        return run.report

    ones = {s: 1 for s in loops}
    if byte_poly(base, "eager", primes_a) is None and byte_poly(base, "compiled", primes_a) is None:
        if not loops:  # no byte formula to check and no count to fit: the first analysis stands
            if base_graph is not None and (unsized := unsized_transfer(base_graph)):
                # never a silent '?': what keeps the bytes unknown with every input sized
                report.assumptions = list(report.assumptions) + [
                    f"bytes not worked out with the inputs sized: {unsized}"]
            return report
        check = base  # counts still become a + b*n; whether they depend on the sizes is not checked
    else:
        check = at(marks_b, ones)
    if check is None:
        return report
    bumped = {}
    for s in loops:
        r = at(marks_a, {**ones, s: 2})
        if r is None:
            return report
        bumped[s] = r
    # the first analysis' graph stays (lint reads it): the runs' graphs hold marker sizes, not real ones
    out = replace(base, eager=replace(base.eager), compiled=replace(base.compiled), kernel_lists=None,
                  graph=report.graph)
    notes: list[str] = []
    shown = ", ".join(f"{d}={v}" for d, v in marks_a.items())
    other = ", ".join(f"{d}={v}" for d, v in marks_b.items())
    sizes_matter: list[str] = []
    unsized_modes: list[str] = []  # modes whose bytes a tensor of unknown size keeps unknown
    for mode in ("eager", "compiled"):
        target = out.eager if mode == "eager" else out.compiled
        for field in FIELDS:
            if field == "bytes":
                continue
            v1 = _value(base, mode, field)
            vs = {s: _value(r, mode, field) for s, r in bumped.items()}
            if v1 is None or any(v is None for v in vs.values()):
                continue
            slopes = {s: vs[s] - v1 for s in loops}  # type: ignore[operator]
            setattr(target, field, linear_text(v1 - sum(slopes.values()), [(slopes[s], s) for s in loops]))
            if _value(check, mode, field) != v1:
                sizes_matter.append(f"{mode} {field} {v1} -> {_value(check, mode, field)}")
        want = _value(check, mode, "bytes")
        # each dim read as made of the markers it holds; where that formula fails the check, read again
        # with a fixed size that merely holds a marker's prime taken as a constant (dim_poly's strict)
        for strict in (False, True):
            polys = {s: byte_poly(r, mode, primes_a, strict) for s, r in bumped.items()}
            p1 = byte_poly(base, mode, primes_a, strict)
            if p1 is None or any(p is None for p in polys.values()):
                break
            fitted = dict(p1)
            for s in loops:
                slope = _sub(polys[s], p1)  # type: ignore[arg-type]
                fitted = _add(_sub(fitted, slope), _times(slope, s))
            got = evaluate(fitted, {**marks_b, **ones})
            if want is not None and got == want:
                break
        if p1 is None or any(p is None for p in polys.values()):
            target.bytes = None
            unsized_modes.append(mode)
            continue
        if want is None or got != want:
            target.bytes = None
            notes.append(f"{mode} bytes are not a sum of products of {', '.join(dims)} (a formula from {shown} "
                         f"gave {got} at {other}, measured {want}): not shown; give the sizes with --dim")
            continue
        if _batch_twice(fitted, settings):
            target.bytes = None
            notes.append(f"{mode} bytes hold a tensor with the batch twice (B**2): an assumed layout does not "
                         "fit the code; not shown; give the input's shape with a # shape: comment")
            continue
        target.bytes = poly_text(fitted)
    names = ", ".join(dims)
    fitted_any = out.eager.bytes is not None or out.compiled.bytes is not None
    how = (f"bytes are a formula in them, fitted from runs at {shown} and checked at {other}" if fitted_any
           else f"analyzed at {shown}")
    notes.insert(0, f"input sizes not given ({names}): {how}; give values with --dim {dims[0]}=N; kernel names "
                    f"and ops are for {shown}" + (f" and loop counts {', '.join(loops)} = 1" if loops else ""))
    if unsized_modes:  # never a silent '?': what keeps them unknown with every input sized
        unsized = unsized_transfer(base_graph or base.graph) if (base_graph or base.graph) is not None else ""
        notes.append(f"{' and '.join(unsized_modes)} bytes not worked out with the inputs sized: "
                     + (unsized or f"a tensor's size is not a product of {names}"))
    if sizes_matter:
        notes.append(f"kernel counts depend on {names} (at {shown} vs {other}: {'; '.join(sizes_matter)}): "
                     f"shown for {shown}, an estimate")
    out.assumptions = [a for a in base.assumptions if "counted once" not in a] + notes
    return out


