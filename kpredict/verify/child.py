"""The child process that runs the user's code and measures it: the only place user code runs.

    python -m kpredict.verify.child '<json request>'     (or the request on stdin)

Request: {"path", "qualname" (null: script mode; "*": every function with example inputs), "device": "cpu"|"cuda"|"auto", "example", "init",
"compiled": true, "grad": false, "mode": "eval"|"train", "progress": path|null, "argv": [...]}.
Answer: one JSON document on stdout (the user's own prints are sent to stderr so they cannot corrupt
it), with "measured" (function mode) or "functions" (script mode), and "error" when something failed:
{"kind": "user"|"oom"|"examples"|"init"|"load"|"resolve"|"device-absent"|"no-torch"|"internal",
"message", "traceback"}. What was measured before an error is kept. When "progress" is given, the
answer so far is also written there after each phase, so a timeout does not lose the eager figures.

Function mode imports the file as module `_kpredict_user` (not `__main__`, so `if __name__ ==
"__main__":` blocks do not run); if its module-level code fails (e.g. it needs CUDA), it is loaded
again as its imports, definitions and the assignments that succeed. A file inside a package (folders
with `__init__.py`, or a namespace package below the nearest pyproject.toml's folder) is imported by
its dotted name with the package root's folder on sys.path, so its relative imports work and
`--init`/`--example` are evaluated in its own namespace; a package that cannot be imported is a
one-line "load" error. Script mode runs such a file as `python -m package.module` would.

On cuda, the example inputs and the module are moved to the GPU; tensors the function makes without
`device=` stay where torch puts them, as in the user's own run. (A `torch.device` context around the
call was tried on an H200: as a TorchFunctionMode it made nn.MultiheadAttention leave its fast path
and changed two compiled graphs, so the measurement would not be the user's program.)

Script mode runs the file as `__main__` under the dispatch-mode recorder and attributes every op to
each function of the file on the stack (per call, numbered with a profile hook). What it cannot see:
eager kernels on cuda are counted as dispatched ops (not GPU events); compiled figures exist only for
functions the script itself passes to `torch.compile` and calls at least twice (the first call
compiles), and not while the script's own profiler is running; graph breaks are not reported.
On a device other than cuda, a script whose text says "cuda" runs under `cuda_override`: what it
puts on cuda goes to the chosen device, and a note says what was moved.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import inspect
import json
import os
import platform
import runpy
import sys
import sysconfig
import traceback
import types
from typing import Any
from kpredict.verify import oracle
from kpredict.verify.annotations import annotations_for, definitions
from kpredict.examples import merged_text
from kpredict.verify.examples import ExampleError, evaluate

USER_MODULE = "_kpredict_user"
_KPREDICT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class ChildError(Exception):
    """A failure with a kind the runner maps to an exit code and a one-line message."""

    def __init__(self, kind: str, message: str, tb: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.tb = tb


# --------------------------------------------------------------------------------------------
# output plumbing


def _claim_stdout() -> Any:
    """Keep the real stdout for our answer; everything else written to fd 1 goes to stderr."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", encoding="utf-8")


def _write_progress(req: dict, result: dict) -> None:
    path = req.get("progress")
    if not path:
        return
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f)
    os.replace(tmp, path)


# --------------------------------------------------------------------------------------------
# tracebacks trimmed to the user's frames


def _is_infra(filename: str) -> bool:
    """Frames of kpredict, torch, the standard library and site-packages are not the user's."""
    f = os.path.realpath(filename)
    if f.startswith(_KPREDICT_DIR + os.sep) or filename.startswith("<"):
        return True
    roots = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return any(r and f.startswith(os.path.realpath(r) + os.sep) for r in roots)


def user_traceback(exc: BaseException) -> tuple[str, bool]:
    """The traceback with only the user's frames, and whether there were any."""
    frames = [fs for fs in traceback.extract_tb(exc.__traceback__) if not _is_infra(fs.filename)]
    lines = ["Traceback (most recent call last):\n"] + traceback.format_list(frames) if frames else []
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip("\n"), bool(frames)


