"""Whether a file is PyTorch code at all: it, or a module of the analyzed tree it imports, imports torch.

A file that reaches no torch import creates no tensors: its functions only see tensors handed in
by callers, and those calls are analyzed where they happen (a torch file that calls a helper of
such a file follows the helper's source). Analyzing it on its own would treat every untyped
parameter as a tensor and report kernels for `difflib` or a web handler: noise in CI, and most of
the cost of a mixed repository (the standard library: 8.7x libcst's parse with every file analyzed,
issue 6). `--all-files` (Settings.all_files) analyzes such files anyway.

A `# kpredict:` comment in the file (an example's shapes, a constructor's arguments) says its
functions take tensors: such a file is analyzed too. Only the file's text and the import statements
of the tree's modules it imports (transitively) are read; nothing is imported or executed.
"""

from __future__ import annotations

import os
import re

from kpredict.frontend.imports import load_file, resolve
from kpredict.frontend.parse import ModuleInfo

# top-level packages whose import makes a file PyTorch code (torch itself and libraries built on it)
TORCH_PACKAGES = frozenset({
    "torch", "torchvision", "torchaudio", "torchtext", "functorch", "torchmetrics", "torchao", "torchtune",
    "transformers", "diffusers", "timm", "peft", "accelerate", "lightning", "pytorch_lightning",
    "xformers", "flash_attn", "apex", "deepspeed", "fairseq", "bitsandbytes", "mamba_ssm", "fla",
})
# an import statement anywhere in the file (also inside functions, `if TYPE_CHECKING:` and `try:`)
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+([A-Za-z_][\w]*)|import[ \t]+([^\n#;]+))", re.MULTILINE)
MAX_DEPTH = 16  # local imports followed from the analyzed file


def _names_torch(text: str) -> bool:
    for m in _IMPORT.finditer(text):
        if m.group(1) is not None:
            if m.group(1) in TORCH_PACKAGES:
                return True
            continue
        for part in m.group(2).split(","):
            top = part.strip().split(" ")[0].split(".")[0].strip("()\\ \t")
            if top in TORCH_PACKAGES:
                return True
    return False


class TorchRelevance:
    """Per-run memo of which files reach a torch import (keyed by real path). A file's answer is
    kept only once final: True as soon as a path to torch is found; False for every file visited by
    a search from the top that found none (each one's imports are a subset of what was searched)."""

    def __init__(self) -> None:
        self.known: dict[str, bool] = {}

    def uses_torch(self, module: ModuleInfo) -> bool:
        visited: set[str] = set()
        found = self._search(module, visited, 0)
        if not found:
            for p in visited:
                self.known[p] = False
        return found

    def _search(self, module: ModuleInfo, visited: set[str], depth: int) -> bool:
        key = os.path.realpath(module.path) if not module.path.startswith("<") else module.path
        if key in self.known:
            return self.known[key]
        visited.add(key)
        if any(t.split(".")[0] in TORCH_PACKAGES for t in module.imports.values() if not t.startswith(".")):
            self.known[key] = True
            return True
        text = "\n".join(module.lines)
        if _names_torch(text) or (depth == 0 and "# kpredict:" in text):
            self.known[key] = True
            return True
        if depth >= MAX_DEPTH:
            return False
        for target in module.imports.values():
            hit = resolve(module.path, target)
            if hit is None:
                continue
            real = os.path.realpath(hit[0])
            if real in visited:
                continue
            other = load_file(hit[0])
            if other is not None and self._search(other, visited, depth + 1):
                self.known[key] = True
                return True
        return False
