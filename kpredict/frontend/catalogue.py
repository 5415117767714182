"""The torch.nn catalogue (rules/modules.toml) turned into stub Python the interpreter runs.

Each `[module.<Class>]` entry says, as data, what constructing and calling the module does:

    init    = "in_features, out_features, bias=True, device=None, dtype=None"   # constructor signature
    attrs.<name>   = "<expr>"   # derived attributes, in order (`self.<name>`), over constructor args
    params.<name>  = "<shape expr>" or { shape = "...", dtype = "...", when = "..." }  # None: absent
    buffers.<name> = same as params
    forward = "input"           # forward's parameters after self
    body    = "return F.linear(input, self.weight, self.bias)"   # forward as functional ops
    [[module.<Class>.variant]] when = "eval" | "train" | "cpu" | "cuda" | "eval,cpu"; body = "..."
    methods.<name> = { signature = "...", body = "..." }   # any other method (a config's __post_init__)

`[function.<name>]` entries (`api`, `signature`, `body`) decompose functional calls that launch
several aten ops (F.cross_entropy -> _log_softmax + nll_loss_forward) the same way.

The stubs are generated source, parsed once per catalogue text, and run by the same interpreter
as user code, so shapes, dtypes, aliasing and the op rules apply unchanged: a module is exactly
the functional ops its forward is written with. Constructor arguments are kept as attributes
(`self.eps`), which is how torch modules keep them too. Parameters are made by the hook
`__kp_param__(shape, dtype)`, which creates a tensor without recording an op.
"""

from __future__ import annotations

import ast
import textwrap
from functools import lru_cache

from kpredict.frontend.parse import ModuleInfo, parse_module
from kpredict.frontend.values import CATALOGUE

HEADER = "import torch\nimport math\nimport torch.nn.functional as F\n"
VARIANT_KEYS = ("eval", "train", "cpu", "cuda")


class CatalogueError(ValueError):
    """A rules/modules.toml entry that does not generate valid Python."""


def _indent(body: str, n: int = 8) -> str:
    return textwrap.indent(textwrap.dedent(body).strip("\n"), " " * n)


def _param_lines(kind: str, table: dict) -> list[str]:
    out = []
    for name, spec in table.items():
        if isinstance(spec, str):
            spec = {"shape": spec}
        shape = spec.get("shape", "None")
        dtype = spec.get("dtype", "dtype")
        expr = f"__kp_param__({shape}, {dtype})" if kind == "param" else f"__kp_param__({shape}, {dtype}, False)"
        if "when" in spec:
            expr = f"({expr} if ({spec['when']}) else None)"
        out.append(f"        self.{name} = {expr}")
    return out


def variant_method(when: str) -> str:
    """`forward__eval_cpu` for when = "eval,cpu": the method name a variant body is generated as."""
    keys = [k.strip() for k in when.split(",") if k.strip()]
    for k in keys:
        if k not in VARIANT_KEYS:
            raise CatalogueError(f"variant when = {when!r}: expected a comma list of {', '.join(VARIANT_KEYS)}")
    order = {k: i for i, k in enumerate(VARIANT_KEYS)}
    return "forward__" + "_".join(sorted(keys, key=order.__getitem__))


def module_source(name: str, entry: dict) -> str:
    init = entry.get("init", "")
    lines = [f"class {name}:"]
    # class-level defaults (a dataclass base's plain fields: what a subclass instance reads when its own
    # __init__, made from its own fields, did not set them)
    lines += [f"    {attr} = {expr}" for attr, expr in entry.get("class_attrs", {}).items()]
    lines.append(f"    def __init__(self{', ' if init else ''}{init}):")
    sig = ast.parse(f"def _({init}): pass").body[0].args  # type: ignore[attr-defined]
    names = [a.arg for a in sig.posonlyargs + sig.args + sig.kwonlyargs]
    if sig.vararg:
        names.append(sig.vararg.arg)
    for a in names:
        lines.append(f"        self.{a} = {a}")
    if "setup" in entry:
        lines.append(_indent(entry["setup"]))
    for attr, expr in entry.get("attrs", {}).items():
        lines.append(f"        self.{attr} = {expr}")
    lines += _param_lines("param", entry.get("params", {}))
    lines += _param_lines("buffer", entry.get("buffers", {}))
    if lines[-1].startswith("    def __init__"):
        lines.append("        pass")
    fwd = entry.get("forward", "input")
    bodies = [("forward", entry.get("body", "return input"))]
    for v in entry.get("variant", []):
        bodies.append((variant_method(v["when"]), v["body"]))
    for meth, body in bodies:
        lines.append(f"    def {meth}(self{', ' if fwd else ''}{fwd}):")
        lines.append(_indent(body))
    for meth, spec in entry.get("methods", {}).items():  # other methods: a config base's __post_init__
        sig = spec.get("signature", "")
        lines.append(f"    def {meth}(self{', ' if sig else ''}{sig}):")
        lines.append(_indent(spec["body"]))
    return "\n".join(lines) + "\n"


def function_source(name: str, entry: dict) -> str:
    return f"def {name}({entry.get('signature', '*args, **kwargs')}):\n{_indent(entry.get('body', 'return None'), 4)}\n"


def catalogue_text(modules: dict, functions: dict) -> str:
    parts = [HEADER]
    for name, entry in sorted(modules.items()):
        parts.append(module_source(name, entry))
    for name, entry in sorted(functions.items()):
        parts.append(function_source(name, entry))
    return "\n".join(parts)


@lru_cache(maxsize=4)
def _parse(text: str) -> ModuleInfo:
    return parse_module(text, CATALOGUE)


class _Recent:
    """The last catalogues parsed, by the identity of the rules' dicts: every analyzed file asks for
    the catalogue of the one OpTable, and writing its text out again to find the parse by text cost
    1.9 ms a file (2 s of a cold run over transformers)."""

    def __init__(self) -> None:
        self.items: list[tuple[dict, dict, tuple[int, int], ModuleInfo]] = []

    def get(self, modules: dict, functions: dict) -> ModuleInfo | None:
        for m, f, sizes, info in self.items:
            if m is modules and f is functions and sizes == (len(modules), len(functions)):
                return info
        return None

    def put(self, modules: dict, functions: dict, info: ModuleInfo) -> None:
        self.items = [(modules, functions, (len(modules), len(functions)), info), *self.items[:3]]


_RECENT = _Recent()


def catalogue_module(modules: dict, functions: dict) -> ModuleInfo:
    """The parsed stub module for a catalogue (cached per catalogue text, and per rules dicts)."""
    info = _RECENT.get(modules, functions)
    if info is None:
        try:
            info = _parse(catalogue_text(modules, functions))
        except SyntaxError as e:  # pragma: no cover - caught by tests/test_catalogue.py
            raise CatalogueError(str(e)) from None
        _RECENT.put(modules, functions, info)
    return info


def function_api(functions: dict) -> dict[str, str]:
    """Dotted spelling (torch.nn.functional.cross_entropy) -> catalogue function name."""
    out: dict[str, str] = {}
    for name, entry in functions.items():
        for spelling in entry.get("api", []):
            out[spelling] = name
    return out
