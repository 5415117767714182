"""Merge `kpredict verify --format json` outputs into one observation file for fixtures/observed/.

    python scripts/collect_observed.py DIR OUT.json

The observation keeps what ran (measured figures and kernel names) per `path::qualname`, with the
device name and torch version, so tests can compare later predictions without a GPU. Functions
measured in eval mode (the default) go under "functions", those run with `--mode train` under "train".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


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
            section[f"{fn['path']}::{fn['qualname']}"] = measured
    return doc


def main() -> int:
    folder, out = Path(sys.argv[1]), Path(sys.argv[2])
    doc = collect(folder)
    out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"{len(doc['functions'])} functions ({len(doc['train'])} more in train mode) observed on {doc['device_name']} (torch {doc['torch']}) -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
