"""Command line: only wiring. `kpredict PATH` is `kpredict report PATH`; `kpredict --verify ...` is `kpredict verify ...`.

Each command's module is imported when that command runs, not before: `kpredict --help` and
`kpredict --version` load none of the analysis, and `kpredict report` loads neither verify nor the
lint commands' extras. The commands' one-line summaries for `--help` are written here
(tests/test_cli_startup.py holds them equal to the commands' own).
"""

from __future__ import annotations

from collections.abc import Callable

import click

from kpredict import __version__


def _report() -> click.Command:
    from kpredict.report_command import report_command

    return report_command


def _lint(name: str) -> Callable[[], click.Command]:
    def load() -> click.Command:
        from kpredict.lint.commands import COMMANDS

        return COMMANDS[name]
    return load


def _graph() -> click.Command:
    from kpredict.graph_command import graph_command

    return graph_command


def _verify() -> click.Command:
    from kpredict.verify.command import verify_command  # verify needs no torch to import its command line

    return verify_command


# name -> (loader, the command's help up to its first period: what `kpredict --help` lists)
COMMANDS: dict[str, tuple[Callable[[], click.Command], str]] = {
    "report": (_report, "Per function: eager and compiled kernels, transfers and bytes, and the fused groups."),
    "check": (_lint("check"), "Lint PATHS (default: the current directory) for code that costs kernels and "
                              "memory traffic."),
    "rule": (_lint("rule"), "Explain a rule: what it finds, why it costs, an example and what to write instead."),
    "rules": (_lint("rules"), "List every rule: code, name, default severity and what it reports."),
    "diff": (_lint("diff"), "Per changed function: eager and compiled kernels and bytes at BASE and at HEAD "
                            "(default: the working tree), for the .py files git sees changed between them."),
    "graph": (_graph, "Draw one function's op graph with its kernels as clusters, labelled with bytes and "
                      "modelled time."),
    "verify": (_verify, "Run PATH (as a script), PATH::QUALNAME (one function) or PATH::* (every function with "
                        "example inputs) and compare what ran with the prediction."),
}


class DefaultGroup(click.Group):
    """A group whose first argument, when not a command name, goes to the default command; its
    commands are loaded on first use (click's lazy group)."""

    default_command = "report"

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.add_command(COMMANDS[cmd_name][0](), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """As click's, but from the summaries above: listing the commands loads none of them."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            cmd = self.commands.get(name) or click.Command(name, help=COMMANDS[name][1])
            if not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> object:
        """Ctrl-C: one line and exit 130 (the shell's code for SIGINT), not click's "Aborted!" and 1;
        kpredict.parallel stops its workers at once."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("kpredict: interrupted", err=True)
            ctx.exit(130)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--verify" in args:
            args = ["verify"] + [a for a in args if a != "--verify"]
        elif args and args[0] not in self.list_commands(ctx) and args[0] not in ("--help", "-h", "--version"):
            args = [self.default_command] + list(args)
        elif not args:
            args = [self.default_command]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kpredict")
def main() -> None:
    """Predict the GPU kernels and memory traffic of PyTorch code, eager and under torch.compile, without running it."""
