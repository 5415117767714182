"""`kpredict verify` never calls a run that compared nothing a match (issue 28): exit 2 and a clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kpredict.verify.command import verify_command
from kpredict.verify.render import render_json, render_text
from kpredict.verify.runner import EXIT_ERROR, EXIT_MATCH, FunctionCheck, VerifyResult


def _result(*measured: dict) -> VerifyResult:
    res = VerifyResult("m.py", "*", "cpu", "x86_64", "2.13.0+cpu")
    for i, m in enumerate(measured):
        res.functions.append(FunctionCheck("m.py", f"f{i}", 1, None, m, match=True))
    return res


def test_no_function_measured_is_nothing_ran() -> None:
    res = _result()
    assert res.nothing_ran and res.exit_code == EXIT_ERROR
    assert "nothing ran: no function of the file was called" in render_text(res)
    assert json.loads(render_json(res))["nothing_ran"] is True


def test_functions_that_ran_no_tensor_op_are_nothing_ran() -> None:
    views_only = {"eager": {"kernels": 0, "reads": 0, "writes": 0, "bytes": 0, "syncs": 0, "ops": []},
                  "compiled": {"kernels": 0, "names": [], "graphs": 1}}
    res = _result(views_only)
    assert res.nothing_ran and res.exit_code == EXIT_ERROR
    assert "=> nothing ran" in render_text(res)


def test_one_function_that_ran_is_enough() -> None:
    ran = {"eager": {"kernels": 1, "reads": 2, "writes": 1, "bytes": 12, "syncs": 0, "ops": [{"name": "add"}]}}
    res = _result({"eager": {"kernels": 0, "ops": []}}, ran)
    assert not res.nothing_ran and res.exit_code == EXIT_MATCH


@pytest.mark.oracle
def test_a_script_that_calls_nothing_exits_2(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    f = tmp_path / "lib.py"
    f.write_text("import torch\n\n\ndef f(x):\n    return x + 1\n")
    out = CliRunner().invoke(verify_command, ["--device", "cpu", str(f)])
    assert out.exit_code == 2, out.output
    assert "nothing ran" in out.output and "all figures match" not in out.output
