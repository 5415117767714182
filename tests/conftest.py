"""Shared test setup.

Most rules are off by default since their precision on public model code was measured (issue 32,
kpredict.lint.precision). The tests of the lint machinery (selection, renderers, cache, baseline,
suppressions) were written with every rule on and are about that machinery, not about which rules
are on: they run with every rule on by default, as `--select ALL` gives. A test marked
`default_rules` sees the real defaults (tests/test_precision.py checks them).
"""

from __future__ import annotations

import pytest

from kpredict.lint import config as lint_config
from kpredict.lint.registry import codes


@pytest.fixture(autouse=True)
def _every_rule_on_by_default(request, monkeypatch):
    if request.node.get_closest_marker("default_rules") is None:
        monkeypatch.setattr(lint_config, "default_codes", lambda: tuple(codes()))
    yield
