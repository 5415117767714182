"""The lint commands: `kpredict check`, `kpredict rule`, `kpredict rules`, `kpredict diff`.

Exit status (ruff's): 0 no findings, 1 findings (0 with --exit-zero), 2 a usage or configuration
error or a file that could not be analyzed.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import click

from kpredict import walk
from kpredict.cli_options import (
    Progress, RunOptions, common_options, diff_inputs, given_inputs, input_options, parse_dims, strict_option,
    time_budget_option,
)
from kpredict.frontend.parse import ParseError, decode_source
from kpredict.ir import FileReport
from kpredict.lint import baseline, fixes, gitdiff
from kpredict.lint.config import OUTPUT_FORMATS, ConfigError, Overrides, Resolved, parse_rule_option, path_matches
from kpredict.lint.config import LintConfig, relative_to, resolve_for, validate_selectors
from kpredict.lint.docs import rule_dict, rule_markdown
from kpredict.lint.engine import Linter, assign_fingerprints
from kpredict.lint.gitdiff import repo_root
from kpredict.lint.model import Diagnostic, FileResult, LintRun
from kpredict.lint.precision import default_state, on_by_default
from kpredict.lint.registry import all_rules, by_code, get
from kpredict.parallel import analyze_targets, slim
from kpredict.settings import Settings
from kpredict.strict import strict_errors

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
DEFAULT_BASELINE = ".kpredict-baseline.json"


def _split(values: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for v in values:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return tuple(out)


def _fail(message: str) -> None:
    click.echo(f"kpredict: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def analysis_options(f: Callable[..., Any]) -> Callable[..., Any]:
    for opt in reversed([
        click.option("--target", type=click.Choice(["cuda", "cpu"]), default=None,
                     help="Backend to predict for [config: target; default cuda]."),
        click.option("--mode", type=click.Choice(["eval", "train"]), default=None,
                     help="Module mode assumed for nn.Module code [config: mode; default eval]."),
        click.option("--dim", "dims", multiple=True, metavar="NAME=INT",
                     help="Value for a symbolic size (repeatable) [config: dims]."),
        click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
                     help="Use this pyproject.toml instead of the nearest one."),
        click.option("--isolated", is_flag=True, help="Ignore every configuration file."),
        click.option("--all-files", is_flag=True,
                     help="Also analyze files that reach no torch import [config: all-files; default false]."),
        time_budget_option,
    ]):
        f = opt(f)
    return f


# ------------------------------------------------------------------------------------ analysis


def repository_root(start: str = ".") -> str:
    """The git work tree's top directory, else the current directory."""
    try:
        return repo_root(start)
    except ConfigError:
        return os.path.abspath(start)


def discover(paths: tuple[str, ...], empty: list[str] | None = None) -> list[tuple[str, str | None, str | None]]:
    """(path, qualname or None, error or None) for every file to check; folders with no .py file go to `empty`."""
    return [(t.path, t.only, t.error) for t in walk.discover(paths, empty=empty)]


def warn_no_files(empty: list[str], found_any: bool) -> None:
    """ruff's warning when a folder holds no Python file (the exit status is not changed by it):
    one line per such folder, or one for all the paths when every file found was excluded."""
    for d in empty:
        ignored = " that git does not ignore (its .py files are all in .gitignore, which kpredict follows " \
            "as ruff does; name a file to analyze it anyway)" if walk.holds_python(d) else ""
        click.echo(f"kpredict: warning: no Python files found under {d}{ignored}", err=True)
    if not empty and not found_any:
        click.echo("kpredict: warning: no Python files found under the given paths", err=True)


def file_result(path: str, root: str, report: FileReport) -> FileResult:
    """A lint result from an analyzed (or cached) report: its diagnostics, fingerprinted for `root`,
    and the file's source lines for the renderers."""
    rel = relative_to(path, root)
    try:
        with open(path, "rb") as fh:
            lines = decode_source(fh.read()).splitlines()
    except (OSError, ParseError):
        lines = []
    diags = [d for d in report.findings if isinstance(d, Diagnostic)]
    for d in diags:
        d.fingerprint = ""  # fingerprints depend on the repository root, which no cache entry keys on
    assign_fingerprints(rel, diags)
    return FileResult(path, rel, report, diags, lines)


def default_format(output_file: str | None) -> str:
    if output_file is None and sys.stdout.isatty() and not os.environ.get("CI"):
        return "full"
    return "concise"


