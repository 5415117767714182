"""The FLOP oracle: torch.utils.flop_counter.FlopCounterMode over every function of a file that has
example inputs, run eagerly on the cpu (issue 29). It checks kpredict.cost's matrix FLOPs.

    python -m kpredict.verify.flops FILE [FILE ...]      # one JSON document on stdout

Answer: {path: {"functions": {qualname: {"flops": int, "by_op": {aten op: int}} | {"error": str}},
"error": str | null}}. FlopCounterMode counts matmul, conv and attention only; on the cpu, SDPA runs
aten._scaled_dot_product_flash_attention_for_cpu, which torch's table leaves out (its formula is
registered for the cuda kernels), so the counter is given torch's own sdpa formula for it
(flop_counter.sdpa_flop_count, the one the cuda kernels are counted with). This runs the user's code:
only tests and scripts/record_flops.py call it, never the static path.
"""

from __future__ import annotations

import inspect
import json
import sys
from typing import Any

from kpredict.examples import merged_text
from kpredict.verify import child
from kpredict.verify.each_example import each_example_function
from kpredict.verify.annotations import annotations_for
from kpredict.verify.examples import evaluate


def _counter() -> Any:
    import torch  # lazy: torch takes seconds to import; only the oracle runs it
    from torch.utils import flop_counter as fc

    def cpu_sdpa(query_shape: Any, key_shape: Any, value_shape: Any, *args: Any, out_shape: Any = None,
                 **kwargs: Any) -> int:
        return fc.sdpa_flop_count(query_shape, key_shape, value_shape)

    return fc.FlopCounterMode(display=False, custom_mapping={
        torch.ops.aten._scaled_dot_product_flash_attention_for_cpu: cpu_sdpa})


def measure_function(mod: Any, path: str, qualname: str) -> dict[str, Any]:
    """FlopCounterMode's count for one call of `qualname` with its example inputs, in eval mode."""
    import torch  # lazy: torch takes seconds to import; only the oracle runs it

    ann = annotations_for(path, qualname)
    fn = child.resolve(mod, qualname, merged_text(ann.init, None), "cpu", "eval")
    values = evaluate(merged_text(ann.example, None), vars(mod), "cpu")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        args, kwargs = (), values
    else:
        args, kwargs = child._call_args(sig, values)
    counter = _counter()
    with torch.no_grad(), counter:
        fn(*args, **kwargs)
    by_op = {str(op): int(n) for op, n in counter.get_flop_counts().get("Global", {}).items() if n}
    return {"flops": int(counter.get_total_flops()), "by_op": by_op}


def measure_file(path: str) -> dict[str, Any]:
    """Every function of `path` with example inputs (as the CPU oracle's "*" request picks them)."""
    return each_example_function(path, measure_function)


def main(argv: list[str] | None = None) -> int:
    paths = sys.argv[1:] if argv is None else argv
    json.dump({p: measure_file(p) for p in paths}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
