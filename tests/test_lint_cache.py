"""`kpredict check` and the per-file cache: the same -j/--no-cache/--cache-dir as `report`, findings
served from `.kpredict_cache/` on an unchanged tree, and never another configuration's findings."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kpredict import api
from kpredict.cli import main

CHAIN = """\
import torch


# kpredict: example a=randn(1000) b=randn(1000)
def chain(a, b):
    c = a + b
    d = c * 2
    return d.relu()


# kpredict: example x=randn(64, dtype=float16)
def cast(x):
    return x.float().half()
"""

LOOP = """\
import torch


# kpredict: example x=randn(8, 16)
def rows(x):
    out = []
    for i in range(3):
        out.append(x.sum().item())
    y = x.contiguous()
    return torch.tensor(out).cuda(), y.float().half()
"""


def write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for var in ("KPREDICT_OUTPUT_FORMAT", "KPREDICT_NO_CACHE", "KPREDICT_CACHE_DIR", "CI"):
        monkeypatch.delenv(var, raising=False)
    write(tmp_path, "model.py", CHAIN)
    write(tmp_path, "pkg/loops.py", LOOP)
    return tmp_path


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths analyze_source is called on in this process (with -j 1 every analysis runs here)."""
    seen: list[str] = []
    real = api.analyze_source

    def counting(source, path="<string>", *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        seen.append(Path(path).name)
        return real(source, path, *args, **kwargs)

    monkeypatch.setattr(api, "analyze_source", counting)
    return seen


def check(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["check", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def codes_of(stdout: str) -> list[tuple[str, str, int]]:
    return sorted((d["filename"], d["code"], d["location"]["row"]) for d in json.loads(stdout))


def entries(cache_dir: Path) -> list[Path]:
    return sorted((cache_dir / "v1").rglob("*.pickle")) if (cache_dir / "v1").is_dir() else []


def test_second_run_is_answered_from_the_cache(proj: Path, calls: list[str]) -> None:
    cold = check("-j", "1", "--output-format", "json", ".")
    assert cold[0] == 1 and sorted(calls) == ["loops.py", "model.py"]
    assert len(entries(proj / ".kpredict_cache")) == 2
    assert (proj / ".kpredict_cache" / "CACHEDIR.TAG").is_file()
    calls.clear()
    warm = check("-j", "1", "--output-format", "json", ".")
    assert calls == []  # nothing analyzed: both files came from .kpredict_cache/
    assert warm == cold
    assert {c for _, c, _ in codes_of(warm[1])} >= {"KP101", "KP401", "KP502"}


def test_an_edited_file_is_analyzed_again(proj: Path, calls: list[str]) -> None:
    check("-j", "1", "--output-format", "json", ".")
    calls.clear()
    write(proj, "model.py", CHAIN.replace("d = c * 2", "d = c * 3"))
    check("-j", "1", "--output-format", "json", ".")
    assert calls == ["model.py"]


def test_no_cache_neither_writes_nor_reads(proj: Path, calls: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    out = check("-j", "1", "--no-cache", "--output-format", "json", ".")
    assert out[0] == 1 and codes_of(out[1])
    assert not (proj / ".kpredict_cache").exists()
    check("-j", "1", "--output-format", "json", ".")  # fill the cache
    calls.clear()
    assert check("-j", "1", "--no-cache", "--output-format", "json", ".") == out
    assert sorted(calls) == ["loops.py", "model.py"]  # analyzed, although the cache holds both
    calls.clear()
    monkeypatch.setenv("KPREDICT_NO_CACHE", "1")  # the same environment variable as report
    assert check("-j", "1", "--output-format", "json", ".") == out
    assert sorted(calls) == ["loops.py", "model.py"]


def test_cache_dir_option_and_environment(proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    check("-j", "1", "--cache-dir", "elsewhere", "--output-format", "json", ".")
    assert len(entries(proj / "elsewhere")) == 2 and not (proj / ".kpredict_cache").exists()
    monkeypatch.setenv("KPREDICT_CACHE_DIR", str(proj / "env"))
    check("-j", "1", "--output-format", "json", ".")
    assert len(entries(proj / "env")) == 2 and not (proj / ".kpredict_cache").exists()


@pytest.mark.parametrize("fmt", ["json", "concise", "full", "sarif", "gitlab", "rdjsonl", "markdown"])
def test_findings_identical_cold_and_warm(proj: Path, fmt: str) -> None:
    """Every renderer, fingerprints included, gets the same findings from the cache as from analysis."""
    uncached = check("-j", "1", "--no-cache", "--output-format", fmt, ".")
    cold = check("-j", "1", "--output-format", fmt, ".")
    warm = check("-j", "1", "--output-format", fmt, ".")
    assert uncached == cold == warm
    assert uncached[0] == 1


def test_jobs_run_in_workers_with_the_same_results(proj: Path) -> None:
    for i in range(3):
        write(proj, f"more/m{i}.py", CHAIN)
    one = check("-j", "1", "--no-cache", "--output-format", "json", ".")
    cold = check("-j", "2", "--output-format", "json", ".")  # misses go to a pool of 2 workers
    assert len(entries(proj / ".kpredict_cache")) == 5
    warm = check("-j", "2", "--output-format", "json", ".")
    assert one == cold == warm


def test_statistics_and_baseline_from_the_cache(proj: Path) -> None:
    stats = check("-j", "1", "--no-cache", "--statistics", ".")
    assert check("-j", "1", "--statistics", ".") == stats
    assert check("-j", "1", "--statistics", ".") == stats
    assert check("-j", "1", "--write-baseline", ".")[0] == 0
    assert check("-j", "1", "--baseline", ".kpredict-baseline.json", "--output-format", "json", ".")[:2] == (0, "[]\n")


@pytest.mark.parametrize("args", [
    ("--select", "KP101"),
    ("--select", "KP4"),
    ("--ignore", "KP101"),
    ("--select", "KP5", "--extend-select", "KP6"),
    ("--rule-option", "KP101.min-chain-length=4"),
    ("--target", "cpu"),  # same findings on these files, but its own entries
])
def test_a_different_configuration_never_reuses_findings(proj: Path, args: tuple[str, ...]) -> None:
    default = check("-j", "1", "--output-format", "json", ".")  # the default configuration's entries
    expected = check("-j", "1", "--no-cache", "--output-format", "json", *args, ".")
    got = check("-j", "1", "--output-format", "json", *args, ".")
    assert got == expected
    if args[0] != "--target":
        assert codes_of(got[1]) != codes_of(default[1])
    assert len(entries(proj / ".kpredict_cache")) == 4  # two files, two configurations


def test_selected_rules_switch_back_and_forth(proj: Path, calls: list[str]) -> None:
    only_101 = check("-j", "1", "--output-format", "json", "--select", "KP101", ".")
    assert {c for _, c, _ in codes_of(only_101[1])} == {"KP101"}
    only_502 = check("-j", "1", "--output-format", "json", "--select", "KP502", ".")
    assert {c for _, c, _ in codes_of(only_502[1])} == {"KP502"}
    calls.clear()
    assert check("-j", "1", "--output-format", "json", "--select", "KP101", ".") == only_101
    assert check("-j", "1", "--output-format", "json", "--select", "KP502", ".") == only_502
    assert calls == []  # both configurations answered from their own entries


def test_config_file_changes_are_keyed(proj: Path) -> None:
    """Findings follow the configuration file's current content, not what an entry was made under.
    (--config names the file: discovery of the nearest pyproject.toml is memoized per process.)"""
    write(proj, "cfg/pyproject.toml", "[tool.kpredict]\n")
    before = check("-j", "1", "--config", "cfg/pyproject.toml", "--output-format", "json", ".")
    assert any(c == "KP101" for _, c, _ in codes_of(before[1]))
    assert any(f.startswith("pkg/") and c.startswith("KP4") for f, c, _ in codes_of(before[1]))
    write(proj, "cfg/pyproject.toml", """\
        [tool.kpredict]
        ignore = ["KP101"]
        per-file-ignores = { "../pkg/*" = ["KP4"] }

        [tool.kpredict.rules.KP502]
    """)
    after = check("-j", "1", "--config", "cfg/pyproject.toml", "--output-format", "json", ".")
    assert after == check("-j", "1", "--no-cache", "--config", "cfg/pyproject.toml", "--output-format", "json", ".")
    found = codes_of(after[1])
    assert not any(c == "KP101" for _, c, _ in found)
    assert any(c == "KP502" for _, c, _ in found)


def test_files_under_different_configurations_in_one_run(proj: Path) -> None:
    write(proj, "pkg/pyproject.toml", '[tool.kpredict]\nselect = ["KP4"]\n')
    expected = check("-j", "1", "--no-cache", "--output-format", "json", ".")
    assert check("-j", "2", "--output-format", "json", ".") == expected
    assert check("-j", "2", "--output-format", "json", ".") == expected
    found = codes_of(expected[1])
    assert {c for f, c, _ in found if f.startswith("pkg/")} <= {"KP401", "KP402"}
    assert any(f == "model.py" and c == "KP101" for f, c, _ in found)


def test_errors_are_reported_the_same_from_a_warm_cache(proj: Path) -> None:
    write(proj, "broken.py", "def f(:\n")
    first = check("-j", "1", "--output-format", "json", ".", "nothere.py")
    assert first[0] == 2 and "broken.py: error:" in first[2] and "nothere.py: error: no such file" in first[2]
    assert check("-j", "1", "--output-format", "json", ".", "nothere.py") == first