def ci_run_url(env: Mapping[str, str]) -> str:
    """The GitHub Actions run's page (its logs and artifacts, where the CI recipe keeps the SARIF file),
    which a markdown comment cut to GitHub's size cap points to; "" outside GitHub Actions."""
    server, repo, run_id = env.get("GITHUB_SERVER_URL"), env.get("GITHUB_REPOSITORY"), env.get("GITHUB_RUN_ID")
    return f"{server}/{repo}/actions/runs/{run_id}" if server and repo and run_id else ""


def render(fmt: str, run: LintRun) -> str:
    module = {"json": "json_findings", "json-lines": "json_lines"}.get(fmt, fmt)
    return importlib.import_module(f"kpredict.render.{module}").render(run)


def statistics(run: LintRun, fmt: str) -> str:
    counts = Counter(d.code for _, d in run.diagnostics())
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if fmt in ("json", "json-lines"):
        return json.dumps([{"code": c, "name": by_code()[c].name, "count": n} for c, n in rows], indent=2) + "\n"
    width = max((len(str(n)) for n in counts.values()), default=1)
    return "".join(f"{n:>{width}}\t{c}\t{by_code()[c].name}\n" for c, n in rows)


def settings_text(path: str, resolved: Resolved, fmt: str) -> str:
    s, lint = resolved.settings, resolved.lint
    lines = [f"Resolved settings for: {path}",
             f"config file: {resolved.source or '(none)'}",
             f"target = {s.target!r}", f"mode = {s.mode!r}",
             f"dims = {dict(s.dims)!r}",
             f"output-format = {fmt!r}",
             f"exclude = {list(resolved.exclude)!r}",
             f"baseline = {resolved.baseline!r}",
             f"per-file-ignores = {{{', '.join(f'{p!r}: {sorted(c)!r}' for p, c in lint.per_file_ignores)}}}",
             "enabled rules:"]
    for r in all_rules():
        if r.code in lint.enabled:
            opts = lint.rule_options(r.code)
            extra = f"  {opts}" if opts else ""
            lines.append(f"  {r.code} {r.name}{extra}")
    disabled = [r.code for r in all_rules() if r.code not in lint.enabled]
    lines.append(f"disabled rules: {', '.join(disabled) if disabled else '(none)'}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------ check


@click.command("check")
@click.argument("paths", nargs=-1)
@analysis_options
@click.option("--select", multiple=True, metavar="CODES",
              help="Rules to enable: codes or prefixes (KP1, KP101) or ALL, comma-separated. Replaces the config's.")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Rules to enable on top of the selection.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Rules to disable.")
@click.option("--rule-option", "rule_options", multiple=True, metavar="CODE.OPTION=VALUE",
              help="A rule option, e.g. KP101.min-chain-length=4 (repeatable).")
@click.option("--extend-exclude", multiple=True, metavar="GLOB", help="More paths to skip while walking directories.")
@click.option("--force-exclude", is_flag=True,
              help="Apply exclude to files named on the command line too (for pre-commit, which names every file).")
@click.option("--output-format", "--format", "output_format", type=click.Choice(OUTPUT_FORMATS), default=None,
              envvar="KPREDICT_OUTPUT_FORMAT", help="Default: full on a terminal, concise otherwise (or when CI is set).")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False), default=None, help="Write the output here.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", "show_stats", is_flag=True, help="Count findings per rule instead of listing them.")
@click.option("--show-settings", is_flag=True, help="Print the resolved settings of the first file and exit.")
@click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False), default=None,
              help="Kernel budget: fail only on growth beyond this baseline and on findings it does not hold.")
