"""`kpredict verify`: run the code in a child process, predict it statically, compare the two.

The user's code never runs in this process: `kpredict.verify.child` runs it (with a timeout, in its
own process group so that compile workers die with it) and answers with one JSON document. This
module only spawns, parses, asks `kpredict.api` for the prediction and compares figures.

A function matches when eager kernels, eager reads, eager writes, eager bytes (when the prediction
has bytes) and compiled kernels (when compiled was measured) are equal. Syncs, graph counts and
kernel names are shown with a mark too, but do not decide the match.
"""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kpredict import api, project
from kpredict.ir import FileReport, FunctionReport
from kpredict.verify.origin import with_library_extra, without_profiler_ranges

EXIT_MATCH, EXIT_MISMATCH, EXIT_ERROR, EXIT_NO_DEVICE = 0, 1, 2, 3
_PKG_PARENT = str(Path(__file__).resolve().parent.parent.parent)


@dataclass
class Row:
    """One compared figure."""

    label: str
    predicted: Any
    measured: Any
    ok: bool | None  # None: not comparable (prediction unknown)
    decides: bool
    lower_bound: bool = False  # a mismatch where the prediction is a lower bound below the measurement


@dataclass
class FunctionCheck:
    path: str
    qualname: str
    line: int | None
    predicted: FunctionReport | None
    measured: dict[str, Any]  # {"eager": {...}, "compiled": {...}}; either may be missing
    rows: list[Row] = field(default_factory=list)
    match: bool = False
    notes: list[str] = field(default_factory=list)
    calls: int | None = None  # script mode: how many times it ran
    error: dict[str, Any] | None = None  # this function could not be measured (PATH::* runs)
    example: str | None = None


@dataclass
class VerifyResult:
    path: str
    qualname: str | None
    device: str | None
    device_name: str | None
    torch: str | None
    functions: list[FunctionCheck] = field(default_factory=list)
    error: dict[str, Any] | None = None  # {"kind", "message", "traceback"}
    notes: list[str] = field(default_factory=list)
    example: str | None = None
    mode: str = "eval"  # eval | train: the module mode measured and predicted

    @property
    def nothing_ran(self) -> bool:
        """No function of the file was measured, or none of those measured ran a tensor op: a pass
        would say the prediction matched when nothing was compared."""
        if self.error is not None or any(f.error for f in self.functions):
            return False
        return not any(_ran(f.measured) for f in self.functions)

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return EXIT_NO_DEVICE if self.error.get("kind") == "device-absent" else EXIT_ERROR
        if any(f.error for f in self.functions) or self.nothing_ran:
            return EXIT_ERROR
        if not all(f.match for f in self.functions):
            return EXIT_MISMATCH
        return EXIT_MATCH


def _ran(measured: dict[str, Any]) -> bool:
    """Whether a measurement saw any tensor work: a kernel, an op, a sync or a copy (a compiled graph
    that launches nothing, as a function of views gives, is no work)."""
    for phase in ("eager", "compiled"):
        m = measured.get(phase) or {}
        if m.get("kernels") or m.get("ops") or m.get("syncs") or m.get("memcpy") or m.get("memset") \
                or m.get("names"):
            return True
    return False


# --------------------------------------------------------------------------------------------
# the child process


