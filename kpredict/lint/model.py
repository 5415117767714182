"""What the linter's pieces pass to each other: a rule, what it reports, and a lint run's result.

A rule is a class with a code (`KP101`), a kebab-case name, a default severity, a docstring in the
form What it does / Why it costs (the `rule` command adds Example / Use instead from the rule's own
INVALID and VALID examples), options with defaults, and a `check(fn)` generator that yields `Hit`s
for one function. The engine turns hits into `Diagnostic`s (an `ir.Finding` with the figures and a
fingerprint), applies suppressions, and the renderers print them.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from kpredict.ir import FileReport, Finding, Span

if TYPE_CHECKING:
    from kpredict.lint.context import FunctionContext

SEVERITIES = ("error", "warning", "info")
CODE_RE = re.compile(r"^KP\d{3}$")
EXPECT_MARK = "# expect: "
SECTIONS = ("What it does", "Why it costs", "Example", "Use instead")


@dataclass(frozen=True)
class Example:
    """A source snippet for a rule's docs and tests.

    In an INVALID example, each line that must be reported ends with `# expect: KPnnn` (one mark
    per finding on that line). `options` are the rule's options for this example; `baseline` maps
    qualnames to recorded figures for the budget rule.
    """

    source: str
    options: dict[str, Any] = field(default_factory=dict)
    target: str = "cuda"
    baseline: dict[str, dict[str, Any]] | None = None
    fixed: str | None = None  # the source after `check --fix --unsafe-fixes` (marks dropped), when a rule fixes it

    def expected(self) -> list[tuple[int, str]]:
        """(line, code) for every `# expect:` mark, in line order."""
        out = []
        for i, text in enumerate(self.source.splitlines(), start=1):
            if EXPECT_MARK in text:
                for code in text.split(EXPECT_MARK, 1)[1].replace(",", " ").split():
                    out.append((i, code))
        return out


def as_example(e: Example | str) -> Example:
    return e if isinstance(e, Example) else Example(e)


APPLICABILITIES = ("safe", "unsafe")


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the source in `span` (code-point columns) with `content`; an empty span inserts."""

    span: Span
    content: str


@dataclass(frozen=True, slots=True)
class Fix:
    """A rewrite of the flagged code, as text edits (ruff's model): `check --fix` applies the safe ones,
    `--unsafe-fixes` also those that may change what the program does (which values alias, which random
    stream fills a tensor); `message` says what it does, in the imperative."""

    message: str
    applicability: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True, slots=True)
class Hit:
    """What a rule reports: where (byte columns, as ast gives them), what, the figures behind the
    message, and a rewrite when the rule has one (its edits in code points: kpredict.lint.rewrite)."""

    span: Span
    message: str
    figures: dict[str, Any] | None = None
    fix: Fix | None = None


class Rule:
    """Base class of every rule; subclasses set the class attributes and implement `check`."""

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    severity: ClassVar[str] = "warning"
    summary: ClassVar[str] = ""  # one line: what is reported (SARIF shortDescription)
    fix: ClassVar[str] = ""  # one line: what to do instead (the `help` line of a finding)
    options: ClassVar[dict[str, Any]] = {}  # option name -> default
    option_docs: ClassVar[dict[str, str]] = {}
    VALID: ClassVar[list[Example | str]] = []
    INVALID: ClassVar[list[Example | str]] = []
    # "function": check() runs per function; "engine": the engine itself reports it (suppressions, budget)
    scope: ClassVar[str] = "function"

    def check(self, fn: FunctionContext) -> Iterator[Hit]:  # pragma: no cover - abstract
        return iter(())

    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        """The docstring's sections by heading ('What it does', 'Why it costs', ...)."""
        return split_sections(cls.__doc__ or "")


def split_sections(doc: str) -> dict[str, str]:
    """'## Heading' sections of a dedented docstring; text before the first heading is ''."""
    text = inspect.cleandoc(doc)
    sections: dict[str, list[str]] = {"": []}
    current = ""
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            sections[current] = []
        else:
            sections[current].append(line)
    return {k: "\n".join(v).strip() for k, v in sections.items() if "\n".join(v).strip() or k}


@dataclass(slots=True)
class Diagnostic(Finding):
    """A finding with what the renderers and the baseline need besides the message.

    `span` columns are 0-based code points (ir.Span's convention); `figures` holds the numbers the
    message quotes ({"eager": {...}, "fused": {...}} and the like); `snippet` is the flagged source,
    whitespace-normalised, which (with the code, file and qualname) makes the `fingerprint`: stable
    when lines move.
    """

    figures: dict[str, Any] | None = None
    help: str = ""
    snippet: str = ""
    fingerprint: str = ""
    fix: Fix | None = None  # code-point spans, like `span`