@click.option("--write-baseline", is_flag=True, help=f"Record the baseline (to --baseline, else {DEFAULT_BASELINE}).")
@click.option("--fix", "fix", is_flag=True, help="Rewrite the code of the findings that have a safe fix, then report the rest.")
@click.option("--unsafe-fixes", is_flag=True,
              help="Also offer (and with --fix, apply) fixes that may change what the code does: see each rule.")
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes as a unified diff; change no file.")
@input_options
@strict_option
@common_options
def check_command(paths: tuple[str, ...], target: str | None, mode: str | None, dims: tuple[str, ...],
                  config_file: str | None, isolated: bool, all_files: bool, time_budget: float | None,
                  select: tuple[str, ...],
                  extend_select: tuple[str, ...],
                  ignore: tuple[str, ...], rule_options: tuple[str, ...], extend_exclude: tuple[str, ...],
                  force_exclude: bool,
                  output_format: str | None, output_file: str | None, exit_zero: bool, show_stats: bool,
                  show_settings: bool, baseline_path: str | None, write_baseline: bool, fix: bool,
                  unsafe_fixes: bool, show_diff: bool, init: str | None,
                  example: str | None, strict: bool, run: RunOptions) -> None:
    """Lint PATHS (default: the current directory) for code that costs kernels and memory traffic."""
    try:
        cli = Overrides(target=target, mode=mode, dims=parse_dims(dims), select=_split(select) or None,
                        ignore=_split(ignore), extend_select=_split(extend_select),
                        options=tuple(parse_rule_option(o) for o in rule_options),
                        exclude=extend_exclude, config=config_file, isolated=isolated, all_files=all_files,
                        time_budget=time_budget)
        for name, values in (("--select", cli.select or ()), ("--ignore", cli.ignore),
                             ("--extend-select", cli.extend_select)):
            validate_selectors(values, name)
        paths = paths or (".",)
        empty: list[str] = []
        items = collect(paths, cli, force_exclude, empty)
        first = (items[0][0], items[0][2]) if items else (paths[0], resolve_for(paths[0], cli))
        fmt = output_format or first[1].output_format or default_format(output_file)
        if show_settings:
            click.echo(settings_text(first[0], first[1], fmt), nl=False)
            sys.exit(EXIT_CLEAN)
        warn_no_files(empty, bool(items))
        examples, inits = given_inputs(init, example, [(p, only) for p, only, _, _ in items])
        root = repository_root()
        if show_diff:
            sys.exit(_print_diff(lint_items(items, root, run, examples, inits), unsafe_fixes))
        fixed = None
        if fix:
            files, fixed = fix_items(items, root, run, examples, inits, unsafe_fixes)
        else:
            files = lint_items(items, root, run, examples, inits)
        target_name = first[1].settings.target
        baseline_file = baseline_path or first[1].baseline
        if write_baseline:
            dest = baseline_file or DEFAULT_BASELINE
            doc = baseline.record(files, target_name)
            baseline.write(dest, doc)
            click.echo(f"kpredict: wrote {len(doc['functions'])} functions and {len(doc['findings'])} findings "
                       f"to {dest}", err=True)
            _report_errors(files)
            sys.exit(EXIT_ERROR if any(f.error for f in files) else EXIT_CLEAN)
        if baseline_file:
            baseline.apply(files, baseline.load(baseline_file), target_name,
                           enabled_budget="KP801" in first[1].lint.enabled)
            for f in files:
                assign_fingerprints(f.relpath, f.diagnostics)
    except ConfigError as e:
        _fail(str(e))
        return
    enabled = set(first[1].lint.enabled).union(*(res.lint.enabled for _, _, res, _ in items))
    rules = [r for r in all_rules() if r.code in enabled]
    lint_run = LintRun(files=files, rules=rules, root=root, target=target_name,
                       defaults={r.code: default_state(r.code) for r in rules}, full_output=ci_run_url(os.environ),
                       unsafe_fixes=unsafe_fixes, fixed=fixed)
    text = statistics(lint_run, fmt) if show_stats else render(fmt, lint_run)
    _report_errors(files)
    if output_file:
        with open(output_file, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        click.echo(text, nl=False)
    assumed = strict_errors(f.report for f in files) if strict else []
    for line in assumed:
        click.echo(line, err=True)
    if any(f.error for f in files) or assumed:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if lint_run.count and not exit_zero else EXIT_CLEAN)


Item = tuple[str, "str | None", Resolved, "str | None"]  # path, qualname, configuration, error


def collect(paths: tuple[str, ...], cli: Overrides, force_exclude: bool, empty: list[str] | None = None) -> list[Item]:
    """The files to check with their configuration; `exclude` skips files found by walking a
    directory (and, with force_exclude, files named on the command line too). Folders under which
    no .py file is found are appended to `empty`."""
    named = {os.path.normpath(p.partition("::")[0]) for p in paths}
    items: list[Item] = []
    for path, only, error in discover(paths, empty):
        resolved = resolve_for(path, cli)
        if error is None and resolved.exclude and (force_exclude or os.path.normpath(path) not in named):
            if any(path_matches(relative_to(path, resolved.root), pat) for pat in resolved.exclude):
                continue
        items.append((path, only, resolved, error))
    return items


