"""Each rule's measured precision on public model code, and so whether it is on by default (issue 32).

rules/lint_precision.toml is written by `python scripts/label_corpus.py measure --write` from the
labelled findings in tests/data/labelled_findings.toml (re-running check on the labelled files), and
tests/test_precision.py holds it to what check reports today. A rule whose precision is below
`THRESHOLD` is off by default: a reviewer who sees mostly wrong or worthless findings stops reading
them. A rule with no labelled finding (it never fired on the corpus) keeps its default.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache

from kpredict.opfacts import _rules_dir

THRESHOLD = 0.9
# A fix is only as right as its finding: where more than this share of a rule's labelled findings are
# wrong (the claim itself is false, such as a .contiguous() that does copy), its fixes count as unsafe
# (applied only with --unsafe-fixes), whatever the rewrite itself.
FIX_FALSE_LIMIT = 0.05


@dataclass(frozen=True)
class Precision:
    """Labelled findings of one rule that check still reports: true / (true + false + useless)."""

    sampled: int
    true: int
    false: int
    useless: int
    corpus: str

    @property
    def value(self) -> float:
        return self.true / self.sampled if self.sampled else 0.0

    def sentence(self) -> str:
        return (f"measured precision {self.value:.0%}: {self.true} true, {self.false} false and {self.useless} "
                f"true but not worth a reviewer's time of {self.sampled} findings labelled on {self.corpus}")


@lru_cache(maxsize=1)
def table() -> dict[str, Precision]:
    path = _rules_dir() / "lint_precision.toml"
    if not path.is_file():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    corpus = data.get("corpus", "public model code")
    return {code: Precision(v["sampled"], v["true"], v["false"], v["useless"], corpus)
            for code, v in data.get("rules", {}).items()}


def measured(code: str) -> Precision | None:
    return table().get(code)


def on_by_default(code: str) -> bool:
    p = measured(code)
    return p is None or p.sampled == 0 or p.value >= THRESHOLD


def fix_trusted(code: str) -> bool:
    """Whether a rule's safe fixes stay safe: at most FIX_FALSE_LIMIT of its labelled findings false."""
    p = measured(code)
    return p is None or p.sampled == 0 or p.false / p.sampled <= FIX_FALSE_LIMIT


def default_state(code: str) -> str:
    """Whether the rule is on by default and why, with its measured precision (`kpredict rule`, SARIF help)."""
    p = measured(code)
    if on_by_default(code):
        why = f" ({p.sentence()})" if p is not None and p.sampled else ""
        return f"On by default{why}."
    return (f"Off by default: {p.sentence()}, below the {THRESHOLD:.0%} a default rule must reach. "
            f"Turn it on with `--extend-select {code}` (or `extend-select = [\"{code}\"]` in "
            f"`[tool.kpredict]`; `--select ALL` turns on every rule).")
