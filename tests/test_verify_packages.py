"""`kpredict verify` on real projects (issue 28): a model file inside a package, imported by its dotted
name so that its relative imports work, with a config object given by --init; and a script written
for "cuda" run on the cpu under the child's device override, which the header notes. Each test runs
one child (5 s eager only, about 30 s with torch.compile)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kpredict.verify.command import verify_command

pytestmark = pytest.mark.oracle

REPO = Path(__file__).resolve().parent.parent
TINY = REPO / "fixtures" / "packages" / "tinypkg" / "models" / "tiny" / "modeling_tiny.py"


@pytest.fixture(autouse=True)
def _torch() -> None:
    pytest.importorskip("torch")


def _verify(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(verify_command, ["--device", "cpu", "--output-format", "json", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, json.loads(result.stdout)


def _write(folder: Path, rel: str, src: str) -> Path:
    p = folder / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(src))
    return p


# ------------------------------------------------------------------------------------- package code


def test_a_package_model_file_with_relative_imports_and_a_config_matches() -> None:
    """modeling_tiny.py imports its config from `.configuration_tiny`, an activation one package up
    (`..activations`) and a helper two packages up (`...utils`); eager and compiled figures match."""
    code, doc = _verify(f"{TINY}::TinyModel.forward", "--init", "config=TinyConfig(hidden=16, layers=2)",
                        "--example", "input_ids=randint(0, 100, (2, 8))")
    assert doc["error"] is None, doc["error"]
    (fn,) = doc["functions"]
    assert fn["measured"]["eager"]["kernels"] == 27 and fn["measured"]["compiled"] is not None
    assert code == 0, fn["rows"]


def test_a_method_of_a_class_built_from_a_package_config_eager_only() -> None:
    code, doc = _verify("--eager-only", f"{TINY}::TinyBlock.forward",
                        "--init", "config=TinyConfig(hidden=8, act='gelu')", "--example", "x=randn(2, 8)")
    assert doc["error"] is None, doc["error"]
    assert code == 0, doc["functions"]


def test_a_namespace_package_below_pyproject(tmp_path: Path) -> None:
    """No __init__.py anywhere: the nearest pyproject.toml's folder (its src/) is the package root."""
    _write(tmp_path, "pyproject.toml", "[project]\nname = 'x'\n")
    _write(tmp_path, "src/nspkg/helpers.py", "def double(x):\n    return x * 2\n")
    m = _write(tmp_path, "src/nspkg/sub/m.py", """\
        import torch
        from ..helpers import double


        def f(a):
            return double(a) + 1
        """)
    code, doc = _verify("--eager-only", f"{m}::f", "--example", "a=randn(4)")
    assert doc["error"] is None, doc["error"]
    assert code == 0


def test_a_package_that_cannot_be_imported_is_one_line(tmp_path: Path) -> None:
    _write(tmp_path, "brokenpkg/__init__.py", "import not_a_module_anywhere_kp\n")
    m = _write(tmp_path, "brokenpkg/m.py", "import torch\nfrom . import other\n\n\ndef f(a):\n    return a + 1\n")
    code, doc = _verify("--eager-only", f"{m}::f", "--example", "a=randn(4)")
    assert code == 2
    err = doc["error"]
    assert err["kind"] == "load" and not err["traceback"]
    assert "cannot import its package brokenpkg" in err["message"] and "\n" not in err["message"]
    assert "not_a_module_anywhere_kp" in err["message"]


def test_a_relative_import_of_a_missing_module_is_one_line(tmp_path: Path) -> None:
    _write(tmp_path, "okpkg/__init__.py", "")
    m = _write(tmp_path, "okpkg/m.py", "import torch\nfrom .missing import y\n\n\ndef f(a):\n    return a + 1\n")
    code, doc = _verify("--eager-only", f"{m}::f", "--example", "a=randn(4)")
    assert code == 2 and doc["error"]["kind"] == "load" and not doc["error"]["traceback"]
    assert "okpkg.missing" in doc["error"]["message"] and "\n" not in doc["error"]["message"]