def lint_items(items: list[Item], root: str, run: RunOptions, examples: dict[str, str] | None = None,
               inits: dict[str, str] | None = None) -> list[FileResult]:
    """Analyze and lint the files the way `report` analyzes them (kpredict.parallel: worker
    processes per `-j`, the per-file cache unless `--no-cache`), one batch per configuration, since
    a cache entry is keyed on the settings and the lint configuration (the enabled rules, their
    options, per-file-ignores) that produced its findings. Results come back in the order of `items`.
    `examples`, `inits`: --example and --init for the one selected function (kpredict.api)."""
    batches: dict[tuple[Settings, LintConfig], list[int]] = {}
    for i, (_, _, resolved, error) in enumerate(items):
        if error is None:
            batches.setdefault((resolved.settings, resolved.lint), []).append(i)

    def analyzed() -> Iterator[tuple[int, FileReport]]:
        for (settings, lint), indices in batches.items():
            targets = [walk.Target(items[i][0], items[i][1]) for i in indices]
            check = Linter(lint)
            yield from zip(indices, analyze_targets(targets, settings, jobs=run.jobs, cache=run.cache(settings, check),
                                                    lint=check, examples=examples, inits=inits))

    done: dict[int, FileResult] = {}
    progress = Progress(sum(len(v) for v in batches.values()), sys.stderr, os.environ)
    for i, report in progress.track(analyzed()):
        # the renderers and the baseline read figures and findings, never op rows or kernel lists: a
        # whole tree's results stay small (kpredict.parallel.slim)
        done[i] = file_result(items[i][0], root, slim(report))
    return [FileResult(p, relative_to(p, root), FileReport(p, error=err)) if err is not None else done[i]
            for i, (p, _, _, err) in enumerate(items)]


def fix_items(items: list[Item], root: str, run: RunOptions, examples: dict[str, str] | None,
              inits: dict[str, str] | None, unsafe: bool) -> tuple[list[FileResult], int]:
    """`check --fix`: lint, write each file with its fixes applied, and lint again while a round changed
    something (fixes that overlapped one applied wait for the next round: kpredict.lint.fixes). A
    file whose fixed text would not parse is left as it was, with an error line. Returns the last
    round's results (the findings left) and how many fixes were applied."""
    fixed = 0
    files = lint_items(items, root, run, examples, inits)
    for _ in range(fixes.MAX_ROUNDS):
        changed = False
        for f, fix in _rewrites(files, unsafe):
            fixes.write(f.path, fix.after, fix.encoding)
            fixed += len(fix.applied)
            changed = True
        if not changed:
            break
        files = lint_items(items, root, run, examples, inits)
    return files, fixed


def _print_diff(files: list[FileResult], unsafe: bool) -> int:
    """`check --diff`: the fixes of one round as a unified diff on stdout, a count on stderr (ruff's
    "Would fix"); exit 1 when there is something to fix. Fixes that overlap one shown wait for the
    rewritten code, so `--fix` may apply more: said when it happens."""
    would, waiting = 0, 0
    for f, fix in _rewrites(files, unsafe):
        click.echo(fixes.unified(f.relpath, fix.before, fix.after), nl=False)
        would += len(fix.applied)
        waiting += fix.waiting
    more = f" ({waiting} more overlap these and apply after them with --fix)" if waiting else ""
    click.echo(f"Would fix {would} finding{'' if would == 1 else 's'}{more}." if would else "No fixes available.",
               err=True)
    _report_errors(files)
    return EXIT_ERROR if any(f.error for f in files) else (EXIT_FINDINGS if would else EXIT_CLEAN)


def _rewrites(files: list[FileResult], unsafe: bool) -> Iterator[tuple[FileResult, fixes.Rewrite]]:
    """Each analyzed file's round of fixes that changes it; one whose result would not parse is said
    on stderr and left out (never written, never shown as a diff)."""
    for f in files:
        fix = None if f.error else fixes.rewrite(f.path, f.diagnostics, unsafe)
        if fix is None:
            continue
        if not fix.parses:
            click.echo(f"kpredict: error: {f.path}: its fixes would not parse; the file is left as it was "
                       f"(please report this)", err=True)
            continue
        yield f, fix


def _cut_by_time(assumption: str) -> bool:
    """Whether an assumption says the time budget stopped the function's analysis (not only its
    byte formulas: frontend/entry.py's wording)."""
    return "time budget of" in assumption and (assumption.startswith("not analyzed: ")
                                                or "figures cover the function's first part" in assumption)


def _report_errors(files: list[FileResult]) -> None:
    """Each file that failed; and each one its time budget cut short, whose findings may then be
    missing (a clean result is not clean there)."""
    for f in files:
        if f.error:
            click.echo(f"{f.path}: error: {f.error}", err=True)
            continue
        cut = [fn for fn in f.report.functions if any(_cut_by_time(a) for a in fn.assumptions)]
        if cut:
            why = next(a for a in cut[0].assumptions if _cut_by_time(a))
            spent = why[why.index("this file's time budget"):].split(" is spent")[0]
            click.echo(f"kpredict: warning: {f.path}: {spent} was spent; {len(cut)} function"
                       f"{'' if len(cut) == 1 else 's'} not analyzed in full, whose findings may be missing "
                       "(--time-budget SECONDS gives it more)", err=True)


