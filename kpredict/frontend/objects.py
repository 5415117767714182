"""The object model of the interpreter: modules of the analyzed tree, classes, instances, nn.Modules.

Model code is classes: `nn.Module` subclasses whose `__init__` builds submodules and whose
`forward` calls them, configs held in dataclasses, helpers imported from sibling files, and
torch.nn modules. This mixin gives the interpreter what it needs for that, without importing
anything:

- several modules at once: the analyzed file (key None), files of the analyzed tree reached
  through imports (key: their real path), and the torch.nn catalogue stubs (key CATALOGUE);
- classes: bases in approximately Python's order (depth first, left to right), class-level
  attributes, dataclass fields, `super()`, properties, static and class methods;
- instances: attributes set in `__init__`, `self.training` following `--mode` and `.eval()` /
  `.train()`, parameters and buffers, nn.Sequential / ModuleList / ModuleDict containers;
- the methods of nn.Module and of lists and dicts that model code calls while building itself.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import os
from collections.abc import Callable, Iterator

from kpredict.frontend import imports as I
from kpredict.frontend import shapes as S
from kpredict.frontend import strides as L
from kpredict.frontend.catalogue import catalogue_module, function_api, variant_method
from kpredict.frontend.frame import MAX_ITEMS, Frame, _Break, _Budget, _Continue, _Return, py
from kpredict.frontend.frame import MISSING as M
from kpredict.frontend.keys import Key
from kpredict.frontend.parse import SETTER, ModuleInfo, node_text
from kpredict.frontend.values import (
    CATALOGUE, CONTAINER, BoundBuiltin, ClassRef, Closure, CompiledRef, DataclassInit, Dict, FileMod, FuncRef, Instance, MethodRef,
    ModRef,
    NNModule, Opaque, Partial, Py, Seq, Super, Sym, SymObj, TensorRef, Tracked, Unknown, touch,
)
from kpredict.ir import EAGER_REGION, TensorMeta, Value

_AUTOGRAD_FUNCTION = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
# what a custom Function's forward may ask of its context: bookkeeping for backward, no tensor work
_CTX_METHODS = ("save_for_backward", "mark_dirty", "mark_non_differentiable", "set_materialize_grads")


_MISSING = object()
MODULE_STEPS = 20_000  # statements run for the top level of one imported file


def _star_imports(body: list[ast.stmt]) -> list[ast.ImportFrom]:
    """The `from .x import *` statements of a module, also those in `if`/`try` blocks: a lazy package
    (transformers' `if TYPE_CHECKING: from .modeling_auto import *`, with a _LazyModule that resolves
    the same names at run time in the else branch) exports what its type-checking branch imports."""
    out: list[ast.ImportFrom] = []
    for stmt in body:
        if isinstance(stmt, ast.ImportFrom) and stmt.names and stmt.names[0].name == "*":
            out.append(stmt)
        elif isinstance(stmt, (ast.If, ast.Try)):
            out += _star_imports(stmt.body)
            for h in getattr(stmt, "handlers", []):
                out += _star_imports(h.body)
            out += _star_imports(stmt.orelse)
    return out
CONFIG_NAMES = ("config", "cfg", "conf", "args", "hparams", "hp", "params", "opt", "opts", "model_args",
                "model_config", "configs", "hyperparams")
CONFIG_SUFFIXES = ("Config", "Args", "Cfg", "Configuration", "Hparams", "HParams", "Params")
MODULE_METHODS = frozenset({
    "eval", "train", "to", "cuda", "cpu", "half", "float", "bfloat16", "double", "type", "requires_grad_",
    "register_buffer", "register_parameter", "add_module", "register_module", "apply", "parameters",
    "named_parameters", "buffers", "named_buffers", "modules", "named_modules", "children",
    "named_children", "state_dict", "load_state_dict", "zero_grad", "extra_repr", "__init__",
    "get_submodule", "get_parameter", "register_forward_hook", "register_forward_pre_hook",
    "register_full_backward_hook", "share_memory", "append", "extend", "insert", "items", "keys",
    "values", "update", "pop", "get", "post_init", "init_weights", "tie_weights", "_init_weights",
    "gradient_checkpointing_enable", "__setattr__", "__getattr__", "__post_init__",
})
LIST_METHODS = frozenset({"append", "extend", "insert", "pop", "index", "count", "copy", "remove", "reverse",
                          "sort", "clear"})
DICT_METHODS = frozenset({"items", "keys", "values", "get", "pop", "update", "setdefault", "copy", "clear"})
# the methods that change a list or dict (its version is bumped, see values.touch)
_LIST_WRITES = frozenset({"append", "extend", "insert", "pop", "reverse", "clear"})
_DICT_WRITES = frozenset({"pop", "setdefault", "update", "clear"})
STR_METHODS = frozenset({"format", "join", "startswith", "endswith", "lower", "upper", "split", "replace", "index", "find", "count",
                         "strip", "rstrip", "lstrip", "isdigit", "isidentifier", "title", "capitalize"})
FLOAT_DTYPES = ("float32", "float16", "bfloat16", "float64")


def _decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> set[str]:
    out = set()
    for d in node.decorator_list:
        d = d.func if isinstance(d, ast.Call) else d
        if isinstance(d, ast.Name):
            out.add(d.id)
        elif isinstance(d, ast.Attribute):
            out.add(d.attr)
    return out


def looks_like_config(name: str) -> bool:
    low = name.lower()
    return low in CONFIG_NAMES or low.endswith("config") or low.endswith("_cfg")


class ObjectModel:
    """Mixin of `Interpreter`: everything about modules, classes and instances."""

    # ------------------------------------------------------------------ modules
    def modinfo(self, key: str | None) -> ModuleInfo:
        if key is None:
            return self.m
        if key == CATALOGUE:
            return self.catalogue()
        info = self.shared.modules.get(key)
        if info is None:
            info = I.load_file(key) or ModuleInfo(key, ast.Module(body=[], type_ignores=[]), [])
            self.shared.modules[key] = info
        return info

    def catalogue(self) -> ModuleInfo:
        cat = self.shared.catalogue
        if cat is None:
            cat = self.shared.catalogue = catalogue_module(self.table.modules, self.table.functions)
            self.shared.catalogue_api = function_api(self.table.functions)
        return cat

    def catalogue_function(self, dotted: str) -> str | None:
        self.catalogue()
        return self.shared.catalogue_api.get(dotted)

    def catalogue_class(self, dotted: str) -> str | None:
        """`torch.nn.Linear`, `torch.nn.modules.linear.Linear` -> 'Linear' when the catalogue has it."""
        if not dotted.startswith("torch.nn."):
            return self.table.library_classes.get(dotted)  # transformers.activations.NewGELUActivation
        name = dotted.rsplit(".", 1)[-1]
        return name if f"{name}.__init__" in self.catalogue().functions else None

    def path_of(self, key: str | None) -> str:
        return self.m.path if key is None else key

    def key_for_path(self, path: str) -> str | None:
        real = self.realpath(path)
        if real == self.realpath(self.m.path):
            return None
        return real

    def realpath(self, path: str) -> str:
        """os.path.realpath, once per path and file: an attribute of an imported module asks it each
        time (150,000 times, 15% of the stdlib's aifc.py with --all-files)."""
        real = self.shared.realpaths.get(path)
        if real is None:
            real = self.shared.realpaths[path] = os.path.realpath(path)
        return real

    def func_def(self, key: str | None, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        fdef = self.modinfo(key).functions.get(qualname)
        if fdef is None:
            fdef = self.shared.local_defs.get((key, qualname))
        return fdef

    def env_of(self, key: str | None) -> dict:
        """Names bound by a module's top-level code (run once, with op recording off)."""
        if key is None:
            return self.module_env
        if key == CATALOGUE:
            return self.shared.catalogue_env
        env = self.shared.envs.get(key)
        if env is not None:
            return env
        env = self.shared.envs[key] = {}  # bound first: an import cycle sees a partial module
        self.run_top_level(key, env)
        return env

    def run_top_level(self, key: str, env: dict) -> None:
        info = self.modinfo(key)
        frame = Frame(env=env, qualname="<module>", mod=key)
        was, steps = self.recording, self.steps_left
        self.recording = False
        self.shared.constructed.paused += 1  # objects made here are reachable without being handed out
        try:
            for stmt in info.tree.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    env[stmt.name] = FuncRef(stmt.name, mod=key)
                    continue
                if isinstance(stmt, ast.ClassDef):
                    env[stmt.name] = ClassRef(stmt.name, key)
                    continue
                if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    continue  # resolved lazily through the import table
                self.steps_left = MODULE_STEPS  # each statement on its own: a heavy one does not starve the rest
                try:
                    self.exec_stmt(stmt, frame)
                except (_Return, _Break, _Continue, _Budget):
                    continue
        finally:
            self.recording = was
            self.steps_left = steps
            self.shared.constructed.paused -= 1

    def import_value(self, dotted: str, key: str | None) -> object:
        """What an imported name is: a torch API (ModRef), or a function/class/module of the tree."""
        top = dotted.lstrip(".").split(".")[0]
        if not dotted.startswith(".") and (top in I.EXTERNAL or not top):
            return ModRef(dotted)
        cache_key = (key, dotted)
        if cache_key in self.shared.import_cache:
            return self.shared.import_cache[cache_key]
        self.shared.import_cache[cache_key] = ModRef(dotted)  # cycle guard
        hit = I.resolve(self.path_of(key), dotted)
        value: object = ModRef(dotted)
        if hit is None and dotted.startswith("."):  # outside the tree: a library rules/ describes?
            known = I.library_name(self.path_of(key), dotted, self.table.library_name)
            if known is not None:
                value = ModRef(known)
        if hit is not None:
            path, rest = hit
            shadow = self.package_binding(path, dotted) if not rest else None
            if shadow is not None:  # `from timm.layers import create_attn`: the package binds the name
                path, rest = shadow
            if not rest:
                value = FileMod(path)
            else:
                value = self.file_attr(self.key_for_path(path), rest[0])
                for name in rest[1:]:
                    value = self.attribute(value, name, None)
        self.shared.import_cache[cache_key] = value
        return value

    def package_binding(self, path: str, dotted: str) -> tuple[str, list[str]] | None:
        """Python's `from pkg import name` takes the package's attribute first: when pkg/__init__.py
        binds `name` itself (timm.layers imports the function create_attn from its module create_attn),
        that binding, not the submodule pkg/name.py. (pkg/__init__.py, [name]) then, else None."""
        name = dotted.rsplit(".", 1)[-1]
        if dotted.startswith(".") or os.path.basename(path) != name + ".py":
            return None
        init = os.path.join(os.path.dirname(path), "__init__.py")
        info = I.load_file(init) if os.path.isfile(init) else None
        if info is None:
            return None
        target = info.imports.get(name)
        rebinds = name in info.functions or name in info.classes or (
            target is not None and target.lstrip(".").split(".")[-1] == name and target.count(".") >= 2)
        return (init, [name]) if rebinds else None

    def file_attr(self, key: str | None, name: str) -> object:
        """`name` looked up in the module `key` as `from <module> import name` would."""
        env = self.env_of(key)
        if name in env:
            return env[name]
        info = self.modinfo(key)
        if name in info.functions:
            return FuncRef(name, mod=key)
        if name in info.classes:
            return ClassRef(name, key)
        if name in info.constants:
            return self.ev(info.constants[name], Frame(env={}, qualname="<module>", mod=key))
        if name in info.imports:
            return self.import_value(info.imports[name], key)
        path = self.path_of(key)
        if os.path.basename(path) == "__init__.py":  # a submodule of a package
            hit = I.resolve(path, "." + name)
            if hit is not None and not hit[1]:
                sub = self.key_for_path(hit[0])
                return FileMod(hit[0]) if sub is not None else Unknown(name)
        star = self.star_import(key, name)
        return star if star is not None else Unknown(name)

    def star_import(self, key: str | None, name: str, seen: frozenset = frozenset()) -> object | None:
        """`name` bound in module `key` by a `from .x import *` of a file of the tree (timm's
        create_norm_act takes EvoNorm2dB0 so, torchvision.models its builders), else None. A name
        with a leading underscore is not exported, and an `__all__` of the source is honoured."""
        if name.startswith("_") or key in seen:
            return None
        info = self.modinfo(key)
        for stmt in _star_imports(info.tree.body):
            hit = I.resolve(self.path_of(key), "." * stmt.level + (stmt.module or ""))
            if hit is None or hit[1]:
                continue
            sub = self.key_for_path(hit[0])
            sinfo = self.modinfo(sub)
            exported = sinfo.constants.get("__all__")
            if isinstance(exported, (ast.List, ast.Tuple)) and not any(
                    isinstance(x, ast.Constant) and x.value == name for x in exported.elts):
                continue
            if (name in sinfo.functions or name in sinfo.classes or name in sinfo.constants
                    or name in sinfo.imports or name in self.env_of(sub)):
                return self.file_attr(sub, name)
            deeper = self.star_import(sub, name, seen | {key})
            if deeper is not None:
                return deeper
        return None

    def filemod_attr(self, fm: FileMod, name: str) -> object:
        key = self.key_for_path(fm.path)
        return self.file_attr(key, name)

    # ------------------------------------------------------------------ classes
    def class_def(self, c: ClassRef) -> ast.ClassDef | None:
        return self.modinfo(c.mod).classes.get(c.name)

    def mro(self, c: ClassRef) -> list[ClassRef]:
        """The class and its bases that kpredict can read, nearest first (depth first, left to right)."""
        key = (c.mod, c.name)
        cached = self.shared.mro.get(key)
        if cached is not None:
            return cached
        self.shared.mro[key] = [c]  # cycle guard
        out: list[ClassRef] = [c]
        unread: list[str] = []
        cdef = self.class_def(c)
        if cdef is not None:
            frame = Frame(env={}, qualname="<module>", mod=c.mod)
            was = self.recording
            self.recording = False
            try:
                for b in cdef.bases:
                    if isinstance(b, ast.Subscript):  # Generic[T], nn.Module subclass with type params
                        b = b.value
                    bv = self.ev(b, frame)
                    if isinstance(bv, ModRef):
                        name = self.catalogue_class(bv.dotted)
                        if not name:
                            unread.append(bv.dotted)
                        bv = ClassRef(name, CATALOGUE) if name else None
                    if isinstance(bv, ClassRef):
                        for x in self.mro(bv):
                            if x not in out:
                                out.append(x)
                        unread.extend(d for d in self.shared.library_bases.get((bv.mod, bv.name), ()) if d not in unread)
            finally:
                self.recording = was
        self.shared.mro[key] = out
        self.shared.library_bases[key] = unread
        return out

    def library_method(self, inst: Instance, attr: str) -> Partial | None:
        """`inst.attr` for a method of a base kpredict cannot read that rules/libraries.toml describes
        (`transformers.modeling_utils.PreTrainedModel.get_input_embeddings`): the stub, bound to inst."""
        self.mro(ClassRef(inst.cls, inst.mod))  # walking the bases notes the ones it cannot read (cached)
        for dotted in self.shared.library_bases.get((inst.mod, inst.cls), ()):
            if self.catalogue_function(f"{dotted}.{attr}") is not None:
                return Partial(ModRef(f"{dotted}.{attr}"), (inst,), {})
        return None

    def dict_based(self, c: ClassRef) -> bool:
        """Whether a class of the tree derives from dict / OrderedDict (its instances hold a mapping)."""
        for k in self.mro(c):
            cdef = self.class_def(k)
            if cdef is None:
                continue
            for b in cdef.bases:
                bv = self.ev(b, Frame(env={}, qualname="<module>", mod=k.mod))
                if isinstance(bv, ModRef) and bv.dotted in ("builtins.dict", "collections.OrderedDict",
                                                            "typing.OrderedDict", "typing.Dict"):
                    return True
        return False

    def is_dataclass(self, c: ClassRef) -> bool:
        cdef = self.class_def(c)
        if cdef is None:
            return False
        if _decorator_names(cdef) & {"dataclass", "dataclasses", "define", "frozen"}:
            return True
        # PEP 681: subclasses of a class decorated with @dataclass_transform are dataclasses (their
        # base makes them so, as transformers' PreTrainedConfig does in __init_subclass__)
        for k in self.mro(c)[1:]:
            if k.mod == CATALOGUE:  # a library base rules/libraries.toml marks (transformers' PreTrainedConfig)
                if self.table.modules.get(k.name, {}).get("dataclass_base"):
                    return True
            elif (d := self.class_def(k)) is not None and "dataclass_transform" in _decorator_names(d):
                return True
        return False

    def class_level(self, c: ClassRef, attr: str) -> object:
        """A class-level assignment `attr = value` in the body of class `c` (evaluated once)."""
        if self.table.subclass_hooks and (c.mod, c.name) not in self.shared.subclass_hooked:
            self.subclass_hook(c)
        key = (c.mod, c.name, attr)
        if key in self.shared.class_attrs:
            return self.shared.class_attrs[key]
        cdef = self.class_def(c)
        value: object = _MISSING
        if cdef is not None:
            for stmt in cdef.body:
                expr = None
                if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in stmt.targets):
                    expr = stmt.value
                elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == attr:
                    expr = stmt.value
                    if expr is not None:
                        expr = _field_default(expr)
                if expr is not None:
                    was = self.recording
                    self.recording = False
                    try:
                        value = self.ev(expr, Frame(env={}, qualname=c.name, mod=c.mod))
                    finally:
                        self.recording = was
        self.shared.class_attrs[key] = value
        return value

    def subclass_hook(self, c: ClassRef) -> None:
        """Run, once per class of the tree, the `__init_subclass__` of a base that rules/libraries.toml
        marks `subclass_hook` (transformers' PreTrainedConfig wraps each sub-config class of
        `sub_configs_defaults` in a SubConfigSpec there, which its `__post_init__` reads): Python runs
        it when the class statement runs. Other bases' hooks are not run (transformers' layers wrap
        `forward` in theirs)."""
        self.shared.subclass_hooked.add((c.mod, c.name))
        for k in self.mro(c)[1:]:
            if k.mod == CATALOGUE or f"{I.module_dotted(self.path_of(k.mod))}.{k.name}" not in self.table.subclass_hooks:
                continue
            if self.func_def(k.mod, f"{k.name}.__init_subclass__") is not None:
                was = self.recording
                self.recording = False
                try:
                    self.run_function(f"{k.name}.__init_subclass__", [], {}, bound=c, mod=k.mod)
                finally:
                    self.recording = was
            return

    def class_dict(self, c: ClassRef) -> Dict:
        """`cls.__dict__`: what the class body itself binds (its assignments and its functions)."""
        cdef = self.class_def(c)
        out: dict[object, object] = {}
        for stmt in cdef.body if cdef is not None else []:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[stmt.name] = FuncRef(f"{c.name}.{stmt.name}", mod=c.mod)
            names = [t.id for t in stmt.targets if isinstance(t, ast.Name)] if isinstance(stmt, ast.Assign) else \
                [stmt.target.id] if isinstance(stmt, ast.AnnAssign) and stmt.value is not None \
                and isinstance(stmt.target, ast.Name) else []
            for name in names:
                v = self.class_level(c, name)
                if v is not _MISSING:
                    out[name] = v
        return Dict(out)

    def class_attr(self, c: ClassRef, attr: str, node: ast.AST | None) -> object:
        for k in self.mro(c):
            fdef = self.func_def(k.mod, f"{k.name}.{attr}")
            if fdef is not None:
                decos = _decorator_names(fdef)
                if "classmethod" in decos:
                    return FuncRef(f"{k.name}.{attr}", bound=c, mod=k.mod)
                return FuncRef(f"{k.name}.{attr}", mod=k.mod)
            v = self.class_level(k, attr)
            if v is not _MISSING:
                return v
        if attr == "apply" and self.is_autograd_function(c):
            # `GeLUFunction.apply(x)` runs the staticmethod forward(ctx, x) (bloom's gelu); the context
            # only records what backward needs (save_for_backward): nothing that launches
            forward = self.class_attr(c, "forward", node)
            if isinstance(forward, FuncRef):
                noop = ModRef("kpredict.hook.noop")
                ctx = Instance("FunctionCtx", {m: noop for m in _CTX_METHODS}, CONTAINER)
                return Partial(forward, (ctx,), {})
        return Unknown(f"{c.name}.{attr}")

    def is_autograd_function(self, c: ClassRef) -> bool:
        """Whether a class of the tree derives from torch.autograd.Function (read from its bases)."""
        for k in self.mro(c):
            cdef = self.class_def(k)
            if cdef is None:
                continue
            frame = Frame(env={}, qualname="<module>", mod=k.mod)
            was = self.recording
            self.recording = False
            try:
                bases = [self.ev(b, frame) for b in cdef.bases]
            finally:
                self.recording = was
            if any(isinstance(b, ModRef) and b.dotted in _AUTOGRAD_FUNCTION for b in bases):
                return True
        return False

    def enum_member(self, c: ClassRef, value: object) -> object:
        """`Format('NHWC')` for an Enum class of the tree: its member of that value, which the
        interpreter holds as the member's value (as it reads `Format.NHWC`); None when `c` is no Enum
        or the value none of its members' (timm's get_spatial_dim picked NCHW's dims for NHWC)."""
        if not isinstance(value, Py) or c.mod == CATALOGUE:
            return None
        frame = Frame(env={}, qualname="<module>", mod=c.mod)
        for k in self.mro(c):
            cdef = self.class_def(k)
            if cdef is None:
                continue
            for b in cdef.bases:
                bv = self.ev(b, frame)
                if isinstance(bv, ModRef) and bv.dotted in ("enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag",
                                                            "enum.IntFlag"):
                    names = [t.id for st in (self.class_def(c) or cdef).body if isinstance(st, ast.Assign)
                             for t in st.targets if isinstance(t, ast.Name)]
                    for n in names:
                        m = self.class_level(c, n)
                        if isinstance(m, Py) and m.value == value.value and type(m.value) is type(value.value):
                            return m
                    return None
        return None

    def dataclass_fields(self, c: ClassRef) -> list[tuple[str, ast.expr | None]]:
        fields: list[tuple[str, ast.expr | None]] = []
        for k in reversed(self.mro(c)):
            cdef = self.class_def(k)
            if cdef is None or not self.is_dataclass(k):
                continue
            for stmt in cdef.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    if "ClassVar" in node_text(stmt.annotation):
                        continue
                    fields = [f for f in fields if f[0] != stmt.target.id]
                    fields.append((stmt.target.id, stmt.value))
        return fields

    def known_keywords(self, c: ClassRef) -> list[str] | None:
        """The keyword arguments `C(...)` accepts, when kpredict can tell them all: a dataclass's
        fields, or the parameters of the `__init__` it runs (without **kwargs). None when it cannot:
        a base it cannot read, a metaclass or `__new__`, a `__post_init__(**kwargs)`, a decorated
        `__init__`, a class with neither."""
        if c.mod == CATALOGUE:
            return None
        for k in self.mro(c):
            cdef = self.class_def(k)
            if cdef is None or cdef.keywords or self.func_def(k.mod, f"{k.name}.__new__") is not None:
                return None
            for b in cdef.bases:
                bv = self.ev(b.value if isinstance(b, ast.Subscript) else b,
                             Frame(env={}, qualname="<module>", mod=k.mod))
                if isinstance(bv, ModRef) and bv.dotted in ("builtins.object", "typing.Generic", "abc.ABC"):
                    continue
                if isinstance(bv, ModRef):
                    name = self.catalogue_class(bv.dotted)
                    # nn.Module's __init__ takes none of a subclass's keywords; a library config base
                    # (transformers') takes any, and a base kpredict cannot read, who knows
                    if not name or self.table.modules.get(name, {}).get("dataclass_base"):
                        return None
                elif not isinstance(bv, ClassRef):
                    return None
            if (post := self.func_def(k.mod, f"{k.name}.__post_init__")) is not None and post.args.kwarg is not None:
                return None
            init = self.func_def(k.mod, f"{k.name}.__init__")
            if init is not None:
                if init.decorator_list or init.args.kwarg is not None:
                    return None
                return [p.arg for p in init.args.args[1:] + init.args.kwonlyargs]
            if self.is_dataclass(k):
                return [name for name, _ in self.dataclass_fields(c)]
        return None

    # ------------------------------------------------------------------ construction
    def construct(self, c: ClassRef, args: list[object], kwargs: dict[str, object], node: ast.AST | None,
                  describe: bool = False) -> object:
        """`C(*args, **kwargs)`. A construction from plain values (numbers, strings, configs and modules
        built the same way) is kept and handed to the file's later analyses (see `ConstructMemo`):
        a model's layers are then built once per file instead of once per method and per model head."""
        if len(args) == 1 and not kwargs and (member := self.enum_member(c, args[0])) is not None:
            return member
        self.builds += 1  # objects built, kept or not (a loop of unknown count that builds is said)
        memo: ConstructMemo = self.shared.constructed
        key = memo.key(c, args, kwargs, describe)
        if key is not None:
            entry = memo.take(key)
            if entry is not None:
                self._note_entry(entry)
                _depend(args, kwargs, None)  # it holds the values of its own build, not these ones
                return entry.inst
            model = memo.in_use(key)
            if model is not None:  # the 2nd..Nth layer of a stack: the same build, copied
                inst = self._clone(model)
                if inst is not None:
                    _depend(args, kwargs, None)
                    self._note_entry(model)
                    memo.put(key, inst, model.keep, model.assumptions, model.unknowns, model.loop_symbols,
                             shared=set(model.reach).difference(model.own))
                    memo.entries[key][-1].given_sig = model.given_sig
                    memo.entries[key][-1].syms = model.syms
                    return inst
            for model, swap, held in memo.templates(key, args, kwargs):
                inst = self._clone(model, swap)
                if inst is not None:  # the next layer of a stack: layer 0's build, with its index swapped
                    self._note_entry(model)
                    _depend(args, kwargs, model.used, model.conds)
                    memo.put(key, inst, (args, kwargs), model.assumptions, model.unknowns, model.loop_symbols,
                             shared=set(model.reach).difference(model.own))
                    made = memo.entries[key][-1]
                    made.given_sig, made.used, made.conds, made.held = model.given_sig, model.used, model.conds, held
                    made.syms = model.syms
                    return inst
        if key is None:
            return self._construct(c, args, kwargs, node, describe)
        before = (len(self.fg.assumptions), len(self.fg.unknowns), len(self.fg.loop_symbols))
        given = reachable(*args, *kwargs.values())
        given_sig = [(id(o), o.ver) for o in given]
        snaps = [_shallow(o) for o in given] if memo.check else None
        used: set[object] = set()
        conds: dict[object, list[tuple]] = {}
        t_args, t_kwargs, wrappers = _watch(args, kwargs, used, conds)
        syms: set[str] = set()
        memo.sym_reading.append(syms)
        try:
            inst = self._construct(c, t_args, t_kwargs, node, describe)
        finally:
            memo.sym_reading.pop()
            if wrappers:  # a build may have stored one in its arguments too (a config field)
                _unwatch(reachable(*args, *kwargs.values()), wrappers, memo)
        if wrappers:
            _unwatch(reachable(inst), wrappers, memo)
        # what building it noted in the graph is noted again wherever it is reused;
        # what the arguments reach (a config) is shared by a fresh build too, unless building changed it
        untouched = all(o.ver == v for o, (_, v) in zip(given, given_sig))
        if snaps is not None and untouched and snaps != [_shallow(o) for o in given]:
            raise AssertionError(f"construction memo: building {c.name} changed its arguments without touch()")
        memo.put(key, inst, (args, kwargs), self.fg.assumptions[before[0]:], self.fg.unknowns[before[1]:],
                 self.fg.loop_symbols[before[2]:], shared={id(o) for o in given} if untouched else set(),
                 clean=untouched)
        made = memo.entries[key][-1]
        made.given_sig, made.used, made.conds, made.syms = given_sig, used, conds, frozenset(syms)
        made.held = {slot: w for slot, w in (*enumerate(t_args), *t_kwargs.items()) if isinstance(w, _Watched)}
        return inst

    def _note_entry(self, entry: MemoEntry) -> None:
        """What building a kept object noted in its graph, noted again where it is reused; the sizes
        its build looked up count as looked up here too."""
        for name in entry.syms:
            self.note_sym(name)
        for a in entry.assumptions:
            if a not in self.fg.assumptions:
                self.fg.assumptions.append(a)
        for u in entry.unknowns:
            if u not in self.fg.unknowns:
                self.fg.unknowns.append(u)
        for n in entry.loop_symbols:
            if n not in self.fg.loop_symbols:
                self.fg.loop_symbols.append(n)

    def _clone(self, e: MemoEntry, swap: dict[int, object] | None = None) -> object | None:
        """A copy of kept object e.inst, as another `C(same arguments)` would build it: what building
        it made is copied, its tensors become new tensors of the same metadata (views keep their base),
        and what the arguments reach is shared. None when it holds something a copy cannot follow
        (a bound method, a super() proxy), or when building it changed its arguments. `swap`: plain
        argument values (by id) that the copy holds another value in place of (a template's index)."""
        if not e.clean:
            return None
        own = set(e.own)
        objs = [o for o in reachable(e.inst) if id(o) in own]
        if len(objs) != len(own):
            return None
        memo = self.shared.constructed
        sig, vers = memo.sig, memo.vers
        if any((o.ver != vers.get(id(o)) or memo.check) and _shallow(o) != sig.get(id(o)) for o in objs):
            return None  # changed since it was built (a ModuleList appended to): not what a build gives
        given = reachable(*e.keep[0], *e.keep[1].values())
        if e.given_sig is not None and e.given_sig != [(id(o), o.ver) for o in given]:
            return None  # what its arguments reach (a config) changed since: a build now could read other values
        outside: set[int] = set()  # tensors the arguments hold: shared, like the objects they hold
        for o in given:
            outside.update(t.vid for t in _held(o) if isinstance(t, TensorRef))
        outside.update(t.vid for t in [*e.keep[0], *e.keep[1].values()] if isinstance(t, TensorRef))
        olds: set[int] = set()
        for o in objs:
            for v in _held(o):
                if isinstance(v, TensorRef):
                    if v.vid not in outside:
                        olds.add(v.vid)
                elif isinstance(v, (FuncRef, MethodRef, BoundBuiltin, Super, CompiledRef, Closure, Partial)):
                    if not isinstance(v, FuncRef) or v.bound is not None:
                        return None  # a lambda reads the frame it was made in: built again
                elif isinstance(v, Unknown) and v.src is not None:
                    return None  # an unknown call's result kept by a build: built again rather than mapped
        sh, fg = self.shared, self.fg
        vmap = {old: sh.next_vid() for old in sorted(olds)}  # in build order, as a fresh build numbers them
        for old, new in vmap.items():
            src = sh.values[old]
            val = Value(new, src.meta, vmap.get(src.storage, src.storage), src.contiguous, src.producer,
                        src.is_input, src.name, src.strided_rows, requires_grad=src.requires_grad)
            fg.values[new] = val
            sh.values[new] = val
            if val.is_input:
                fg.inputs.append(new)
            if old in sh.strides:
                sh.strides[new] = sh.strides[old]
            if old in sh.matrix_t:
                sh.matrix_t.add(new)
        copies: dict[int, object] = {}
        for o in objs:
            c = copy.copy(o)
            copies[id(o)] = c

        if swap:
            copies.update(swap)

        def m(v: object) -> object:
            if isinstance(v, TensorRef):
                return TensorRef(vmap[v.vid]) if v.vid in vmap else v
            return copies.get(id(v), v)

        for o in objs:
            c = copies[id(o)]
            if isinstance(o, Instance):
                touch(c)  # holds other objects than o: o's signature part is not its own
                c.attrs = {k: m(v) for k, v in o.attrs.items()}
                if o.children is not None:
                    c.children = [m(v) for v in o.children]
                if o.named is not None:
                    c.named = {k: m(v) for k, v in o.named.items()}
            elif isinstance(o, Seq):
                c.items = [m(v) for v in o.items]
            else:
                c.items = {k: m(v) for k, v in o.items.items()}
        return copies[id(e.inst)]

    def _construct(self, c: ClassRef, args: list[object], kwargs: dict[str, object], node: ast.AST | None,
                   describe: bool = False) -> object:
        inst: Instance = NNModule(c.name, mod=c.mod) if c.mod == CATALOGUE else Instance(c.name, mod=c.mod)
        # the nearest class that defines __init__ or is a dataclass (whose generated __init__ is its own)
        init = next((k for k in self.mro(c)
                     if self.func_def(k.mod, f"{k.name}.__init__") is not None or self.is_dataclass(k)), None)
        was = self.recording
        # building a model is not part of the call being predicted; an object of another class built
        # while the call runs is (diffusers' DiagonalGaussianDistribution(h) takes exp(logvar) in __init__)
        self.recording = was and not self.is_module(inst)
        try:
            if (init is None or self.func_def(init.mod, f"{init.name}.__init__") is None) and self.dict_based(c):
                self.init_container(inst, args[0] if args else Dict(dict(kwargs)), "dict")  # class X(OrderedDict)
            if init is not None and self.func_def(init.mod, f"{init.name}.__init__") is not None:
                self.run_function(f"{init.name}.__init__", args, kwargs, bound=inst, node=node, mod=init.mod,
                                  describe=describe)
            elif init is not None:
                self.init_dataclass(inst, c, args, kwargs, describe)
            if self.table.class_decorators and c.mod != CATALOGUE:
                self.decorate(c, inst)
        finally:
            self.recording = was
        return inst

    def init_dataclass(self, inst: Instance, c: ClassRef, args: list[object], kwargs: dict[str, object],
                       describe: bool) -> None:
        frame = Frame(env={}, qualname=c.name, mod=c.mod)
        given: list[str] = []
        for i, (name, default) in enumerate(self.dataclass_fields(c)):
            if i < len(args):
                inst.attrs[name] = args[i]
            elif name in kwargs:
                inst.attrs[name] = kwargs[name]
            elif default is not None and name in self.settings.dim_map:
                inst.attrs[name] = self.sym(name)  # --dim NAME=N reaches a field's default too (issue 26)
                given.append(f"{name}={self.settings.dim_map[name]} (--dim)")
            elif default is not None:
                if isinstance(default, ast.Call) and _call_name(default) == "field":
                    factory = next((k.value for k in default.keywords if k.arg == "default_factory"), None)
                    value = next((k.value for k in default.keywords if k.arg == "default"), None)
                    inst.attrs[name] = (self.call(self.ev(factory, frame), [], {}, factory, frame)
                                        if factory is not None else self.ev(value, frame) if value is not None
                                        else Unknown(name))
                else:
                    inst.attrs[name] = self.ev(default, frame)
                given.append(f"{name}={_show(inst.attrs[name])}")
            else:
                inst.attrs[name] = self.sym(name)
        if describe and given:
            self.assume(f"{c.name}() field defaults: {', '.join(given)}", force=True)
        names = {name for name, _ in self.dataclass_fields(c)}
        extra = {k: v for k, v in kwargs.items() if k not in names}
        post = next(((k, d) for k in self.mro(c) if (d := self.func_def(k.mod, f"{k.name}.__post_init__"))), None)
        if post is not None and post[1].args.kwarg is not None:
            # keyword arguments that are not fields go to a __post_init__(self, **kwargs), as dataclasses
            # wrapped to accept them do (huggingface_hub's strict(accept_kwargs=True): transformers' configs)
            self.run_function(f"{post[0].name}.__post_init__", [], extra, bound=inst, mod=post[0].mod)
            return
        for k, v in extra.items():  # fields of a base kpredict cannot read (a library's ModelOutput)
            inst.attrs.setdefault(k, v)
        touch(inst)
        if post is not None:
            self.run_function(f"{post[0].name}.__post_init__", [], {}, bound=inst, mod=post[0].mod)

    def note_sym(self, name: str) -> None:
        """The symbolic size `name` was looked up: what is being built or recorded depends on it."""
        self.shared.summaries.sym_read(name)
        for r in self.shared.constructed.sym_reading:
            r.add(name)
        if name not in self.fg.size_symbols:
            self.fg.size_symbols.append(name)

    def sym(self, name: str) -> object:
        """A named unknown int, or its value when `--dim name=N` fixes it."""
        self.note_sym(name)
        dims = self.settings.dim_map
        return Py(dims[name]) if name in dims else Sym(name)

    def config_value(self, p: ast.arg, frame: Frame, describe: bool) -> object:
        """A constructor parameter without value that holds a config: an instance of its class with
        the class's defaults when the class is known, else an object whose fields are symbols."""
        cref = None
        if p.annotation is not None:
            ann = p.annotation
            if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
                try:
                    ann = ast.parse(ann.value, mode="eval").body
                except SyntaxError:
                    ann = None
            if isinstance(ann, ast.Subscript):  # Optional[GPTConfig], Union[A, B]
                ann = ann.slice
            # `CLIPVisionConfig | CLIPTextConfig`: the first class of the union, said with the figures
            options = _union_members(ann) if ann is not None else []
            for opt in options:
                v = self.ev(opt, frame)
                if isinstance(v, ClassRef):
                    cref = v
                    if describe and len(options) > 1:
                        self.assume(f"{p.arg}: annotated {node_text(p.annotation)}; the first class taken",
                                    force=True)
                    break
        if cref is None and looks_like_config(p.arg) and frame.cls:
            # Hugging Face models name it: `config_class = LlamaConfig` on the model class
            v = self.class_attr(ClassRef(frame.cls, frame.mod), "config_class", None)
            if isinstance(v, ClassRef):
                cref = v
        if cref is None and looks_like_config(p.arg):
            cref = self.config_class_guess(frame)
        if cref is None:
            if looks_like_config(p.arg):
                if describe:
                    self.assume(f"{p.arg}: fields not known statically (symbols named after them)", force=True)
                return SymObj(p.arg)
            return None
        if describe:
            self.assume(f"{p.arg}: {cref.name}() with its default values", force=True)
        return self.construct(cref, [], {}, None, describe=describe)

    def config_class_guess(self, frame: Frame) -> ClassRef | None:
        """The file's config class: its only `...Config` class (defined or imported), else the one whose
        name shares the longest prefix with the class being built (LlamaMLP -> LlamaConfig)."""
        info = self.modinfo(frame.mod)
        cands = [n for n in list(info.classes) + list(info.imports) if n.endswith(CONFIG_SUFFIXES)]
        cands = sorted(set(cands))
        if len(cands) > 1 and frame.cls:
            def shared(n: str) -> int:
                k = 0
                while k < min(len(n), len(frame.cls)) and n[k] == frame.cls[k]:  # type: ignore[index]
                    k += 1
                return k
            best = max(shared(n) for n in cands)
            cands = [n for n in cands if shared(n) == best] if best >= 3 else []
        if len(cands) != 1:
            return None
        v = self.lookup(cands[0], frame, None)
        return v if isinstance(v, ClassRef) else None

    # ------------------------------------------------------------------ instances
    def is_training(self, inst: Instance) -> bool:
        return inst.training if inst.training is not None else self.settings.mode == "train"

    def instance_attr(self, inst: Instance, attr: str, node: ast.AST | None, missing: object = None) -> object:
        """`inst.attr`. When neither the object nor a class kpredict reads has it: `missing` if given
        (getattr with a default), else a symbol for a config's field or an unknown."""
        if attr not in inst.attrs and inst.cls.endswith(CONFIG_SUFFIXES):
            attr = self.attribute_map(inst).get(attr, attr)  # config.num_hidden_layers -> config.n_layer
        if attr in inst.attrs:
            if self.shared.summaries.reading:  # a call being summarized depends on it, once it is used
                return self.shared.summaries.read_value(inst, attr)
            return inst.attrs[attr]
        if inst.named is not None and attr in inst.named:
            return inst.named[attr]
        for k in self.mro(ClassRef(inst.cls, inst.mod)):
            qual = f"{k.name}.{attr}"
            fdef = self.func_def(k.mod, qual)
            if fdef is not None:
                decos = _decorator_names(fdef)
                if "property" in decos or "cached_property" in decos:
                    return self.run_function(qual, [], {}, bound=inst, node=node, mod=k.mod)
                if "staticmethod" in decos:
                    return FuncRef(qual, mod=k.mod)
                if "classmethod" in decos:
                    return FuncRef(qual, bound=ClassRef(inst.cls, inst.mod), mod=k.mod)
                return FuncRef(qual, bound=inst, mod=k.mod)
            v = self.class_level(k, attr)
            if v is not _MISSING:
                if inst.cls.endswith(CONFIG_SUFFIXES) and attr in self.settings.dim_map:
                    return self.sym(attr)  # a config's class-level default, replaced by --dim
                return v
        if attr == "training":
            return Py(self.is_training(inst))
        if attr in MODULE_METHODS:
            return BoundBuiltin(inst, attr)
        if (bound := self.library_method(inst, attr)) is not None:
            return bound
        if missing is not None:
            return missing
        if inst.cls.endswith(CONFIG_SUFFIXES):
            return self.sym(attr)
        return Unknown(f"self.{attr}")

    def attribute_map(self, inst: Instance) -> dict[str, str]:
        """transformers' config aliases: a class-level `attribute_map = {"num_hidden_layers": "n_layer"}`
        that PreTrainedConfig's __getattribute__ follows (kpredict does not run __getattribute__)."""
        key = (inst.mod, inst.cls)
        amap = self.shared.attribute_maps.get(key)
        if amap is None:
            amap = {}
            for k in self.mro(ClassRef(inst.cls, inst.mod)):
                v = self.class_level(k, "attribute_map") if k.mod != CATALOGUE else _MISSING
                if isinstance(v, Dict):
                    amap = {a: b.value for a, b in v.items.items() if isinstance(a, str) and isinstance(b, Py)
                            and isinstance(b.value, str)}
                    break
            self.shared.attribute_maps[key] = amap
        return amap

    def setter_of(self, inst: Instance, attr: str) -> tuple[str, str | None] | None:
        """The property setter `inst.attr = v` runs: (qualname, module), or None for a plain attribute."""
        if attr in inst.attrs or inst.mod == CATALOGUE:
            return None
        for k in self.mro(ClassRef(inst.cls, inst.mod)):
            qual = f"{k.name}.{attr}{SETTER}"
            if self.func_def(k.mod, qual) is not None:
                return qual, k.mod
        return None

    def super_attr(self, s: Super, attr: str, node: ast.AST | None) -> object:
        obj = s.obj
        if isinstance(obj, Instance):
            chain = self.mro(ClassRef(obj.cls, obj.mod))
            start = next((i for i, k in enumerate(chain) if k.name == s.cls and k.mod == s.mod), None)
            rest = chain[start + 1:] if start is not None else chain[1:]
            for k in rest:
                qual = f"{k.name}.{attr}"
                fdef = self.func_def(k.mod, qual)
                if fdef is not None:
                    if "property" in _decorator_names(fdef):
                        return self.run_function(qual, [], {}, bound=obj, node=node, mod=k.mod)
                    return FuncRef(qual, bound=obj, mod=k.mod)
                if attr == "__init__" and self.is_dataclass(k):
                    return DataclassInit(obj, k)
                v = self.class_level(k, attr)
                if v is not _MISSING:
                    return v
            if (bound := self.library_method(obj, attr)) is not None:
                return bound  # a library base's method rules/libraries.toml describes (PreTrainedModel.__init__)
            if attr in MODULE_METHODS:
                return BoundBuiltin(obj, attr)
        if attr in ("get", "__getitem__", "to_tuple", "keys", "values", "items"):
            return BoundBuiltin(obj, attr)  # Mapping / OrderedDict methods under a dict-like class
        return BoundBuiltin(obj, "__init__") if attr == "__init__" else Unknown(f"super().{attr}")

    def func_def_in_mro(self, inst: Instance, name: str) -> bool:
        return any(self.func_def(k.mod, f"{k.name}.{name}") is not None for k in self.mro(ClassRef(inst.cls, inst.mod)))

    def forward_of(self, inst: Instance) -> FuncRef | None:
        """The method a call of the module runs: the first `forward` (or `__call__`) in its bases;
        for torch.nn catalogue stubs, the variant for the mode and target when there is one."""
        own = inst.attrs.get("forward")  # `self.forward = self.forward_slicing` in __init__ (timm's FasterNet)
        if isinstance(own, FuncRef) and own.bound is inst:
            return own
        mode = "train" if self.is_training(inst) else "eval"
        target = self.settings.target
        for k in self.mro(ClassRef(inst.cls, inst.mod)):
            if k.mod != CATALOGUE and self.table.class_decorators:
                made = self.decorated_forward(k, inst)
                if made is not None:
                    return made
            if k.mod == CATALOGUE:
                for when in (f"{mode},{target}", mode, target):
                    name = f"{k.name}.{variant_method(when)}"
                    if self.func_def(k.mod, name) is not None:
                        return FuncRef(name, bound=inst, mod=k.mod)
            for meth in ("forward", "__call__"):
                if self.func_def(k.mod, f"{k.name}.{meth}") is not None:
                    return FuncRef(f"{k.name}.{meth}", bound=inst, mod=k.mod)
        return None

    def class_decorator(self, k: ClassRef) -> tuple | None:
        """What a class decorator of rules/libraries.toml does to class `k` of the tree (transformers'
        `@use_experts_implementation`): (the decorator's module, its entry, the attributes its
        `__init__` sets: the decorator's keywords over the entry's defaults), or None. Only where the
        decorator's own module is in the tree: its `forward` names a function of that module."""
        key = (k.mod, k.name)
        if key in self.shared.decorated:
            return self.shared.decorated[key]
        self.shared.decorated[key] = None
        cdef = self.class_def(k)
        for d in cdef.decorator_list if cdef is not None else []:
            call = d if isinstance(d, ast.Call) else None
            frame = Frame(env={}, qualname="<module>", mod=k.mod)
            was = self.recording
            self.recording = False
            try:
                v = self.ev(call.func if call is not None else d, frame)
                if not isinstance(v, FuncRef) or v.mod in (None, CATALOGUE):
                    continue
                entry = self.table.class_decorators.get(f"{I.module_dotted(self.path_of(v.mod))}.{v.qualname}")
                if entry is None:
                    continue
                attrs = {n: Py(x) for n, x in entry.get("attrs", {}).items()}
                for kw in call.keywords if call is not None else []:
                    if kw.arg in attrs:
                        attrs[kw.arg] = self.ev(kw.value, frame)
            finally:
                self.recording = was
            self.shared.decorated[key] = (v.mod, entry, attrs)
            break
        return self.shared.decorated[key]

    def decorate(self, c: ClassRef, inst: Instance) -> None:
        """After `__init__`: the attributes and methods a class decorator's `__init__` adds (class_decorator)."""
        for k in self.mro(c):
            made = self.class_decorator(k) if k.mod != CATALOGUE else None
            if made is None:
                continue
            mod, entry, attrs = made
            inst.attrs.update(attrs)
            for name, fn in entry.get("methods", {}).items():
                if not any(self.func_def(x.mod, f"{x.name}.{name}") is not None for x in self.mro(k)):
                    inst.attrs.setdefault(name, FuncRef(fn, bound=inst, mod=mod))
            return

    def decorated_forward(self, k: ClassRef, inst: Instance) -> FuncRef | None:
        """The forward a class decorator puts on class `k`: a function of the decorator's own module,
        run with the module as its first argument (transformers' grouped_mm_experts_forward)."""
        made = self.class_decorator(k)
        if made is None:
            return None
        mod, entry, _ = made
        if entry.get("assume"):
            self.assume(entry["assume"])  # type: ignore[attr-defined]
        return FuncRef(entry["forward"], bound=inst, mod=mod)

    def call_instance(self, inst: Instance, args: list[object], kwargs: dict[str, object], node: ast.AST,
                      frame: Frame) -> object:
        fwd = self.forward_of(inst)
        if fwd is None:
            return self.opaque_call(inst.cls, args, kwargs, node, foreign=False)
        skip = self.dynamo_skips(inst)
        if skip is not None:
            # torch.compile runs the frame that holds this module eagerly: it is marked when it ends
            # (frame_done), and the call is run each time (a replayed summary would not mark it)
            if self.frames and self.recording and self.frames[-1][1] is None:
                self.frames[-1][1] = skip
            return self.run_function(fwd.qualname, args, kwargs, bound=inst, node=node, mod=fwd.mod)
        start = len(self.fg.ops)
        out = self.shared.summaries.call(self, inst, fwd.qualname, fwd.mod, args, kwargs, node)
        if self.frames:  # a replayed call runs no frame of its own: its ops are this call's (frame_done)
            self.frames[-1][2].append((start, len(self.fg.ops), fwd.mod == CATALOGUE))
        return out

    def dynamo_skips(self, inst: Instance) -> str | None:
        """Why Dynamo does not trace a module of this class (rules/modules.toml `dynamo = "skip"`), or None."""
        for k in self.mro(ClassRef(inst.cls, inst.mod)):
            if k.mod == CATALOGUE:
                entry = self.table.modules.get(k.name, {})
                if entry.get("dynamo") == "skip":
                    return entry.get("dynamo_reason", f"torch.compile does not trace nn.{k.name}")
        return None

    def frame_done(self, entry: list, node: ast.AST, catalogue: bool) -> None:
        """A function ends. When it holds a module Dynamo does not trace, torch.compile runs the frame
        eagerly (Dynamo skips a frame that breaks its graph outside a call): its own ops, those before
        that module's call too, and the ops of the torch.nn modules it calls leave the graph, while each
        call it makes to a function or module of the user's code is compiled as a frame of its own (a
        graph); the calling frame breaks its graph at the call. torch.nn code (the catalogue) whose
        graph breaks runs eagerly the same way (torch 2.13, [M-CPU] fixtures/ops/recurrent.py)."""
        start, reason, calls, breaks = entry
        if self.frames:
            self.frames[-1][2].append((start, len(self.fg.ops), catalogue))
        if reason is None and catalogue and len(self.fg.graph_breaks) > breaks:
            # a graph break in torch.nn code: Dynamo breaks the caller's graph at the call and runs the
            # module's frame on its own, which it does not compile (torch.nn is not traced as a frame
            # of its own): eagerly, as a frame it skips [M-CPU fixtures/ops/recurrent.py EncoderStackCausal]
            reason = self.fg.graph_breaks[-1].reason
        if reason is None or not self.recording:
            return
        ops = self.fg.ops
        own: list[tuple[int, int]] = []  # calls into the user's code, outermost only
        for s, e, cat in sorted(calls, key=lambda c: (c[0], -c[1])):
            if not cat and s < e and not (own and e <= own[-1][1]):
                own.append((s, e))
        compiled: set[int] = set()
        for s, e in own:
            fresh: dict[int, int] = {}
            for i in range(s, e):
                op = ops[i]
                if op.region == EAGER_REGION or i in compiled:
                    continue
                g = fresh.get(op.graph)
                if g is None:
                    self.graph += 1
                    g = fresh[op.graph] = self.graph
                ops[i] = dataclasses.replace(op, graph=g)  # ops may be shared with summaries: copies
                compiled.add(i)
        for i in range(start, len(ops)):
            if i not in compiled and ops[i].region != EAGER_REGION:
                ops[i] = dataclasses.replace(ops[i], region=EAGER_REGION)
        if self.frames:
            self.graph_break(node, reason)
        else:
            self.graph += 1  # ops after the frame are not in the graphs of its calls

    def set_training(self, v: object, mode: bool, seen: set[int] | None = None) -> None:
        seen = set() if seen is None else seen
        if id(v) in seen:
            return
        seen.add(id(v))
        if isinstance(v, Instance):
            v.training = mode
            touch(v)
            for x in list(v.attrs.values()) + list(v.children or []) + list((v.named or {}).values()):
                self.set_training(x, mode, seen)
        elif isinstance(v, Seq):
            for x in v.items:
                self.set_training(x, mode, seen)

    def submodules(self, v: object, seen: set[int] | None = None) -> list[Instance]:
        seen = set() if seen is None else seen
        out: list[Instance] = []
        if isinstance(v, Instance) and id(v) not in seen:
            seen.add(id(v))
            out.append(v)
            for x in list(v.attrs.values()) + list(v.children or []) + list((v.named or {}).values()):
                out.extend(self.submodules(x, seen))
        elif isinstance(v, Seq):
            for x in v.items:
                out.extend(self.submodules(x, seen))
        return out

    def child_items(self, inst: Instance) -> list[tuple[str, Instance]]:
        """`named_children()`: (name, module) of the modules registered on inst, first registration of each."""
        pairs = [(k, v) for k, v in inst.attrs.items()] + [(str(i), v) for i, v in enumerate(inst.children or [])] \
            + list((inst.named or {}).items())
        out: list[tuple[str, Instance]] = []
        seen: set[int] = set()
        for k, v in pairs:
            if isinstance(v, Instance) and id(v) not in seen and v.mod != CONTAINER \
                    and (self.is_module(v) or self.func_def_in_mro(v, "forward") is not None):
                seen.add(id(v))
                out.append((k, v))
        return out

    def direct_children(self, inst: Instance) -> list[Instance]:
        return [v for _, v in self.child_items(inst)]

    def child_names(self, inst: Instance) -> list[str]:
        return [k for k, _ in self.child_items(inst)]

    def tensors_of(self, inst: Instance) -> list[tuple[str, TensorRef]]:
        out: list[tuple[str, TensorRef]] = []
        seen: set[int] = set()
        for m in self.submodules(inst):
            for name, v in m.attrs.items():
                if isinstance(v, TensorRef) and v.vid not in seen:
                    seen.add(v.vid)
                    out.append((name, v))
        return out

    def cast_module(self, inst: Instance, dtype: str) -> None:
        """`model.half()`: floating parameters and buffers get the new dtype (no op is recorded)."""
        for m in self.submodules(inst):
            for name, v in list(m.attrs.items()):
                if isinstance(v, TensorRef):
                    meta = self.meta(v)
                    if meta.dtype in FLOAT_DTYPES and meta.dtype != dtype:  # the same object when nothing changes
                        m.attrs[name] = self.new_tensor(TensorMeta(meta.shape, dtype, meta.device), is_input=True,
                                                        name=name)
                        touch(m)

    # ------------------------------------------------------------------ containers
    def container_items(self, v: object) -> list[object] | None:
        if isinstance(v, Instance):
            if v.children is not None:
                return list(v.children)
            if v.named is not None:
                return [Py(k) for k in v.named]
        return None

    def init_container(self, inst: object, items: object, kind: str) -> None:
        """The hook the Sequential / ModuleList / ModuleDict stubs call from their __init__."""
        if not isinstance(inst, Instance):
            return
        touch(inst)
        if kind == "dict":
            inst.named = {}
            pairs = items.items.items() if isinstance(items, Dict) else [
                tuple(p.items) for p in (self.iterate(items, None) or []) if isinstance(p, Seq) and len(p.items) == 2]
            for k, m in pairs:
                key = k.value if isinstance(k, Py) else k
                try:
                    inst.named[key] = m
                except TypeError:
                    continue
            return
        seq = self.iterate(items, None) or []
        if kind == "sequential" and len(seq) == 1 and isinstance(seq[0], Dict):
            inst.children = []
            for k, m in seq[0].items.items():
                inst.attrs[str(k)] = m
                inst.children.append(m)
            return
        inst.children = [x for x in seq if not (isinstance(x, Py) and x.value is None)]

    def container_index(self, inst: Instance, idx: object) -> object:
        if isinstance(idx, Sym):
            return Unknown(f"{inst.cls}[{idx.name}] with {idx.name} not known statically")
        if inst.named is not None:
            key = idx.value if isinstance(idx, Py) else _MISSING
            what = f"{inst.cls}[...] with a key not known statically"
            try:
                return inst.named.get(key, Unknown(f"{inst.cls}[{key!r}]")) if key is not _MISSING else Unknown(what)
            except TypeError:  # an unhashable key (a slice of a dict-like class)
                return Unknown(what)
        items = inst.children or []
        if isinstance(idx, Py):
            if isinstance(idx.value, slice):
                new = type(inst)(inst.cls, mod=inst.mod, training=inst.training)
                new.children = items[idx.value]
                return new
            if isinstance(idx.value, int) and -len(items) <= idx.value < len(items):
                return items[idx.value]
            if isinstance(idx.value, str) and idx.value in inst.attrs:
                return self.instance_attr(inst, idx.value, None)
        return Unknown("module list item")

    # ------------------------------------------------------------------ builtin methods
    def builtin_method(self, b: BoundBuiltin, args: list[object], kwargs: dict[str, object], node: ast.AST,
                       frame: Frame) -> object:
        obj, name = b.obj, b.name
        if isinstance(obj, Seq):
            return self.list_method(obj, name, args)
        if isinstance(obj, Dict):
            return self.dict_method(obj, name, args)
        if isinstance(obj, Py) and isinstance(obj.value, str):
            vals = [py(a, M) for a in args]
            if all(v is not M for v in vals) and not kwargs:
                try:
                    return Py(getattr(obj.value, name)(*vals))
                except Exception:  # noqa: BLE001
                    return Opaque(name)
            return Opaque(name)
        if isinstance(obj, Instance):
            return self.module_method(obj, name, args, kwargs, node)
        return Unknown(name)

    def list_method(self, obj: Seq, name: str, args: list[object]) -> object:
        items = obj.items
        if name in _LIST_WRITES:
            touch(obj)
        if name == "append" and args:
            items.append(args[0])
        elif name == "extend" and args:
            more = self.iterate(args[0], None) or []
            if len(items) + len(more) > MAX_ITEMS:  # `s.extend(s)` in a loop doubles it each time
                return Unknown("extend")
            items.extend(more)
        elif name == "insert" and len(args) == 2 and isinstance(args[0], Py) and isinstance(args[0].value, int):
            items.insert(args[0].value, args[1])
        elif name == "pop":
            i = args[0].value if args and isinstance(args[0], Py) else -1
            try:
                return items.pop(i)  # type: ignore[arg-type]
            except (IndexError, TypeError):
                return Unknown("pop")
        elif name == "copy":
            return Seq(list(items), obj.kind)
        elif name == "reverse":
            items.reverse()
        elif name == "clear":
            items.clear()
        elif name in ("index", "count"):
            return Opaque(name)
        return Py(None)

    def dict_method(self, obj: Dict, name: str, args: list[object]) -> object:
        d = obj.items
        if name in _DICT_WRITES:
            touch(obj)
        key = args[0].value if args and isinstance(args[0], Py) else _MISSING
        try:
            if name == "items":
                return Seq([Seq([Py(k), v]) for k, v in d.items()], "list")
            if name == "keys":
                return Seq([Py(k) for k in d], "list")
            if name == "values":
                return Seq(list(d.values()), "list")
            if name == "get":
                if key is _MISSING:
                    return Unknown("dict.get")
                return d.get(key, args[1] if len(args) > 1 else Py(None))
            if name == "pop":
                if key is _MISSING:
                    return Unknown("dict.pop")
                return d.pop(key, args[1] if len(args) > 1 else Unknown("dict.pop"))
            if name == "setdefault" and key is not _MISSING:
                return d.setdefault(key, args[1] if len(args) > 1 else Py(None))
            if name == "update" and args and isinstance(args[0], Dict):
                d.update(args[0].items)
            elif name == "copy":
                return Dict(dict(d))
            elif name == "clear":
                d.clear()
        except TypeError:
            return Unknown(f"dict.{name}")
        return Py(None)

    def module_method(self, inst: Instance, name: str, args: list[object], kwargs: dict[str, object],
                      node: ast.AST) -> object:
        if name in ("eval", "train"):
            mode = name == "train"
            if name == "train" and args and isinstance(args[0], Py):
                mode = bool(args[0].value)
            self.set_training(inst, mode)
            return inst
        if name in ("register_buffer", "register_parameter", "add_module", "register_module") and len(args) >= 2:
            if isinstance(args[0], Py) and isinstance(args[0].value, str):
                inst.attrs[args[0].value] = args[1]
                touch(inst)
                if name in ("add_module", "register_module") and inst.children is not None:
                    inst.children.append(args[1])
                if name in ("add_module", "register_module") and inst.named is not None:
                    inst.named[args[0].value] = args[1]  # a ModuleDict subclass filling itself (densenet)
            return Py(None)
        if name in ("half", "float", "bfloat16", "double"):
            self.cast_module(inst, {"half": "float16", "float": "float32", "double": "float64"}.get(name, name))
            return inst
        if name in ("to", "type"):
            for a in list(args) + [kwargs.get("dtype")]:
                if isinstance(a, ModRef) and S.dtype_from_dotted(a.dotted):
                    self.cast_module(inst, S.dtype_from_dotted(a.dotted))  # type: ignore[arg-type]
            return inst
        if name == "zero_grad":
            self.zero_grads([t for _n, t in self.tensors_of(inst)], args, kwargs, node)
            return Py(None)
        if name in ("cuda", "cpu", "requires_grad_", "share_memory", "apply"):
            return inst
        if name in ("parameters", "buffers"):
            return Seq([t for _n, t in self.tensors_of(inst)], "list")
        if name in ("named_parameters", "named_buffers"):
            return Seq([Seq([Py(n), t]) for n, t in self.tensors_of(inst)], "list")
        if name == "modules":
            return Seq(self.submodules(inst), "list")
        if name == "named_modules" and not args and not kwargs:
            # ("", self), then each descendant once, by its dotted path (weight-init loops of timm)
            out: list[object] = []
            seen: set[int] = set()
            todo: list[tuple[str, Instance]] = [("", inst)]
            while todo:
                prefix, m = todo.pop(0)
                if id(m) in seen:
                    continue
                seen.add(id(m))
                out.append(Seq([Py(prefix), m]))
                todo[0:0] = [(f"{prefix}.{k}" if prefix else k, v) for k, v in self.child_items(m)]
            return Seq(out, "list")
        if name in ("children", "named_children"):
            # the direct submodules only (timm's RegStage: `for block in self.children()`), in the
            # order they were registered; every descendant was a module called twice
            kids = self.direct_children(inst)
            return Seq(kids if name == "children" else [Seq([Py(n), m]) for m, n in zip(kids, self.child_names(inst))],
                       "list")
        if name in ("append", "extend", "insert") and inst.children is not None:
            touch(inst)  # its children, changed through a Seq made for the call
            self.list_method(Seq(inst.children, "list"), name, args)
            return inst
        if inst.named is not None and name in ("items", "keys", "values", "get", "update", "pop"):
            if name in _DICT_WRITES:
                touch(inst)
            return self.dict_method(Dict(inst.named), name, args)
        if inst.named is not None and name == "__getitem__" and args:
            return self.container_index(inst, args[0])
        if name in ("get", "__getitem__") and args:
            v = self.instance_item(inst, args[0], node, Frame(env={}, qualname="<get>", mod=inst.mod)) \
                if name == "__getitem__" or self.func_def_in_mro(inst, "__getitem__") else Unknown("get")
            return args[1] if name == "get" and len(args) > 1 and isinstance(v, Unknown) else v
        if name in ("to_tuple", "values", "keys", "items"):
            if self.shared.summaries.reading:
                for k in inst.attrs:  # which fields are None decides the result
                    self.shared.summaries.read(inst, k)
            vals = [(k, v) for k, v in inst.attrs.items() if not (isinstance(v, Py) and v.value is None)]
            if name == "keys":
                return Seq([Py(k) for k, _ in vals], "list")
            if name == "items":
                return Seq([Seq([Py(k), v]) for k, v in vals], "list")
            return Seq([v for _, v in vals], "tuple")
        if name == "__init__":
            return Py(None)
        return Opaque(name)

    # ------------------------------------------------------------------ hooks of the catalogue stubs
    def zero_grads(self, tensors: list[object], args: list[object], kwargs: dict[str, object], node: ast.AST) -> None:
        """`zero_grad()` of a module or optimizer: their `.grad`s become None (set_to_none=True, torch's
        default since 2.0), or are zeroed in place, one fill each (set_to_none=False)."""
        to_none = py(args[0] if args else kwargs.get("set_to_none", Py(True)), True)
        for t in tensors:
            if not isinstance(t, TensorRef) or t.vid not in self.grads:  # type: ignore[attr-defined]
                continue
            if to_none is False:
                self.apply("zero_", TensorRef(self.grads[t.vid]), [], {}, node)  # type: ignore[attr-defined]
            else:
                del self.grads[t.vid]  # type: ignore[attr-defined]

    def hook_call(self, name: str, args: list[object], kwargs: dict[str, object], node: ast.AST) -> object:
        if name == "param":
            made = self.make_param(args[0] if args else Py(None), args[1] if len(args) > 1 else Py(None))
            if isinstance(made, TensorRef) and not (len(args) > 2 and py(args[2], True) is False):
                self.requires_grad(made)  # type: ignore[attr-defined]  # a parameter; a buffer says False
            return made
        if name == "container" and len(args) >= 3:
            self.init_container(args[0], args[1], str(args[2].value) if isinstance(args[2], Py) else "")
            return Py(None)
        if name == "only" and args and isinstance(args[0], Py) and args[0].value in ("eager", "compiled"):
            return ModRef(f"kpredict.only.{args[0].value}")
        if name == "opaque":  # `with __kp_opaque__():` a custom op's body (Interpreter.opaque)
            return ModRef("kpredict.opaque")
        if name == "repeat" and args:  # `with __kp_repeat__(n):` each op n launches (Interpreter.repeat)
            n = py(args[0], None)
            if isinstance(n, int) and not isinstance(n, bool) and n >= 1:
                return ModRef(f"kpredict.repeat.{n}")
            return Unknown("repeat count not known statically")
        if name == "target":
            return Py(self.settings.target)
        if name == "compiling":  # torch.compiler.is_compiling(): the answer depends on the mode analyzed
            self.shared.mode_reads += 1
            return Py(self.shared.mode == "compiled")
        if name == "contiguous" and args and isinstance(args[0], TensorRef):
            return Py(self.value(args[0]).contiguous)
        if name == "suggested_contiguous" and args and isinstance(args[0], TensorRef):
            # whether x.contiguous(x.suggest_memory_format()) returns x itself (True where not known)
            st, shape = self.strides_of(args[0]), self.meta(args[0]).shape
            if not st or not shape or None in shape:
                return Py(self.value(args[0]).contiguous)
            return Py(L.as_suggested(tuple(shape), st))  # type: ignore[arg-type]
        if name in ("strided_last", "channels_last"):  # layout questions on known strides (False if not known)
            st = self.strides_of(args[0]) if args and isinstance(args[0], TensorRef) else None
            shape = self.meta(args[0]).shape if st is not None else None
            if not st or not shape:
                return Py(False)
            if name == "strided_last":  # a last dim of more than one element not of stride 1
                return Py(shape[-1] != 1 and st[-1] != 1)
            return Py(None not in shape and L.nhwc_ordered(tuple(shape), st))  # type: ignore[arg-type]
        if name == "known":  # whether a value is known statically (libraries.toml picks a default if not)
            return Py(bool(args) and isinstance(args[0], Py))
        if name == "assume" and args and isinstance(args[0], Py):
            self.assume(f"line {getattr(self.anchor or node, 'lineno', 0)}: {args[0].value}")
            return Py(None)
        if name == "unknown" and args and isinstance(args[0], Py):
            return Unknown(str(args[0].value))
        if name == "optim_state" and args:  # an optimizer's state: per analysis, empty at its start
            return self.optim_states.setdefault(id(args[0]), Dict({}))  # type: ignore[attr-defined]
        if name == "not_understood" and args and isinstance(args[0], Py):  # said: figures become lower bounds
            self.unknown(node, str(args[0].value))  # type: ignore[attr-defined]
            return Py(None)
        if name == "phase" and args and isinstance(args[0], Py) and args[0].value in ("forward", "optimizer"):
            self.phase = args[0].value  # type: ignore[attr-defined]
            if self.phase == "optimizer":  # type: ignore[attr-defined]
                self.compiled_not_modelled(node, "compiled optimizer step: not modelled yet (eager only)")  # type: ignore[attr-defined]
            return Py(None)
        if name == "zero_grad" and args:  # an optimizer's zero_grad(set_to_none): its parameters'
            items = args[0].items if isinstance(args[0], Seq) else self.container_items(args[0])
            self.zero_grads(list(items or []), list(args[1:2]), {}, node)
            return Py(None)
        if name == "noop":  # a call known to do nothing kpredict counts (an autograd context's bookkeeping)
            return Py(None)
        return Unknown(name)

    def make_param(self, shape: object, dtype: object) -> object:
        if isinstance(shape, Py) and shape.value is None:
            return Py(None)
        dims: list[int | None] | None = None
        items = shape.items if isinstance(shape, Seq) else None
        if items is None and isinstance(shape, Py) and isinstance(shape.value, (tuple, list)):
            items = [Py(x) for x in shape.value]
        if items is not None:
            dims = []
            for x in items:
                v = py(x, M)
                dims.append(v if isinstance(v, int) and not isinstance(v, bool) else None)
        dt = S.dtype_from_dotted(dtype.dotted) if isinstance(dtype, ModRef) else None
        return self.new_tensor(TensorMeta(tuple(dims) if dims is not None else None, dt or "float32"),
                               is_input=True, name="param")


def _field_default(expr: ast.expr) -> ast.expr | None:
    """`x: int = field(default=3)` -> 3; a default_factory is left to init_dataclass."""
    if isinstance(expr, ast.Call) and _call_name(expr) == "field":
        for k in expr.keywords:
            if k.arg == "default":
                return k.value
        return None
    return expr


def _call_name(e: ast.Call) -> str:
    f = e.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _show(v: object) -> str:
    if isinstance(v, Py):
        return repr(v.value)
    if isinstance(v, Instance):
        return f"{v.cls}(...)"
    return type(v).__name__


class MemoEntry:
    __slots__ = ("key", "inst", "keep", "assumptions", "unknowns", "loop_symbols", "reach", "own", "clean",
                 "given_sig", "used", "conds", "held", "syms")

    def __init__(self, key: tuple, inst: object, keep: object, assumptions: list, unknowns: list,
                 loop_symbols: list) -> None:
        self.key, self.inst = key, inst
        self.keep = keep  # the arguments, so that the ids in the key stay theirs
        self.assumptions, self.unknowns, self.loop_symbols = assumptions, unknowns, loop_symbols
        self.reach: list[int] = []  # ids of what is reachable from inst (fixed while the entry is kept)
        self.own: list[int] = []  # those not reachable from the arguments: what building it made
        self.clean = True  # building it left its arguments as they were (so a copy is another build)
        # what its arguments reached when it was built (id, version): a change since bumped a version
        self.given_sig: list[tuple[int, int]] | None = None
        # argument slots (position or keyword) whose plain value building it read; None: all of them
        self.used: set[object] | None = None
        self.conds: dict[object, list[tuple]] = {}  # per slot not read whole, what its reads depended on
        self.held: dict[object, object] = {}  # per plain argument, what the built objects hold for it
        self.syms: frozenset[str] = frozenset()  # symbolic sizes its build looked up (Interpreter.sym)


class ConstructMemo:
    """Objects built from plain values, shared by the analyses of one file.

    Safe to share because each analysis is separate and construction records no op: an object is
    handed out at most once per analysis (with everything reachable from it, so two `nn.Linear(d, d)`
    of one model stay two objects), and when an analysis changed an object reachable from a kept one
    (its attributes, items or training flag, compared by identity), every kept object that reaches it
    is forgotten, to be built again. Objects of module-level code are never kept (`paused`): they are
    reachable from every analysis without being handed out.

    An object's snapshot is taken again only when its version moved (values.touch: every write bumps
    it), as the snapshots of a model's objects were 4% of a cold run; `check` (KPREDICT_CHECK_MEMO=1)
    takes it anyway and raises where a version stayed while the contents changed: a write without
    touch()."""

    def __init__(self, check: bool | None = None) -> None:
        self.entries: dict[tuple, list[MemoEntry]] = {}
        self.handed: set[int] = set()  # ids of objects in use by the current analysis
        # per key, how many of its first entries take() found in use by the current analysis: they stay
        # in use until it ends, so the next take() starts after them (a loop building one layer 4,096
        # times scanned every earlier one each time: 50 million set tests, 16 s of a fuzzed program)
        self.in_use_before: dict[tuple, int] = {}
        self.sig: dict[int, tuple] = {}  # id -> shallow signature when first kept
        self.vers: dict[int, int] = {}  # id -> the object's version when sig was taken
        self.check = os.environ.get("KPREDICT_CHECK_MEMO") == "1" if check is None else check
        self.objs: dict[int, object] = {}  # id -> object (kept alive so that ids stay theirs)
        self.owners: dict[int, list[MemoEntry]] = {}  # id -> entries it is reachable from
        # entries keep_into added whose reach is not yet in `owners`: indexed when something is forgotten,
        # which few reruns do (11 times in 269 reruns of four files), while every rerun keeps thousands
        self.unindexed: list[MemoEntry] = []
        self.shapes: dict[tuple, list[MemoEntry]] = {}  # class and argument slots -> entries (templates)
        self.paused = 0
        self.sym_reading: list[set[str]] = []  # per build in progress: the symbolic sizes it looked up
        # ids of kept objects an analysis changed, in every memo that shares entries with this one
        # (keep_into): each memo forgets what reaches them before its next analysis (begin)
        self.changelog: list[int] = []
        self.seen = 0
        self.own: list[MemoEntry] = []  # the entries built here, in order (not those kept from others)
        # ids of the entries keep_into added here and not forgotten since: what keep_into must not add twice
        self.kept: set[int] = set()
        # per set of changed sizes: the entries of `own` (its first n) whose build depends on none of them
        self.passing: dict[frozenset[str], tuple[int, list[MemoEntry]]] = {}

    def keep_into(self, out: ConstructMemo, changed: set[str]) -> None:
        """Add to `out` (the memo of a rerun with other loop counts, symbolic.py) this memo's entries
        whose build looked up none of the sizes in `changed`, looped over none of them, and whose
        objects are as they were kept: the rerun hands those out instead of building them again. An
        object built from one that is not kept (a config holding a count) is keyed by that object's
        identity, which the rerun's new build does not match."""
        # only the entries built here: one kept here from another memo is offered to `out` by that memo
        # too (Shared.for_rerun goes over every state), and depends on no size that differs between the
        # two, so the test gives the same answer there. Going over all of them made each rerun's cost grow
        # with the reruns before it (7.4 of 14 s in oneformer once every forward had byte formulas).
        out.changelog = self.changelog
        have = out.kept  # ids of every entry of out that another memo's keep_into may offer
        objs, vers, entries = self.objs, self.vers, self.entries
        taken = []
        live: dict[tuple, set[int]] = {}  # per key, the ids of its entries here (not forgotten)
        stale: set[int] | None = None  # kept objects changed since their snapshot, found once per call
        for e in self._independent(changed):
            if id(e) in have:
                continue
            ids = live.get(e.key)
            if ids is None:
                ids = live[e.key] = set(map(id, entries.get(e.key, ())))
            if id(e) not in ids:  # forgotten (_forget)
                continue
            if stale is None:
                # one pass over the kept objects instead of one over each entry's reach: entries reach
                # overlapping sets (a model's reaches every layer's), 11 of 78 s on qwen3_omni_moe
                stale = {i for i, o in objs.items() if o.ver != vers[i]}
            if stale and not stale.isdisjoint(e.reach):
                continue
            have.add(id(e))
            taken.append(e)
            out.entries.setdefault(e.key, []).append(e)  # entries are not changed once kept: shared
        if taken:  # what they reach, each object once (a model's entry reaches every layer's objects)
            new = set().union(*(e.reach for e in taken))
            new.difference_update(out.objs)
            for i in new:
                out.sig[i], out.vers[i], out.objs[i] = self.sig[i], vers[i], objs[i]
        out.unindexed += taken
        for e in taken:  # in the order they were kept: templates() takes the first
            out.shapes.setdefault(_shape_of(e.key), []).append(e)

    def _independent(self, changed: set[str]) -> list[MemoEntry]:
        """The entries of `own` whose build looked up none of the sizes in `changed` and looped over none
        of them, in order; worked out once per set of sizes (a file's reruns offer each memo to every
        later one: 35,000 times on 60 files), again only for entries built since."""
        key = frozenset(changed)
        n, done = self.passing.get(key, (0, []))
        own = self.own
        if n < len(own):
            done = done + [e for e in own[n:] if not (e.syms & key or not key.isdisjoint(e.loop_symbols))]
            self.passing[key] = (len(own), done)
        return done

    def begin(self) -> None:
        self.handed = set()
        self.in_use_before = {}
        log = self.changelog
        if self.seen < len(log):  # changed by an analysis of a memo this one shares entries with
            for oid in log[self.seen:]:
                v = self.vers.get(oid)
                if v is not None and self.objs[oid].ver != v:
                    self.retake(self.objs[oid], forget=True)
            self.seen = len(log)

    def end(self) -> None:
        """After an analysis: forget the kept objects that reach something it changed."""
        vers, objs = self.vers, self.objs
        for oid in self.handed:
            v = vers.get(oid)
            if v is not None and (objs[oid].ver != v or self.check):
                if objs[oid].ver != v:
                    self.changelog.append(oid)
                self.retake(objs[oid], forget=True)
        self.seen = len(self.changelog)
        self.begin()

    def retake(self, o: Seq | Dict | Instance, forget: bool = False) -> None:
        """Take a kept object's snapshot again (after a change); `forget`: drop the entries that reach
        it when it differs from the last one."""
        i = id(o)
        old = self.sig.get(i)
        if old is None:
            return
        if self.check and o.ver == self.vers[i] and _shallow(o) != old:
            raise AssertionError(f"construction memo: {type(o).__name__} {getattr(o, 'cls', '')} changed "
                                 "without touch()")
        self.vers[i] = o.ver
        new = _shallow(o)
        if new != old:
            if forget:
                self._forget(i)
            self.sig[i] = new

    def _forget(self, oid: int) -> None:
        """Drop every kept entry that reaches object `oid`."""
        if self.unindexed:
            owners = self.owners
            for e in self.unindexed:
                for i in e.reach:
                    owners.setdefault(i, []).append(e)
            self.unindexed = []
        for e in self.owners.pop(oid, ()):
            lst = self.entries.get(e.key, [])
            if e in lst:
                lst.remove(e)
                self.kept.discard(id(e))
                self.in_use_before.pop(e.key, None)

    def key(self, c: ClassRef, args: list[object], kwargs: dict[str, object], describe: bool) -> tuple | None:
        if self.paused:
            return None
        try:
            parts = tuple(_arg_key(a) for a in args)
            kw = tuple(sorted((k, _arg_key(v)) for k, v in kwargs.items()))
        except _NoKey:
            return None
        return Key((c.name, c.mod, describe, parts, kw))  # hashed once: every rerun state looks it up

    def take(self, key: tuple) -> MemoEntry | None:
        lst = self.entries.get(key, ())
        start = self.in_use_before.get(key, 0)
        for n in range(start, len(lst)):
            e = lst[n]
            # nothing of it may be in use already: a layer's norm handed out alone, then the layer
            # that holds it, would be one object in two places
            if self.handed.isdisjoint(e.own):
                self.handed.update(e.reach)  # a change to any of it would have dropped the entry
                # those before it are in use; it is too unless all it holds is shared (taken again)
                self.in_use_before[key] = n + 1 if e.own else n
                return e
        self.in_use_before[key] = len(lst)
        return None

    def templates(self, key: tuple, args: list[object], kwargs: dict[str, object]
                  ) -> Iterator[tuple[MemoEntry, dict[int, object], dict[object, object]]]:
        """Kept entries a build for `key` may be copied from: built from the same arguments but for
        plain values their build read only in ways that give the same outcome for the new values
        (`Layer(config, i)`, whose `i` is stored, or picks `config.layer_types[i]`), with what to
        swap in the copy (by id: what the entry holds for an argument, for the new value) and what
        the copy then holds per argument."""
        _, _, _, parts, kw = key
        for e in self.shapes.get(_shape_of(key), ()):
            if e.used is None or e not in self.entries.get(e.key, ()):
                continue
            swap: dict[int, object] = {}
            held = dict(e.held)
            for slot, new_k, old_k, new_v in _slots(parts, kw, e.key, args, kwargs):
                if new_k == old_k:
                    continue
                if slot in e.used or new_k[0] != "py" or old_k[0] != "py" or slot not in e.held or not all(
                        _holds(c, new_k[2]) for c in e.conds.get(slot, ())):
                    break
                target = new_v if isinstance(new_v, _Watched) else Py(new_k[2])
                old = e.held[slot]
                while old is not None:  # the wrapper, or what its build put back in its place
                    swap[id(old)] = target
                    old = old.final if isinstance(old, _Watched) else None
                held[slot] = target
            else:
                if swap:
                    yield e, swap, held

    def in_use(self, key: tuple) -> MemoEntry | None:
        """A kept entry for key that take() refused (in use by this analysis): a model for a copy."""
        lst = self.entries.get(key)
        return lst[0] if lst else None

    def put(self, key: tuple, inst: object, keep: object, assumptions: list, unknowns: list,
            loop_symbols: list, shared: set[int] = frozenset(),  # type: ignore[assignment]
            clean: bool = True) -> None:
        """Keep inst, built from the arguments `keep`; `shared`: ids of what the arguments reach, which
        another analysis may hold already (a config every layer refers to) without making inst unusable."""
        e = MemoEntry(key, inst, keep, list(assumptions), list(unknowns), list(loop_symbols))
        self.own.append(e)
        self.entries.setdefault(key, []).append(e)
        self.shapes.setdefault(_shape_of(key), []).append(e)
        reach = self._hand(inst)
        e.reach = [id(o) for o in reach]
        e.own = [i for i in e.reach if i not in shared]
        e.clean = clean
        sig, vers, check = self.sig, self.vers, self.check
        for o in reach:
            i = id(o)
            v = vers.get(i)
            if v is None:
                sig[i] = _shallow(o)
                vers[i] = o.ver
                self.objs[i] = o
            elif o.ver != v or check:  # changed since it was first kept (a constructor set a config
                self.retake(o, forget=True)  # field): what was built before holds the old state
            self.owners.setdefault(i, []).append(e)

    def _hand(self, root: object) -> list[object]:
        """Mark everything reachable from root as in use; returns all of it (in use before or not)."""
        out = reachable(root)
        self.handed.update(map(id, out))
        return out


# the values that hold others, by exact type (walks over them run millions of times per file):
# 0 an object, 1 a list or tuple, 2 a dict
HOLDERS: dict[type, int] = {Instance: 0, **{c: 0 for c in Instance.__subclasses__()}, Seq: 1, Dict: 2}


def reachable(*roots: object) -> list[object]:
    """The objects, lists and dicts reachable from the roots through attributes and items."""
    out: list[object] = []
    seen: set[int] = set()
    stack = list(roots)
    pop, push = stack.pop, stack.extend
    kinds = HOLDERS
    while stack:
        v = pop()
        kind = kinds.get(type(v))
        if kind is None:
            continue
        i = id(v)
        if i in seen:
            continue
        seen.add(i)
        out.append(v)
        if kind == 0:
            push(v.attrs.values())
            if v.children:
                push(v.children)
            if v.named:
                push(v.named.values())
        elif kind == 1:
            push(v.items)
        else:
            push(v.items.values())
    return out


def _held(v: object) -> list[object]:
    """The values an object, list or dict holds directly."""
    if isinstance(v, Instance):
        return [*v.attrs.values(), *(v.children or ()), *(v.named or {}).values()]
    if isinstance(v, Seq):
        return list(v.items)
    if isinstance(v, Dict):
        return list(v.items.values())
    return []


def _shallow(v: object) -> tuple:
    """What an object holds, by identity: changes when an attribute, item or the training flag does."""
    if isinstance(v, Instance):  # one flat tuple (called millions of times per corpus): names are str, ids int
        a, ch, nm = v.attrs, v.children, v.named
        if not ch and not nm:
            return (v.training, *a, *map(id, a.values()))
        return (v.training, *a, *map(id, a.values()), None, *map(id, ch or ()), None, *(nm or ()),
                *map(id, (nm or {}).values()))
    if isinstance(v, Seq):
        return tuple(map(id, v.items))
    if isinstance(v, Dict):
        return (tuple(v.items), tuple(map(id, v.items.values())))
    return ()


class _NoKey(Exception):
    pass


def _arg_key(v: object) -> object:
    """A hashable stand-in for a constructor argument; objects count by identity (the memo keeps them alive)."""
    if isinstance(v, Py):
        x = v._v if isinstance(v, _Watched) else v.value  # a watched value is read if the build reads it
        try:
            hash(x)
        except TypeError:
            raise _NoKey() from None
        return ("py", type(x).__name__, x)
    if isinstance(v, SymObj):  # a config nobody describes: stateless, so equal names are one value
        return ("symobj", v.name)
    if isinstance(v, (Instance, ClassRef, FuncRef, ModRef)):
        return ("obj", id(v))
    if isinstance(v, Sym):
        return ("sym", v.name)
    if isinstance(v, Opaque):  # an unknown int (`heads * self.head_dim` with head_dim unknown): the
        return ("opaque", v.what)  # analysis cannot tell two equal ones apart, so neither can a build
    if isinstance(v, Seq):
        return ("seq", v.kind, tuple(_arg_key(x) for x in v.items))
    if isinstance(v, Partial):  # norm_layer=partial(nn.LayerNorm, eps=1e-6), handed to every block
        return ("partial", _arg_key(v.func), tuple(_arg_key(x) for x in v.args),
                tuple((k, _arg_key(x)) for k, x in v.kwargs.items()))
    raise _NoKey()


def _shape_of(key: tuple) -> tuple:
    """A construction key without its argument values: the class, the number of positional
    arguments and the keyword names."""
    name, mod, describe, parts, kw = key
    return (name, mod, describe, len(parts), tuple(k for k, _ in kw))


def _slots(parts: tuple, kw: tuple, old_key: tuple, args: list[object], kwargs: dict[str, object]) -> Iterator[tuple]:
    """Per argument slot of two calls of one shape: (slot, new key part, old key part, new value)."""
    for i, (a, b) in enumerate(zip(parts, old_key[3])):
        yield i, a, b, args[i]
    for (k, a), (_, b) in zip(kw, old_key[4]):
        yield k, a, b, kwargs[k]


class _Watched(Tracked):
    """A plain constructor argument whose reads are watched (see _watch).
    Two reads count for less than the value: `x is None` (only its None-ness) and `seq[x]` (only
    the item picked), which is what layers do with their index (`config.layer_types[layer_idx]`)."""

    __slots__ = ("final", "_on_cond")

    def __init__(self, value: object, on_use: Callable[[], None], on_cond: Callable[[tuple], None]) -> None:
        super().__init__(value, on_use)
        object.__setattr__(self, "final", None)  # what the built objects hold in its place, once built
        object.__setattr__(self, "_on_cond", on_cond)

    def is_none(self) -> bool:
        self._on_cond(("none", self._v is None))
        return self._v is None

    def compare(self, fn: Callable[[object, object], object], other: object, flipped: bool) -> object:
        try:
            hash(other)
        except TypeError:
            return super().compare(fn, other, flipped)
        try:
            out = fn(other, self._v) if flipped else fn(self._v, other)
        except Exception:  # the outcome is an error: that depends on the value itself
            self.used()
            raise
        self._on_cond(("cmp", fn, other, flipped, out))
        return out

    def pick(self, items: list) -> object:
        v = self._v
        if type(v) is not int or not -len(items) <= v < len(items):
            return super().pick(items)
        item = items[v]
        self._on_cond(("item", items, _item_key(item)))
        return item


def _item_key(v: object) -> object:
    """What `seq[i]` picked, for comparing with another pick: a plain value by value, else by identity."""
    if isinstance(v, Py):
        x = v._v if isinstance(v, Tracked) else v.value
        try:
            hash(x)
            return ("py", type(x).__name__, x)
        except TypeError:
            pass
    return ("id", id(v))


def _holds(cond: tuple, v: object) -> bool:
    """Whether a read recorded by _Watched gives the same answer for plain value v."""
    if cond[0] == "none":
        return (v is None) == cond[1]
    if cond[0] == "cmp":
        _, fn, other, flipped, out = cond
        try:
            now = fn(other, v) if flipped else fn(v, other)
        except Exception:  # noqa: BLE001 - another type that does not compare: not the same outcome
            return False
        return type(now) is type(out) and now == out
    items = cond[1]
    return type(v) is int and -len(items) <= v < len(items) and _item_key(items[v]) == cond[2]


def _watch(args: list[object], kwargs: dict[str, object], used: set[object], conds: dict[object, list[tuple]]
           ) -> tuple[list[object], dict[str, object], dict[int, tuple[_Watched, object]]]:
    """The arguments with each plain value wrapped in a `_Watched` one that adds its slot to `used`
    when the build reads it, or a condition to `conds` for the reads that count for less (and tells
    the value it wraps, when that one is watched too: a layer passes its index on to its attention);
    and per wrapper (by id), what the built objects hold in its place (see _unwatch)."""
    wrappers: dict[int, tuple[_Watched, object]] = {}

    def watch(slot: object, v: object) -> object:
        if not isinstance(v, Py):
            return v

        def use() -> None:
            used.add(slot)
            if isinstance(v, Tracked):
                v.used()

        def cond(c: tuple) -> None:
            conds.setdefault(slot, []).append(c)
            _pass_on(v, c)

        raw = v._v if isinstance(v, Tracked) else v.value
        w = _Watched(raw, use, cond)
        # an enclosing build's wrapper stays (that build puts its own value back); else a value of
        # this build's own, so that what holds it holds it because it came from this argument
        wrappers[id(w)] = (w, v if isinstance(v, _Watched) else Py(raw))
        return w

    return ([watch(i, a) for i, a in enumerate(args)], {k: watch(k, v) for k, v in kwargs.items()}, wrappers)


def _pass_on(v: object, c: tuple) -> None:
    """A condition read on a value that stands for v is read on v: kept as such when v is watched
    too, else a read of v."""
    if isinstance(v, _Watched):
        v._on_cond(c)
    elif isinstance(v, Tracked):
        v.used()


def _unwatch(objs: list[object], wrappers: dict[int, tuple[_Watched, object]], memo: ConstructMemo) -> None:
    """Put plain values back where a build stored the wrappers of its arguments (a layer's
    `self.layer_idx`). The value put back is the build's own (a copy of the caller's), so that a
    template swaps exactly what came from the argument, not an equal value read elsewhere (a config
    field passed as the argument and also read from the config). Kept entries that hold one are
    not changed by this: their recorded state follows."""
    put = {i: target for i, (_, target) in wrappers.items()}
    for o in objs:
        if isinstance(o, Instance):
            tables, lists = (o.attrs, o.named or {}), (o.children or [],)
        else:  # a Seq or a Dict (what `reachable` returns)
            tables, lists = ((o.items,), ()) if isinstance(o, Dict) else ((), (o.items,))
        changed = False
        for table in tables:
            for k, v in table.items():
                if id(v) in put:
                    table[k] = put[id(v)]
                    changed = True
        for lst in lists:
            for i, v in enumerate(lst):
                if id(v) in put:
                    lst[i] = put[id(v)]
                    changed = True
        if changed:
            touch(o)
            memo.retake(o)
    for w, target in wrappers.values():
        object.__setattr__(w, "final", target)


def _depend(args: list[object], kwargs: dict[str, object], used: set[object] | None,
            conds: dict[object, list[tuple]] | None = None) -> None:
    """Watched values given to a construction that is not built afresh count as read by it: those
    in the slots `used` (None: all), and the conditions on the others."""
    for slot, v in (*enumerate(args), *kwargs.items()):
        if not isinstance(v, Tracked):
            continue
        if used is None or slot in used:
            v.used()
        elif conds:
            for c in conds.get(slot, ()):
                _pass_on(v, c)


def _union_members(ann: ast.expr) -> list[ast.expr]:
    """The classes of `A | B | None` or a `Union[A, B]` slice, in order, None left out (one for a plain name)."""
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _union_members(ann.left) + _union_members(ann.right)
    if isinstance(ann, ast.Tuple):
        return [m for e in ann.elts for m in _union_members(e)]
    if isinstance(ann, ast.Constant) and ann.value is None:
        return []
    return [ann]
