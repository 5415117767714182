"""Figures that depend on a trip count not known statically: `for block in range(config.n_layer)`.

Kernel counts, transfers and bytes are linear in the trip counts of loops (each iteration adds
the same ops, and Inductor's fusion at iteration boundaries repeats identically), so a function
whose loops run `n_layer` times is analyzed again with `n_layer` = 1 and 2 and each figure becomes
`a + b*n_layer`: the JSON report shows the string "4 + 13*n_layer", the text table shows it as is,
and `--dim n_layer=12` (or `[tool.kpredict.dims]`) makes it a number again. With one symbol a
third run (n = 3) checks that the figure really is linear; when it is not, the report says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from kpredict.ir import Count, FunctionGraph, FunctionReport
from kpredict.settings import Settings

MAX_SYMBOLS = 4
FIELDS = ("kernels", "reads", "writes", "bytes", "syncs")

Rebuild = Callable[[Settings], tuple[FunctionGraph, FunctionReport] | None]


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


def symbolic_report(fg: FunctionGraph, report: FunctionReport, settings: Settings, rebuild: Rebuild) -> FunctionReport:
    """The report of `fg`, with figures as expressions in the loop symbols left unknown by `settings`."""
    fixed = settings.dim_map
    syms = [s for s in fg.loop_symbols if s not in fixed][:MAX_SYMBOLS]
    if not syms:
        return report

    def at(values: dict[str, int]) -> tuple[FunctionGraph, FunctionReport] | None:
        return rebuild(replace(settings, dims=settings.dims + tuple(values.items())))

    base_values = {s: 1 for s in syms}
    base = at(base_values)
    if base is None:
        return report
    # loops revealed only once an outer loop is unrolled get a symbol of their own
    extra = [s for s in base[0].loop_symbols if s not in fixed and s not in syms][: MAX_SYMBOLS - len(syms)]
    if extra:
        syms += extra
        base_values = {s: 1 for s in syms}
        base = at(base_values)
        if base is None:
            return report
    _, base_rep = base
    bumped: dict[str, FunctionReport] = {}
    for s in syms:
        run = at({**base_values, s: 2})
        if run is None:
            return report
        bumped[s] = run[1]
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
                v3 = _value(third[1], mode, field)
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
