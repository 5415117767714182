"""The one entry point that the CLI, the tests, the verifier and the linter share.

analyze_source is a pure function of (source bytes, path, settings, rules): it never imports torch
and never imports or runs the analyzed code.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from kpredict.frontend.interp import build_graphs
from kpredict.frontend.parse import ParseError, parse_module
from kpredict.ir import FileReport, FunctionReport
from kpredict.lint.config import LintConfig
from kpredict.models.eager import eager_kernels
from kpredict.models.inductor import compiled_kernels
from kpredict.opfacts import OpTable, default_table
from kpredict.report import function_report
from kpredict.settings import Settings


def split_target(spec: str) -> tuple[str, str | None]:
    """'model.py::Block.forward' -> ('model.py', 'Block.forward')."""
    if "::" in spec:
        path, _, qual = spec.partition("::")
        return path, qual or None
    return spec, None


def analyze_source(
    source: bytes | str,
    path: str = "<string>",
    settings: Settings | None = None,
    table: OpTable | None = None,
    only: str | None = None,
    lint: LintConfig | None = None,
) -> FileReport:
    """Predict every function of one file (or only `only`, a qualname); with `lint`, also run the
    lint rules it enables and put their findings in the report."""
    settings = settings or Settings()
    table = table or default_table()
    try:
        module = parse_module(source, path)
    except ParseError as e:
        return FileReport(path=path, error=str(e))
    functions: list[FunctionReport] = []
    for fg in build_graphs(module, table, settings, only=only):
        ek = eager_kernels(fg, settings.target, table)
        ck = compiled_kernels(fg, settings.target)
        functions.append(function_report(fg, ek, ck, settings))
    if only is not None and not functions:
        return FileReport(path=path, error=f"no function named {only!r}")
    report = FileReport(path=path, functions=functions)
    if lint is not None:
        from kpredict.lint.engine import lint_module

        report.findings = list(lint_module(module, functions, settings, table, lint, path))
    return report


def analyze_file(path: str | Path, settings: Settings | None = None, only: str | None = None) -> FileReport:
    """Read and analyze one file; unreadable input becomes a one-line error, never an exception."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except IsADirectoryError:
        return FileReport(path=str(path), error="is a directory")
    except FileNotFoundError:
        return FileReport(path=str(path), error="no such file")
    except OSError as e:
        return FileReport(path=str(path), error=f"cannot read: {e.strerror or e}")
    try:
        return analyze_source(data, str(path), settings, only=only)
    except RecursionError:
        return FileReport(path=str(path), error="internal error: nesting too deep to analyze")
    except Exception as e:  # noqa: BLE001 - one bad file must never stop the others
        return FileReport(
            path=str(path),
            error=f"internal error ({type(e).__name__}: {e}); please report it with this file",
        )


def iter_python_files(paths: Iterable[str]) -> Iterator[tuple[str, str | None]]:
    """Expand directories into .py files; keep 'file::qualname' specs as they are."""
    for spec in paths:
        path, only = split_target(spec)
        p = Path(path)
        if p.is_dir():
            for f in sorted(p.rglob("*.py")):
                if any(part.startswith(".") or part in ("__pycache__", "venv", "node_modules")
                       for part in f.relative_to(p).parts[:-1]):
                    continue
                yield str(f), None
        else:
            yield path, only


def analyze_paths(paths: Iterable[str], settings: Settings | None = None) -> Iterator[FileReport]:
    for path, only in iter_python_files(paths):
        yield analyze_file(path, settings, only=only)