def _exc_message(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _is_oom(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):
        return True
    name = type(exc).__name__
    return name == "OutOfMemoryError" or (isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower())


def _error_from(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, ChildError):
        return {"kind": exc.kind, "message": exc.message, "traceback": exc.tb}
    tb, has_user = user_traceback(exc)
    if _is_oom(exc):
        kind = "oom"
    elif has_user:
        kind = "user"
    else:
        kind = "internal"
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip("\n")
    return {"kind": kind, "message": _exc_message(exc), "traceback": tb}


# --------------------------------------------------------------------------------------------
# loading and resolving


_KEEP = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)


def _has_relative_import(tree: ast.Module) -> ast.ImportFrom | None:
    """The first `from .x import y` run at import time (not one inside a function body)."""
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            return node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return None


def _project_root(folder: str) -> str | None:
    """The folder of the nearest pyproject.toml at or above `folder`."""
    cur = folder
    while True:
        if os.path.isfile(os.path.join(cur, "pyproject.toml")):
            return cur
        up = os.path.dirname(cur)
        if up == cur:
            return None
        cur = up


def package_of(path: str, relative: bool) -> tuple[str, str] | None:
    """(folder to put on sys.path, dotted module name) of a file that is part of a package: its folder
    has `__init__.py` (walked up while the folders have one, not above the nearest pyproject.toml's
    folder), or, for a file with relative imports in a namespace package, it lies below that folder
    (or its `src/`). None for a file on its own."""
    folder, stem = os.path.split(path)
    stem = os.path.splitext(stem)[0]
    project = _project_root(folder)
    parts = [stem]
    cur = folder
    while os.path.isfile(os.path.join(cur, "__init__.py")):
        parts.insert(0, os.path.basename(cur))
        up = os.path.dirname(cur)
        if cur == project or up == cur:
            cur = up
            break
        cur = up
    if len(parts) == 1 and relative and project is not None:
        base = project
        if os.path.isdir(os.path.join(project, "src")) and folder.startswith(os.path.join(project, "src") + os.sep):
            base = os.path.join(project, "src")
        rel = os.path.relpath(folder, base)
        if rel != "." and not rel.startswith(".."):
            parts = rel.split(os.sep) + [stem]
            cur = base
    if len(parts) == 1 or not all(p.isidentifier() for p in parts):
        return None
    return cur, ".".join(parts)