def test_a_relative_import_outside_any_package_is_one_line(tmp_path: Path) -> None:
    m = _write(tmp_path, "lone.py", "import torch\nfrom .x import y\n\n\ndef f(a):\n    return a + 1\n")
    code, doc = _verify("--eager-only", f"{m}::f", "--example", "a=randn(4)")
    assert code == 2 and doc["error"]["kind"] == "load" and not doc["error"]["traceback"]
    assert "relative import" in doc["error"]["message"] and "not inside a package" in doc["error"]["message"]


# -------------------------------------------------------------------------------- device override


def test_the_readme_seed_script_runs_on_cpu() -> None:
    """fixtures/seed/seed.py makes its tensors on "cuda", synchronizes and profiles CUDA activity."""
    result = CliRunner().invoke(verify_command, ["--device", "cpu", str(REPO / "fixtures" / "seed" / "seed.py")])
    assert result.exit_code == 0, result.output
    header = result.output.splitlines()[:2]
    assert "device override" in header[1] and "ran on cpu" in header[1], header
    assert "add_relu (line 10): match" in result.output


def test_every_way_a_script_says_cuda_runs_on_cpu(tmp_path: Path) -> None:
    s = _write(tmp_path, "cuda_forms.py", """\
        import torch

        assert not torch.cuda.is_available()  # consistent with --device cpu
        dev = torch.device("cuda")


        def step(x, w, y):
            return (x @ w).relu() + y


        x = torch.randn(4, 8).to("cuda")
        w = torch.randn(8, 8).cuda()
        y = torch.ones(4, 8, device=dev)
        z = torch.zeros(4, 8, device="cuda:0").to(device="cuda", non_blocking=True)
        out = step(x, w, y)
        torch.cuda.synchronize()
        assert out.device.type == "cpu" and z.device.type == "cpu"
        """)
    code, doc = _verify("--eager-only", str(s))
    assert doc["error"] is None, doc["error"]
    (note,) = [n for n in doc["notes"] if n.startswith("device override")]
    for what in (".cuda()", ".to()", "ones(device=)", "zeros(device=)"):
        assert what in note, note
    assert code == 0, doc["functions"]


def test_modules_moved_to_cuda_stay_on_cpu(tmp_path: Path) -> None:
    s = _write(tmp_path, "module_cuda.py", """\
        import torch
        from torch import nn

        m = nn.Linear(8, 8).cuda()
        n = nn.Linear(8, 8).to("cuda")
        assert m.weight.device.type == "cpu" and n.bias.device.type == "cpu"


        def f(x):
            return m(x).relu()


        with torch.no_grad():
            f(torch.randn(2, 8, device="cuda"))
        """)
    _code, doc = _verify("--eager-only", str(s))
    assert doc["error"] is None, doc["error"]
    assert any(n.startswith("device override") for n in doc["notes"])
    assert {f["qualname"]: f["match"] for f in doc["functions"]}["f"] is True


def test_a_script_that_never_says_cuda_has_no_override(tmp_path: Path) -> None:
    s = _write(tmp_path, "plain.py", "import torch\n\n\ndef f(x):\n    return x + 1\n\n\nf(torch.ones(4))\n")
    code, doc = _verify("--eager-only", str(s))
    assert code == 0 and not any("override" in n for n in doc["notes"])


def test_compiled_functions_that_make_cuda_tensors_compile_once(tmp_path: Path) -> None:
    """The override is traced by Dynamo; it must not make each call recompile (what would then be
    measured is the tracing's aten ops)."""
    s = _write(tmp_path, "compiled_cuda.py", """\
        import torch


        def add_relu(a, b):
            return (a + b).relu()


        def with_zeros(a):
            return a + torch.zeros(a.shape, device="cuda")


        a = torch.randn(1000, device="cuda")
        b = torch.randn(1000, device="cuda")
        c = torch.compile(add_relu)
        c(a, b)
        c(a, b)
        z = torch.compile(with_zeros)
        z(a)
        z(a)
        """)
    code, doc = _verify(str(s))
    assert doc["error"] is None, doc["error"]
    fns = {f["qualname"]: f for f in doc["functions"]}
    assert fns["add_relu"]["measured"]["compiled"]["kernels"] == 1
    assert not any(n.startswith("aten::") for n in fns["with_zeros"]["measured"]["compiled"]["names"])
    assert code == 0, doc["functions"]
