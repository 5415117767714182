"""Which functions of a module get an op graph, and with what arguments.

Module-level code runs first: it binds names, creates tensors whose shapes are then known, and
calls functions; the first call of each function from module level gives that function's argument
shapes. Every function is then analyzed on its own, with those shapes, or with the example inputs
written above its `def` (`# kpredict: example a=randn(8)`), or with parameters as tensors of
unknown shape.
"""

from __future__ import annotations

import ast
import time
from collections.abc import Iterator

from kpredict.examples import (
    CONSTRUCTORS, ExampleError, TensorSpec, _Dtype, comment_block, joined, merged_text, parse_value, split_items,
    tensor_spec,
)
from kpredict.frontend.frame import MISSING, Frame, _Budget, _Break, _Continue, _Idle, _Late, _Return, _span, py
from kpredict.frontend.interp import FILE_STEPS, IDLE_STEPS, Interpreter, Shared
from kpredict.frontend.modes import merge_modes
from kpredict.frontend.objects import reachable
from kpredict.frontend.parse import ModuleInfo, node_text, type_base
from kpredict.frontend.values import ClassRef, Dict, FuncRef, Instance, ModRef, Py, Seq, TensorRef, Unknown
from kpredict.ir import FunctionGraph, Span, TensorMeta
from kpredict.ir import Unknown as UnknownOp
from kpredict.opfacts import OpTable
from kpredict.project import file_entries
from kpredict.settings import Settings

INIT_TAG = "init"


def late(settings: Settings) -> str:
    """What a spent time budget is called where it stops an analysis."""
    return f"this file's time budget of {settings.time_budget:g} s (CPU) is spent"


def _returns(v: object, depth: int = 0, seen: set[int] | None = None) -> list[int]:
    """Tensors a function hands back: directly, in tuples and lists, in dicts and in output objects
    (a ModelOutput dataclass, a namedtuple-like class), which model code returns as often. A container
    met again adds nothing new: each is walked once (minicpm's video processor returns lists holding
    one list many times over: 42 million visits, 90 s)."""
    if depth > 6:
        return []
    if isinstance(v, TensorRef):
        return [v.vid]
    if isinstance(v, Unknown) and v.src is not None:
        return [v.src]
    seen = set() if seen is None else seen
    if id(v) in seen:
        return []
    seen.add(id(v))
    out: list[int] = []
    for x in _returned_items(v):
        out.extend(_returns(x, depth + 1, seen))
    return out


def _returned_items(v: object) -> list[object]:
    """What a returned tuple, list, dict or output object holds (nested modules are not results)."""
    if isinstance(v, Seq):
        return v.items
    if isinstance(v, Dict):
        return list(v.items.values())
    if isinstance(v, Instance) and v.children is None:
        # a ModelOutput is an OrderedDict too: its fields are its items (`named`) as well as attributes
        return [x for x in [*v.attrs.values(), *(v.named or {}).values()] if not isinstance(x, Instance)]
    return []


def _run_module(module: ModuleInfo, table: OpTable, settings: Settings, shared: Shared,
                call_sites: dict, env: dict) -> tuple[FunctionGraph, set[str]]:
    fg = FunctionGraph("<module>", Span(1, 0, len(module.lines) or 1, 0))
    it = Interpreter(module, table, settings, fg, call_sites, env, shared)
    it.stack.append("<module>")
    frame = Frame(env=env, qualname="<module>")
    shared.constructed.paused += 1  # module-level objects are reachable from every analysis: never kept
    for stmt in module.tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            env[stmt.name] = FuncRef(stmt.name)
            for d in stmt.decorator_list:
                if it.is_compile(it.ev(d, frame)) or (isinstance(d, ast.Call) and it.is_compile(it.ev(d.func, frame))):
                    it.compiled_funcs.add(stmt.name)
            continue
        if isinstance(stmt, ast.ClassDef):
            env[stmt.name] = ClassRef(stmt.name)
            continue
        try:
            it.exec_stmt(stmt, frame)
        except (_Return, _Break, _Continue):
            break
        except _Late:
            it.assume(f"module-level code: {late(settings)}; the rest is not followed")
            break
        except _Idle:
            it.assume(f"module-level code: no tensor work in {IDLE_STEPS:,} statements in a row; the rest is not "
                      "followed")
            break
        except _Budget:
            it.assume("module-level code too large to follow; figures cover its first part")
            break
    shared.constructed.paused -= 1
    # what module-level code leaves bound is its result (it is not a compiled graph: keep it all live)
    for v in env.values():
        fg.returns.extend(vid for vid in _returns(v) if vid in fg.values)
    return fg, it.compiled_funcs


