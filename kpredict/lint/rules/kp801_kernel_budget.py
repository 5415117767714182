"""KP801 kernel-budget-exceeded."""

from __future__ import annotations

from kpredict.lint.model import Example, Rule


class KernelBudgetExceeded(Rule):
    """
    ## What it does
    With `kpredict check --baseline FILE`, reports every function whose predicted eager or compiled
    kernels, or eager or compiled bytes, grew beyond what the baseline recorded for it (functions
    are keyed by file path, relative to the repository root, and qualified name, never by line).
    `--write-baseline` records the current figures; findings already in the baseline are not
    reported again.

    ## Why it costs
    Each extra kernel is a launch and, for memory-bound code, another round trip of its tensors
    through memory. Regressions creep in one small op at a time and are invisible in review; a
    budget per function makes each one a visible, deliberate change.
    """

    code = "KP801"
    name = "kernel-budget-exceeded"
    severity = "error"
    summary = "A function's predicted kernels or bytes grew beyond its recorded baseline"
    fix = "Bring the kernels back down (fuse, vectorize, compile), or accept the change with --write-baseline."
    scope = "engine"

    INVALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(1024)\n"
            "def act(x):  # expect: KP801\n"
            "    return x.sigmoid() * x\n",
            baseline={"act": {"eager": {"kernels": 1, "bytes": 8192}, "compiled": {"kernels": 1, "bytes": 8192}}},
        ),
    ]
    VALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example x=randn(1024)\n"
            "def act(x):\n"
            "    return x.sigmoid() * x\n",
            baseline={"act": {"eager": {"kernels": 2, "bytes": 20480}, "compiled": {"kernels": 1, "bytes": 8192}}},
        ),
    ]
