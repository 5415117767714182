"""Measure torch.nn modules with kpredict's CPU oracle: where the facts in rules/modules.toml come from.

    python scripts/module_probes/measure.py scripts/module_probes/cases1.py [case ...]

Each cases file defines CASES = {name: (build, inputs)} (and optionally MODES); every case is built,
put in eval and in train mode, and measured under torch.no_grad(): eager aten ops (kinds, transfers,
bytes) and the kernels of torch.compile after warm-up. Needs torch; imports nothing of kpredict's
static side.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings


def main(argv: list[str]) -> int:
    warnings.filterwarnings("ignore")
    import torch

    from kpredict.verify.oracle import measure

    spec = importlib.util.spec_from_file_location("cases", argv[0])
    cases = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(cases)  # type: ignore[union-attr]
    only = set(argv[1:])
    for name, (build, inputs) in cases.CASES.items():
        if only and name not in only:
            continue
        for mode in getattr(cases, "MODES", ("eval", "train")):
            torch.manual_seed(0)
            mod = build()
            mod.train(mode == "train")
            try:
                r = measure(mod, inputs(), files={__file__, argv[0]})
            except Exception as e:  # noqa: BLE001 - report and go on
                print(f"{name} [{mode}] ERROR {type(e).__name__}: {e}")
                continue
            e, c = r["eager"], r["compiled"]
            print(f"{name} [{mode}] eager k={e['kernels']} r={e['reads']} w={e['writes']} b={e['bytes']} names={e['names']}")
            print(f"{' ' * len(name)}  compiled k={c['kernels']} graphs={c['graphs']} names={c['names']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