def init_text(module: ModuleInfo, qualname: str, entries: dict[str, dict[str, str]]) -> str | None:
    """`# kpredict: init d=128` above the method, else above its class, else in pyproject.toml
    (`entries`: the file's entries there, see `_entries`)."""
    cls = qualname.rsplit(".", 1)[0]
    fdef = module.functions.get(qualname)
    cdef = module.classes.get(cls)
    for node in (fdef, cdef):
        if node is None:
            continue
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        text = joined(comment_block(module.lines, first), INIT_TAG)
        if text is not None:
            return text
    inits = entries.get("init", {})
    for q in (qualname, cls):
        if q in inits:
            return inits[q]
    return None


def pyproject_entries(module: ModuleInfo) -> dict[str, dict[str, str]]:
    """The file's `[tool.kpredict.examples]` and `[tool.kpredict.init]` entries in the project's
    pyproject.toml (kpredict.project; none for source text)."""
    if module.path.startswith("<"):
        return {}
    try:
        return file_entries(module.path)
    except (OSError, ValueError):
        return {}


def _entries(it: Interpreter) -> dict[str, dict[str, str]]:
    """pyproject_entries, read once per analyzed file."""
    if it.shared.pyproject is None:
        it.shared.pyproject = pyproject_entries(it.m)
    return it.shared.pyproject


def _self_for(it: Interpreter, qualname: str, module: ModuleInfo, given: str | None = None,
              depth: int = 0) -> object:
    """`self` for a method analyzed alone: its class constructed with the `# kpredict: init` values;
    constructor parameters without one take their defaults (listed as assumptions). A class whose
    constructor needs values nobody gave (`embed_dim: int`, an untyped `config`) is taken as the file
    builds it, when another class of the file does (`self.self_attn = BioGptAttention(config.hidden_size,
    ...)` in a layer built from its config's defaults): said, and sizes then known."""
    cls = qualname.rsplit(".", 1)[0]
    if cls not in module.classes:
        return None
    kwargs = init_kwargs(it, module, qualname, given)
    if depth < _PARENT_DEPTH and not kwargs and _needs_values(module.functions.get(f"{cls}.__init__")):
        built = _built_by_parent(it, module, cls, depth)
        if built is not None:
            return built
    return it.construct(ClassRef(cls), [], kwargs, module.classes[cls], describe=True)


_PARENT_DEPTH = 3  # a class built by a class built by a class: as far as a parent is looked for
_SCALARS = ("int", "float", "bool", "str")


def _needs_values(init: ast.FunctionDef | ast.AsyncFunctionDef | None) -> bool:
    """Whether a class's own `__init__` has a required parameter that would be a symbol: untyped, or
    a plain int/float/bool/str (a config class's annotation gives its defaults instead)."""
    if init is None:
        return False
    a = init.args
    positional = a.posonlyargs + a.args
    required = positional[1:len(positional) - len(a.defaults)] + [
        k for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is None]
    return any(p.annotation is None or type_base(node_text(p.annotation)) in _SCALARS for p in required)