# ------------------------------------------------------------------------------------ rule, rules


@click.command("rule")
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="Every rule's documentation.")
@click.option("--output-format", "--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def rule_command(code: str | None, show_all: bool, fmt: str) -> None:
    """Explain a rule: what it finds, why it costs, an example and what to write instead."""
    if show_all:
        rules = list(all_rules())
    elif code:
        rule = get(code)
        if rule is None:
            _fail(f"no rule {code!r} (see `kpredict rules`)")
            return
        rules = [rule]
    else:
        _fail("give a rule code (kpredict rule KP101) or --all")
        return
    if fmt == "json":
        docs = [rule_dict(r) for r in rules]
        click.echo(json.dumps(docs if show_all else docs[0], indent=2, ensure_ascii=False))
    else:
        click.echo("\n".join(rule_markdown(r) for r in rules), nl=False)


@click.command("rules")
@click.option("--output-format", "--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def rules_command(fmt: str) -> None:
    """List every rule: code, name, default severity and what it reports."""
    if fmt == "json":
        click.echo(json.dumps([{"code": r.code, "name": r.name, "severity": r.severity, "summary": r.summary,
                                "options": dict(r.options), "on_by_default": on_by_default(r.code)}
                               for r in all_rules()], indent=2))
        return
    width = max(len(r.name) for r in all_rules())
    for r in all_rules():
        off = "" if on_by_default(r.code) else "  (off by default: `kpredict rule " + r.code + "`)"
        click.echo(f"{r.code}  {r.name:<{width}}  {r.severity:<7}  {r.summary}{off}")


# ------------------------------------------------------------------------------------ diff


@click.command("diff")
@click.argument("base")
@click.argument("head", required=False)
@analysis_options
@click.option("--path", "only_paths", multiple=True, help="Only files under this path (repeatable).")
@click.option("--output-format", "--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True)
@click.option("-o", "--output-file", type=click.Path(dir_okay=False), default=None, help="Write the output here.")
@click.option("--fail-on-increase", is_flag=True, help="Exit 1 when a function's kernels or bytes grew.")
@click.option("--init", "init", multiple=True, metavar="'QUALNAME: NAME=EXPR ...'",
              help="Constructor arguments of QUALNAME's class, at both revisions, in every changed file that "
                   "defines it: --init \"GPT.forward: config=GPTConfig(n_layer=2)\" (repeatable).")
@click.option("--example", "example", multiple=True, metavar="'QUALNAME: NAME=EXPR ...'",
              help="Inputs of QUALNAME, as --init: --example \"GPT.forward: idx=randint(0, 100, (8, 1024))\" "
                   "(repeatable).")
def diff_command(base: str, head: str | None, target: str | None, mode: str | None, dims: tuple[str, ...],
                 config_file: str | None, isolated: bool, all_files: bool, time_budget: float | None,
                 only_paths: tuple[str, ...], fmt: str,
                 output_file: str | None, fail_on_increase: bool, init: tuple[str, ...],
                 example: tuple[str, ...]) -> None:
    """Per changed function: eager and compiled kernels and bytes at BASE and at HEAD (default: the
    working tree), for the .py files git sees changed between them."""
    try:
        cli = Overrides(target=target, mode=mode, dims=parse_dims(dims), config=config_file, isolated=isolated,
                        all_files=all_files, time_budget=time_budget)
        result = gitdiff.compute(base, head, cli, paths=only_paths, examples=diff_inputs(example, "--example"),
                                 inits=diff_inputs(init, "--init"))
    except ConfigError as e:
        _fail(str(e))
        return
    text = {"text": gitdiff.render_text, "json": gitdiff.render_json, "markdown": gitdiff.render_markdown}[fmt](result)
    if output_file:
        with open(output_file, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        click.echo(text, nl=False)
    if any(f.error for f in result.files):
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if fail_on_increase and result.grew() else EXIT_CLEAN)


COMMANDS = {"check": check_command, "rule": rule_command, "rules": rules_command, "diff": diff_command}


def register(group: click.Group) -> None:
    for name, cmd in COMMANDS.items():
        if name not in group.commands:
            group.add_command(cmd, name)
