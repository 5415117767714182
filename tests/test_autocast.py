"""rules/autocast.toml against torch's own metadata: the ops with an Autocast kernel per device type.

The policy of each op (lower precision, fp32, promote) is the source's registration list, which torch
does not expose; which ops autocast wraps at all is in the dispatcher's table, and each list here must
be exactly those. What the casts launch is held to the CPU oracle by tests/test_fixtures_oracle.py
(fixtures/ops/autocast.py, fixtures/training/autocast.py).
"""

from __future__ import annotations

import pytest

from kpredict.opfacts import default_autocast, default_table

torch = pytest.importorskip("torch")

KEYS = {"cpu": "AutocastCPU", "cuda": "AutocastCUDA"}


def _wrapped(key: str) -> set[str]:
    out = set()
    for name in torch._C._dispatch_get_all_op_names():
        if not name.startswith("aten::"):
            continue
        for line in torch._C._dispatch_dump_table(name).splitlines():
            if line.startswith(key + ":") and "fallthrough" not in line:
                out.add(name[len("aten::"):].split(".")[0])
    return out


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_the_listed_ops_are_those_torch_wraps(device: str) -> None:
    listed = set(default_autocast()[device]["policy"])
    assert listed == _wrapped(KEYS[device])


def test_aliases_name_ops_kpredict_knows() -> None:
    """Each alias maps a name kpredict gives an op or catalogue function to an aten op autocast wraps."""
    conf, table = default_autocast(), default_table()
    for name, aten in conf["aliases"].items():
        assert name in table.ops or name in table.functions, name
        assert any(aten in conf[d]["policy"] for d in ("cpu", "cuda")), aten
