"""Settings that change what kpredict predicts (and so belong in the cache key)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Settings:
    target: str = "cuda"  # cuda | cpu
    mode: str = "eval"  # eval | train: module mode assumed for nn.Module code
    dims: tuple[tuple[str, int], ...] = ()  # values for symbolic names (--dim n_layer=12)
    max_unroll: int = 4096  # ops emitted per loop before counting stops being exact
    all_files: bool = False  # also analyze files that reach no torch import (frontend/relevance.py)
    extra: tuple[tuple[str, str], ...] = field(default=())
    # CPU seconds one file's analysis may take; past it, what is left is not followed and the figures
    # are lower bounds (issue 32: whatever a file holds, a run never hangs on it); 0: no limit
    time_budget: float = 10.0
    gpu: str | None = None  # device preset of the time model (rules/devices.toml); None: the target's default
    # named dims assumed for inputs whose shape the source does not say (kpredict.frontend.dimnames.guess_shapes),
    # set by kpredict.api for the reruns that fit bytes as a formula; never read from a user's settings
    shapes: tuple[tuple[str, tuple[str | int, ...], str], ...] = ()  # (parameter, dims, why)

    def key(self) -> str:
        """A stable digest for caches."""
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]

    @property
    def dim_map(self) -> dict[str, int]:
        return dict(self.dims)
