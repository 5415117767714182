"""Device presets for the time model, read from rules/devices.toml (issue 29).

A preset is data: bandwidth, dense peak FLOP rates per math mode and a per-launch cost, each with the
datasheet (or the assumption) it comes from. kpredict.cost turns a kernel's bytes and FLOPs into time
with one; nothing here imports torch or knows a target by name.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from kpredict.opfacts import _rules_dir, default_targets


@dataclass(frozen=True, slots=True)
class Device:
    """One preset. Rates in bytes/s and FLOP/s; `peaks` maps a math mode (fp32, tf32, bf16) to its rate."""

    name: str
    label: str
    target: str
    bandwidth: float
    peaks: dict[str, float]
    launch_us: float
    source: str
    launch_source: str
    dtype_peak: dict[str, str] = field(default_factory=dict)  # dtype -> math mode of its matmuls

    def matmul_peak(self, dtype: str | None) -> tuple[float, bool]:
        """FLOP/s of a matmul, conv or attention in `dtype`, and whether that dtype's peak is known
        (False: an unknown or other dtype, taken at the fp32 rate)."""
        mode = self.dtype_peak.get(dtype or "")
        return self.peaks[mode or "fp32"], mode is not None

    @property
    def vector_peak(self) -> float:
        """FLOP/s of pointwise and reduction work: the non-tensor-core fp32 rate."""
        return self.peaks["fp32"]


class UnknownDevice(ValueError):
    pass


def load_devices(rules_dir: Path | None = None) -> dict[str, Device]:
    d = rules_dir or _rules_dir()
    data = tomllib.loads((d / "devices.toml").read_text())
    dtype_peak = dict(data.get("dtype_peak", {}))
    out = {}
    for name, e in data["device"].items():
        peaks = {m: float(e[f"{m}_tflops"]) * 1e12 for m in ("fp32", "tf32", "bf16")}
        out[name] = Device(name=name, label=e["label"], target=e["target"], bandwidth=float(e["bandwidth_gbs"]) * 1e9,
                           peaks=peaks, launch_us=float(e["launch_us"]), source=e["source"],
                           launch_source=e.get("launch_source", ""), dtype_peak=dtype_peak)
    return out


@lru_cache(maxsize=2)
def default_devices() -> dict[str, Device]:
    """The packaged presets, loaded once per process (a pure function of the file on disk)."""
    return load_devices()


def device_for(target: str, gpu: str | None, devices: dict[str, Device] | None = None) -> Device:
    """The preset for `target`: `gpu` when given (it must be a preset of that target), else the
    target's default named in rules/targets.toml. Raises UnknownDevice."""
    devices = devices or default_devices()
    name = (gpu or default_targets()[target]["device"]).lower()
    dev = devices.get(name)
    if dev is None:
        raise UnknownDevice(f"no device preset {name!r} (rules/devices.toml has {', '.join(sorted(devices))})")
    if dev.target != target:
        raise UnknownDevice(f"device preset {name!r} is a {dev.target} device, not a {target} one")
    return dev


FLOP_KINDS = ("matmul", "addmm", "conv", "conv_transpose", "sdpa", "elementwise", "reduction", "none", "unknown")


@dataclass(frozen=True, slots=True)
class FlopKinds:
    """rules/flops.toml: which formula counts an op's FLOPs (kpredict.cost), by op name, else by category."""

    ops: dict[str, str]
    categories: dict[str, str]

    def kind(self, op: str, category: str) -> str:
        return self.ops.get(op) or self.categories.get(category, "unknown")


def load_flop_kinds(rules_dir: Path | None = None) -> FlopKinds:
    d = rules_dir or _rules_dir()
    data = tomllib.loads((d / "flops.toml").read_text())
    ops, cats = dict(data.get("op", {})), dict(data.get("category", {}))
    bad = sorted({*ops.values(), *cats.values()} - set(FLOP_KINDS))
    if bad:
        raise ValueError(f"rules/flops.toml: unknown FLOP kinds {bad}")
    return FlopKinds(ops=ops, categories=cats)


@lru_cache(maxsize=2)
def default_flop_kinds() -> FlopKinds:
    return load_flop_kinds()
