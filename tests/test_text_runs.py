"""The text report shows a repeated layer once (`(...) xN` kernel names, "the K rows above repeat
N-1 more times"); -v and JSON keep every row. `runs` finds the repeats."""

from __future__ import annotations

import json
import random
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings as hsettings, strategies as st

from kpredict.cli import main
from kpredict.render.runs import runs

ROOT = Path(__file__).resolve().parent.parent
STACK = str(ROOT / "fixtures" / "models" / "modulelist_blocks.py")


def _expand(keys: list, spans: list[tuple[int, int, int]]) -> list:
    """The sequence the spans describe, checking that each repeat really repeats."""
    out: list = []
    at = 0
    for start, period, count in spans:
        assert start == at and period >= 1 and count >= 1
        block = keys[start:start + period]
        for k in range(count):
            assert keys[start + k * period:start + (k + 1) * period] == block
        out += block * count
        at = start + period * count
    return out


def test_runs_examples():
    assert runs("abcabcabcx") == [(0, 3, 3), (9, 1, 1)]
    assert runs("aaaa") == [(0, 1, 4)]
    assert runs("xyz") == [(0, 3, 1)]
    assert runs("") == []
    layer = list("qkvomlp")
    assert runs(list("pre") + layer * 32 + list("end")) == [(0, 3, 1), (3, 7, 32), (227, 3, 1)]
    # the repeat covering most wins over a shorter one at the same place
    assert runs(list("aab") * 4) == [(0, 3, 4)]


@hsettings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from("abc"), max_size=60), st.integers(1, 5))
def test_runs_cover_the_sequence_exactly(keys, times):
    keys = keys * times
    assert _expand(keys, runs(keys)) == keys


def test_runs_of_a_long_sequence_are_quick_enough_and_exact():
    rng = random.Random(0)
    keys = [rng.choice("abcdefgh") for _ in range(5000)]
    assert _expand(keys, runs(keys)) == keys


def test_text_report_shows_a_repeated_block_once_and_verbose_shows_all():
    run = CliRunner().invoke
    text = run(main, ["report", "--no-cache", "-j", "1", "--target", "cpu", f"{STACK}::Stack.forward"]).output
    # the first block's layer norm stands alone; blocks 1 and 2 begin at the previous block's add
    assert ("kernels: cpp_fused_native_layer_norm_0, (aten::addmm, cpp_fused_silu_1, aten::addmm, "
            "cpp_fused_add_native_layer_norm_2) x2, aten::addmm") in text
    assert "... the 5 rows above repeat 1 more time (10 rows; -v shows each)" in text
    rows = [ln for ln in text.splitlines() if ln.strip().startswith("15 ")]
    assert len(rows) == 1 + 5 + 4  # first norm, one block shown, the last block's rows before the head
    verbose = run(main, ["report", "--no-cache", "-j", "1", "--target", "cpu", "-v",
                         f"{STACK}::Stack.forward"]).output
    assert "repeat" not in verbose
    assert "(" not in verbose.split("kernels: ")[1].splitlines()[0]
    doc = json.loads(run(main, ["report", "--no-cache", "-j", "1", "--target", "cpu", "--output-format", "json",
                                "--detail", f"{STACK}::Stack.forward"]).output)
    fn = doc["files"][0]["functions"][0]
    assert len(fn["ops"]) == 16 and len(fn["compiled"]["kernel_names"]) == 14