def _builders(module: ModuleInfo) -> dict[str, list[tuple[str, str, int]]]:
    """Per class name, the `self.<attr> = ...` statements of the file's `__init__` methods that call it
    (directly or in a list): (building class, attr, line), in file order. Walked once per file and kept
    on its tree: each method of each class needing values looks it up, first analysis and reruns."""
    found = module.tree.__dict__.get("_kp_builders")
    if found is not None:
        return found
    found = {}
    for parent in module.classes:
        init = module.functions.get(f"{parent}.__init__")
        for node in ast.walk(init) if init is not None else ():
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(t := node.targets[0], ast.Attribute) and isinstance(t.value, ast.Name)
                    and t.value.id == "self"):
                continue
            called = {c.func.id for c in ast.walk(node.value) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
            for cls in called - {parent}:
                found.setdefault(cls, []).append((parent, t.attr, node.lineno))
    module.tree._kp_builders = found  # type: ignore[attr-defined]
    return found


def _built_by_parent(it: Interpreter, module: ModuleInfo, cls: str, depth: int) -> object:
    """The instance of `cls` that the first class of the file building it in `__init__` (`self.x =
    cls(...)`, directly or in a list) holds once built; None when there is none or it cannot be built."""
    for parent, attr, line in _builders(module).get(cls, ()):
        owner = _self_for(it, f"{parent}.__init__", module, None, depth + 1)
        held = owner.attrs.get(attr) if isinstance(owner, Instance) else None
        items = held.children if isinstance(held, Instance) and held.children else [held]
        found = next((x for x in items if isinstance(x, Instance) and x.cls == cls), None)
        if found is not None:
            it.assume(f"self: {cls} as the file builds it, {parent}.{attr} (line {line}), {parent} built as listed",
                      force=True)
            return found
    return None


def _bare_instance(module: ModuleInfo, qualname: str) -> object:
    cls = qualname.rsplit(".", 1)[0]
    return Instance(cls, mod=None) if cls in module.classes else None


def init_kwargs(it: Interpreter, module: ModuleInfo, qualname: str, given: str | None = None,
                text: str | None = None) -> dict[str, object]:
    """Constructor arguments from `# kpredict: init ...` (or pyproject.toml), with `given` (the
    command line's or the API's --init) replacing items of the same name, as abstract values."""
    cls = qualname.rsplit(".", 1)[0]
    own = text if text is not None else init_text(module, qualname, _entries(it))
    return _given_values(it, own, given, f"init for {cls}", "# kpredict: init", "takes its default")


class InputError(ValueError):
    """A value given on the command line or through the API (--init, --example) that cannot be
    evaluated: the file's one-line error, never a silent fall-back."""


# Names an input value may use although the file does not define them: torch's constructors by
# their bare names (`randn(8)`), `torch` itself and `SimpleNamespace`. The file's own names win.
INPUT_NAMES: dict[str, str] = {**{c: f"torch.{c}" for c in CONSTRUCTORS}, "torch": "torch",
                               "SimpleNamespace": "types.SimpleNamespace"}


def _given_values(it: Interpreter, own: str | None, given: str | None, what: str, tag: str,
                  fallback: str) -> dict[str, object]:
    """`own` (the file's comment or pyproject entry) merged with `given` (whose items win), each value
    evaluated (`input_values`). A bad given value raises InputError; a bad value of the file is a
    forced assumption naming it and why (listed with the figures), and that parameter is left out."""
    try:
        given_items = dict(split_items(given or ""))
    except ExampleError as e:
        raise InputError(f"{what}: {e}") from None
    try:
        own_items = dict(split_items(own or ""))
    except ExampleError as e:
        it.assume(f"{tag} {own!r} could not be read ({e}); every parameter {fallback}", force=True)
        own_items = {}
    items = {**own_items, **given_items}
    if not items:
        return {}
    values, errors = input_values(it, list(items.items()))
    for name, err in errors:
        if name in given_items:
            raise InputError(f"{what}: {err}")
        it.assume(f"{tag} {err}; {name} {fallback}", force=True)
    return values


def input_values(it: Interpreter, items: list[tuple[str, str]]) -> tuple[dict[str, object], list[tuple[str, str]]]:
    """`name=expr` items as abstract values: each expression evaluated by the interpreter in the
    analyzed file's module namespace (as if written at the end of the file; `INPUT_NAMES` added),
    never by importing it. Tensors become inputs of the graph; nothing evaluating them does is
    recorded. Returns the values and, for each value that cannot be evaluated, (name, one-line why)."""
    frame = Frame(env={}, qualname="<inputs>")
    for n, dotted in INPUT_NAMES.items():
        if isinstance(it.lookup(n, frame, None), Unknown):
            frame.env[n] = ModRef(dotted)
    values: dict[str, object] = {}
    errors: list[tuple[str, str]] = []
    was = it.recording
    it.recording = False  # building the inputs is not part of the call being predicted
    try:
        for name, src in items:
            try:
                values[name] = _input_value(it, frame, name, src)
            except ExampleError as e:
                errors.append((name, str(e)))
    finally:
        it.recording = was
    return values, errors


def _input_value(it: Interpreter, frame: Frame, name: str, src: str) -> object:
    try:
        simple = parse_value(src, name)  # the fast path: literals and torch constructors
    except ExampleError:
        pass
    else:
        return _simple_value(it, simple, name)
    try:
        node = ast.parse(src.replace("\n", " ").strip(), mode="eval").body
    except SyntaxError as e:
        raise ExampleError(f"{name}={src}: not a Python expression ({e.msg})") from None
    for n in _free_names(node):
        if isinstance(it.lookup(n, frame, None), Unknown):
            where = it.m.path.rsplit("/", 1)[-1]
            raise ExampleError(f"{name}={src}: name {n!r} is not defined or imported in {where}")
    _check_keywords(it, frame, node, name, src)
    v = _ev_input(it, frame, node, name, src)
    if isinstance(v, Unknown):
        raise ExampleError(f"{name}={src}: cannot be evaluated without running code kpredict does not see "
                           f"({v.what or 'a value'})")
    return v


def _check_keywords(it: Interpreter, frame: Frame, node: ast.expr, name: str, src: str) -> None:
    """A class of the file called with a keyword it does not take (`GPTConfig(n_layr=2)`) is an error
    naming it and the keywords the class takes, as Python's TypeError would be, not a silent default."""
    for call in ast.walk(node):
        if not isinstance(call, ast.Call) or not any(k.arg for k in call.keywords):
            continue
        c = it.ev(call.func, frame)
        known = it.known_keywords(c) if isinstance(c, ClassRef) else None
        bad = [k.arg for k in call.keywords if k.arg and known is not None and k.arg not in known]
        if bad:
            raise ExampleError(f"{name}={src}: {c.name}() got an unexpected keyword argument {bad[0]!r} "
                               f"(it takes: {', '.join(known) if known else 'none'})")


def _free_names(node: ast.AST) -> list[str]:
    """Names an expression reads, less those its comprehensions and lambdas bind."""
    bound = {a.arg for n in ast.walk(node) if isinstance(n, ast.Lambda) for a in ast.walk(n.args)
             if isinstance(a, ast.arg)}
    bound |= {t.id for n in ast.walk(node) if isinstance(n, ast.comprehension) for t in ast.walk(n.target)
              if isinstance(t, ast.Name)}
    out: list[str] = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in bound and n.id not in out:
            out.append(n.id)
    return out


def _ev_input(it: Interpreter, frame: Frame, node: ast.expr, name: str, src: str) -> object:
    """it.ev, but a torch constructor's result is an input tensor whose shape and dtype come from its
    arguments (the interpreter's own creation ops do not know every constructor's shape, randint's)."""
    if isinstance(node, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return Seq([_ev_input(it, frame, e, name, src) for e in node.elts],
                   "tuple" if isinstance(node, ast.Tuple) else "list")
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        d: dict = {}
        for k, v in zip(node.keys, node.values):
            key = py(it.ev(k, frame), MISSING)
            if key is MISSING:
                raise ExampleError(f"{name}={src}: dict key {ast.unparse(k)!r} is not a known value")
            d[key] = _ev_input(it, frame, v, name, src)
        return Dict(d)
    if isinstance(node, ast.Call):
        f = it.ev(node.func, frame)
        if isinstance(f, ModRef) and f.dotted.startswith("torch.") and f.dotted[6:] in CONSTRUCTORS:
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                raise ExampleError(f"{name}={src}: *args and **kwargs are not allowed in a constructor")
            args = [_plain_arg(it, frame, a, name, src) for a in node.args]
            kwargs = {k.arg: _plain_arg(it, frame, k.value, name, src) for k in node.keywords if k.arg}
            spec = tensor_spec(f.dotted[6:], args, kwargs, name)
            return it.new_tensor(spec.meta, is_input=True, name=name)
    v = it.ev(node, frame)
    if isinstance(v, TensorRef) and it.fg.values.get(v.vid) is not None and it.fg.values[v.vid].name is None:
        it.fg.values[v.vid].name = name
    return v


def _plain_arg(it: Interpreter, frame: Frame, node: ast.expr, name: str, src: str) -> object:
    """A constructor argument as a Python value (a dtype as its name)."""
    v = it.ev(node, frame)
    if isinstance(v, ModRef) and v.dotted.startswith("torch."):
        return v.dotted[6:]
    out = py(v, MISSING)
    if out is MISSING:
        raise ExampleError(f"{name}={src}: {ast.unparse(node)!r} is not a known value")
    return list(out) if isinstance(out, tuple) and isinstance(node, ast.List) else out


def _simple_value(it: Interpreter, v: object, name: str) -> object:
    if isinstance(v, TensorSpec):
        return it.new_tensor(v.meta, is_input=True, name=name)
    if isinstance(v, _Dtype):
        return ModRef(f"torch.{v.name}")
    if isinstance(v, (list, tuple)):
        return Seq([_simple_value(it, x, name) for x in v], "list" if isinstance(v, list) else "tuple")
    return Py(v)


def _py_value(v: object) -> object:
    if isinstance(v, (list, tuple)):
        return Seq([_py_value(x) for x in v], "list" if isinstance(v, list) else "tuple")
    return Py(v)


def build_graphs(module: ModuleInfo, table: OpTable, settings: Settings, only: str | None = None,
                 examples: dict[str, str | dict[str, object]] | None = None,
                 inits: dict[str, str] | None = None, shared: Shared | None = None) -> Iterator[FunctionGraph]:
    """One FunctionGraph per function of the module (methods as Cls.name), plus <module> when it has ops.
    `shared`: the state the analyses share (a new one when None; see Shared.for_rerun).
    examples / inits: per qualname, its inputs and its class's constructor arguments as `name=expr`
    text (--example, --init), whose items replace those of the file's own comments; a value that
    cannot be evaluated raises InputError."""
    inits = inits or {}
    shared = shared or Shared()
    call_sites: dict[str, list] = {}
    env: dict[str, object] = {}
    mod_fg, compiled = _run_module(module, table, settings, shared, call_sites, env)
    shared.constructed.end()
    if (only is None and mod_fg.ops) or only == "<module>":
        yield mod_fg
    for qualname, fdef in list(module.functions.items()):
        if "<locals>" in qualname or (only is not None and qualname != only):
            continue
        fg = FunctionGraph(qualname, _span(fdef))
        fg.compiled_call = qualname in compiled
        if shared.file_steps <= 0 or time.process_time() > shared.deadline:
            spent = late(settings) if shared.file_steps > 0 else \
                f"this file's budget of {FILE_STEPS:,} interpreted statements is spent"
            fg.assumptions.append(f"not analyzed: {spent}")
            fg.cut_short = True  # its figures are not 0: nothing of it was counted
            yield fg
            continue
        asked = shared.mode_reads
        _run_entry(module, table, settings, shared, env, fg, fdef, call_sites, examples or {}, inits)
        if shared.mode_reads != asked and shared.file_steps > 0:
            # the function asked whether it is being compiled: its compiled path is analyzed too
            traced = FunctionGraph(qualname, _span(fdef))
            traced.compiled_call = fg.compiled_call
            shared.mode = "compiled"
            try:
                _run_entry(module, table, settings, shared, env, traced, fdef, call_sites, examples or {}, inits)
            finally:
                shared.mode = "eager"
            fg = merge_modes(fg, traced)
        fg.assumptions[:0] = [a for a in _built_at_module_level(module, fdef, mod_fg) if a not in fg.assumptions]
        yield fg


def _built_at_module_level(module: ModuleInfo, fdef: ast.FunctionDef | ast.AsyncFunctionDef,
                           mod_fg: FunctionGraph) -> list[str]:
    """What module-level code assumed, when the function reads a name that code assigns (`MODEL =
    build(...)` at the top of a script, then `def run(x): return MODEL(x)`): the object it uses rests
    on those assumptions as much as if the function had built it."""
    if not mod_fg.assumptions:
        return []
    assigned = {t.id for stmt in module.tree.body if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                for t in ast.walk(stmt) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
    if any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in assigned for n in ast.walk(fdef)):
        return list(mod_fg.assumptions)
    return []


def _run_entry(module: ModuleInfo, table: OpTable, settings: Settings, shared: Shared, env: dict,
               fg: FunctionGraph, fdef: ast.FunctionDef | ast.AsyncFunctionDef, call_sites: dict,
               examples: dict[str, str | dict[str, object]], inits: dict[str, str]) -> None:
    """Analyze entry function fg.qualname into fg, as if called alone with the arguments found for it."""
    qualname = fg.qualname
    shared.constructed.begin()
    shared.loops_seen = {}
    it = Interpreter(module, table, settings, fg, {}, env, shared)
    it.steps_left = given = min(it.steps_left, shared.file_steps)
    ret = None
    bound = None
    try:
        static = isinstance(fdef, ast.FunctionDef) and any(
            isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in fdef.decorator_list)
        if qualname.endswith(".__init__") and not static:
            bound = _bare_instance(module, qualname)  # as Python does: __init__ runs on a new, empty object
        elif "." in qualname and not static:
            bound = _self_for(it, qualname, module, inits.get(qualname))
        args, kwargs = _arguments(it, qualname, fdef, call_sites, examples)
        as_built = False
        if qualname.endswith(".__init__") and not args and not kwargs:
            kwargs = init_kwargs(it, module, qualname, inits.get(qualname))
            as_built = bound is not None
        ret = it.run_function(qualname, args, kwargs, bound=bound, node=fdef, describe=True)
        if as_built:
            _keep_as_built(it, bound, kwargs)
    except _Late:
        it.assume(f"{late(settings)}; figures cover the function's first part", force=True)
        fg.cut_short = True
    except _Idle:
        it.assume(f"no tensor work in {IDLE_STEPS:,} statements in a row: the rest of the function (pure "
                  "Python) is not followed", force=True)
        fg.cut_short = True
    except _Budget:
        it.assume("function too large to follow; figures cover its first part", force=True)
        fg.cut_short = True
    except (_Break, _Continue, _Return):
        pass
    except RecursionError:
        it.assume("nesting too deep to follow; figures cover its first part", force=True)
        fg.unknowns.append(UnknownOp(fdef.lineno, "internal error: nesting too deep"))
        fg.cut_short = True
    shared.constructed.end()
    if not shared.rerun_states:  # a first analysis: what its reruns count as it did (Shared.for_rerun)
        first = shared.first_loops.setdefault(qualname, {})
        for node, known in shared.loops_seen.items():
            first[node] = first.get(node, False) or known
    shared.file_steps -= given - max(it.steps_left, 0)
    fg.returns = _returns(ret)
    if not fg.returns and not (isinstance(ret, Py) and ret.value is None):
        fg.returns = _leaves(fg)  # what it returns is not known: keep every final result live
    elif _holds_unknown(ret):  # part of what it returns is not known (a field hooks fill in): the same
        returned = set(fg.returns)
        fg.returns += [v for v in _leaves(fg) if v not in returned]


def _keep_as_built(it: Interpreter, inst: object, kwargs: dict[str, object]) -> None:
    """An `__init__` analyzed on a bare instance built it as `C(**kwargs)` would: when recording made
    no difference (no op, no unknown call, no graph break, no note that building would not make),
    the object is kept for the file's later analyses, and `self` of C's methods is not built again."""
    fg = it.fg
    if fg.ops or fg.unknowns or fg.graph_breaks or it.unlike_building or not isinstance(inst, Instance):
        return
    memo = it.shared.constructed
    key = memo.key(ClassRef(inst.cls, inst.mod), [], kwargs, True)
    if key is None or memo.entries.get(key):
        return
    memo.put(key, inst, ([], kwargs), list(fg.assumptions), [], list(fg.loop_symbols),
             shared={id(o) for o in reachable(*kwargs.values())})
    # the sizes building it looked up (its `hidden_size`): a rerun that changes one builds it again
    memo.entries[key][-1].syms = frozenset(fg.size_symbols)


def _holds_unknown(v: object, depth: int = 0) -> bool:
    """Whether a returned value holds a value kpredict lost track of (not an unresolved call's result,
    which is a tensor of the graph), where `_returns` looks for tensors."""
    if depth > 6:
        return False
    if isinstance(v, Unknown):
        return v.src is None
    return any(_holds_unknown(x, depth + 1) for x in _returned_items(v))


def _leaves(fg: FunctionGraph) -> list[int]:
    """Outputs of the graph's ops that no later op reads (by storage). A view, or an op that returns its
    input (`type_as` to the same dtype), does not consume what it reads: gemma's RMSNorm ends in one."""
    read = {fg.values[v].storage for op in fg.ops if not (op.category in ("view", "noop") or op.free_reason)
            for v in op.inputs if v in fg.values}
    out: list[int] = []
    for op in fg.ops:
        if op.category in ("view", "alloc", "noop", "sync") or op.free_reason:
            continue
        out.extend(v for v in op.outputs if v in fg.values and fg.values[v].storage not in read)
    return out


EXAMPLE_TAG = "example"


def example_text(module: ModuleInfo, fdef: ast.FunctionDef | ast.AsyncFunctionDef,
                 qualname: str | None, entries: dict[str, dict[str, str]]) -> str | None:
    """The `# kpredict: example a=randn(8) ...` comment right above a def (or its decorators), else
    its `[tool.kpredict.examples]` entry in pyproject.toml: the same inputs verify uses."""
    first = min([fdef.lineno] + [d.lineno for d in fdef.decorator_list])
    text = joined(comment_block(module.lines, first), EXAMPLE_TAG)
    if text is None and qualname:
        text = entries.get("examples", {}).get(qualname)
    return text


def _arguments(it: Interpreter, qualname: str, fdef: ast.FunctionDef | ast.AsyncFunctionDef,
               call_sites: dict, examples: dict[str, dict[str, object] | str]) -> tuple[list, dict]:
    """Arguments for analyzing a function alone: its example comment (items given through the API,
    as text, replace those of the same name), else its first module-level call."""
    given = examples.get(qualname)
    if isinstance(given, dict):  # shapes and values already read (TensorMeta or plain values)
        return [], {name: it.new_tensor(v, is_input=True, name=name) if isinstance(v, TensorMeta) else _py_value(v)
                    for name, v in given.items()}
    own = example_text(it.m, fdef, qualname, _entries(it))
    if own or given:
        return [], _given_values(it, own, given, f"example for {qualname}", "# kpredict: example",
                                 "is not given")
    site = call_sites.get(qualname)
    if site:
        args, kwargs = site
        return [_fresh(it, a) for a in args], {k: _fresh(it, v) for k, v in kwargs.items()}
    return [], {}


def _fresh(it: Interpreter, v: object) -> object:
    """A call-site tensor becomes a new input of the callee's graph, with the same shape and dtype."""
    if isinstance(v, TensorRef):
        src = it.shared.values[v.vid]
        return it.new_tensor(src.meta, is_input=True, contiguous=src.contiguous, name=src.name)
    if isinstance(v, Seq):
        return Seq([_fresh(it, x) for x in v.items], v.kind)
    return v