def load_module(path: str, notes: list[str]) -> types.ModuleType:
    """Import the file: inside a package by its dotted name (its package root's folder on sys.path, so
    relative imports work), else as `_kpredict_user`; if its top level fails, keep what can be defined."""
    with open(path, "rb") as f:
        source = f.read()
    try:
        tree = ast.parse(source, path)
    except (SyntaxError, ValueError) as e:
        raise ChildError("load", f"{path}:{getattr(e, 'lineno', None) or 1}: syntax error: {getattr(e, 'msg', e)}") from None
    rel = _has_relative_import(tree)
    pkg = package_of(path, rel is not None)
    if pkg is None and rel is not None:
        raise ChildError("load", f"{path}:{rel.lineno}: `from {'.' * rel.level}{rel.module or ''} import ...` is a "
                         "relative import, but the file is not inside a package (folders named as Python identifiers "
                         "with __init__.py, or below the folder of a pyproject.toml)")
    if pkg is not None:
        return _load_in_package(path, pkg[0], pkg[1], notes)
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location(USER_MODULE, path)
    if spec is None or spec.loader is None:
        raise ChildError("load", f"{path}: cannot be loaded as a Python module")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[USER_MODULE] = mod
    try:
        spec.loader.exec_module(mod)
        return mod
    except SyntaxError as e:
        raise ChildError("load", f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    except (Exception, SystemExit) as e:  # noqa: BLE001 - fall back to definitions only
        notes.append(f"module-level code raised {_exc_message(e)}; loaded its imports and definitions only")
    return _load_definitions(path)


def _load_in_package(path: str, root: str, dotted: str, notes: list[str]) -> types.ModuleType:
    """`import <dotted>` with `root` first on sys.path: its packages' __init__.py run first, as in the
    user's own program. A package that cannot be imported, or an import of the file that fails, is a
    one-line error; other failures of its top level keep its definitions, as for a file on its own."""
    sys.path.insert(0, root)
    parent = dotted.rpartition(".")[0]
    try:
        importlib.import_module(parent)
    except SyntaxError as e:
        raise ChildError("load", f"{e.filename}:{e.lineno}: syntax error: {e.msg} (importing package {parent})") from None
    except (Exception, SystemExit) as e:  # noqa: BLE001 - any failure of the package is its one-line error
        raise ChildError("load", f"{path}: cannot import its package {parent} (from {root}): {_exc_message(e)}") from None
    try:
        mod = sys.modules.get(dotted) or importlib.import_module(dotted)
    except SyntaxError as e:
        raise ChildError("load", f"{e.filename}:{e.lineno}: syntax error: {e.msg}") from None
    except ImportError as e:
        raise ChildError("load", f"{path}: cannot import {dotted} (from {root}): {_exc_message(e)}") from None
    except (Exception, SystemExit) as e:  # noqa: BLE001 - fall back to definitions only
        notes.append(f"module-level code raised {_exc_message(e)}; loaded its imports and definitions only")
        return _load_definitions(path, dotted, parent)
    where = getattr(mod, "__file__", None)
    if not where or os.path.realpath(where) != path:
        raise ChildError("load", f"{path}: importing {dotted} (from {root}) gave {where or 'a module without a file'}, "
                         "another file of that name earlier on sys.path")
    sys.modules[USER_MODULE] = mod
    return mod


def _load_definitions(path: str, name: str = USER_MODULE, package: str | None = None) -> types.ModuleType:
    """Run only imports, defs, classes and assignments, each on its own, skipping those that fail."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    mod = types.ModuleType(name)
    mod.__file__ = path
    if package is not None:
        mod.__package__ = package
    sys.modules[name] = mod
    sys.modules[USER_MODULE] = mod
    for stmt in tree.body:
        if not isinstance(stmt, _KEEP):
            continue
        code = compile(ast.Module(body=[stmt], type_ignores=[]), path, "exec")
        with contextlib.suppress(Exception):
            exec(code, mod.__dict__)  # noqa: S102 - the user's own file, in the child process only
    return mod


def _missing_params(sig: inspect.Signature, given: dict[str, Any], skip_self: bool = False) -> tuple[list[str], list[str]]:
    params = [p for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if skip_self and params and params[0].name == "self":
        params = params[1:]
    missing = [p.name for p in params if p.default is p.empty and p.name not in given]
    takes_any = any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
    extra = [] if takes_any else [n for n in given if n not in {p.name for p in params}]
    return missing, extra


def _call_args(sig: inspect.Signature, values: dict[str, Any]) -> tuple[tuple, dict]:
    """Positional-only parameters positionally, the rest by keyword."""
    args, kwargs = [], dict(values)
    for p in sig.parameters.values():
        if p.kind == p.POSITIONAL_ONLY and p.name in kwargs:
            args.append(kwargs.pop(p.name))
    return tuple(args), kwargs


def construct(cls: type, qualname: str, init_text: str | None, device: str, mode: str,
              namespace: dict[str, Any] | None = None) -> Any:
    """An instance of `cls` from `--init` / `# kpredict: init` values (Python expressions evaluated in
    `namespace`, the user module's: `config=GPTConfig(n_layer=2)`), moved to the device."""
    try:
        values = evaluate(init_text, namespace or {}, device)
    except ExampleError as e:
        raise ChildError("init", f"--init: {e}") from None
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        sig = None
    if sig is not None:
        missing, extra = _missing_params(sig, values)
        if missing:
            raise ChildError("init", f"{cls.__qualname__}(...) needs constructor arguments: {', '.join(missing)} "
                             f"(give them with --init \"{missing[0]}=...\" or a '# kpredict: init ...' comment "
                             f"above `class {cls.__name__}`)")
        if extra:
            raise ChildError("init", f"{cls.__qualname__}(...) has no parameter {', '.join(extra)}")
        args, kwargs = _call_args(sig, values)
    else:
        args, kwargs = (), values
    obj = cls(*args, **kwargs)
    import torch  # lazy: torch takes seconds to import; only the oracle runs it

    if isinstance(obj, torch.nn.Module):
        obj = obj.to(device)
        obj.train(mode == "train")
    return obj


def resolve(mod: types.ModuleType, qualname: str, init_text: str | None, device: str, mode: str) -> Any:
    """`f` -> the function; `Cls.meth` -> the method bound to `Cls(**init)`; `Cls` -> the instance."""
    parts = qualname.split(".")
    obj: Any = mod
    for i, name in enumerate(parts):
        owner = obj
        if inspect.isclass(owner) and i < len(parts):
            raw = inspect.getattr_static(owner, name, None)
            if raw is None:
                raise ChildError("resolve", f"{qualname}: {owner.__qualname__} has no attribute {name!r}")
            if isinstance(raw, (staticmethod, classmethod)) or inspect.isclass(raw):
                obj = getattr(owner, name)
                continue
            instance = construct(owner, qualname, init_text, device, mode, vars(mod))
            obj = getattr(instance, name)
            continue
        if not hasattr(owner, name):
            where = "the file" if owner is mod else repr(parts[i - 1])
            raise ChildError("resolve", f"{qualname}: no {name!r} in {where}")
        obj = getattr(owner, name)
    if inspect.isclass(obj):
        obj = construct(obj, qualname, init_text, device, mode, vars(mod))
    # a function decorated with @torch.compile: measure the original (the oracle compiles it itself)
    return getattr(obj, "_torchdynamo_orig_callable", obj)


# --------------------------------------------------------------------------------------------
# the two modes


def _device(req: dict) -> tuple[str, str]:
    import torch  # lazy: torch takes seconds to import; only the oracle runs it

    want = req.get("device", "cpu")
    if want == "auto":
        want = "cuda" if torch.cuda.is_available() else "cpu"
    if want.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ChildError("device-absent", "--device cuda: no CUDA device is available on this machine")
        return want, torch.cuda.get_device_name()
    return "cpu", platform.processor() or platform.machine() or "cpu"


def function_mode(req: dict, result: dict) -> None:
    """One function (`result` gets "measured"), or every function with example inputs (qualname "*")."""
    path = result["path"]
    if result["qualname"] != "*":
        mod = load_module(path, result["notes"])
        _measure_one(mod, req, result, result)
        return
    with open(path, encoding="utf-8") as f:
        source = f.read()
    quals = [q for q, (_line, kind) in definitions(source).items()
             if kind == "def" and "<locals>" not in q and annotations_for(path, q, source).example is not None]
    mod = load_module(path, result["notes"])
    result["functions"] = []
    for q in quals:
        entry: dict[str, Any] = {"qualname": q, "example": None, "measured": None, "error": None}
        result["functions"].append(entry)
        try:
            _measure_one(mod, req, result, entry)
        except Exception as e:  # noqa: BLE001 - one failing function must not stop the others
            entry["error"] = _error_from(e)
        _write_progress(req, result)


def _measure_one(mod: types.ModuleType, req: dict, result: dict, entry: dict) -> None:
    """Resolve, build the example inputs and measure one function; fills entry["measured"]."""
    path, device = result["path"], result["device"]
    qualname = entry["qualname"]
    ann = annotations_for(path, qualname)
    try:
        example_text = merged_text(ann.example, req.get("example"))
    except ExampleError as e:
        raise ChildError("examples", f"{qualname}: example inputs: {e}") from None
    try:
        init_text = merged_text(ann.init, req.get("init"))
    except ExampleError as e:
        raise ChildError("init", f"{qualname}: constructor arguments: {e}") from None
    fn = resolve(mod, qualname, init_text, device, req.get("mode", "eval"))
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    try:
        values = evaluate(example_text, vars(mod), device)
    except ExampleError as e:
        raise ChildError("examples", f"{qualname}: example inputs: {e}") from None
    if sig is not None:
        missing, extra = _missing_params(sig, values)
        if missing:
            raise ChildError("examples", f"{qualname} needs example inputs for: {', '.join(missing)} "
                             f"(give them with --example \"{missing[0]}=randn(...)\" or a "
                             f"'# kpredict: example ...' comment above the def)")
        if extra:
            raise ChildError("examples", f"{qualname} has no parameter {', '.join(extra)} (example inputs: {example_text})")
        args, kwargs = _call_args(sig, values)
    else:
        args, kwargs = (), values
    entry["example"] = example_text
    make_args = oracle.fresh_inputs(args, kwargs)
    grad = bool(req.get("grad", False))
    files = {path}
    measured: dict[str, Any] = {}
    entry["measured"] = measured
    try:
        measured["eager"] = oracle.measure_eager(fn, make_args, device=device, grad=grad, files=files)
    except BaseException as e:
        measured.update(getattr(e, "kpredict_partial", {}))
        raise
    _write_progress(req, result)
    if req.get("compiled", True):
        measured["compiled"] = oracle.measure_compiled(fn, make_args, device=device, grad=grad, files=files)


class _CallTracker:
    """Numbers every call of a function of the user's file, so ops can be grouped per call."""

    def __init__(self, sites: Any) -> None:
        self.sites = sites
        self.live: dict[int, int] = {}
        self.calls: list[tuple[str, int, int]] = []  # (qualname, call number, first line)
        self.count = 0

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            if self.sites.is_user(frame.f_code.co_filename):
                self.count += 1
                self.live[id(frame)] = self.count
                self.calls.append((frame.f_code.co_qualname, self.count, frame.f_code.co_firstlineno))
        elif event == "return":
            self.live.pop(id(frame), None)

    def tag(self, frame: Any) -> int | None:
        return self.live.get(id(frame))


def _qualname_of(obj: Any) -> tuple[str | None, str | None]:
    """(qualname, file) of what the script passes to torch.compile (function, method or module)."""
    target = getattr(obj, "__func__", obj)
    code = getattr(target, "__code__", None)
    if code is not None:
        return code.co_qualname, code.co_filename
    fwd = getattr(type(obj), "forward", None)
    code = getattr(fwd, "__code__", None)
    if code is not None:
        return code.co_qualname, code.co_filename
    return None, None


@contextlib.contextmanager
def _profile_compile_calls(sites: Any, device: str, records: dict[str, list], suspend: list[Any]) -> Any:
    """Patch torch.compile so that each call of a compiled function of the user's file is profiled.

    During such a call the eager recorder and its patches are switched off: Dynamo must see torch as
    it is, and what runs there is measured by the profiler instead.
    """
    import torch  # lazy: torch takes seconds to import; only the oracle runs it
    from torch.profiler import ProfilerActivity, profile
    from torch.utils._python_dispatch import _disable_current_modes

    real_compile = torch.compile
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])

    def run_profiled(qual: str, call: Any, args: tuple, kwargs: dict) -> Any:
        old = sys.getprofile()
        sys.setprofile(None)
        try:
            with _disable_current_modes(), suspend[0]():
                if torch.autograd.profiler._is_profiler_enabled:
                    records.setdefault(qual, []).append({"unmeasured": "the script's own profiler was running"})
                    return call(*args, **kwargs)
                with profile(activities=acts) as prof, oracle.mark_printing():
                    out = call(*args, **kwargs)
                    if device.startswith("cuda"):
                        torch.cuda.synchronize()
                records.setdefault(qual, []).append(oracle.summarize_compiled(list(prof.events()), device))
                return out
        finally:
            sys.setprofile(old)

    def compile_hook(model: Any = None, **kw: Any) -> Any:
        if model is None:
            return lambda m: compile_hook(m, **kw)
        compiled = real_compile(model, **kw)
        qual, file = _qualname_of(model)
        if qual is None or file is None or not sites.is_user(file):
            return compiled
        if isinstance(compiled, torch.nn.Module):
            base = type(compiled)

            def __call__(self: Any, *a: Any, **k: Any) -> Any:
                return run_profiled(qual, lambda *a2, **k2: base.__call__(self, *a2, **k2), a, k)

            compiled.__class__ = type(f"Profiled{base.__name__}", (base,), {"__call__": __call__})
            return compiled

        def wrapper(*a: Any, **k: Any) -> Any:
            return run_profiled(qual, compiled, a, k)

        wrapper.__wrapped__ = compiled  # type: ignore[attr-defined]
        wrapper.__name__ = getattr(compiled, "__name__", "compiled")
        return wrapper

    torch.compile = compile_hook  # type: ignore[assignment]
    try:
        yield
    finally:
        torch.compile = real_compile


