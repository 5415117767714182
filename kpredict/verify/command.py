"""The `kpredict verify` click command (registered by kpredict/cli.py; also `kpredict --verify`).

Importing this module needs click only: torch is imported by the child process that runs the code.
"""

from __future__ import annotations

import sys

import click

from kpredict import project
from kpredict.verify.render import render_json, render_text
from kpredict.verify.runner import EXIT_NO_DEVICE, run_verify


def _split(spec: str) -> tuple[str, str | None]:
    if "::" in spec:
        path, _, qual = spec.partition("::")
        return path, qual or None
    return spec, None


def project_defaults(path: str, device: str, mode: str | None) -> tuple[str, str]:
    """The device and module mode to run with: the command line's, else the project's settings
    (kpredict.project, as every command): `--device auto` runs on cpu when the project's target is
    cpu, and the mode is the project's `mode`. Raises project.ConfigError."""
    settings = project.settings_for(path, project.Options(mode=mode))
    if device == "auto" and settings.target == "cpu":
        device = "cpu"
    return device, settings.mode


@click.command("verify")
@click.argument("target", metavar="PATH[::QUALNAME]")
@click.option("--device", type=click.Choice(["cpu", "cuda", "auto"]), default="auto", show_default=True,
              help="Where to run: auto is cpu when the project's target is cpu, else cuda when a GPU is "
                   "present, else cpu. On cpu, what a script puts on \"cuda\" runs on the cpu (noted in the "
                   "header).")
@click.option("--example", default=None, metavar="STR",
              help="Example inputs, e.g. \"a=randn(1_000_000) b=randn(1_000_000)\" (overrides the comment).")
@click.option("--init", "init", default=None, metavar="STR",
              help="Constructor arguments for Cls.method, e.g. \"d=128\".")
@click.option("--output-format", "--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--timeout", type=float, default=300.0, show_default=True, help="Seconds before the run is stopped.")
@click.option("--eager-only", is_flag=True, help="Skip the torch.compile measurement.")
@click.option("--mode", type=click.Choice(["eval", "train"]), default=None,
              help="Module mode: the module of PATH::QUALNAME (or each of PATH::*) runs after .eval() or "
                   ".train(), and the prediction assumes the same, as `kpredict report --mode` (a script sets "
                   "its modules' mode itself) [config: mode; default eval].")
def verify_command(target: str, device: str, example: str | None, init: str | None, fmt: str, timeout: float,
                   eager_only: bool, mode: str | None) -> None:
    """Run PATH (as a script), PATH::QUALNAME (one function) or PATH::* (every function with example
    inputs) and compare what ran with the prediction.

    Exit codes: 0 every figure matches, 1 a mismatch, 2 the code could not run or nothing ran (no
    function of the file was called, or none ran a tensor op: nothing was compared), 3 no such device.
    """
    path, qualname = _split(target)
    if qualname in (None, "*") and (example or init):
        click.echo("kpredict: --example and --init apply to one function (PATH::QUALNAME)", err=True)
        sys.exit(2)
    try:
        device, mode = project_defaults(path, device, mode)
    except project.ConfigError as e:
        click.echo(f"kpredict: error: {e}", err=True)
        sys.exit(2)
    res = run_verify(path, qualname, device=device, examples=example, init=init, timeout=timeout,
                     compiled=not eager_only, mode=mode)
    code = res.exit_code
    if code == EXIT_NO_DEVICE:
        click.echo(f"kpredict: {res.error['message'] if res.error else '--device: not available'}", err=True)
        if fmt == "json":
            click.echo(render_json(res), nl=False)
        sys.exit(code)
    if fmt == "json":
        click.echo(render_json(res), nl=False)
    else:
        click.echo(render_text(res), nl=False)
    sys.exit(code)
