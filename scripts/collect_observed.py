"""Merge `kpredict verify --format json` outputs into one observation file for fixtures/observed/.

    python scripts/collect_observed.py DIR OUT.json
    python scripts/collect_observed.py --rederive fixtures/observed/cuda-*.json

The observation keeps what ran (measured figures and kernel names) per `path::qualname`, with the
device name and torch version, so tests can compare later predictions without a GPU. Functions
measured in eval mode (the default) go under "functions", those run with `--mode train` under "train".

Each cuda phase's `library_extra` (the helper kernels inside a library call, taken off the launch
count) follows `kpredict.verify.origin`, derived from the raw kernel names the phase keeps (eager:
`kernel_names` in launch order and each op's kernel count; compiled: `detail`). `--rederive`
applies that definition to an observation recorded before it, in place, without a GPU.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kpredict.verify.origin import with_library_extra  # noqa: E402


def collect(folder: Path) -> dict:
    doc: dict = {"schema": "kpredict/observed/v1", "device": None, "device_name": None, "torch": None,
                 "functions": {}, "train": {}}
    for f in sorted(folder.glob("*.json")):
        if f.name == "observed.json":
            continue
        try:
            res = json.loads(f.read_text())
        except (json.JSONDecodeError, OSError):
            continue
        for key in ("device", "device_name", "torch"):
            doc[key] = doc[key] or res.get(key)
        section = doc["train"] if res.get("mode") == "train" else doc["functions"]
        for fn in res.get("functions", []):
            measured = fn.get("measured") or {}
            if not measured.get("eager") and not measured.get("compiled"):
                continue
            section[f"{fn['path']}::{fn['qualname']}"] = with_library_extra(measured)
    return doc


def rederive(doc: dict) -> list[str]:
    """Derive every phase's `library_extra` again from its raw kernel names (in place); the changes."""
    changes = []
    for section in ("functions", "train"):
        for spec, measured in (doc.get(section) or {}).items():
            new = with_library_extra(measured)
            for phase in ("eager", "compiled"):
                old_v = (measured.get(phase) or {}).get("library_extra")
                new_v = (new.get(phase) or {}).get("library_extra")
                if old_v != new_v:
                    changes.append(f"{spec} {phase}: library_extra {old_v} -> {new_v}")
            doc[section][spec] = new
    return changes


def main() -> int:
    if sys.argv[1:2] == ["--rederive"]:
        for f in map(Path, sys.argv[2:]):
            doc = json.loads(f.read_text())
            changes = rederive(doc)
            f.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
            print(f"{f}: {len(changes)} figures changed", *changes, sep="\n  ")
        return 0
    folder, out = Path(sys.argv[1]), Path(sys.argv[2])
    doc = collect(folder)
    out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"{len(doc['functions'])} functions ({len(doc['train'])} more in train mode) observed on {doc['device_name']} (torch {doc['torch']}) -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
