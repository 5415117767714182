"""`kpredict report` (also `kpredict PATH`): the click command, registered by kpredict/cli.py.

Layer: a command, beside kpredict.lint's and kpredict.verify's: it analyzes with the linter on
(findings are part of the report) and draws with the report renderers.
"""

from __future__ import annotations

import dataclasses
import sys

import click

from kpredict.cli_options import (RunOptions, common_options, given_inputs, input_options, parse_dims, parse_sweep,
                                  strict_option)
from kpredict.devices import UnknownDevice, device_for
from kpredict.ir import Report
from kpredict.settings import Settings
from kpredict.lint.commands import warn_no_files
from kpredict.lint.config import ConfigError, Overrides, resolve_for
from kpredict.lint.engine import Linter
from kpredict.parallel import analyze_targets
from kpredict.render import sweep as render_sweep
from kpredict.render.json_report import render as render_json
from kpredict.render.text_report import render as render_text
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
@input_options
@strict_option
@common_options
def report_command(paths: tuple[str, ...], target: str | None, mode: str | None, gpu: str | None, fmt: str,
                   dims: tuple[str, ...], verbose: bool, detail: bool, all_files: bool, init: str | None,
                   example: str | None, strict: bool, run: RunOptions) -> None:
    """Per function: eager and compiled kernels, transfers and bytes, and the fused groups."""
    fixed, swept = parse_sweep(dims)
    cli = Overrides(target=target, mode=mode, dims=parse_dims(fixed), all_files=all_files)
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
    rep = Report(target=settings.target, files=list(analyze_targets(targets, settings, jobs=run.jobs,
                                                           cache=run.cache(settings, lint), lint=lint,
                                                           examples=examples, inits=inits)))
    if fmt == "json":
        click.echo(render_json(rep, ops=detail or verbose), nl=False)
    else:
        for f in rep.files:
            if f.error:
                click.echo(f"{f.path}: error: {f.error}", err=True)
        analyzed = [f for f in rep.files if not f.error]
        if analyzed:  # nothing but errors (each its one line above) or no file at all: no empty table
            click.echo(render_text(Report(settings.target, analyzed), verbose), nl=False)
    failed = any(f.error for f in rep.files)
    if strict:
        for line in strict_errors(rep.files):
            click.echo(line, err=True)
            failed = True
    findings = any(f.findings for f in rep.files)
    sys.exit(2 if failed else (1 if findings else 0))


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
