"""Any input: every file gives a result or exactly one `path: error: ...` line, never a traceback.

Exit codes (kpredict report): 0 analyzed, 1 findings, 2 a file failed or a usage error.
Also: directory walks (.gitignore, venvs, symlink loops), the per-file cache, the parallel runner,
and property-based tests that generated programs never make analyze_source raise.
"""

from __future__ import annotations

import json
import os
import shutil
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings as hsettings, strategies as st

from kpredict import api, reads
from kpredict.api import NOT_TORCH, analyze_file, analyze_source
from kpredict.cache import CACHEDIR_TAG, Cache, load_entry
from kpredict.cli import main
from kpredict.ir import FileReport
from kpredict.parallel import analyze_paths, analyze_targets
from kpredict.serial import file_report_from_dict, file_report_to_dict
from kpredict.settings import Settings
from kpredict.walk import Target, discover, parse_gitignore, walk_dir

GOOD = "import torch\n\ndef f(a, b):\n    return (a + b).relu()\n"
REPO = Path(__file__).resolve().parent.parent


def cli(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real command in a child process: what a user sees, tracebacks included."""
    return subprocess.run([sys.executable, "-m", "kpredict", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})


def check_one_error(res: subprocess.CompletedProcess[str], path: str, expect: str | None = None) -> str:
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(f"{path}: error: "), lines[0]
    if expect:
        assert expect in lines[0], lines[0]
    assert res.returncode == 2
    return lines[0]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "good.py").write_text(GOOD)
    return tmp_path


# ---------------------------------------------------------------------------------------------
# named cases, end to end through the CLI (a failing file never stops the good one)

BAD_INPUTS = {
    "syntax_error": (b"def f(:\n    pass\n", "syntax error"),
    "bad_encoding_declaration": (b"# -*- coding: no-such-codec -*-\nx = 1\n", "encoding"),
    "non_utf8_bytes": (b"import torch\n\n\nx = '\xff\xfe\xfa'\n", "cannot decode as utf-8"),
    # in the first two lines, tokenize.detect_encoding itself rejects the bytes
    "non_utf8_bytes_line1": (b"x = '\xff\xfe\xfa'\n", "encoding"),
    "latin1_without_declaration": ("import torch\nname = 'caf\u00e9'\n".encode("latin-1"), "utf-8"),
    "binary_file": (bytes(range(256)) * 16, "binary file"),
    "nested_parens_1000": (("x = " + "(" * 1000 + "1" + ")" * 1000 + "\n").encode(), "too many nested parentheses"),
    "nested_calls_1000": (("def f(a):\n    return a\nx = " + "f(" * 1000 + "1" + ")" * 1000 + "\n").encode(),
                          "too many nested parentheses"),
    "indentation_too_deep": ("".join(" " * i + "if x:\n" for i in range(101)).encode() + b" " * 101 + b"y = 1\n",
                             "too many levels of indentation"),
    "sum_of_10000": (("y = " + "+".join(["a"] * 10_000) + "\n").encode(), "nested too deeply"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_file_is_one_line_and_others_go_on(tree: Path, case: str) -> None:
    data, expect = BAD_INPUTS[case]
    bad = tree / f"{case}.py"
    bad.write_bytes(data)
    res = cli(["--no-cache", "-j", "1", str(bad), str(tree / "good.py")])
    check_one_error(res, str(bad), expect)
    assert "f (line 3)" in res.stdout  # the good file is still reported


def test_bad_files_in_parallel_json(tree: Path) -> None:
    for case, (data, _) in BAD_INPUTS.items():
        (tree / f"{case}.py").write_bytes(data)
    res = cli(["--no-cache", "-j", "2", "--format", "json", str(tree)])
    assert res.returncode == 2 and "Traceback" not in res.stderr
    files = json.loads(res.stdout)["files"]
    by_name = {Path(f["path"]).name: f for f in files}
    assert set(by_name) == {f"{c}.py" for c in BAD_INPUTS} | {"good.py"}
    assert by_name["good.py"]["error"] is None and by_name["good.py"]["functions"]
    for case, (_, expect) in BAD_INPUTS.items():
        err = by_name[f"{case}.py"]["error"]
        assert err and expect in err and "internal error" not in err


def test_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "empty.py"
    p.write_bytes(b"")
    res = cli(["--no-cache", str(p)])
    assert res.returncode == 0 and res.stderr == ""
    assert analyze_file(p) == FileReport(path=str(p), skipped=NOT_TORCH)  # nothing in it imports torch
    assert analyze_file(p, Settings(all_files=True)) == FileReport(path=str(p))


def test_large_file_50k_lines(tmp_path: Path) -> None:
    chunks = ['"""A generated 50,000-line module."""\nimport torch\nimport torch.nn.functional as F\n\n']
    n_lines, i = 4, 0
    while n_lines < 50_000:
        body = "".join(f"    s{k} = {k} * scale  # plain Python: no tensor\n" for k in range(40))
        chunks.append(
            f"def f{i}(x, w, scale=2):\n"
            f'    """Function {i}."""\n'
            f"{body}"
            f"    y = x @ w + {i}\n"
            f"    y = F.gelu(y) * 0.5\n"
            f"    return y.sum(dim=-1)\n"
            f"\n"
        )
        n_lines += 46
        i += 1
    chunks.append("x = torch.randn(8, 8)\nf0(x, x)\n")
    p = tmp_path / "big.py"
    p.write_text("".join(chunks))
    assert p.read_text().count("\n") >= 50_000
    r = analyze_file(p, Settings(target="cpu"))
    assert r.error is None, r.error
    fns = [fn for fn in r.functions if fn.qualname.startswith("f")]
    assert len(fns) == i and all(fn.eager.kernels >= 4 for fn in fns)  # matmul, add, gelu, mul, sum


@pytest.mark.parametrize("expr,op,count", [
    ("+".join(["x"] * 1000), "add", 999),  # a left-leaning BinOp tree 999 deep
    ("-" * 1000 + "x", "neg", 500),  # 1,000 unary minus (pairs cancel in Python, not in eager torch)
    ("x" + ".relu()" * 1000, "relu", 1000),  # a method chain 1,000 deep
    ("(" * 150 + "x" + ")" * 150, None, 0),  # as deep as the Python parser allows brackets
], ids=["sum_1000", "unary_minus_1000", "method_chain_1000", "parens_150"])
def test_deeply_nested_but_valid(tmp_path: Path, expr: str, op: str | None, count: int) -> None:
    p = tmp_path / "deep.py"
    p.write_text(f"import torch\nx = torch.randn(4)\ny = {expr}\n")
    r = analyze_file(p, Settings(target="cpu"))
    assert r.error is None, r.error
    if op:
        n = sum(1 for fn in r.functions for row in fn.ops if row.op == op)
        assert n >= count  # each written op is recorded (the interpreter may keep every neg)
    res = cli(["--no-cache", str(p)])
    assert res.returncode == 0 and res.stderr == "", res.stderr


def test_nested_calls_150(tmp_path: Path) -> None:
    p = tmp_path / "calls.py"
    p.write_text("import torch\ndef f(a):\n    return a.relu()\nx = torch.randn(4)\ny = "
                 + "f(" * 150 + "x" + ")" * 150 + "\n")
    r = analyze_file(p)
    assert r.error is None
    assert sum(1 for row in r.functions[0].ops if row.op == "relu") == 150


def test_mutual_recursion_between_helpers(tmp_path: Path) -> None:
    p = tmp_path / "mutual.py"
    p.write_text(
        "import torch\n"
        "def ping(x, n):\n    return pong(x.relu(), n - 1) if n else x\n"
        "def pong(x, n):\n    return ping(x * 2, n)\n"
        "def loop(x):\n    return loop(x + 1)\n"
        "x = torch.randn(4)\nping(x, 10)\nloop(x)\n"
    )
    res = cli(["--no-cache", "--format", "json", str(p)])
    assert res.returncode == 0, res.stderr
    names = {fn["qualname"] for fn in json.loads(res.stdout)["files"][0]["functions"]}
    assert {"ping", "pong", "loop"} <= names


def test_self_referential_module(tmp_path: Path) -> None:
    p = tmp_path / "thismodule.py"
    p.write_text(
        "import thismodule\nfrom thismodule import helper\nimport torch\n"
        "def helper(x):\n    return thismodule.helper(x) + 1\n"
        "def g(x):\n    return helper(x).relu()\n"
        "g(torch.randn(3))\n"
    )
    res = cli(["--no-cache", str(p)], cwd=tmp_path)
    assert res.returncode == 0 and res.stderr == "", res.stderr


def test_unreadable_file(tree: Path) -> None:
    p = tree / "secret.py"
    p.write_text(GOOD)
    p.chmod(0)
    try:
        if os.access(p, os.R_OK):
            pytest.skip("running as a user who can read a chmod 000 file (root)")
        res = cli(["--no-cache", str(tree)])
        check_one_error(res, str(p), "cannot read")
        assert "f (line 3)" in res.stdout
    finally:
        p.chmod(0o644)


def test_read_error_is_one_line_in_process(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same path as the chmod case, without needing a non-root user."""
    p = tree / "secret.py"
    p.write_text(GOOD)
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "secret.py":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    res = CliRunner().invoke(main, ["--no-cache", "-j", "1", str(tree)])
    assert res.exit_code == 2
    assert res.stderr.splitlines() == [f"{p}: error: cannot read: Permission denied"]
    assert "f (line 3)" in res.stdout


def test_symlink_loop_in_walk(tmp_path: Path) -> None:
    d = tmp_path / "proj"
    (d / "sub").mkdir(parents=True)
    (d / "a.py").write_text(GOOD)
    (d / "sub" / "b.py").write_text(GOOD)
    os.symlink(d, d / "sub" / "loop")  # proj/sub/loop -> proj
    os.symlink(d / "sub", d / "sub" / "self")  # proj/sub/self -> proj/sub
    os.symlink(d / "missing", d / "dangling.py")  # a broken link is skipped in a walk
    files = [Path(t.path).relative_to(d).as_posix() for t in discover([str(d)])]
    assert files == ["a.py", "sub/b.py"]
    res = cli(["--no-cache", str(d)])
    assert res.returncode == 0 and res.stderr == "", res.stderr


def test_path_that_does_not_exist(tree: Path) -> None:
    missing = tree / "nope" / "missing.py"
    res = cli(["--no-cache", str(missing), str(tree / "good.py")])
    check_one_error(res, str(missing), "no such file")
    assert "f (line 3)" in res.stdout
    res = cli(["--no-cache", f"{missing}::f"])
    check_one_error(res, str(missing), "no such file")


def test_internal_error_names_the_file_and_others_go_on(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tree / "boom.py").write_text("import torch\nx = torch.randn(2)\n")
    real = api.analyze_source

    def analyze_source(source, path="<string>", *a, **k):
        if path.endswith("boom.py"):
            raise KeyError("simulated bug")
        return real(source, path, *a, **k)

    monkeypatch.setattr(api, "analyze_source", analyze_source)
    for jobs in ("1", "2"):  # workers are forked: they see the patch too
        if jobs == "2" and not sys.platform.startswith("linux"):
            continue
        res = CliRunner().invoke(main, ["--no-cache", "-j", jobs, str(tree)])
        assert res.exit_code == 2
        lines = res.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"{tree / 'boom.py'}: error: internal error (KeyError")
        assert "please report it" in lines[0]
        assert "f (line 3)" in res.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="relies on forked workers")
