"""Finding the files that `import` statements name, inside the analyzed tree, without importing them.

`from .layers import Block` is resolved relative to the importing file's folder (one folder up per
extra dot); `from mypkg.layers import Block` and `import layers` against the importing file's folder
and the folder that holds its top-level package (the nearest ancestor without `__init__.py`), which
is where Python would find them when the package is installed or run from its root. Names of
well-known third-party packages are never looked up on disk. Nothing is imported or executed.

Parsed files are cached per process, keyed by path, size and modification time, so a model that
imports the same layers file from ten places parses it once.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import lru_cache

from kpredict.frontend.parse import ModuleInfo, ParseError, parse_module
from kpredict.reads import note

# top-level names that are never files of the analyzed tree (they would only slow resolution down)
EXTERNAL = frozenset({
    "torch", "torchaudio", "numpy", "np", "math", "os", "sys", "typing", "dataclasses",
    "functools", "itertools", "collections", "abc", "enum", "logging", "warnings", "re", "json",
    "inspect", "copy", "random", "time", "pathlib", "contextlib", "operator", "builtins", "types",
    "einops", "scipy", "pandas", "triton", "transformers_stubs", "typing_extensions", "packaging",
    "safetensors", "huggingface_hub", "tqdm", "PIL", "importlib", "string", "io", "argparse",
    "weakref", "threading", "tempfile", "shutil", "glob", "pickle", "hashlib", "uuid", "datetime",
    "accelerate", "deepspeed", "apex", "xformers", "flash_attn", "bitsandbytes", "jax",
    "tensorflow", "sklearn", "matplotlib", "wandb", "tensorboard", "yaml", "requests", "regex",
    "tokenizers", "sentencepiece", "tiktoken", "opt_einsum", "kpredict",
})
MAX_FILE_BYTES = 4_000_000


@lru_cache(maxsize=512)
def _parse_cached(path: str, size: int, mtime_ns: int) -> ModuleInfo | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
        return parse_module(data, path)
    except (OSError, ParseError, RecursionError, MemoryError):
        return None


def load_file(path: str) -> ModuleInfo | None:
    """The parsed module at `path`, or None when it cannot be read or parsed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if st.st_size > MAX_FILE_BYTES:
        return None
    # also when the parse is served from memory: the per-file cache records the file as a dependency
    # of every analysis that uses it, not only of the first
    note(path)
    return _parse_cached(os.path.realpath(path), st.st_size, st.st_mtime_ns)


def _module_file(base: str, parts: list[str]) -> tuple[str, int] | None:
    """The longest prefix of `parts` that names a module under `base`: (file, parts consumed)."""
    best: tuple[str, int] | None = None
    d = base
    for i, seg in enumerate(parts):
        if not seg.isidentifier():
            break
        f = os.path.join(d, seg + ".py")
        pkg = os.path.join(d, seg)
        if os.path.isfile(f):
            return f, i + 1  # a module file ends the package path
        init = os.path.join(pkg, "__init__.py")
        if os.path.isdir(pkg):
            if os.path.isfile(init):
                best = (init, i + 1)
            d = pkg
            continue
        break
    return best


def package_root(folder: str) -> str:
    """The folder that holds the top-level package containing `folder` (itself if not a package)."""
    d = os.path.abspath(folder)
    for _ in range(32):
        if not os.path.isfile(os.path.join(d, "__init__.py")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return d
        d = parent
    return d


def resolve(importer: str, dotted: str) -> tuple[str, list[str]] | None:
    """Where `dotted` (an import target as parse.import_table writes it: `.layers.Block`,
    `mypkg.layers.Block`) lives: (file path, the attribute names left to look up in it)."""
    if not importer or importer.startswith("<"):
        return None
    level = len(dotted) - len(dotted.lstrip("."))
    parts = [p for p in dotted[level:].split(".") if p]
    here = os.path.dirname(os.path.abspath(importer))
    if level:
        base = here
        for _ in range(level - 1):
            base = os.path.dirname(base)
        if not parts:
            init = os.path.join(base, "__init__.py")
            return (init, []) if os.path.isfile(init) else None
        hit = _module_file(base, parts)
        if hit is None:
            init = os.path.join(base, "__init__.py")
            return (init, parts) if os.path.isfile(init) else None
        return hit[0], parts[hit[1]:]
    if not parts or parts[0] in EXTERNAL:
        return None
    roots = [here]
    root = package_root(here)
    if root not in roots:
        roots.append(root)
    for base in roots:
        hit = _module_file(base, parts)
        if hit is not None and os.path.abspath(hit[0]) != os.path.abspath(importer):
            return hit[0], parts[hit[1]:]
    return None


def library_name(importer: str, dotted: str, known: Callable[[str], bool]) -> str | None:
    """The absolute name of a relative import that leaves the analyzed tree, when the folder it points
    to ends in a library that rules/libraries.toml describes: `...activations.ACT2FN` imported by
    transformers/models/llama/modeling_llama.py, in a checkout of only transformers/models/, is
    `transformers.activations.ACT2FN`."""
    level = len(dotted) - len(dotted.lstrip("."))
    if not level or not importer or importer.startswith("<"):
        return None
    rest = [p for p in dotted[level:].split(".") if p]
    base = os.path.dirname(os.path.abspath(importer))
    for _ in range(level - 1):
        base = os.path.dirname(base)
    parts = [p for p in base.split(os.sep) if p]
    for k in range(1, min(4, len(parts)) + 1):
        cand = ".".join(parts[-k:] + rest)
        if known(cand):
            return cand
    return None


def module_dotted(path: str) -> str:
    """The dotted module name of a file of the tree, from the folder that holds its top-level package:
    .../site/transformers/modeling_utils.py -> transformers.modeling_utils."""
    return _module_dotted(os.path.abspath(path))  # cached by the absolute path: a relative one moves with cwd


@lru_cache(maxsize=1024)
def _module_dotted(path: str) -> str:
    rel = os.path.relpath(os.path.splitext(path)[0], package_root(os.path.dirname(path)))
    parts = [p for p in rel.split(os.sep) if p and p != "."]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)
