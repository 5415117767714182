"""The static path never imports, executes or evaluates the analyzed code, and never imports torch.

Each analyzed file below would leave a trace if any of it ran: a marker file, a connection to a
socket the test listens on, or the import of a booby-trapped `torch.py` placed next to it (and
first on sys.path, since the analysis runs with that folder as its working directory).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kpredict.parallel import analyze_paths
from kpredict.settings import Settings

REPO = Path(__file__).resolve().parent.parent


def traps(d: Path, port: int) -> dict[str, str]:
    m = lambda name: repr(str(d / f"MARKER_{name}"))  # noqa: E731
    return {
        "writes_marker.py": f"""
            import torch
            open({m("open")}, "w").write("ran")
            import pathlib
            pathlib.Path({m("pathlib")}).touch()
            x = torch.randn(4)
            y = (x + 1).relu()
        """,
        "opens_socket.py": f"""
            import socket
            import torch
            s = socket.create_connection(("127.0.0.1", {port}))
            s.sendall(b"ran")
            def f(a):
                return a * 2
        """,
        "imports_missing.py": """
            import a_module_that_does_not_exist
            from another_missing_module import thing
            import torch
            def g(x):
                return a_module_that_does_not_exist.op(x).relu()
        """,
        "calls_system.py": f"""
            import os, subprocess, importlib
            import torch
            os.system("touch " + {m("system")})
            subprocess.run(["touch", {m("subprocess")}])
            exec("open(" + repr({m("exec")}) + ", 'w')")
            eval("open(" + repr({m("eval")}) + ", 'w')")
            __import__("os").system("touch " + {m("dunder_import")})
            importlib.import_module("os").system("touch " + {m("import_module")})
            compiled = torch.compile(lambda t: open({m("lambda")}, "w"))
        """,
        "hides_code.py": f"""
            import torch

            def deco(fn):
                open({m("decorator")}, "w")
                return fn

            class Meta(type):
                def __new__(mcs, *a):
                    open({m("metaclass")}, "w")
                    return super().__new__(mcs, *a)

            class Model(torch.nn.Module, metaclass=Meta):
                open({m("class_body")}, "w")

                def forward(self, x, y=open({m("default_arg")}, "w")):
                    return x.relu()

            # kpredict: example x=__import__("os").system("touch " + {m("example_comment")})
            @deco
            def h(x):
                return x.sigmoid()

            if __name__ == "__main__":
                open({m("main_block")}, "w")
        """,
        # what a careless analysis would import by name: a fake torch next to the analyzed files
        "torch.py": f"""
            open({m("fake_torch_imported")}, "w").write("imported")
        """,
    }


@pytest.fixture
def listener():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.setblocking(False)
    yield srv
    srv.close()


def write_traps(d: Path, port: int) -> list[Path]:
    out = []
    for name, src in traps(d, port).items():
        p = d / name
        p.write_text(textwrap.dedent(src).lstrip())
        out.append(p)
    return out


def assert_nothing_ran(d: Path, srv: socket.socket) -> None:
    assert sorted(p.name for p in d.glob("MARKER_*")) == []
    try:
        conn, _ = srv.accept()
    except BlockingIOError:
        return
    conn.close()
    raise AssertionError("the analyzed code connected to the test's socket")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_cli_runs_nothing(tmp_path: Path, listener: socket.socket, jobs: str) -> None:
    write_traps(tmp_path, listener.getsockname()[1])
    res = subprocess.run([sys.executable, "-m", "kpredict", "--format", "json", "-j", jobs, "."],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert "Traceback" not in res.stderr
    assert res.returncode in (0, 1), res.stderr
    files = {Path(f["path"]).name: f for f in json.loads(res.stdout)["files"]}
    assert all(f["error"] is None for f in files.values()), files
    assert files["writes_marker.py"]["functions"]  # it was really analyzed
    assert {fn["qualname"] for fn in files["hides_code.py"]["functions"]} >= {"Model.forward", "h"}
    assert_nothing_ran(tmp_path, listener)


def test_api_runs_nothing(tmp_path: Path, listener: socket.socket, monkeypatch: pytest.MonkeyPatch) -> None:
    write_traps(tmp_path, listener.getsockname()[1])
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    reports = list(analyze_paths([str(tmp_path)], Settings(target="cpu"), jobs=1))
    assert len(reports) == 6 and all(r.error is None for r in reports)
    assert_nothing_ran(tmp_path, listener)


DRIVER = r"""
import sys
sys.argv = ["kpredict", *sys.argv[1:]]
from kpredict.cli import main
try:
    main()
except SystemExit as e:
    code = e.code
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "numpy", "libcst", "triton", "sympy"))
print("IMPORTED:" + ",".join(heavy), file=sys.stderr)
print("EXIT:" + str(code), file=sys.stderr)
"""


@pytest.mark.parametrize("args", [
    ["report", "--no-cache", "-j", "1", "--format", "json"],
    ["--target", "cpu", "-j", "2"],  # workers, and the cache (written, then read)
    ["--target", "cpu", "-j", "2"],
])
def test_static_path_never_imports_torch(tmp_path: Path, args: list[str]) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "model.py").write_text(
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        "class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(8, 8)\n    def forward(self, x):\n        return F.gelu(self.fc(x)).sum()\n"
        "# kpredict: example a=randn(8) b=randn(8)\ndef add_relu(a, b):\n    return (a + b).relu()\n"
    )
    (src / "other.py").write_text("def f(a):\n    return a * 2\n")
    res = subprocess.run([sys.executable, "-c", DRIVER, *args, str(src), str(REPO / "fixtures" / "seed")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    lines = res.stderr.splitlines()
    assert lines[-1] in ("EXIT:0", "EXIT:1"), res.stderr[-3000:]
    assert lines[-2] == "IMPORTED:", lines[-2]


def test_importtime_shows_no_torch(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("import torch\ndef f(a, b):\n    return a @ b\n")
    res = subprocess.run([sys.executable, "-X", "importtime", "-m", "kpredict", "--no-cache", str(tmp_path / "m.py")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert res.returncode == 0, res.stderr[-2000:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in res.stderr.splitlines() if line.startswith("import time:")]
    assert "kpredict.api" in imported
    assert not [m for m in imported if m.split(".")[0] == "torch"]
