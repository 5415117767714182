"""Multi-tensor ops (`torch._foreach_*`, fused optimizer steps) and the optimizer paths that use them.

Their CPU figures are held to the CPU oracle by tests/test_fixtures_oracle.py (fixtures/training/
foreach.py). Here: the cuda launch count, which comes from multi_tensor_apply's packing rule
(rules/targets.toml `foreach`), checked against a line-by-line transcription of the loop in
aten/src/ATen/native/cuda/MultiTensorApply.cuh; and which path each optimizer takes on each target.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kpredict.api import analyze_file
from kpredict.frontend.opsem import mta_launches
from kpredict.opfacts import default_table, default_targets
from kpredict.settings import Settings

REPO = Path(__file__).resolve().parent.parent
FOREACH = REPO / "fixtures" / "training" / "foreach.py"
CHUNK = 65536


def launches_as_written(numels: list[int], max_tensors: int, max_blocks: int, chunk: int = CHUNK) -> int:
    """multi_tensor_apply's loop as the CUDA source writes it: one chunk at a time."""
    launches = loc_block = loc_tensor = 0
    for n in numels:
        if n == 0:
            continue
        loc_tensor += 1
        chunks = n // chunk + (n % chunk != 0)
        for c in range(chunks):
            loc_block += 1
            tensors_full = loc_tensor == max_tensors and c == chunks - 1
            blocks_full = loc_block == max_blocks
            if tensors_full or blocks_full:
                launches += 1
                loc_block = 0
                loc_tensor = 0 if c == chunks - 1 else 1
    return launches + (1 if loc_block else 0)


@pytest.mark.parametrize("seed", range(40))
def test_launch_count_equals_the_source_loop(seed: int) -> None:
    rng = random.Random(seed)
    sizes = [rng.choice([0, 1, 7, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK, rng.randint(1, 50 * CHUNK)])
             for _ in range(rng.randint(1, 400))]
    max_tensors = rng.choice([110, 64, 48, 36, 30, 96, 3])
    max_blocks = rng.choice([320, 2240, 5])
    assert mta_launches(sizes, max_tensors, max_blocks, CHUNK) == launches_as_written(sizes, max_tensors, max_blocks)


def test_a_gpt2_sized_parameter_list_takes_several_launches() -> None:
    """GPT-2 small's 148 parameters (124M elements): the 4 KB tables' 320 chunks per launch are full
    long before the 110 (depth 1) or 48 (depth 3) tensors are."""
    d, v, t = 768, 50257, 1024
    layer = [d, d, 3 * d * d, 3 * d, d * d, d, d, d, 4 * d * d, 4 * d, 4 * d * d, d]
    sizes = [v * d, t * d] + layer * 12 + [d, d]
    rule = default_targets()["cuda"]["foreach"]
    got = mta_launches(sizes, rule["max_tensors"][2], rule["max_blocks"][2], rule["chunk"])
    assert got == launches_as_written(sizes, 48, 320)
    assert got >= -(-sum(-(-n // CHUNK) for n in sizes) // 320)


def test_every_foreach_op_of_torch_is_known_with_the_lists_it_writes() -> None:
    """The multi-tensor ops come from torch's own schemas (scripts/gen_rules.py): in-place ones write
    their first list, a fused step its parameters, gradients and moments, not its step counts."""
    ops = default_table().ops
    foreach = {n: f for n, f in ops.items() if f.shape in ("foreach", "foreach_reduce")}
    assert len(foreach) >= 90
    assert ops["_foreach_add_"].list_writes == (0,) and ops["_foreach_add"].list_writes == ()
    assert ops["_fused_adamw_"].list_writes == (0, 1, 2, 3, 4) and ops["_fused_adamw_"].list_aside == (5,)
    assert ops["_foreach_norm"].shape == "foreach_reduce"
    assert default_table().for_api("torch._foreach_lerp_") is ops["_foreach_lerp_"]


def _fn(target: str, qualname: str):
    report = analyze_file(FOREACH, Settings(target=target))
    return next(f for f in report.functions if f.qualname == qualname)


def test_cuda_counts_multi_tensor_launches_and_keeps_host_step_counts_off_the_gpu() -> None:
    """On cuda, Adam's foreach path launches one multi_tensor_apply kernel per op for four small
    parameters, while its step counts (host tensors) add no launch and no sync; on cpu each `.item()`
    of a step count is a host read the oracle sees."""
    cpu, cuda = _fn("cpu", "adam_foreach"), _fn("cuda", "adam_foreach")
    assert not cuda.lower_bound, cuda.lower_bound_causes
    assert cpu.eager.syncs == 8 and cuda.eager.syncs == 0
    opt_cpu, opt_cuda = cpu.phases["optimizer"], cuda.phases["optimizer"]
    # cpu: 8 zeros_like, the step counts' _foreach_add_, 8 foreach ops; cuda: the same less the host add
    assert (opt_cpu.kernels, opt_cuda.kernels) == (17, 16)


def test_clip_grad_norm_on_cuda_adds_the_scratch_fills_and_the_cleanup() -> None:
    """_foreach_norm on cuda: two zero-filled scratch buffers, the per-chunk launch, one cleanup launch
    (4 launches where cpu runs 1 op), and Adam's host step counts add none (cpu: 1)."""
    cpu, cuda = _fn("cpu", "clip_then_adamw"), _fn("cuda", "clip_then_adamw")
    assert cuda.phases["optimizer"].kernels - cpu.phases["optimizer"].kernels == (4 - 1) - 1


def test_the_default_path_is_the_targets() -> None:
    """torch.optim picks foreach when every parameter is on an accelerator: a plain AdamW is the
    for-loop path on cpu and the foreach path on cuda (gpt_step.py's train_step)."""
    path = REPO / "fixtures" / "training" / "gpt_step.py"
    cpu = next(f for f in analyze_file(path, Settings(target="cpu")).functions if f.qualname == "train_step")
    cuda = next(f for f in analyze_file(path, Settings(target="cuda")).functions if f.qualname == "train_step")
    assert not cuda.lower_bound and not cpu.lower_bound
    assert cuda.phases["optimizer"].kernels < cpu.phases["optimizer"].kernels / 3