@dataclass(slots=True)
class FileResult:
    """One file of a lint run: its report (figures per function), diagnostics and source lines."""

    path: str  # as the user named it (or as found below a directory)
    relpath: str  # relative to the repository root, '/'-separated: for SARIF, baselines, CI
    report: FileReport
    diagnostics: list[Diagnostic] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    suppressed: int = 0  # findings silenced by noqa comments

    @property
    def error(self) -> str | None:
        return self.report.error


@dataclass(slots=True)
class LintRun:
    """Everything a renderer gets."""

    files: list[FileResult]
    rules: list[type[Rule]]  # the rules that were enabled (SARIF lists them)
    root: str  # repository root (absolute)
    target: str = "cuda"
    defaults: dict[str, str] = field(default_factory=dict)  # code -> on by default or not, and why (SARIF help)
    # where every finding can be read when a renderer shows only some (markdown's size cap): a URL, or ""
    full_output: str = ""
    unsafe_fixes: bool = False  # --unsafe-fixes: unsafe fixes count as available (and `--fix` applies them)
    fixed: int | None = None  # with --fix: how many fixes were applied (the findings left are the rest)

    def diagnostics(self) -> Iterator[tuple[FileResult, Diagnostic]]:
        for f in self.files:
            for d in f.diagnostics:
                yield f, d

    @property
    def count(self) -> int:
        return sum(len(f.diagnostics) for f in self.files)

    def fixable(self, d: Diagnostic) -> bool:
        """Whether `check --fix` (with this run's --unsafe-fixes) would apply the finding's fix."""
        return d.fix is not None and (self.unsafe_fixes or d.fix.applicability == "safe")

    @property
    def errors(self) -> list[FileResult]:
        return [f for f in self.files if f.error]


def strip_marks(source: str) -> str:
    """The example as users should read it: without the `# expect:` marks the tests use."""
    lines = []
    for line in source.splitlines():
        if EXPECT_MARK in line:
            line = line.split(EXPECT_MARK, 1)[0].rstrip()
            if line.endswith("#"):
                line = line[:-1].rstrip()
        lines.append(line)
    return "\n".join(lines) + "\n"


def rule_markdown(rule: type[Rule], findings: Callable[[Example], list[Diagnostic]] | None = None,
                  default: str = "") -> str:
    """Markdown: What it does / Why it costs from the docstring, Example / Use instead from the
    first INVALID and VALID examples (with what kpredict reports for the example, when `findings` runs
    it: kpredict.lint.docs), then options. `default` says whether the rule is on by default and why
    (kpredict.lint.precision.default_state: a measured table, which these core types do not read)."""
    doc = rule.doc_sections()
    out = [f"# {rule.name} ({rule.code})", "",
           f"Default severity: {rule.severity}. {rule.summary}.", ""]
    if default:
        out += [default, ""]
    for heading in SECTIONS[:2]:
        out += [f"## {heading}", doc.get(heading, ""), ""]
    if rule.INVALID:
        ex = as_example(rule.INVALID[0])
        out += ["## Example", "```python", strip_marks(ex.source).rstrip("\n"), "```", ""]
        if ex.baseline:
            out += ["With this baseline: `" + _baseline_text(ex.baseline) + "`", ""]
        if findings is not None:
            for d in findings(ex):
                out += [f"kpredict reports, at line {d.span.line}:", "", f"> {d.code} {d.message}", ""]
    if rule.VALID:
        ex = as_example(rule.VALID[0])
        out += ["## Use instead", "```python", strip_marks(ex.source).rstrip("\n"), "```", ""]
        if ex.baseline:
            out += ["With this baseline (recorded with `--write-baseline`): `" + _baseline_text(ex.baseline) + "`", ""]
    if rule.fix:
        out += [rule.fix, ""]
    if rule.options:
        out += ["## Options", ""]
        for name, default in rule.options.items():
            out.append(f"- `{name}` (default `{default}`): {rule.option_docs.get(name, '')}".rstrip())
        out += ["", f"Set them in `[tool.kpredict.rules.{rule.code}]` or with "
                    f"`--rule-option {rule.code}.{next(iter(rule.options))}=VALUE`.", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _baseline_text(baseline: dict[str, Any]) -> str:
    return json.dumps(baseline, separators=(", ", ": "))
