"""The one entry point that the CLI, the tests, the verifier and the linter share.

analyze_source is a pure function of (source bytes, path, settings, rules): it never imports torch
and never imports or runs the analyzed code.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Protocol

from kpredict.deep import run_deep
from kpredict.frontend import shapes as S
from kpredict.frontend.dimnames import HEAD_COUNT, guess_shapes, head_count, size_name
from kpredict.frontend.entry import InputError, build_graphs, late
from kpredict.frontend.interp import Shared
from kpredict.frontend.parse import ModuleInfo, ParseError, parse_module
from kpredict.frontend.relevance import uses_torch
from kpredict import project
from kpredict.ir import FileReport, Finding, FunctionReport
from kpredict.models.eager import eager_kernels
from kpredict.models.inductor import compiled_schedule
from kpredict.opfacts import OpTable, default_table
from kpredict.report import function_report
from kpredict.settings import Settings
from kpredict.symbolic import Rebuild, Run, symbolic_report, unsized_transfer


class Check(Protocol):
    """What analyze_source runs over a file once its functions are predicted: the linter
    (kpredict.lint.engine.Linter) is one. It sits above this layer, so it is handed in, never imported."""

    def __call__(self, module: ModuleInfo, functions: list[FunctionReport], settings: Settings, table: OpTable,
                 path: str) -> list[Finding]:
        """The findings of one file, from its parsed module and its function reports (graphs attached)."""
        ...

    def load(self) -> None:
        """Load what the check needs before worker processes fork, so that they share it."""
        ...

    def key(self) -> str:
        """What the findings depend on, for the cache's key."""
        ...


NOT_TORCH = "not PyTorch code: no torch import in the file or in the tree's modules it imports (--all-files analyzes it)"


