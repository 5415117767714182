#!/usr/bin/env python
"""torch's own lists of public modules, functions and methods, and how many of each kpredict knows.

    python scripts/coverage.py            # the counts per list (known / excluded / missing / total)
    python scripts/coverage.py --json     # the lists themselves, as tests/test_coverage.py reads them
    python scripts/coverage.py --missing  # the names neither known nor in rules/coverage_exclusions.toml

The lists, from the installed torch (this script imports torch; kpredict itself never does):
  modules     torch.nn.modules.__all__
  functional  the public callables of torch.nn.functional that torch defines (in torch.nn.functional,
              torch or torch._C._nn; not typing.Optional or torch.overrides' helpers it imports)
  torch       the public functions of torch._C._VariableFunctions that torch exports and that are
              aten operators (torch._C._dispatch_get_all_op_names()): `torch.X` dispatches to aten::X
  tensor      the public methods of torch._C.TensorBase that are aten operators

"Known" is decided by kpredict's rules (tests/test_coverage.py, kpredict.opfacts): a module has a
`[module.X]` entry, a function a spelling in `api` or a catalogue `[function.*]` entry, a method a
`methods` spelling, or the interpreter reads it as a Python value (x.dim(), x.numel()).
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kpredict.frontend.catalogue import function_api  # noqa: E402
from kpredict.frontend.interp import _TENSOR_ATTRS  # noqa: E402
from kpredict.opfacts import default_table  # noqa: E402

EXCLUSIONS = REPO / "rules" / "coverage_exclusions.toml"
LISTS = ("modules", "functional", "torch", "tensor")
_F_MODULES = ("torch.nn.functional", "torch", "torch._C._nn")


def torch_lists() -> dict:
    import torch
    import torch.nn.functional as F

    aten = {n.split("::", 1)[1].split(".")[0] for n in torch._C._dispatch_get_all_op_names() if n.startswith("aten::")}
    functional = []
    for name in dir(F):
        obj = getattr(F, name)
        if name.startswith("_") or inspect.ismodule(obj) or inspect.isclass(obj) or not callable(obj):
            continue
        if getattr(obj, "__module__", None) in _F_MODULES:
            functional.append(name)
    fns = [n for n in dir(torch._C._VariableFunctions) if not n.startswith("_") and hasattr(torch, n) and n in aten]
    methods = [n for n in dir(torch._C.TensorBase) if not n.startswith("_") and n in aten]
    return {
        "torch_version": torch.__version__,
        "modules": sorted(set(torch.nn.modules.__all__)),
        "functional": sorted(set(functional)),
        "torch": sorted(set(fns)),
        "tensor": sorted(set(methods)),
    }


def load_exclusions(path: Path = EXCLUSIONS) -> dict[str, dict[str, str]]:
    """list -> {name: reason}; each `[[<list>]]` group of the file gives its `names` one `reason`."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out: dict[str, dict[str, str]] = {k: {} for k in LISTS}
    for lst in LISTS:
        for group in data.get(lst, []):
            for name in group.get("names", []):
                out[lst][name] = group.get("reason", "")
    return out


def known_names(lst: str, names: list[str]) -> set[str]:
    t = default_table()
    fapi = function_api(t.functions)
    if lst == "modules":
        return {n for n in names if n in t.modules}
    if lst in ("functional", "torch"):
        prefix = "torch.nn.functional." if lst == "functional" else "torch."
        return {n for n in names if prefix + n in t.api or prefix + n in fapi}
    return {n for n in names if n in t.methods or n in _TENSOR_ATTRS}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--missing", action="store_true")
    args = ap.parse_args(argv)
    lists = torch_lists()
    if args.json:
        print(json.dumps(lists, indent=1))
        return 0
    excl = load_exclusions()
    for lst in LISTS:
        names = lists[lst]
        known = known_names(lst, names)
        excluded = {n for n in names if n in excl[lst] and n not in known}
        missing = [n for n in names if n not in known and n not in excluded]
        if args.missing:
            print(f"[{lst}] " + " ".join(missing))
        else:
            print(f"{lst:11s} known {len(known):4d}  excluded {len(excluded):4d}  missing {len(missing):4d}  total {len(names):4d}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
