"""The command line loads a command's module only when that command runs (kpredict/cli.py).

`kpredict --help` lists the commands from summaries written in cli.py; these tests hold them equal
to the commands' own help, and check what `--help` and `report` load.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from kpredict import cli
from kpredict.lint.commands import COMMANDS as LINT_COMMANDS

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", sorted(cli.COMMANDS))
def test_help_summaries_are_the_commands_own(name: str) -> None:
    load, summary = cli.COMMANDS[name]
    cmd = load()
    assert not cmd.hidden
    for limit in (45, 80, 1000):
        assert click.Command(name, help=summary).get_short_help_str(limit) == cmd.get_short_help_str(limit)


def test_every_lint_command_is_listed() -> None:
    assert set(LINT_COMMANDS) <= set(cli.COMMANDS)


def _loaded(args: list[str]) -> list[str]:
    """The kpredict modules loaded by `kpredict ARGS`, run in a fresh interpreter."""
    code = (
        "import json, sys\n"
        "from kpredict.cli import main\n"
        "try:\n"
        f"    main({args!r}, standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stdout.flush()\n"
        "sys.stderr.write(json.dumps(sorted(m for m in sys.modules if m.startswith('kpredict'))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    return json.loads(proc.stderr.strip().splitlines()[-1])


def test_help_loads_no_command() -> None:
    loaded = _loaded(["--help"])
    assert loaded and all(m in ("kpredict", "kpredict.cli") for m in loaded), loaded


def test_report_loads_no_verify() -> None:
    loaded = _loaded(["report", "--no-cache", "fixtures/seed/add.py"])
    assert "kpredict.report_command" in loaded and "kpredict.api" in loaded
    assert [m for m in loaded if m.startswith("kpredict.verify")] == []