def analyze_source(
    source: bytes | str,
    path: str = "<string>",
    settings: Settings | None = None,
    table: OpTable | None = None,
    only: str | None = None,
    lint: Check | None = None,
    examples: dict[str, str | dict[str, object]] | None = None,
    inits: dict[str, str] | None = None,
) -> FileReport:
    """Predict every function of one file (or only `only`, a qualname); with `lint` (a Check, such as
    kpredict.lint.engine.Linter), also run it and put its findings in the report. `examples` (qualname ->
    the function's inputs as `name=expr` text, or already read shapes) and `inits` (qualname -> its
    class's constructor arguments as text) replace the items of the same name in the file's comments and
    pyproject entries; a value that cannot be evaluated is the report's one-line error."""
    settings = settings or Settings()
    table = table or default_table()
    try:
        module = parse_module(source, path)
    except ParseError as e:
        return FileReport(path=path, error=str(e))
    if only is None and not settings.all_files and not uses_torch(module):
        return FileReport(path=path, skipped=NOT_TORCH)
    functions: list[FunctionReport] = []

    def predict(fg, s: Settings, costs: bool = True) -> FunctionReport:  # noqa: ANN001
        return function_report(fg, eager_kernels(fg, s.target, table), compiled_schedule(fg, s.target), s, costs)

    shared = Shared()
    if settings.time_budget > 0:
        shared.deadline = time.process_time() + settings.time_budget
    try:
        graphs = [(fg, predict(fg, settings)) for fg in build_graphs(module, table, settings, only=only,
                                                                     examples=examples, inits=inits, shared=shared)]
    except InputError as e:
        return FileReport(path=path, error=str(e))
    for fg, report in graphs:
        # loops over range(config.n_layer) with n_layer unknown: a + b*n_layer (a function without
        # tensor work, such as a constructor, has none at any count: its figures are 0 without reruns;
        # one cut short by a budget covers only a first part at any count: a slope from it means nothing).
        # The reruns come after every first analysis: they reuse what those learned of other modules.
        # inputs with named dims (B, T, C = x.size()) and no sizes: bytes as a formula in them, the same way
        guessed = guess_shapes(fg) if fg.ops and not fg.cut_short else {}
        if guessed:  # inputs whose shape nobody said: named by the layout their code needs, and said so
            fg.unsized_inputs = [n for n in fg.unsized_inputs if n not in guessed]
            for d in (d for g in guessed.values() for d in g.dims):
                if isinstance(d, str) and d not in fg.shape_symbols and d not in settings.dim_map:
                    fg.shape_symbols.append(d)
        counts: dict[str, int] = {}
        if fg.shape_symbols or guessed:  # a size the code looks up and nobody gave (a constructor's hidden_size)
            looked_up = sorted(s for s in fg.size_symbols if s not in fg.shape_symbols  # in a stable order
                               and s not in fg.loop_symbols and s not in settings.dim_map and size_name(s))
            counts = {s: HEAD_COUNT for s in looked_up if head_count(s)}  # they divide widths: fixed, said
            if fg.shape_symbols:  # joins the named dims
                fg.shape_symbols += [s for s in looked_up if s not in counts]
        again = replace(settings, shapes=tuple((n, g.dims, g.why) for n, g in guessed.items()),
                        dims=settings.dims + tuple(counts.items()))
        rerun_with_counts = False
        rerunnable = bool(fg.ops) and not fg.cut_short
        if rerunnable and (fg.loop_symbols or fg.shape_symbols or guessed) and time.process_time() > shared.deadline:
            # the reruns would stop at once
            report.assumptions = list(report.assumptions) + [
                f"figures not worked out as formulas in the sizes: {late(settings)}"]
        elif rerunnable and (fg.loop_symbols or fg.shape_symbols):
            rebuild = rerun(module, table, fg.qualname, predict, shared, examples, inits, first=settings)
            cut: list[str] = []  # why a rerun at other sizes stopped short (the file's budgets), if one did

            def watched(*args: object, **kw: object) -> Run | None:
                run = rebuild(*args, **kw)
                if run is not None and run.graph.cut_short and not cut:
                    cut.extend([a.removeprefix("not analyzed: ") for a in run.graph.assumptions
                                if a.startswith("not analyzed: ") or "too large to follow" in a or "budget" in a]
                               or ["an analysis at marker sizes stopped short"])
                return run

            report = symbolic_report(fg, report, again, watched)
            if cut and (report.eager.bytes is None or report.compiled.bytes is None) \
                    and not _bytes_said(report.assumptions):
                report.assumptions = list(report.assumptions) + [
                    f"figures not worked out as formulas in the sizes: at marker sizes, {cut[0]}"]
            rerun_with_counts = True
        elif rerunnable and guessed:
            # every assumed dim given (--dim B=8 --dim T=1024): one more analysis with the inputs so shaped
            run = rerun(module, table, fg.qualname, predict, shared, examples, inits, first=settings)(
                again, costs=True)
            if run is not None and not run.graph.cut_short:
                report, rerun_with_counts = run.report, True
        if counts and rerun_with_counts:
            report.assumptions = list(report.assumptions) + [
                f"{', '.join(counts)} = {HEAD_COUNT}: a count of heads nobody gave, fixed for the byte formula "
                f"(it divides the widths); give it with --dim {next(iter(counts))}=N"]
        if (report.eager.bytes is None or report.compiled.bytes is None) and not _bytes_said(report.assumptions) \
                and (why := unsized_transfer(fg)):
            report.assumptions = list(report.assumptions) + [f"bytes unknown: {why}"]  # never a silent '?'
        report.kernel_lists = None
        functions.append(report)
    if only is not None and not functions:
        return FileReport(path=path, error=f"no function named {only!r}")
    report = FileReport(path=path, functions=functions)
    if lint is not None:
        report.findings = list(lint(module, functions, settings, table, path))
    return report


# what already says why a function's bytes are unknown (api, symbolic.py, an input of no shape)
# what already says why bytes are `?` (an input's own "tensor of unknown shape" does not: a formula may
# have been tried with names for it, and left unknown for another reason)
_BYTES_SAID = ("bytes not worked out", "bytes are not a sum", "kernel counts depend on", "time budget",
               "bytes unknown", "not worked out as formulas", "bytes hold a tensor")