def test_dead_worker_process_is_one_file_error(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(6):
        (tree / f"m{i}.py").write_text(GOOD)
    (tree / "m3.py").write_text("import torch\n# kills its worker\n")
    real = api.analyze_source

    def analyze_source(source, path="<string>", *a, **k):
        if path.endswith("m3.py"):
            os._exit(3)  # like a segfault or the OOM killer: no exception, the process is gone
        return real(source, path, *a, **k)

    monkeypatch.setattr(api, "analyze_source", analyze_source)
    targets = discover([str(tree)])
    reports = list(analyze_targets(targets, Settings(), jobs=2))
    assert [r.path for r in reports] == [t.path for t in targets]
    errs = {Path(r.path).name: r.error for r in reports if r.error}
    assert list(errs) == ["m3.py"] and "worker process" in errs["m3.py"]


def test_a_worker_report_that_cannot_be_read_is_that_files_error(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers send reports in the cache's plain form and the parent turns them back into objects:
    a report it cannot read is an internal error of that file, and the other files go on."""
    import kpredict.serial as serial

    for i in range(4):
        (tree / f"m{i}.py").write_text(GOOD)
    real = serial.file_report_from_dict

    def from_dict(d):  # noqa: ANN001, ANN202
        if str(d.get("path", "")).endswith("m2.py"):
            raise ValueError("unreadable")
        return real(d)

    monkeypatch.setattr(serial, "file_report_from_dict", from_dict)
    targets = discover([str(tree)])
    reports = list(analyze_targets(targets, Settings(), jobs=2))
    assert [r.path for r in reports] == [t.path for t in targets]
    errs = {Path(r.path).name: r.error for r in reports if r.error}
    assert list(errs) == ["m2.py"] and errs["m2.py"].startswith("internal error (ValueError: unreadable)")
    assert all(r.functions for r in reports if not r.error)


# ---------------------------------------------------------------------------------------------
# directory walks


def make_project(root: Path) -> None:
    files = {
        "pkg/model.py": GOOD,
        "pkg/ignored_by_pattern.py": GOOD,
        "pkg/gen/out.py": GOOD,
        "pkg/gen/keep.py": GOOD,
        "pkg/notes.txt": "not python",
        "pkg/stub.pyi": "def f(a): ...\n",
        "scripts/run.py": GOOD,
        "scripts/tmp/x.py": GOOD,
        "logs/x.py": GOOD,
        "deep/a/b/c.py": GOOD,
        "deep/a/b/secret_c.py": GOOD,
        # virtual environments and caches
        "myenv/pyvenv.cfg": "home = /usr/bin\n",
        "myenv/lib/python3.11/site-packages/torchlike/core.py": GOOD,
        ".venv/bin/activate": "# activate\n",
        ".venv/lib/x.py": GOOD,
        "env/bin/activate": "# activate\n",
        "env/y.py": GOOD,
        "env2/conda-meta/history": "",
        "env2/z.py": GOOD,
        "node_modules/pkg/w.py": GOOD,
        "pkg/__pycache__/model.cpython-311.py": GOOD,
        ".tox/py311/t.py": GOOD,
        "build/lib/b.py": GOOD,
        "dist/d.py": GOOD,
        ".kpredict_cache/v1/c.py": GOOD,
        ".mypy_cache/m.py": GOOD,
        "site-packages/s.py": GOOD,
        # 'env' without an activate script is an ordinary package
        "tools/env/settings.py": GOOD,
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (root / ".gitignore").write_text(
        "# comment\n"
        "ignored_by_pattern.py\n"
        "/logs/\n"  # anchored, directory only
        "pkg/gen/*\n"
        "!pkg/gen/keep.py\n"  # negation
        "**/b/secret_*.py\n"
        "scripts/tmp\n"
    )


EXPECTED_WALK = ["deep/a/b/c.py", "pkg/gen/keep.py", "pkg/model.py", "scripts/run.py", "tools/env/settings.py"]


def test_walk_honours_gitignore_and_skips_venvs(tmp_path: Path) -> None:
    make_project(tmp_path)
    got = [Path(t.path).relative_to(tmp_path).as_posix() for t in discover([str(tmp_path)], use_git=False)]
    assert got == EXPECTED_WALK


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_walk_git_fast_path_agrees_with_matcher(tmp_path: Path) -> None:
    make_project(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    # 'pkg/gen/*' ignores the files in gen, not gen itself, so a deeper .gitignore can re-include one
    (tmp_path / "pkg" / "gen" / ".gitignore").write_text("!out.py\n")
    a = [t.path for t in discover([str(tmp_path)], use_git=True)]
    b = [t.path for t in discover([str(tmp_path)], use_git=False)]
    assert a == b
    # a sub-folder of a repository still obeys the .gitignore above it
    sub = [Path(t.path).relative_to(tmp_path).as_posix() for t in discover([str(tmp_path / "pkg")], use_git=False)]
    assert sub == ["pkg/gen/keep.py", "pkg/gen/out.py", "pkg/model.py"]


def test_explicit_file_is_analyzed_even_if_ignored(tmp_path: Path) -> None:
    make_project(tmp_path)
    ignored = tmp_path / "pkg" / "ignored_by_pattern.py"
    venv_file = tmp_path / ".venv" / "lib" / "x.py"
    targets = discover([str(ignored), str(venv_file), f"{tmp_path / 'pkg' / 'model.py'}::f"])
    assert [(t.path, t.only) for t in targets] == [
        (str(ignored), None), (str(venv_file), None), (str(tmp_path / "pkg" / "model.py"), "f")]
    # an explicitly named venv directory is walked (its inner skip rules still apply)
    assert [Path(t.path).name for t in discover([str(tmp_path / ".venv")])] == ["x.py"]


def test_walk_order_is_deterministic_and_deduplicated(tmp_path: Path) -> None:
    for name in ["b.py", "a.py", "c/z.py", "c/a.py", "B.py"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(GOOD)
    first = [t.path for t in discover([str(tmp_path), str(tmp_path / "a.py"), str(tmp_path)])]
    rel = [Path(p).relative_to(tmp_path).as_posix() for p in first]
    assert rel == ["B.py", "a.py", "b.py", "c/a.py", "c/z.py"]
    assert first == [t.path for t in discover([str(tmp_path)])]


def test_gitignore_patterns() -> None:
    rules = parse_gitignore("*.log\n!keep.log\n/top.py\ndocs/**/gen\nfoo?/\n\\#hash\na[0-9].py\ntrailing\\ \n")
    assert len(rules) == 8
    from kpredict.walk import IgnoreStack

    st_ = IgnoreStack((("/r/", tuple(rules)),))
    ig = lambda p, d=False: st_.ignored(Path("/r/" + p), d)  # noqa: E731
    assert ig("x.log") and ig("a/b/x.log") and not ig("keep.log")
    assert ig("top.py") and not ig("sub/top.py")
    assert ig("docs/gen", True) and ig("docs/a/b/gen", True) and not ig("gen", True)
    assert ig("foo1", True) and not ig("foo1") and not ig("foo12", True)
    assert ig("#hash") and ig("a7.py") and not ig("ab.py") and ig("trailing ")


def test_unreadable_folder_is_one_error(tree: Path) -> None:
    d = tree / "locked"
    d.mkdir()
    (d / "x.py").write_text(GOOD)
    d.chmod(0)
    try:
        if os.access(d, os.R_OK):
            pytest.skip("running as a user who can read a chmod 000 folder (root)")
        targets = discover([str(tree)])
        assert [t.error is not None for t in targets if t.path == str(d)] == [True]
    finally:
        d.chmod(0o755)


# ---------------------------------------------------------------------------------------------
# cache and parallel runner


def test_cache_round_trip_tag_and_keys(tree: Path) -> None:
    cache_dir = tree / "cachedir"
    s = Settings(target="cpu")
    cache = Cache(cache_dir, s)
    cold = list(analyze_paths([str(tree / "good.py")], s, jobs=1, cache=cache))
    assert cache.misses == 1 and cache.hits == 0
    assert (cache_dir / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache_dir / ".gitignore").read_text().splitlines()[-1] == "*"
    warm_cache = Cache(cache_dir, s)
    warm = list(analyze_paths([str(tree / "good.py")], s, jobs=1, cache=warm_cache))
    assert warm_cache.hits == 1 and warm == cold and warm[0].functions[0].graph is None
    # another target, another key
    other = Cache(cache_dir, Settings(target="cuda"))
    list(analyze_paths([str(tree / "good.py")], Settings(target="cuda"), jobs=1, cache=other))
    assert other.hits == 0
    # a changed file misses
    (tree / "good.py").write_text(GOOD + "\ndef g(x):\n    return x * 2\n")
    again = Cache(cache_dir, s)
    r = list(analyze_paths([str(tree / "good.py")], s, jobs=1, cache=again))
    assert again.hits == 0 and [f.qualname for f in r[0].functions] == ["f", "g"]


def test_corrupt_cache_entry_is_ignored_and_rewritten(tree: Path) -> None:
    cache_dir = tree / "c"
    s = Settings()
    list(analyze_paths([str(tree / "good.py")], s, jobs=1, cache=Cache(cache_dir, s)))
    (entry,) = (cache_dir / "v1").rglob("*.pickle")
    for garbage in (b"{not json", pickle.dumps({"format": 1}), b"", b"\x00\xff"):
        entry.write_bytes(garbage)
        c = Cache(cache_dir, s)
        (r,) = analyze_paths([str(tree / "good.py")], s, jobs=1, cache=c)
        assert r.error is None and c.hits == 0
        assert load_entry(entry.read_bytes())["report"]["functions"]  # rewritten


class _Touch:
    """Pickles as a call of Path.touch: what a crafted cache entry could ask of a plain unpickler."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple:
        return (Path.touch, (self.path,))


def test_a_cache_entry_that_names_code_is_a_miss_and_runs_nothing(tree: Path) -> None:
    cache_dir = tree / "c"
    s = Settings()
    list(analyze_paths([str(tree / "good.py")], s, jobs=1, cache=Cache(cache_dir, s)))
    (entry,) = (cache_dir / "v1").rglob("*.pickle")
    marker = tree / "ran"
    entry.write_bytes(pickle.dumps({"format": 1, "report": _Touch(marker)}))
    c = Cache(cache_dir, s)
    (r,) = analyze_paths([str(tree / "good.py")], s, jobs=1, cache=c)
    assert r.error is None and c.hits == 0 and not marker.exists()
    assert load_entry(entry.read_bytes())["report"]["functions"]  # rewritten


def test_no_cache_and_cache_dir_options(tree: Path) -> None:
    res = cli(["--no-cache", str(tree / "good.py")], cwd=tree)
    assert res.returncode == 0 and not (tree / ".kpredict_cache").exists()
    res = cli([str(tree / "good.py")], cwd=tree)
    assert res.returncode == 0 and (tree / ".kpredict_cache" / "CACHEDIR.TAG").is_file()
    res = cli(["--cache-dir", str(tree / "elsewhere"), str(tree / "good.py")], cwd=tree)
    assert res.returncode == 0 and list((tree / "elsewhere" / "v1").rglob("*.pickle"))


def test_parallel_matches_serial_and_keeps_order(tmp_path: Path) -> None:
    fixtures = sorted((REPO / "fixtures").rglob("*.py"))[:40]
    assert fixtures
    paths = [str(p) for p in fixtures] + [str(tmp_path / "missing.py")]
    serial = list(analyze_paths(paths, Settings(target="cpu"), jobs=1))
    par = list(analyze_paths(paths, Settings(target="cpu"), jobs=2))
    for r in serial:
        for fn in r.functions:
            assert fn.graph is None  # in-process reports drop their graphs unless asked
    assert par == serial
    cache = Cache(tmp_path / "c", Settings(target="cpu"))
    list(analyze_paths(paths, Settings(target="cpu"), jobs=2, cache=cache))
    warm = list(analyze_paths(paths, Settings(target="cpu"), jobs=2, cache=Cache(tmp_path / "c", Settings(target="cpu"))))
    assert warm == serial


def test_warm_parallel_run_starts_no_pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kpredict.parallel as par

    for i in range(4):
        (tmp_path / f"m{i}.py").write_text(GOOD + f"\ndef g{i}(x):\n    return x * {i}\n")
    s = Settings()
    cold = list(analyze_paths([str(tmp_path)], s, jobs=2, cache=Cache(tmp_path / "c", s)))
    (tmp_path / "m2.py").write_text(GOOD)  # one changed file: analyzed in this process, no pool either

    def no_pool(*a, **k):
        raise AssertionError("a pool was started")

    monkeypatch.setattr(par, "_pool", no_pool)
    warm = list(analyze_paths([str(tmp_path)], s, jobs=2, cache=Cache(tmp_path / "c", s)))
    assert [r.path for r in warm] == [r.path for r in cold]
    assert warm[0] == cold[0] and [f.qualname for f in warm[2].functions] == ["f"]


def test_warm_parallel_run_reads_hits_in_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cached reports are read when their turn comes, not all before the first is handed out (a warm
    -j2 run over transformers held 1.2 GB); a stale entry (a file it read changed) is analyzed."""
    for i in range(6):
        (tmp_path / f"m{i}.py").write_text(GOOD + f"\ndef g{i}(x):\n    return x * {i}\n")
    s = Settings()
    cold = list(analyze_paths([str(tmp_path)], s, jobs=2, cache=Cache(tmp_path / "c", s)))
    (tmp_path / "m1.py").write_text(GOOD)  # a miss in the middle, so workers run
    (tmp_path / "m4.py").write_text(GOOD + "\ndef h(x):\n    return x.relu()\n")
    reads: list[str] = []
    keyed: list[str] = []
    real_get, real_key = Cache.get_key, Cache.key

    def get_key(self, path, key):  # noqa: ANN001, ANN202
        reads.append(path)
        return real_get(self, path, key)

    def key(self, path, data, only=None):  # noqa: ANN001, ANN202
        keyed.append(path)
        return real_key(self, path, data, only)

    monkeypatch.setattr(Cache, "get_key", get_key)
    monkeypatch.setattr(Cache, "key", key)
    it = analyze_paths([str(tmp_path)], s, jobs=2, cache=Cache(tmp_path / "c", s))
    first = next(it)
    assert len(reads) == 1 and reads[0] == first.path  # only the first report was read so far
    rest = list(it)
    # each file was read and hashed once here (the two misses again in the workers, not here)
    assert sorted(keyed) == sorted(r.path for r in cold)
    warm = [first, *rest]
    assert [r.path for r in warm] == [r.path for r in cold]
    assert warm[0] == cold[0] and warm[5] == cold[5]
    assert [f.qualname for f in warm[1].functions] == ["f"]
    assert [f.qualname for f in warm[4].functions] == ["f", "h"]


def test_keep_graphs_in_process(tree: Path) -> None:
    (r,) = analyze_paths([str(tree / "good.py")], jobs=1, keep_graphs=True)
    assert r.functions[0].graph is not None


def test_serial_round_trip_on_fixtures() -> None:
    n = 0
    for p in sorted((REPO / "fixtures").rglob("*.py")):
        r = analyze_file(p)
        for fn in r.functions:
            fn.graph = None
        back = file_report_from_dict(json.loads(json.dumps(file_report_to_dict(r))))
        assert back == r, p
        n += len(r.functions)
    assert n > 40


def test_op_rows_are_stored_as_a_table_with_every_field() -> None:
    """A function's OpRows are written as a table of distinct rows plus an index and a group per row
    (hot: hundreds of thousands per repository, most of them a layer's rows repeated); a field added to
    OpRow that the table forgot would be lost silently, so every field gets a distinct value here."""
    import dataclasses

    from kpredict.ir import FileReport, Figures, CompiledFigures, FunctionReport, OpRow, Span

    assert [f.name for f in dataclasses.fields(OpRow)] == ["span", "op", "kind", "kernels", "reads", "writes", "group"]
    span = Span(3, 4, 5, 6)
    row = OpRow(span, "aten.add", "pointwise", 7, 8, 9, None)
    rows = [row, OpRow(Span(1, 0, 1, 2), "x", "view", 0, 0, 0, 2), OpRow(span, "aten.add", "pointwise", 7, 8, 9, 1)]
    fn = FunctionReport("f", 1, Figures(), CompiledFigures(), ops=rows)
    d = file_report_to_dict(FileReport("p.py", functions=[fn]))
    assert d["functions"][0]["ops"] == {"rows": [[3, 4, 5, 6, "aten.add", "pointwise", 7, 8, 9],
                                                 [1, 0, 1, 2, "x", "view", 0, 0, 0]],
                                        "at": [0, 1, 0], "group": [None, 2, 1]}
    assert file_report_from_dict(json.loads(json.dumps(d))) == FileReport("p.py", functions=[fn])


def test_small_input_starts_no_pool(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kpredict.parallel as par

    def no_pool(*a, **k):
        raise AssertionError("a pool was started")

    monkeypatch.setattr(par, "_pool", no_pool)
    (r,) = analyze_targets([Target(str(tree / "good.py"))], Settings(), jobs=8)
    assert r.error is None


# ---------------------------------------------------------------------------------------------
# property-based: generated programs never make analyze_source raise

# no shrinking: a failure prints the program as generated, and the suite's time stays bounded
BOUNDED = (Phase.explicit, Phase.reuse, Phase.generate)
NAMES = ["x", "y", "w", "h", "out", "self.w", "n"]
TENSOR_METHODS = ["relu", "sum", "mean", "t", "contiguous", "float", "softmax", "view", "reshape",
                  "unsqueeze", "transpose", "exp", "sigmoid", "tanh", "abs", "clone", "detach", "item",
                  "size", "to", "half", "masked_fill", "permute", "expand", "chunk", "split", "add_", "mul_"]
TORCH_FUNCS = ["torch.randn", "torch.zeros", "torch.ones", "torch.cat", "torch.stack", "torch.matmul",
               "torch.where", "torch.arange", "F.gelu", "F.softmax", "F.linear", "F.layer_norm", "F.dropout",
               "torch.einsum", "torch.empty_like", "torch.full", "nn.Linear", "torch.compile", "torch.no_grad"]
BINOPS = ["+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "<", ">=", "==", "and", "or"]


def _exprs() -> st.SearchStrategy[str]:
    leaf = st.one_of(
        st.sampled_from(NAMES),
        st.integers(-3, 1 << 40).map(lambda i: f"({i})"),
        st.sampled_from(["0.5", "None", "True", "'s'", "x.shape[0]", "x.shape", "[]", "()", "{}", "...",
                         "torch.float16", "x.T", "x[0]", "x[:, None]", "x[..., 1:]", "(-1)", "1e-6", "x.dtype"]),
    )

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        args = st.lists(inner, max_size=3).map(", ".join)
        return st.one_of(
            st.tuples(inner, st.sampled_from(BINOPS), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(st.sampled_from(["-", "not ", "~"]), inner).map(lambda t: f"({t[0]}{t[1]})"),
            st.tuples(inner, st.sampled_from(TENSOR_METHODS), args).map(lambda t: f"{t[0]}.{t[1]}({t[2]})"),
            st.tuples(st.sampled_from(TORCH_FUNCS), args).map(lambda t: f"{t[0]}({t[1]})"),
            st.tuples(st.sampled_from(["helper", "Block", "len", "range", "max", "getattr", "self.layer",
                                       "compiled", "print", "isinstance", "list", "zip", "self.w", "sum"]), args)
              .map(lambda t: f"{t[0]}({t[1]})"),
            st.tuples(inner, st.sampled_from(["dim=-1", "dtype=torch.float16", "keepdim=True", "device='cuda'"]))
              .map(lambda t: f"x.sum({t[0]}, {t[1]})"),
            st.tuples(inner, inner).map(lambda t: f"{t[0]}[{t[1]}]"),
            st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
            st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
            st.lists(inner, max_size=3).map(lambda xs: "(" + "".join(x + ", " for x in xs) + ")"),
            st.tuples(inner, inner).map(lambda t: f"[{t[0]} for _i in range(3) if {t[1]}]"),
            inner.map(lambda x: f"(lambda q: q * {x})(x)"),
            inner.map(lambda x: f"{{'k': {x}}}['k']"),
        )

    return st.recursive(leaf, extend, max_leaves=10)


EXPRS = _exprs()


def _block(head: str, body: list[str]) -> list[str]:
    return [head] + ["    " + s for s in body]


def _flat(ls: list[list[str]]) -> list[str]:
    return [s for block in ls for s in block]


def _stmts(depth: int, in_function: bool, in_loop: bool) -> st.SearchStrategy[list[str]]:
    e, name = EXPRS, st.sampled_from(NAMES)
    plain = [["pass"], ["del h"], ["assert x is not None"], ["raise ValueError('no')"],
             ["import torch.nn.functional as F"], ["from torch import nn"], ["import thismodule"],
             ["print(x)"], ["x = x.item()"], ["h = torch._dynamo.graph_break()"]]
    if in_function:
        plain += [["return x"], ["yield x"], ["return"]]
    if in_loop:
        plain += [["break"], ["continue"]]
    options = [
        st.tuples(name, e).map(lambda t: [f"{t[0]} = {t[1]}"]),
        st.tuples(name, st.sampled_from(["+=", "*=", "-=", "/=", "@=", "|="]), e).map(lambda t: [f"{t[0]} {t[1]} {t[2]}"]),
        st.tuples(name, name, e).map(lambda t: [f"{t[0]}, {t[1]} = {t[2]}"]),
        e.map(lambda x: [x]),
        st.sampled_from(plain),
    ]
    if in_function:
        options.append(e.map(lambda x: [f"return {x}"]))
    simple = st.one_of(*options)
    if depth >= 2:
        return st.lists(simple, min_size=1, max_size=4).map(_flat)
    body = _stmts(depth + 1, in_function, in_loop)
    loop_body = _stmts(depth + 1, in_function, True)
    fn_body = _stmts(depth + 1, True, False)
    compound = st.one_of(
        st.tuples(e, body, body).map(lambda t: _block(f"if {t[0]}:", t[1]) + _block("else:", t[2])),
        st.tuples(e, loop_body).map(lambda t: _block(f"for i in {t[0]}:", t[1])),
        st.tuples(st.integers(0, 12), loop_body).map(lambda t: _block(f"for i in range({t[0]}):", t[1])),
        st.tuples(e, loop_body).map(lambda t: _block(f"while {t[0]}:", t[1])),
        st.tuples(e, body).map(lambda t: _block(f"with {t[0]} as ctx:", t[1])),
        st.tuples(body, body).map(lambda t: _block("try:", t[0]) + _block("except Exception as err:", t[1])),
        st.tuples(st.sampled_from(["helper", "forward", "loop"]), fn_body)
          .map(lambda t: _block(f"def {t[0]}(x, y=None, *args, **kw):", t[1])),
    )
    return st.lists(st.one_of(simple, simple, compound), min_size=1, max_size=6).map(_flat)


MODULE_STMTS = _stmts(0, False, False)
FUNCTION_STMTS = _stmts(1, True, False)


@st.composite
def programs(draw: st.DrawFn) -> str:
    """A random, syntactically valid, PyTorch-flavoured module (grammar above; types are deliberately mixed up)."""
    lines = ["import torch", "import torch.nn as nn", "import torch.nn.functional as F", ""]
    lines += _block("def helper(x, y=None):", draw(FUNCTION_STMTS))
    lines += ["", "class Block(nn.Module):", "    def __init__(self, d=8):", "        super().__init__()",
              "        self.w = nn.Linear(d, d)", "        self.layer = nn.LayerNorm(d)"]
    lines += ["    " + s for s in _block("def forward(self, x):", draw(FUNCTION_STMTS))]
    lines += ["", "compiled = torch.compile(helper)", "x = torch.randn(4, 8)", "y = torch.randn(8, 8)", "n = 3"]
    lines += draw(MODULE_STMTS)
    return "\n".join(lines) + "\n"


def test_generated_torch_programs_never_raise() -> None:
    """_generated_programs_check in a fresh interpreter, under an 8 GB address-space limit and a time
    limit. In the suite's workers (pytest -n 2, after some 600 other tests) this check grew to 14 GB
    and the worker was killed, twice on this machine and once in CI, while the same 200 programs in a
    process of their own take 13 to 18 s and 300 MB (10 hash seeds tried): state left by earlier tests
    reaches the analysis, not yet found. Run apart, the check is what it says and a failure prints the
    program instead of killing a worker."""
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30)); "
            f"sys.path.insert(0, {str(Path(__file__).parent)!r}); "
            "import test_robustness as t; t._generated_programs_check()")
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        pytest.fail("the 200 generated programs took more than 900 s")
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]


# derandomize: the same 200 programs every run, so the suite's time and outcome do not rest on a draw
# (random draws took 36 to 411 s, and one drew a program that filled memory and killed its worker)
@hsettings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), database=None,
           phases=BOUNDED, derandomize=True)
@given(programs(), st.sampled_from(["cuda", "cpu"]), st.sampled_from(["eval", "train"]))
def _generated_programs_check(src: str, target: str, mode: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        compile(src, "<gen>", "exec")  # the generator makes valid Python only
        r = analyze_source(src, "gen.py", Settings(target=target, mode=mode))
    assert isinstance(r, FileReport)
    assert r.error is None, (r.error, src)


@hsettings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), database=None,
           phases=BOUNDED, derandomize=True)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    r = analyze_source(data, "bytes.py", Settings(all_files=True))  # interpreted even without torch
    assert isinstance(r, FileReport)


# Python values the analysis computes that once ran for hours or filled the machine's memory (the
# worker running the generated programs above was killed so): each is left unknown, the tensor work
# around it still counted
HUGE_VALUES = ["sum(range(1 << 40))", "max(range(1 << 40))", "set(range(1 << 34))", "frozenset(range(1 << 34))",
               "sorted(range(1 << 34), reverse=True)", "math.factorial(1 << 40)", "n ** 64 ** 64"]


@pytest.mark.parametrize("expr", HUGE_VALUES)
def test_huge_python_values_are_not_computed(expr: str) -> None:
    src = f"import math\nimport torch\n\n\ndef f(x: torch.Tensor, n: int = 3):\n    k = {expr}\n    return x + 1\n"
    (fn,) = analyze_source(src, "huge.py", Settings()).functions
    assert fn.eager.kernels == 1


def test_an_int_squared_in_an_endless_loop_stays_small() -> None:
    """`n *= n` 4,096 times doubles n's width each pass: an int of 2**4096 bits before any error."""
    src = ("import torch\n\n\ndef f(x: torch.Tensor, n: int = 3, k: int = 7):\n    while k:\n"
           "        n *= n\n        x = x + 1\n        if n < 0:\n            break\n    return x\n")
    (fn,) = analyze_source(src, "square.py", Settings(max_unroll=4096)).functions
    # n is left unknown once it passes 2**16 bits (pass 16), so `n < 0` may leave the loop there on:
    # a lower bound
    assert fn.eager.kernels == 16 and fn.lower_bound


def test_hypothesmith_programs_never_raise() -> None:
    hypothesmith = pytest.importorskip("hypothesmith")

    @hsettings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None,
               phases=BOUNDED, derandomize=True)
    @given(hypothesmith.from_node())
    def check(src: str) -> None:
        r = analyze_source(src, "gen.py", Settings(all_files=True))  # interpreted even without torch
        assert isinstance(r, FileReport)
        assert r.error is None or "internal error" not in r.error, (r.error, src)

    check()


def test_cache_keeps_lint_findings_and_keys_on_lint_config(tmp_path: Path) -> None:
    lint_config = pytest.importorskip("kpredict.lint.config")
    src = tmp_path / "sync.py"
    src.write_text("import torch\ndef f(x):\n    for i in range(3):\n        y = x.sum().item()\n"
                   "    return torch.cat([x, x]).relu()\n")
    s = Settings()
    engine = pytest.importorskip("kpredict.lint.engine")
    full = engine.Linter(lint_config.LintConfig.default())
    cold = list(analyze_paths([str(src)], s, jobs=1, cache=Cache(tmp_path / "c", s, full), lint=full))
    assert cold[0].findings
    warm_cache = Cache(tmp_path / "c", s, full)
    warm = list(analyze_paths([str(src)], s, jobs=1, cache=warm_cache, lint=full))
    assert warm_cache.hits == 1 and warm == cold
    assert [type(f) for f in warm[0].findings] == [type(f) for f in cold[0].findings]
    none = engine.Linter(lint_config.LintConfig(enabled=frozenset()))
    other = Cache(tmp_path / "c", s, none)
    (r,) = analyze_paths([str(src)], s, jobs=1, cache=other, lint=none)
    assert other.hits == 0 and r.findings == []
    par = list(analyze_paths([str(src), str(src) + "::f"], s, jobs=2, cache=Cache(tmp_path / "d", s, full), lint=full))
    assert par[0] == cold[0]


def test_cache_entry_depends_on_the_files_its_analysis_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When analyzing a file reads another (an imported module of the tree), a change there invalidates it."""
    (tmp_path / "model.py").write_text(GOOD)
    layers = tmp_path / "layers.py"
    layers.write_text("# v1\n")
    ghost = tmp_path / "ghost.py"  # probed while absent: appearing later must invalidate too
    real = api.analyze_source

    def analyze_source(source, path="<string>", *a, **k):
        if path.endswith("model.py"):  # what the frontend's readers do (kpredict/reads.py)
            reads.note(layers)
            reads.note(ghost)
        return real(source, path, *a, **k)

    monkeypatch.setattr(api, "analyze_source", analyze_source)
    s = Settings()

    def run() -> Cache:
        c = Cache(tmp_path / "c", s)
        (r,) = analyze_paths([str(tmp_path / "model.py")], s, jobs=1, cache=c)
        assert r.error is None
        return c

    assert run().hits == 0
    assert run().hits == 1
    layers.write_text("# v2, same folder, new content\n")
    assert run().hits == 0
    assert run().hits == 1
    ghost.write_text("")
    assert run().hits == 0
    assert run().hits == 1


def test_a_shared_helper_file_is_a_dependency_of_every_file_that_imports_it(tmp_path: Path) -> None:
    """The second importer gets the helper's parse from memory (no open): it must still record the
    helper as a dependency, or a change to the helper leaves its cached figures stale."""
    layers = tmp_path / "layers.py"
    layers.write_text("import torch\n\ndef act(x):\n    return torch.relu(x)\n")
    users = [tmp_path / "a.py", tmp_path / "b.py"]
    for u in users:
        u.write_text("import torch\nfrom layers import act\n\ndef f(a):\n    return act(a + 1)\n")
    s = Settings()

    def kernels() -> list[object]:
        c = Cache(tmp_path / "c", s)
        reports = analyze_paths([str(u) for u in users], s, jobs=1, cache=c)
        return [next(f for f in r.functions if f.qualname == "f").eager.kernels for r in reports]

    assert kernels() == [2, 2]
    layers.write_text("import torch\n\ndef act(x):\n    return torch.relu(x).exp()\n")
    assert kernels() == [3, 3]


def test_every_file_taking_examples_from_a_pyproject_depends_on_it(tmp_path: Path) -> None:
    """pyproject.toml is read once per process (project._entry_tables): the second file analyzed must
    still list it as a dependency, or an edited example leaves that file's cached figures stale."""
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("import torch\n\ndef f(x):\n    return (x + 1).relu()\n")
    pp = tmp_path / "pyproject.toml"

    def write(n: int) -> None:
        pp.write_text("[tool.kpredict.examples]\n" + "".join(f'"{m}::f" = "x=randn({n})"\n' for m in ("a.py", "b.py")))

    def bytes_read() -> list[object]:
        c = Cache(tmp_path / "c", Settings())
        reports = list(analyze_paths([str(tmp_path / "a.py"), str(tmp_path / "b.py")], Settings(), jobs=1, cache=c))
        return [r.functions[0].eager.bytes for r in reports]

    write(8)
    first = bytes_read()
    assert first == bytes_read() and all(isinstance(b, int) for b in first)
    write(16)
    assert bytes_read() == [2 * b for b in first]


# programs that once made analyze_source raise (found by the generators above); each must analyze
REGRESSIONS = {
    "permute_dims_unknown": "import torch\nx = torch.randn(4, 8)\nn = x.permute(x, x)\nm = x.view(x, 2)\n",
    # constant folding must not build huge Python values (the stdlib's test_builtin took 24 GB)
    "huge_python_values": "n = 0\nfor i in range(2**62):\n    n += 1\nx = list(range(10**12))\n"
                          "y = 100000 * 'ab'\nz = 1 << 10**9\nw = 10 ** 10 ** 9\nv = [0] * 10**12\n"
                          "_1G = 1024 ** 3\nb = b'nyan' * (_1G + 1)\nc = 'abcdefgh' * 5000 * 5000\n",
    "dims_out_of_range": "import torch\nx = torch.randn(4, 8)\na = x.permute(5, 0)\nb = torch.cat([x, x], 5)\n"
                         "c = torch.cat(x, x, (2))\n",
    # the stdlib's test_enumerate.py: builtins called with no argument or a bad one (they raise TypeError)
    "builtins_without_arguments": "e = enumerate()\nr = reversed()\nf = enumerate([1, 2], start='a')\n"
                                  "z = zip()\nl = list()\n",
    # loops and comprehensions that do no tensor work are left after IDLE_ITERATIONS (stdlib tests)
    "idle_loops": "import torch\ndef f(x):\n    n = 0\n    for i in range(60000):\n        n += i\n"
                  "    while n > 0:\n        n -= 1\n    data = [i * 2 for i in range(10000)]\n"
                  "    return x + len(data)\n",
    # a module-level tuple that names itself (`out = (x.T, out, None)`) recursed without end in lookup
    "constant_names_itself": "import torch\nx = torch.randn(4, 8)\nout = (x.T, out, None, )\n"
                             "def f(y):\n    a, b, c = out\n    return y + a\n",
}


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regressions_found_by_generators(name: str) -> None:
    for target in ("cuda", "cpu"):
        r = analyze_source(REGRESSIONS[name], f"{name}.py", Settings(target=target, all_files=True))
        assert r.error is None, r.error


# Python values that double on every iteration of a loop (a generated program took a pytest worker to
# 24 GB before sequence concatenation, repetition and list.extend were bounded by MAX_ITEMS).
GROWING = {
    "list_doubles": "import torch\ndef f(x):\n    s = [1, 2]\n    for i in range(60):\n        s += s\n    return x\n",
    "tensor_list_doubles": "import torch\ndef f(x):\n    s = [x, x]\n    for i in range(60):\n        s = s + s\n"
                           "    return x\n",
    "tensor_list_repeated": "import torch\ndef f(x):\n    s = [x, x]\n    for i in range(5):\n        s = s * 4000\n"
                            "    return x\n",
    "str_doubles": "import torch\ndef f(x):\n    s = 'ab'\n    for i in range(60):\n        s += s\n    return x\n",
    "extend_itself": "import torch\ndef f(x):\n    s = [x]\n    for i in range(60):\n        s.extend(s)\n    return x\n",
    "module_while": "import torch\nx = torch.randn(4)\nh = [x]\nwhile x:\n    h += h\n",
}


def test_python_values_that_double_in_a_loop_stay_small() -> None:
    """Each case runs in a child process capped at 2 GiB of address space: a value that doubles
    fails there with MemoryError (exit status 1) instead of taking the machine down."""
    code = (
        "import json, resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "from kpredict.api import analyze_source\n"
        "from kpredict.settings import Settings\n"
        "for name, src in json.loads(sys.stdin.read()).items():\n"
        "    r = analyze_source(src, name + '.py', Settings())\n"
        "    assert r.error is None, (name, r.error)\n"
        "    assert r.functions, name\n"
    )
    res = subprocess.run([sys.executable, "-c", code], input=json.dumps(GROWING), capture_output=True, text=True,
                         timeout=300, cwd=str(Path(__file__).resolve().parent.parent))
    assert res.returncode == 0, res.stderr[-2000:]


def test_a_huge_ones_or_zeros_is_no_known_value() -> None:
    """`torch.ones(n)` with n past concrete.MAX_ELEMENTS is not given element values (hypothesis found
    `torch.ones(15387 * x)`-like code building a list of 2**40 ones: MemoryError)."""
    from kpredict.frontend import concrete
    assert concrete.create("ones", [1 << 40], {}) is None
    assert concrete.create("zeros", [-3], {}) is None
    assert concrete.create("zeros", [3], {}).values == (0.0, 0.0, 0.0)


def test_a_negative_size_made_at_marker_values_slices_to_unknown() -> None:
    """edgetam_video crashed (ValueError from range) when a rerun at marker sizes made a negative dim and
    the code sliced it: no real tensor has one, so the slice's length is unknown."""
    from kpredict.frontend.shapes import slice_dim

    assert slice_dim(-3, None, 2, None) is None
    assert slice_dim(5, 1, None, 2) == 2


def test_unbind_of_a_long_dim_is_not_a_million_views():
    """torchvision's detection/_utils.py: `boxes.unbind(dim=-1)` where the last dim ends up a large
    size made one view per element (174 s and 8.8 GB for the file); past MAX_PIECES the pieces are
    unnamed and what reads them has unknown bytes, said as such."""
    from kpredict.frontend.opsem import MAX_PIECES

    src = (f"import torch\n\n\n# kpredict: example x=randn(2, {MAX_PIECES * 100})\n"
           "def many(x):\n    a, b, *rest = x.unbind(1)\n    return a + b\n\n\n"
           "# kpredict: example x=randn(2, 4)\ndef four(x):\n    x1, y1, x2, y2 = x.unbind(-1)\n"
           "    return (x2 - x1) * (y2 - y1)\n")
    rep = analyze_source(src.encode(), "u.py", Settings(target="cuda"))
    many, four = rep.functions
    assert many.eager.kernels == 1 and many.eager.bytes is None
    assert any("unknown shape" in a for a in many.assumptions), many.assumptions
    assert four.eager.kernels == 3 and four.eager.bytes == 72
