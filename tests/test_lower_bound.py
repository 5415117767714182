"""Never a silent zero (issue 27): a function with something not understood reports its figures as
lower bounds (`>= 12` in text, `"lower_bound": true` in JSON) with the cause and its line, and a
function kpredict fully understands never does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kpredict.api import analyze_source
from kpredict.ir import FileReport, FunctionReport, Report
from kpredict.render import json_report, markdown, text_report
from kpredict.report import may_launch
from kpredict.settings import Settings

REPO = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((REPO / "kpredict" / "schema" / "report.schema.json").read_text())


def _fn(src: str, qualname: str) -> FunctionReport:
    rep = analyze_source(src, "m.py", Settings())
    assert rep.error is None, rep.error
    return next(f for f in rep.functions if f.qualname == qualname)


def _assert_lower_bound(fn: FunctionReport, line: int, what: str) -> None:
    assert fn.lower_bound, (fn.qualname, fn.unknown)
    assert any(c.line == line and what in c.name for c in fn.lower_bound_causes), fn.lower_bound_causes
    d = json_report.function_dict(fn)
    assert d["eager"]["lower_bound"] is True and d["compiled"]["lower_bound"] is True
    assert {"line": line, "what": next(c.name for c in fn.lower_bound_causes if c.line == line)} \
        in d["lower_bound_causes"]
    text = text_report.render_file(FileReport("m.py", functions=[fn]))
    assert f">= {fn.eager.kernels}" in text
    assert f"line {line} (" in text and "lower bounds" in text


UNKNOWN_TORCH = """import torch


def f(x):
    y = x + 1
    z = torch.frobnicate(y)
    return z * 2
"""

LSTM = """import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.EmbeddingBag(64, 128)  # not in the catalogue
        self.head = nn.Linear(128, 10)

    def forward(self, x):
        y = self.lstm(x)
        return self.head(y).relu()
"""

OUTSIDE = """import torch
from somewhere_else import helper


def f(x):
    y = x.relu()
    return helper(y) + 1
"""

HELPER = """import torch


def g(x):
    return torch.frobnicate(x)


def f(x):
    return g(x.relu()) + 1
