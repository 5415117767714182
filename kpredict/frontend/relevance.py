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
from functools import lru_cache

from kpredict.frontend.imports import load_file, resolve
from kpredict.frontend.parse import ModuleInfo
from kpredict.reads import note

# top-level packages whose import makes a file PyTorch code (torch itself and libraries built on it)
TORCH_PACKAGES = frozenset({
    "torch", "torchvision", "torchaudio", "torchtext", "functorch", "torchmetrics", "torchao", "torchtune",
    "transformers", "diffusers", "timm", "peft", "accelerate", "lightning", "pytorch_lightning",
    "xformers", "flash_attn", "apex", "deepspeed", "fairseq", "bitsandbytes", "mamba_ssm", "fla",
})
# an import statement anywhere in the file (also inside functions, `if TYPE_CHECKING:` and `try:`)
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+([A-Za-z_][\w]*)|import[ \t]+([^\n#;]+))", re.MULTILINE)
MAX_FILES = 5000  # files of the tree looked at for one analyzed file


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


def _direct(module: ModuleInfo, text: str | None = None) -> bool:
    """The module itself imports torch or a library built on it (`text`: its source, if at hand)."""
    if any(t.split(".")[0] in TORCH_PACKAGES for t in module.imports.values() if not t.startswith(".")):
        return True
    return _names_torch("\n".join(module.lines) if text is None else text)


def _local_imports(module: ModuleInfo) -> tuple[str, ...]:
    """Real paths of the tree's files that the module's imports name."""
    out: dict[str, None] = {}
    for target in module.imports.values():
        hit = resolve(module.path, target)
        if hit is not None:
            out[os.path.realpath(hit[0])] = None
    return tuple(out)


@lru_cache(maxsize=8192)
def _facts(path: str, size: int, mtime_ns: int) -> tuple[bool, tuple[str, ...]]:
    """(imports torch itself, the tree's files it imports) for one file, kept per process: a
    package's files import each other, and every file of it would otherwise parse them again."""
    module = load_file(path)
    if module is None:
        return False, ()
    if _direct(module):
        return True, ()
    return False, _local_imports(module)


def uses_torch(module: ModuleInfo) -> bool:
    """Whether `module`, or a file of the tree it imports (transitively), imports torch; a
    `# kpredict:` comment in the module itself counts as well (see the module docstring)."""
    text = "\n".join(module.lines)
    if _direct(module, text) or "# kpredict:" in text:
        return True
    if module.path.startswith("<"):
        return False
    stack = list(_local_imports(module))
    seen = set(stack) | {os.path.realpath(module.path)}
    while stack and len(seen) <= MAX_FILES:
        path = stack.pop()
        try:
            st = os.stat(path)
        except OSError:
            continue
        note(path)  # a dependency of this analysis for the per-file cache
        direct, deps = _facts(path, st.st_size, st.st_mtime_ns)
        if direct:
            return True
        for d in deps:
            if d not in seen:
                seen.add(d)
                stack.append(d)
    return False