@contextlib.contextmanager
def cuda_override(device: str, notes: list[str]) -> Any:
    """Run a script written for "cuda" on `device` (not a cuda device): a TorchFunctionMode sends what
    the script puts on cuda there (`device="cuda"` / `torch.device("cuda")` / an index in factory
    functions and `.to()`, `.cuda()`, modules through their tensors), `pin_memory` is dropped,
    `torch.cuda.is_available()` says False, `device_count()` 0, and `synchronize()` does nothing.
    What was moved is noted (not what moves inside a torch.compile'd function: counting there would
    make Dynamo guard on the counts and recompile on every call). Any TorchFunctionMode sends fast
    paths that check has_torch_function (nn.MultiheadAttention's in eval) to their slow path, so
    script_mode enters this one only for a script whose text says cuda."""
    import torch  # lazy: torch takes seconds to import; only the oracle runs it
    from torch.overrides import TorchFunctionMode

    target = torch.device(device)
    moved: dict[str, int] = {}

    def count(what: str) -> None:
        if not torch.compiler.is_compiling():  # Dynamo would guard on the counts, and recompile each call
            moved[what] = moved.get(what, 0) + 1

    def remap(d: Any, what: str) -> Any:
        is_cuda = (isinstance(d, torch.device) and d.type == "cuda"
                   or isinstance(d, str) and d.split(":")[0] == "cuda"
                   or isinstance(d, int) and not isinstance(d, bool))
        if not is_cuda:
            return d
        count(what)
        return target

    tensor_to, tensor_cuda, pin = torch.Tensor.to, torch.Tensor.cuda, torch.Tensor.pin_memory

    class Override(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
            kwargs = dict(kwargs or {})
            if func is tensor_cuda:
                count(".cuda()")
                return args[0].to(target, non_blocking=bool(kwargs.get("non_blocking", False)))
            if func is pin:
                return args[0]
            name = getattr(func, "__name__", "f")
            if kwargs.get("device") is not None:
                kwargs["device"] = remap(kwargs["device"], f"{name}(device=)")
            if func is tensor_to and len(args) > 1:
                args = (args[0], remap(args[1], ".to()"), *args[2:])
            if kwargs.get("pin_memory"):
                kwargs["pin_memory"] = False
            return func(*args, **kwargs)

    real_profile = torch.profiler.profile
    cuda_act, cpu_act = torch.profiler.ProfilerActivity.CUDA, torch.profiler.ProfilerActivity.CPU

    class Profile(real_profile):  # type: ignore[misc,valid-type]
        """The script's profiler: its CUDA activity, which this build cannot record, records the CPU."""

        def __init__(self, *a: Any, activities: Any = None, **k: Any) -> None:
            if activities is not None and cuda_act in activities:
                count("profile(CUDA)")
                activities = list(dict.fromkeys(cpu_act if x == cuda_act else x for x in activities))
            super().__init__(*a, activities=activities, **k)

    saved = (torch.cuda.is_available, torch.cuda.device_count, torch.cuda.synchronize)
    torch.cuda.is_available = lambda: False  # type: ignore[assignment]
    torch.cuda.device_count = lambda: 0  # type: ignore[assignment]
    torch.cuda.synchronize = lambda device=None: None  # type: ignore[assignment]
    if cuda_act not in torch.profiler.supported_activities():
        torch.profiler.profile = Profile  # type: ignore[misc]
    try:
        with Override():
            yield
    finally:
        torch.cuda.is_available, torch.cuda.device_count, torch.cuda.synchronize = saved
        torch.profiler.profile = real_profile  # type: ignore[misc]
        if moved:
            what = ", ".join(f"{k} x{n}" for k, n in sorted(moved.items()))
            notes.append(f"device override: what the script put on cuda ran on {device} (--device {device}; {what})")


def script_mode(req: dict, result: dict) -> None:
    import torch._inductor.config as inductor_config  # lazy: torch takes seconds to import; only the oracle runs it

    path, device = result["path"], result["device"]
    inductor_config.force_disable_caches = True
    inductor_config.cpp.enable_kernel_profile = True
    sites = oracle.Sites({path})
    tracker = _CallTracker(sites)
    rec = oracle.new_recorder(sites, ranges=False, tagger=tracker.tag)
    compiled: dict[str, list] = {}
    sys.argv = [path] + list(req.get("argv") or [])
    with open(path, "rb") as f:
        source = f.read()
    try:
        pkg = package_of(path, _has_relative_import(ast.parse(source, path)) is not None)
    except (SyntaxError, ValueError):
        pkg = None  # runpy reports it
    sys.path.insert(0, pkg[0] if pkg else os.path.dirname(path))
    override = (cuda_override(device, result["notes"]) if not device.startswith("cuda") and b"cuda" in source
                else contextlib.nullcontext())
    error: BaseException | None = None
    suspend: list[Any] = [contextlib.nullcontext]
    try:
        with override, _profile_compile_calls(sites, device, compiled, suspend), rec, \
                oracle.host_reads(rec, sites) as paused:
            suspend[0] = paused
            sys.setprofile(tracker)
            try:
                if pkg:  # as `python -m package.module`, so that its relative imports work
                    runpy.run_module(pkg[1], run_name="__main__", alter_sys=True)
                else:
                    runpy.run_path(path, run_name="__main__")
            finally:
                sys.setprofile(None)
    except SystemExit as e:
        if e.code not in (0, None):
            error = e
    except BaseException as e:  # noqa: BLE001 - reported with what was measured
        error = e
    result["functions"] = _script_functions(tracker, rec.rows, compiled)
    if error is not None:
        raise error


def _script_functions(tracker: _CallTracker, rows: list[dict], compiled: dict[str, list]) -> list[dict[str, Any]]:
    """Per function of the file: the first call's eager figures, and the last profiled compiled call."""
    by_call: dict[int, list[dict]] = {}
    for r in rows:
        for _q, _line, tag in r.get("stack") or []:
            if tag is not None:
                by_call.setdefault(tag, []).append(r)
    funcs: dict[str, dict[str, Any]] = {}
    for qual, callno, first_line in tracker.calls:
        f = funcs.setdefault(qual, {"qualname": qual, "line": first_line, "calls": 0, "eager": None,
                                    "same_every_call": True})
        f["calls"] += 1
        summary = oracle.summarize_eager(by_call.get(callno, []))
        if f["eager"] is None:
            f["eager"] = summary
        elif any(summary[k] != f["eager"][k] for k in ("kernels", "reads", "writes", "bytes", "syncs")):
            f["same_every_call"] = False
    for qual, recs in compiled.items():
        f = funcs.setdefault(qual, {"qualname": qual, "line": None, "calls": 0, "eager": None, "same_every_call": True})
        f["compiled_calls"] = len(recs)
        usable = [r for r in recs[1:] if "unmeasured" not in r]
        if usable:
            f["compiled"] = usable[-1]
        else:
            f["compiled_note"] = (recs[-1].get("unmeasured") if recs and "unmeasured" in recs[-1]
                                  else "called once through torch.compile: no call after the compiling one to measure")
    return list(funcs.values())


# --------------------------------------------------------------------------------------------


def run(req: dict) -> dict[str, Any]:
    path = os.path.realpath(req["path"])
    result: dict[str, Any] = {"schema": "kpredict/child/v1", "path": path, "qualname": req.get("qualname"),
                              "device": None, "device_name": None, "torch": None, "notes": [], "error": None}
    try:
        try:
            import torch  # lazy: torch takes seconds to import; only the oracle runs it
        except ImportError:
            raise ChildError("no-torch", "torch is not installed here; install it "
                             "(pip install 'torch-kpredict[verify]') to run --verify") from None
        result["torch"] = torch.__version__
        result["device"], result["device_name"] = _device(req)
        if not os.path.isfile(path):
            raise ChildError("load", f"{req['path']}: no such file")
        if result["qualname"]:
            function_mode(req, result)
        else:
            script_mode(req, result)
    except BaseException as e:  # noqa: BLE001 - every failure becomes part of the answer
        result["error"] = _error_from(e)
    return result


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = _claim_stdout()
    try:
        req = json.loads(argv[0] if argv else sys.stdin.read())
        result = run(req)
    except BaseException as e:  # noqa: BLE001
        result = {"schema": "kpredict/child/v1", "error": {"kind": "internal", "message": _exc_message(e),
                                                           "traceback": traceback.format_exc()}}
    out.write(json.dumps(result, default=str))
    out.write("\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
