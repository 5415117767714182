"""Run the rules over one analyzed module, then apply its suppression comments.

`Linter(config)` is what `kpredict.api.analyze_source(..., lint=...)` calls (a kpredict.api.Check)
with the parsed module and the function reports it has just built (their op graphs still attached):
it runs `lint_module`. It returns Diagnostics
(ir.Finding subclasses) with code-point columns, sorted by position.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, replace

from kpredict.cache import config_digest
from kpredict.frontend.parse import ModuleInfo
from kpredict.ir import FunctionReport, Span
from kpredict.lint.config import LintConfig
from kpredict.lint.context import FunctionContext, ModuleFacts
from kpredict.lint import hotpath, precision, suppress
from kpredict.lint.model import Diagnostic, Hit, Rule
from kpredict.lint.registry import all_rules, by_code
from kpredict.opfacts import OpTable, default_table
from kpredict.settings import Settings

UNUSED = "KP901"


def compiled_qualnames(functions: list[FunctionReport]) -> set[str]:
    """Functions that run under torch.compile: wrapped in the file, or inlined into such a function."""
    out: set[str] = set()
    for fn in functions:
        if fn.graph is not None and fn.graph.compiled_call:
            out.add(fn.qualname)
            for op in fn.graph.ops:
                out.update(op.via)
    return out


@dataclass(frozen=True)
class Linter:
    """The lint rules `config` enables, as the check analyze_source runs over each file
    (kpredict.api.Check): the pipeline below takes it as a parameter and never imports the linter."""

    config: LintConfig

    def __call__(self, module: ModuleInfo, functions: list[FunctionReport], settings: Settings | None,
                 table: OpTable | None, path: str) -> list[Diagnostic]:
        return lint_module(module, functions, settings, table, self.config, path)

    def load(self) -> None:
        all_rules()

    def key(self) -> str:
        return config_digest(self.config)  # the cache's key, as for the config itself


def lint_module(module: ModuleInfo, functions: list[FunctionReport], settings: Settings | None,
                table: OpTable | None, lint: LintConfig, path: str) -> list[Diagnostic]:
    settings = settings or Settings()
    table = table or default_table()
    facts = ModuleFacts(module, path)
    enabled = lint.enabled_for(path)
    rules = [r() for r in all_rules() if r.scope == "function" and r.code in enabled]
    compiled = compiled_qualnames(functions)
    diags: list[Diagnostic] = []
    for fr in functions:
        if fr.graph is None:
            continue
        ctx = FunctionContext(fr.qualname, fr, fr.graph, facts, settings, table, fr.qualname in compiled)
        for rule in rules:
            ctx.options = lint.rule_options(rule.code)
            hot_only = hotpath.OPTION in ctx.options and not ctx.options[hotpath.OPTION]
            if hot_only and facts.cold_reason(fr.qualname):
                continue
            for hit in rule.check(ctx):
                if hot_only and ctx.cold(hit.span):
                    continue  # off the hot path: true, but not worth a reviewer's time (kpredict.lint.hotpath)
                diags.append(make_diagnostic(rule, fr.qualname, hit, facts))
    diags = _dedupe(diags)
    sups = suppress.parse("\n".join(module.lines) + "\n")
    def_lines = {q: f.lineno for q, f in module.functions.items()}
    diags, _ = suppress.apply(diags, sups, def_lines)
    if UNUSED in enabled:
        rule = by_code()[UNUSED]
        for span, message in suppress.unused(sups, enabled):
            diags.append(Diagnostic(code=rule.code, severity=rule.severity, qualname=_enclosing(module, span.line),
                                    span=span, message=message, name=rule.name, help=rule.fix,
                                    snippet=" ".join(module.lines[span.line - 1][span.col:span.end_col].split())))
    diags.sort(key=lambda d: (d.span.line, d.span.col, d.code))
    return diags


def make_diagnostic(rule: Rule | type[Rule], qualname: str, hit: Hit, facts: ModuleFacts) -> Diagnostic:
    fix = hit.fix
    if fix is not None and fix.applicability == "safe" and not precision.fix_trusted(rule.code):
        fix = replace(fix, applicability="unsafe")  # the finding may be wrong: kpredict.lint.precision
    return Diagnostic(code=rule.code, severity=rule.severity, qualname=qualname,
                      span=facts.span_codepoints(hit.span), message=hit.message, name=rule.name,
                      figures=hit.figures, help=rule.fix, snippet=facts.text(hit.span, None), fix=fix)


def _dedupe(diags: list[Diagnostic]) -> list[Diagnostic]:
    """One finding per (code, span): a span reached from two functions is reported once."""
    seen: set[tuple[str, Span]] = set()
    out = []
    for d in diags:
        key = (d.code, d.span)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _enclosing(module: ModuleInfo, line: int) -> str:
    best = "<module>"
    size = None
    for q, f in module.functions.items():
        end = f.end_lineno or f.lineno
        first = min([f.lineno] + [d.lineno for d in f.decorator_list])
        if first <= line <= end and (size is None or end - first < size):
            best, size = q, end - first
    return best


def assign_fingerprints(relpath: str, diags: list[Diagnostic]) -> None:
    """Stable ids for CI (SARIF partialFingerprints, GitLab, baselines): rule, file, function and the
    flagged source, never the line number; a counter separates identical findings."""
    seen: Counter[str] = Counter()
    for d in diags:
        base = hashlib.sha256("\0".join((d.code, relpath, d.qualname, d.snippet)).encode("utf-8")).hexdigest()[:16]
        seen[base] += 1
        if not d.fingerprint:
            d.fingerprint = f"{base}:{seen[base]}"
