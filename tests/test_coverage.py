"""Coverage generated from torch itself (issue 27): every class of torch.nn.modules.__all__, every public
function of torch.nn.functional, every public torch.* function and Tensor method that is an aten operator
is known to kpredict (rules/*.toml) or listed, with a reason, in rules/coverage_exclusions.toml.

torch's lists come from scripts/coverage.py, run in a child process (this process does not import torch).
A new torch name fails here until it gets an entry or a reasoned exclusion; an excluded name that kpredict
now knows, or that torch no longer has, fails too, so the exclusion list only says what is true.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from kpredict.frontend.catalogue import function_api
from kpredict.frontend.interp import _TENSOR_ATTRS
from kpredict.opfacts import default_table

REPO = Path(__file__).resolve().parent.parent
RULES = REPO / "rules"
LISTS = ("modules", "functional", "torch", "tensor")


def _exclusions() -> dict[str, dict[str, str]]:
    data = tomllib.loads((RULES / "coverage_exclusions.toml").read_text(encoding="utf-8"))
    out: dict[str, dict[str, str]] = {k: {} for k in LISTS}
    for lst in LISTS:
        for group in data.get(lst, []):
            for name in group["names"]:
                assert name not in out[lst], f"{lst}: {name} is listed twice"
                out[lst][name] = group["reason"]
    return out


def _known(lst: str, name: str) -> bool:
    t = default_table()
    if lst == "modules":
        return name in t.modules
    if lst in ("functional", "torch"):
        dotted = ("torch.nn.functional." if lst == "functional" else "torch.") + name
        return dotted in t.api or dotted in function_api(t.functions)
    return name in t.methods or name in _TENSOR_ATTRS


@pytest.fixture(scope="module")
def torch_lists() -> dict:
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed: its lists cannot be enumerated")
    installed = importlib.metadata.version("torch")
    recorded = tomllib.loads((RULES / "generated.toml").read_text())["meta"]["torch"]
    if installed != recorded:
        pytest.skip(f"rules/ describe torch {recorded}, installed is {installed}")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "coverage.py"), "--json"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_exclusions_have_reasons():
    data = tomllib.loads((RULES / "coverage_exclusions.toml").read_text(encoding="utf-8"))
    assert set(data) <= set(LISTS), set(data) - set(LISTS)
    for lst in LISTS:
        for group in data.get(lst, []):
            assert set(group) == {"reason", "names"}, group
            assert group["reason"].strip() and group["names"], group
    _exclusions()


@pytest.mark.parametrize("lst", LISTS)
def test_every_torch_name_is_known_or_excluded(torch_lists, lst):
    excl = _exclusions()[lst]
    missing = [n for n in torch_lists[lst] if not _known(lst, n) and n not in excl]
    assert not missing, (f"{lst}: {len(missing)} names of torch are neither known to kpredict nor listed in "
                         f"rules/coverage_exclusions.toml: {' '.join(missing)}")


@pytest.mark.parametrize("lst", LISTS)
def test_exclusions_are_current(torch_lists, lst):
    excl = _exclusions()[lst]
    known = [n for n in excl if _known(lst, n)]
    assert not known, f"{lst}: kpredict knows these now; take them out of rules/coverage_exclusions.toml: {known}"
    gone = [n for n in excl if n not in torch_lists[lst]]
    assert not gone, f"{lst}: torch {torch_lists['torch_version']} has no such name: {gone}"


def test_issue_27_names_are_known():
    """The modules and functions issue 27 found counting 0 kernels in public models."""
    for name in ("MaxPool3d", "AvgPool3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LSTMCell",
                 "GRUCell", "RNNCell", "KLDivLoss"):
        assert _known("modules", name), name
    assert _known("functional", "kl_div") and _known("torch", "polar")