"""


def test_an_unknown_torch_function_makes_a_lower_bound() -> None:
    _assert_lower_bound(_fn(UNKNOWN_TORCH, "f"), 6, "torch.frobnicate")


def test_an_unknown_module_makes_a_lower_bound() -> None:
    fn = _fn(LSTM, "Net.forward")
    _assert_lower_bound(fn, 12, "EmbeddingBag")
    assert fn.eager.kernels == 2  # what is understood is still counted


def test_a_call_into_code_outside_the_tree_makes_a_lower_bound() -> None:
    _assert_lower_bound(_fn(OUTSIDE, "f"), 7, "helper")


def test_an_unknown_in_an_inlined_helper_makes_the_caller_a_lower_bound() -> None:
    _assert_lower_bound(_fn(HELPER, "f"), 5, "torch.frobnicate")


def test_a_function_cut_short_is_a_lower_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    from kpredict.frontend import interp, summaries

    monkeypatch.setattr(interp, "MAX_OPS", 20)  # both readers of frame.MAX_OPS
    monkeypatch.setattr(summaries, "MAX_OPS", 20)
    src = "import torch\n\n\ndef f(x):\n    for j in range(100):\n        x = x * 2\n    return x\n"
    fn = _fn(src, "f")
    assert fn.eager.kernels == 20
    _assert_lower_bound(fn, 4, "analysis cut short")


def test_a_tensor_free_unknown_call_is_no_reason() -> None:
    """A call that reaches no tensor (a config helper from elsewhere) launches nothing."""
    src = "import torch\nfrom elsewhere import size_of\n\n\ndef f(x):\n    n = size_of(3)\n    return x + n\n"
    fn = _fn(src, "f")
    assert not fn.lower_bound and not fn.lower_bound_causes


def test_the_causes_line_names_the_first_few_and_a_count() -> None:
    lines = "\n".join(f"    x = torch.frob{i}(x)" for i in range(5))
    fn = _fn(f"import torch\n\n\ndef f(x):\n{lines}\n    return x\n", "f")
    assert len(fn.lower_bound_causes) == 5
    text = text_report.render_file(FileReport("m.py", functions=[fn]))
    causes = [ln for ln in text.splitlines() if "lower bounds" in ln]
    assert len(causes) == 1 and "line 5 (torch.frob0)" in causes[0] and "and 2 more" in causes[0]


def test_json_with_lower_bounds_validates() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    rep = analyze_source(LSTM, "m.py", Settings())
    doc = json_report.report_dict(Report("cuda", [rep]))
    jsonschema.validate(doc, SCHEMA)
    fwd = next(f for f in doc["files"][0]["functions"] if f["qualname"] == "Net.forward")
    assert fwd["eager"]["lower_bound"] and fwd["lower_bound_causes"] == [{"line": 12, "what": "torch.nn.EmbeddingBag"}]


def test_markdown_shows_lower_bounds() -> None:
    from kpredict.lint.model import FileResult, LintRun

    rep = analyze_source(LSTM, "m.py", Settings())
    run = LintRun(files=[FileResult(path="m.py", relpath="m.py", report=rep)], rules=[], root=".")
    out = markdown.render(run)
    assert "| `m.py::Net.forward` | >= 2 |" in out


def _functions(path: Path) -> list[FunctionReport]:
    rep = analyze_source(path.read_bytes(), str(path), Settings())
    assert rep.error is None, (path, rep.error)
    return rep.functions


@pytest.mark.parametrize("path", sorted((REPO / "fixtures" / "seed").glob("*.py")) + [
    REPO / "fixtures" / "ops" / "pointwise.py"], ids=lambda p: p.name)
def test_fully_understood_fixtures_are_exact(path: Path) -> None:
    for fn in _functions(path):
        assert not fn.lower_bound, (fn.qualname, fn.lower_bound_causes)
        assert ">=" not in text_report.render_file(FileReport(str(path), functions=[fn]))


FIXTURES = sorted(p for p in (REPO / "fixtures").rglob("*.py") if "oracle" not in p.parts)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(REPO / "fixtures")))
def test_nothing_not_understood_is_an_exact_figure(path: Path) -> None:
    """Over every fixture: a function whose report has unknowns that can launch kernels is a lower
    bound, with each of them among its causes; one without any (and not cut short) is exact."""
    for fn in _functions(path):
        launching = [u for u in fn.unknown if may_launch(u)]
        cut = fn.graph is not None and fn.graph.cut_short
        assert fn.lower_bound == bool(launching or cut), (fn.qualname, fn.unknown)
        causes = {(c.line, c.name) for c in fn.lower_bound_causes}
        assert all((u.line, u.name) in causes for u in launching), (fn.qualname, fn.unknown, causes)


def test_constructing_an_optimizer_is_no_reason() -> None:
    """An optimizer not described (RMSprop) is not understood, but constructing it launches nothing;
    AdamW is described (rules/libraries.toml): understood."""
    src = ("import torch\n\n\ndef make(model, w):\n    opt = torch.optim.RMSprop([w], lr=1e-3)\n"
           "    return opt\n")
    fn = _fn(src, "make")
    assert fn.unknown and not fn.lower_bound
    fn = _fn(src.replace("RMSprop", "AdamW"), "make")
    assert not fn.unknown and not fn.lower_bound


def test_verify_marks_a_lower_bound_below_the_measurement() -> None:
    """Still a mismatch (verify's rule is unchanged), but the row says the prediction is a lower bound."""
    from kpredict.ir import CompiledFigures, Figures, Unknown
    from kpredict.verify import render as vrender
    from kpredict.verify.runner import FunctionCheck, VerifyResult, compare

    measured = {"eager": {"kernels": 9, "reads": 12, "writes": 9, "bytes": None, "syncs": 0, "names": [], "ops": []},
                "compiled": {"kernels": 7, "names": [], "graphs": 1, "graph_breaks": [], "syncs": 0, "detail": []}}
    pred = FunctionReport("Net.forward", 11, Figures(2, 4, 2, None, 0), CompiledFigures(2, 4, 2, None, 0, 1, [], []),
                          lower_bound=True, lower_bound_causes=[Unknown(12, "torch.nn.LSTM")])
    rows, match = compare(pred, measured)
    assert not match
    by = {r.label: r for r in rows}
    assert by["eager kernels"].lower_bound and by["compiled kernels"].lower_bound and by["eager transfers"].lower_bound
    res = VerifyResult(path="m.py", qualname="Net.forward", device="cpu", device_name=None, torch=None,
                       functions=[FunctionCheck("m.py", "Net.forward", 11, pred, measured, rows, match)])
    text = vrender.render_text(res)
    assert "MISMATCH" in text and "(lower bound)" in text
    assert json.loads(vrender.render_json(res))["functions"][0]["rows"][0]["lower_bound"] is True
    exact = FunctionReport("f", 1, Figures(2, 4, 2, None, 0), CompiledFigures(2, 4, 2, None, 0, 1, [], []))
    assert not any(r.lower_bound for r in compare(exact, measured)[0])


def test_a_budget_finding_on_a_lower_bound_says_at_least() -> None:
    from kpredict.lint.baseline import budget_findings, key

    rep = analyze_source(LSTM, "m.py", Settings())
    fwd = [f for f in rep.functions if f.qualname == "Net.forward"]
    entries = {key("m.py", "Net.forward"): {"eager": {"kernels": 1}, "compiled": {"kernels": 1}}}
    (d,) = budget_findings("m.py", fwd, LSTM.splitlines(), entries)
    assert "eager 1 -> at least 2 kernels" in d.message and "line 12" in d.message


CACHE_UNKNOWN_KEY = """import torch

CACHE = {}


def f(x: torch.Tensor):
    key = str(x.requires_grad)
    if key not in CACHE:
        CACHE[key] = x * 2
    return CACHE[key] + 1
"""


def test_arithmetic_on_a_value_not_followed_is_a_lower_bound() -> None:
    """A dict filled and read with a key kpredict does not know gave an unknown value, and `+ 1` on it
    vanished: 1 kernel said as exact, where torch runs 2. Arithmetic on such a value is said."""
    _assert_lower_bound(_fn(CACHE_UNKNOWN_KEY, "f"), 10, "CACHE[key]")


def test_indexing_none_is_not_understood() -> None:
    """`rope_parameters["rope_type"]` on a value kpredict took for None (a config base's default it did
    not describe) went on silently with an unknown scalar, and LlamaRotaryEmbedding's figures were wrong
    with no note. The code would raise: the function is a lower bound, the line said."""
    from kpredict.api import analyze_source
    from kpredict.settings import Settings

    src = ("import torch\n"
           "def f(x: torch.Tensor):\n"
           "    params = None\n"
           "    base = params['rope_theta']\n"
           "    return x * (1.0 / base ** torch.arange(0, 8, 2).float())\n")
    fn = analyze_source(src, "none.py", Settings(target="cpu")).functions[0]
    assert fn.lower_bound and any("indexes None" in u.name and u.line == 4 for u in fn.unknown), fn.unknown


LOOPS = """import torch


# kpredict: example x=randn(8)
def forever(x):
    while True:
        x = x * 0.5
    return x


# kpredict: example x=randn(8)
def until_small(x):
    while True:
        x = x * 0.5
        if x.abs().max() < 1e-3:
            break
    return x


# kpredict: example x=randn(8)
def at_most_ten(x):
    for i in range(10):
        x = x * 0.5
        if x.abs().max() < 1e-3:
            break
    return x


# kpredict: example x=randn(8)
def counted(x, n: int = 3):
    while n:
        x = x * 0.5
        n -= 1
    return x
"""


def test_a_while_loop_only_an_exception_ends_is_a_lower_bound() -> None:
    """`while True:` with nothing that leaves it: the body once, a lower bound, not 4,096 passes
    counted as a fact (and not seconds of interpreting them)."""
    fn = _fn(LOOPS, "forever")
    assert fn.eager.kernels == 1
    _assert_lower_bound(fn, 6, "while-loop whose test never changes")


def test_a_break_on_data_ends_an_endless_loop_at_a_lower_bound_and_a_counted_one_at_its_end() -> None:
    """A data-dependent `break`: a loop only that break ends is counted to its first pass, a lower
    bound (it was taken silently as the whole count); a loop of 10 runs its 10 passes, an upper
    bound that is said."""
    small = _fn(LOOPS, "until_small")
    assert small.eager.kernels == 4  # mul, abs, max, lt: one pass
    _assert_lower_bound(small, 15, "loop left by a test on data")
    ten = _fn(LOOPS, "at_most_ten")
    assert ten.eager.kernels == 40 and not ten.lower_bound
    assert any("line 24: whether the loop is left here is not known" in a and "upper bound" in a
               for a in ten.assumptions)
    n = _fn(LOOPS, "counted")  # a test that changes: followed to its end, exactly
    assert n.eager.kernels == 3 and not n.lower_bound


@pytest.mark.parametrize("target", ["cuda", "cpu"])
@pytest.mark.parametrize("path", sorted(p.name for p in (REPO / "fixtures" / "ops").glob("*.py")))
def test_compiled_bytes_are_known_where_eager_bytes_are(path: str, target: str) -> None:
    """A rewrite of the graph Inductor schedules (a copy before an attention call, a scatter's stored
    base) adds values; its kernels' bytes are counted on that graph, never '?' for a sized function."""
    rep = analyze_source((REPO / "fixtures" / "ops" / path).read_bytes(), path, Settings(target=target))
    assert rep.error is None, rep.error
    sized = [f for f in rep.functions if f.eager.bytes is not None and not f.lower_bound]  # a number or formula
    assert sized or not rep.functions, "no function of the fixture is sized"
    unknown = [f.qualname for f in sized if f.compiled.bytes is None]
    assert not unknown, f"compiled bytes unknown on {target}: {unknown}"