def _bytes_said(assumptions: list[str]) -> bool:
    return any(k in a for a in assumptions for k in _BYTES_SAID)


def read_source(path: str | Path) -> bytes | FileReport:
    """A file's bytes, or a FileReport whose one-line error says why it cannot be read."""
    p = Path(path)
    try:
        return p.read_bytes()
    except IsADirectoryError:
        return FileReport(path=str(path), error="is a directory")
    except FileNotFoundError:
        return FileReport(path=str(path), error="no such file")
    except OSError as e:
        return FileReport(path=str(path), error=f"cannot read: {e.strerror or e}")


def analyze_data(data: bytes | str, path: str, settings: Settings | None = None, only: str | None = None,
                 lint: Check | None = None, examples: dict[str, str | dict[str, object]] | None = None,
                 inits: dict[str, str] | None = None) -> FileReport:
    """analyze_source that never raises: any exception becomes a one-line internal error for this file."""
    try:
        try:
            return analyze_source(data, path, settings, only=only, lint=lint, examples=examples, inits=inits)
        except RecursionError:
            # valid but deeply nested code: retry once with a big stack and a high recursion limit
            return run_deep(analyze_source, data, path, settings, None, only, lint, examples, inits)
    except RecursionError:
        return FileReport(path=path, error="internal error: nesting too deep to analyze")
    except Exception as e:  # noqa: BLE001 - one bad file must never stop the others
        return FileReport(
            path=path,
            error=f"internal error ({type(e).__name__}: {e}); please report it with this file",
        )


def analyze_file(path: str | Path, settings: Settings | None = None, only: str | None = None,
                 examples: dict[str, str | dict[str, object]] | None = None,
                 inits: dict[str, str] | None = None) -> FileReport:
    """Read and analyze one file; unreadable input becomes a one-line error, never an exception.
    `settings` None: the project's (kpredict.project: target, mode, dims, all-files of the nearest
    pyproject.toml with a [tool.kpredict] table); a configuration error is the report's error."""
    data = read_source(path)
    if isinstance(data, FileReport):
        return data
    if settings is None:
        try:
            settings = project.settings_for(path)
        except project.ConfigError as e:
            return FileReport(path=str(path), error=str(e))
    return analyze_data(data, str(path), settings, only=only, examples=examples, inits=inits)


def rerun(module: ModuleInfo, table: OpTable, qualname: str,
          predict: Callable[..., FunctionReport], shared: Shared | None = None,
          examples: dict[str, str | dict[str, object]] | None = None, inits: dict[str, str] | None = None,
          first: Settings | None = None) -> Rebuild:
    """A Rebuild (kpredict.symbolic) that analyzes `qualname` of `module` again under other settings
    (other dims); `shared`: the Shared of the file's finished first analysis, whose knowledge of other
    modules and call summaries the reruns reuse (Shared.for_rerun); `examples`, `inits`, `first`: the
    values and settings the first analysis was given."""

    def run(settings: Settings, met: dict[int, set[int]] | None = None,
            costs: bool = False) -> Run | None:
        again = shared.for_rerun(settings, first, qualname) if shared is not None else None
        if met is None:
            for fg in build_graphs(module, table, settings, only=qualname, examples=examples, inits=inits,
                                   shared=again):
                return Run(fg, partial(predict, fg, settings, costs))
            return None
        # `met` holds marker sizes to watch: filled with the fixed sizes each met (kpredict.frontend.shapes)
        S.WATCH, S.MET = frozenset(met), {}
        try:
            for fg in build_graphs(module, table, settings, only=qualname, examples=examples, inits=inits,
                                   shared=again):
                return Run(fg, partial(predict, fg, settings, costs))
            return None
        finally:
            for k in list(met):
                met[k] = S.MET.get(k, set())
            S.WATCH, S.MET = None, {}

    return run