def _child_env() -> dict[str, str]:
    """The child must import this very kpredict, whatever the working directory."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([_PKG_PARENT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("PYTHONIOENCODING", "utf-8")
    return env


def run_child(request: dict[str, Any], timeout: float) -> tuple[dict[str, Any], str]:
    """Run the child; return its answer (or an error answer) and its stderr."""
    with tempfile.TemporaryDirectory(prefix="kpredict-verify-") as tmp:
        request = dict(request, progress=os.path.join(tmp, "progress.json"))
        proc = subprocess.Popen(
            [sys.executable, "-m", "kpredict.verify.child"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace", env=_child_env(),
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(json.dumps(request), timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = proc.communicate()
            answer = _read_json(request["progress"]) or {}
            answer["error"] = {"kind": "timeout", "traceback": None, "message":
                               f"the code did not finish within {timeout:g} s (--timeout); "
                               + ("figures measured before that are shown" if answer.get("measured") else
                                  "nothing was measured")}
            return answer, err
        answer = _last_json(out)
        if answer is None:
            progress = _read_json(request["progress"]) or {}
            if proc.returncode is not None and proc.returncode < 0:
                sig = -proc.returncode
                kind = "oom" if sig == signal.SIGKILL else "internal"
                why = " (most likely by the out-of-memory killer)" if kind == "oom" else ""
                msg = f"the child process was killed by signal {sig}{why}"
            else:
                kind, msg = "internal", f"the child process exited with code {proc.returncode} without an answer"
            progress["error"] = {"kind": kind, "message": msg, "traceback": _tail(err)}
            return progress, err
        return answer, err


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _read_json(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _last_json(out: str) -> dict[str, Any] | None:
    for line in reversed(out.strip().splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


# --------------------------------------------------------------------------------------------
# the static prediction


def _example_meta(path: str, qualname: str | None, example: str | None, device: str) -> tuple[dict | None, str | None]:
    """--example for the static side, as text: the analysis merges it with the file's comment and
    pyproject entry (its items win) and evaluates it, as the child does with the same sources."""
    if qualname is None or not example:
        return None, None
    return {qualname: example}, example


def predict(path: str, target: str, qualname: str | None, examples: dict | None,
            init: str | None = None, mode: str = "eval") -> tuple[FileReport, list[str]]:
    """`kpredict.api.analyze_file` for the device's target, with the same example shapes,
    constructor arguments and module mode the child runs with, and the project's other settings
    (dims, all-files: kpredict.project, as every command)."""
    try:
        settings = project.settings_for(path, project.Options(target=target, mode=mode))
    except project.ConfigError as e:
        return FileReport(path=path, error=str(e)), []
    inits = {qualname: init} if (init and qualname) else None
    return api.analyze_file(path, settings, only=qualname, examples=examples, inits=inits), []


# --------------------------------------------------------------------------------------------
# comparing


def normalize_name(name: str) -> str:
    """Kernel names as both sides spell them: 'ext:mm', 'extern_kernels.mm', 'aten::mm' -> 'mm'."""
    for prefix in ("aten::", "ext:", "fallback:", "extern_kernels.", "torch.ops.aten."):
        if name.startswith(prefix):
            name = name[len(prefix):]
    name = name.split("(")[0]
    return name[:-8] if name.endswith(".default") else name


def _eq(p: Any, m: Any) -> bool | None:
    if p is None or m is None:
        return None
    return p == m


def launches(phase: dict[str, Any]) -> int:
    """The measured kernel count a prediction is held to: GPU kernels, less the helper kernels that
    cuBLAS/cuDNN run inside a call beside its main one (split-K reductions, scal, padding and layout
    transforms), which the library picks per shape and GPU; they are shown apart. ATen's kernels
    around a call (a convolution's bias add, an addmm's bias copy) are launches (kpredict.verify.origin
    derives `library_extra` from the raw kernel names). On cpu there are none."""
    return int(phase["kernels"]) - int(phase.get("library_extra") or 0)


def compare(pred: FunctionReport | None, measured: dict[str, Any]) -> tuple[list[Row], bool]:
    """Rows of predicted vs measured; the match needs every deciding row equal."""
    rows: list[Row] = []
    e = measured.get("eager")
    c = measured.get("compiled")
    pe = pred.eager if pred else None
    pc = pred.compiled if pred else None
    if e is not None:
        ek = launches(e)
        rows.append(Row("eager kernels", pe.kernels if pe else None, ek, _eq(pe and pe.kernels, ek), True))
        if e.get("library_extra"):
            rows.append(Row("library helper kernels", None, e["library_extra"], None, False))
        p_rw = (pe.reads, pe.writes) if pe else None
        rows.append(Row("eager transfers", p_rw, (e["reads"], e["writes"]), _eq(p_rw, (e["reads"], e["writes"])), True))
        pb = pe.bytes if pe else None
        # bytes that leave out tensors of unknown size are a lower bound, shown and not compared
        rows.append(Row("eager bytes", pb, e["bytes"], _eq(pb, e["bytes"]),
                        (pb is not None and not pred.partial_bytes) or pe is None))
        rows.append(Row("syncs", pe.syncs if pe else None, e["syncs"], _eq(pe and pe.syncs, e["syncs"]), False))
    if c is not None:
        ck = launches(c)
        rows.append(Row("compiled kernels", pc.kernels if pc else None, ck, _eq(pc and pc.kernels, ck), True))
        if c.get("library_extra"):
            rows.append(Row("library helper kernels", None, c["library_extra"], None, False))
        rows.append(Row("compiled graphs", pc.graphs if pc else None, c["graphs"], _eq(pc and pc.graphs, c["graphs"]), False))
        p_names = sorted(normalize_name(n) for n in pc.kernel_names) if pc else None
        m_names = sorted(normalize_name(n) for n in c["names"])
        rows.append(Row("kernel names", list(pc.kernel_names) if pc else None, list(c["names"]),
                        _eq(p_names, m_names), False))
    if pred is None:
        return rows, False
    if pred.compiled_causes:  # not modelled (a training step's compiled backward): shown, not compared
        for r in rows:
            if r.label.startswith("compiled") or r.label == "kernel names":
                r.decides = False
    if pred.lower_bound:
        for r in rows:
            r.lower_bound = r.ok is False and _below(r.predicted, r.measured)
    match = bool(rows) and all(r.ok is True for r in rows if r.decides)
    return rows, match


def _below(predicted: Any, measured: Any) -> bool:
    """A predicted figure under the measured one (each part of a (reads, writes) pair at most, one under)."""
    if isinstance(predicted, tuple) and isinstance(measured, (tuple, list)) and len(predicted) == len(measured):
        pairs = list(zip(predicted, measured))
    else:
        pairs = [(predicted, measured)]
    if not all(isinstance(p, int) and isinstance(m, int) for p, m in pairs):
        return False
    return all(p <= m for p, m in pairs) and any(p < m for p, m in pairs)


# --------------------------------------------------------------------------------------------
# the whole command


def child_request(path: str, qualname: str | None = "*", device: str = "cpu", examples: str | None = None,
                  init: str | None = None, compiled: bool = True, mode: str = "eval",
                  grad: bool | None = None) -> dict[str, Any]:
    """What the child is asked to measure (the whole of what its answer depends on, with the files).
    `grad` None: autograd on where the file runs a backward (runs_backward)."""
    return {"path": path, "qualname": qualname, "device": device, "example": examples, "init": init,
            "compiled": compiled, "mode": mode, "grad": runs_backward(path) if grad is None else grad}


def run_verify(path: str, qualname: str | None = None, device: str = "auto", examples: str | None = None,
               init: str | None = None, timeout: float = 300.0, compiled: bool = True,
               mode: str = "eval", grad: bool | None = None, child: Any = None) -> VerifyResult:
    """Measure `path` and compare: one function (`qualname`), every function with example inputs
    (`qualname == "*"`, one child process for the whole file), or the whole script (`qualname` None).
    `child` stands in for `run_child` (the tests pass `recorded.child()`, which reads stored answers)."""
    apath = os.path.abspath(path)
    request = child_request(apath, qualname, device, examples, init, compiled, mode, grad)
    if not os.path.isfile(apath):
        return VerifyResult(path, qualname, None, None, None, mode=mode,
                            error={"kind": "load", "message": f"{path}: no such file", "traceback": None})
    answer, stderr = (child or run_child)(request, timeout)
    res = VerifyResult(path=path, qualname=qualname, device=answer.get("device"), device_name=answer.get("device_name"),
                       torch=answer.get("torch"), error=answer.get("error"), notes=list(answer.get("notes") or []),
                       example=answer.get("example"), mode=mode)
    if res.error and res.error.get("kind") == "internal" and not res.error.get("traceback"):
        res.error["traceback"] = _tail(stderr)
    if res.device is None:
        return res
    target = "cuda" if res.device.startswith("cuda") else "cpu"
    single = qualname not in (None, "*")
    meta, _ = _example_meta(apath, qualname, examples, res.device) if single else (None, None)
    try:
        report, notes = predict(path, target, qualname if single else None, meta, init if single else None, mode)
        res.notes.extend(notes)
    except ImportError as e:  # the static side is missing: measured figures are still shown
        report = FileReport(path=path, error=f"static analysis unavailable ({e})")
    if report.error:
        res.notes.append(f"prediction: {report.error}")
    predicted = {f.qualname: f for f in report.functions}
    if single:
        measured = answer.get("measured")
        if measured:
            _add(res, path, qualname, predicted.get(qualname), measured, None, None)  # type: ignore[arg-type]
    elif qualname == "*":
        for fn in answer.get("functions") or []:
            q = fn["qualname"]
            _add(res, path, q, predicted.get(q), fn.get("measured") or {}, None, None,
                 error=fn.get("error"), example=fn.get("example"))
    else:
        through_compile = sum(fn.get("compiled_calls", 0) for fn in answer.get("functions") or [])
        for fn in answer.get("functions") or []:
            q = fn["qualname"]
            meas = {k: fn[k] for k in ("eager", "compiled") if fn.get(k) is not None}
            pred = predicted.get(q)
            if pred is None and ("<" in q and q != "<module>" or (q == "<module>" and not _launches(meas))):
                continue  # lambdas, comprehensions, nested functions: the static side reports none
            notes = []
            if fn.get("compiled_note"):
                notes.append(f"compiled: {fn['compiled_note']}")
            informative = q == "<module>" and through_compile > 0
            if informative:
                notes.append(f"not compared: {through_compile} call(s) at module level went through torch.compile "
                             "and ran compiled kernels, which eager figures cannot include; the functions they "
                             "called are compared on their own")
            if not fn.get("same_every_call", True):
                notes.append(f"ran {fn['calls']} times with different figures; the first call is compared")
            _add(res, path, q, pred, meas, fn.get("calls"), fn.get("line"), notes, informative=informative)
    return res


def runs_backward(path: str) -> bool:
    """Whether the file calls a `.backward(...)` (a tensor's, or torch.autograd's): a training step, which
    runs with autograd on (the oracle runs forwards under no_grad, as the predictions assume)."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return False
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward"
               for n in ast.walk(tree))


def _launches(measured: dict[str, Any]) -> bool:
    return any((measured.get(k) or {}).get("kernels") for k in ("eager", "compiled"))


def _add(res: VerifyResult, path: str, qualname: str, pred: FunctionReport | None, measured: dict[str, Any],
         calls: int | None, line: int | None, notes: list[str] | None = None,
         error: dict[str, Any] | None = None, example: str | None = None, informative: bool = False) -> None:
    measured = with_library_extra(without_profiler_ranges(measured))  # the launch definition, from the raw kernel names
    rows, match = compare(pred, measured)
    if informative and pred is not None:  # shown, but nothing decides
        for r in rows:
            r.decides = False
        match = True
    check = FunctionCheck(path=path, qualname=qualname, line=pred.line if pred else line, predicted=pred,
                          measured=measured, rows=rows, match=match and error is None, notes=list(notes or []),
                          calls=calls, error=error, example=example)
    if pred is None:
        check.notes.append("no prediction for this function")
    else:
        check.notes.extend(f"compiled not compared: line {u.line}: {u.name}" for u in pred.compiled_causes)
    res.functions.append(check)
