"""Every rule, by code: adding a rule is a module in kpredict/lint/rules and one line here."""

from __future__ import annotations

from functools import lru_cache

from kpredict.lint.model import Rule
from kpredict.lint.precision import on_by_default
from kpredict.lint.rules.kp101_unfused_chain import UnfusedElementwiseChain
from kpredict.lint.rules.kp201_graph_break import GraphBreak
from kpredict.lint.rules.kp301_loop_over_tensor import PythonLoopOverTensor
from kpredict.lint.rules.kp302_growing_cat import GrowingCatInLoop
from kpredict.lint.rules.kp401_sync_in_loop import HostSyncInLoop
from kpredict.lint.rules.kp402_sync_in_forward import HostSyncInForward
from kpredict.lint.rules.kp501_host_tensor_moved import HostTensorMovedToDevice
from kpredict.lint.rules.kp502_dtype_round_trip import DtypeRoundTrip
from kpredict.lint.rules.kp601_noop_contiguous import NoopContiguous
from kpredict.lint.rules.kp602_clone_of_temporary import CloneOfTemporary
from kpredict.lint.rules.kp701_zero_grad_in_place import ZeroGradInPlace
from kpredict.lint.rules.kp702_optimizer_for_loop import OptimizerForLoopOnDevice
from kpredict.lint.rules.kp801_kernel_budget import KernelBudgetExceeded
from kpredict.lint.rules.kp901_unused_suppression import UnusedSuppression


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    return (
        UnfusedElementwiseChain, GraphBreak, PythonLoopOverTensor, GrowingCatInLoop, HostSyncInLoop,
        HostSyncInForward, HostTensorMovedToDevice, DtypeRoundTrip, NoopContiguous, CloneOfTemporary,
        ZeroGradInPlace, OptimizerForLoopOnDevice, KernelBudgetExceeded, UnusedSuppression,
    )


@lru_cache(maxsize=1)
def by_code() -> dict[str, type[Rule]]:
    return {r.code: r for r in all_rules()}


def get(code_or_name: str) -> type[Rule] | None:
    """A rule by code (`KP101`, any case) or by name (`unfused-elementwise-chain`)."""
    key = code_or_name.strip()
    rule = by_code().get(key.upper())
    if rule is not None:
        return rule
    return next((r for r in all_rules() if r.name == key.lower()), None)


def codes() -> list[str]:
    return [r.code for r in all_rules()]


def default_codes() -> tuple[str, ...]:
    """The rules on when nothing is selected: those whose measured precision on public model code
    reaches 90% (kpredict.lint.precision); `--select ALL` or `--extend-select CODE` turn the others on."""
    return tuple(c for c in codes() if on_by_default(c))
