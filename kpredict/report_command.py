"""`kpredict report` (also `kpredict PATH`): the click command, registered by kpredict/cli.py.

Layer: a command, beside kpredict.lint's and kpredict.verify's: it analyzes with the linter on
(findings are part of the report) and draws with the report renderers.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import click

from kpredict.cli_options import (Progress, RunOptions, common_options, given_inputs, input_options, parse_dims,
                                  parse_sweep, strict_option, time_budget_option)
from kpredict.devices import UnknownDevice, device_for
from kpredict.ir import FileReport
from kpredict.settings import Settings
from kpredict.lint.commands import warn_no_files
from kpredict.lint.config import ConfigError, Overrides, resolve_for
from kpredict.lint.engine import Linter
from kpredict.parallel import analyze_targets
from kpredict.render import sweep as render_sweep
from kpredict.render import json_report as render_json
from kpredict.render.text_report import render_file, skipped_line
from kpredict.strict import strict_errors
from kpredict.walk import discover


@click.command("report")
@click.argument("paths", nargs=-1, required=True)
@click.option("--target", type=click.Choice(["cuda", "cpu"]), default=None,
              help="Backend to predict for [config: target; default cuda].")
@click.option("--mode", type=click.Choice(["eval", "train"]), default=None,
              help="Module mode assumed for nn.Module code (self.training, Dropout, BatchNorm) "
                   "[config: mode; default eval].")
@click.option("--gpu", default=None, metavar="NAME",
              help="Device preset of the time model, from rules/devices.toml: h100 (default), h200, a100, l4, "
                   "rtx4090 (--target cuda); times are a roofline model, unchecked on a GPU.")
@click.option("--output-format", "--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--dim", "dims", multiple=True, metavar="NAME=INT",
              help="Value for a symbolic size (repeatable) [config: dims]; NAME=A,B,C sweeps one size: modelled "
                   "eager and compiled time and speedup per value.")
@click.option("-v", "--verbose", is_flag=True,
              help="Show view ops too, each file left out as not PyTorch code, and (json) the op rows.")
@click.option("--detail", is_flag=True, help="JSON: every function's op rows (\"ops\"), left out by default.")
@click.option("--all-files", is_flag=True,
              help="Also analyze files that reach no torch import (their untyped parameters taken as tensors).")
@time_budget_option
@input_options
@strict_option
@common_options
def report_command(paths: tuple[str, ...], target: str | None, mode: str | None, gpu: str | None, fmt: str,
                   dims: tuple[str, ...], verbose: bool, detail: bool, all_files: bool, time_budget: float | None,
                   init: str | None,
                   example: str | None, strict: bool, run: RunOptions) -> None:
    """Per function: eager and compiled kernels, transfers and bytes, and the fused groups."""
    fixed, swept = parse_sweep(dims)
    cli = Overrides(target=target, mode=mode, dims=parse_dims(fixed), all_files=all_files, time_budget=time_budget)
    try:  # the project's settings (kpredict.project) for the first path, the command line on top, as `check`
        resolved = resolve_for(paths[0].partition("::")[0], cli)
    except ConfigError as e:
        click.echo(f"kpredict: error: {e}", err=True)
        sys.exit(2)
    lint = Linter(resolved.lint)
    settings = resolved.settings
    if gpu is not None:
        try:
            device_for(settings.target, gpu)
        except UnknownDevice as e:
            raise click.BadParameter(str(e), param_hint="--gpu") from None
        settings = dataclasses.replace(settings, gpu=gpu.lower())
    empty: list[str] = []
    targets = discover(paths, empty=empty)
    examples, inits = given_inputs(init, example, [(t.path, t.only) for t in targets])
    warn_no_files(empty, bool(targets))
    if swept is not None:
        _sweep(swept, targets, settings, run, lint, examples, inits, fmt)
    files = analyze_targets(targets, settings, jobs=run.jobs, cache=run.cache(settings, lint), lint=lint,
                            examples=examples, inits=inits)
    state = _Outcome(strict=strict)
    reports = state.track(Progress(len(targets), sys.stderr, os.environ).track(files), echo_errors=fmt != "json")
    if fmt == "json":
        render_json.write(_stdout, settings.target, reports, ops=detail or verbose)
    else:
        _write_text(settings.target, reports, verbose)
    for line in state.strict_lines:
        click.echo(line, err=True)
    sys.exit(2 if state.failed or state.strict_lines else (1 if state.findings else 0))


def _stdout(text: str) -> None:
    click.echo(text, nl=False)


@dataclass
class _Outcome:
    """What the exit status needs of the reports, gathered as they stream by: no report is kept once
    drawn, so that memory does not grow with the tree (the whole list of a 300-file run held 527 MB)."""

    strict: bool
    failed: bool = False
    findings: bool = False
    strict_lines: list[str] = field(default_factory=list)

    def track(self, reports: Iterable[FileReport], echo_errors: bool) -> Iterator[FileReport]:
        for f in reports:
            if f.error:
                self.failed = True
                if echo_errors:
                    click.echo(f"{f.path}: error: {f.error}", err=True)
            self.findings = self.findings or bool(f.findings)
            if self.strict:
                self.strict_lines += strict_errors([f])
            yield f


def _write_text(target: str, reports: Iterable[FileReport], verbose: bool) -> None:
    """kpredict.render.text_report.render's text, file by file. Nothing at all when every file failed
    (each is its one line on stderr) or there was none: never a bare `target:` line."""
    started, ends_line = False, True
    skipped: list[str] = []
    for f in reports:
        if f.error:
            continue
        if not started:
            click.echo(f"target: {target}", nl=False)
            started, ends_line = True, False
        if f.skipped:
            skipped.append(f.path)
        if verbose or not f.skipped:
            text = render_file(f, verbose)
            click.echo("\n" + text, nl=False)
            ends_line = text.endswith("\n")
    if skipped and not verbose:
        click.echo("\n" + skipped_line(skipped), nl=False)
        ends_line = True
    if started and not ends_line:
        click.echo("")


def _sweep(swept: tuple[str, list[int]], targets: list, settings: Settings, run: RunOptions, lint: Linter,
           examples: dict[str, str] | None, inits: dict[str, str] | None, fmt: str) -> None:
    """`--dim NAME=A,B,C`: analyze at each value and print each function's modelled times per value; exits."""
    name, values = swept
    points = []
    for v in values:
        s = dataclasses.replace(settings, dims=tuple(d for d in settings.dims if d[0] != name) + ((name, v),))
        points.append((v, list(analyze_targets(targets, s, jobs=run.jobs, cache=run.cache(s, lint), lint=lint,
                                               examples=examples, inits=inits))))
    for f in points[0][1] if points else []:
        if f.error:
            click.echo(f"{f.path}: error: {f.error}", err=True)
    draw = render_sweep.render_json if fmt == "json" else render_sweep.render_text
    click.echo(draw(name, settings.target, points), nl=False)
    sys.exit(2 if any(f.error for _, files in points for f in files) else 0)
