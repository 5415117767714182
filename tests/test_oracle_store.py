"""The CPU oracle's store (kpredict.verify.recorded): every request the oracle tests make has an entry
whose key still holds, and an entry goes stale when anything it depends on moves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kpredict.verify import recorded
from kpredict.verify.runner import child_request
from oracle_cases import requests


def test_every_oracle_request_has_a_current_entry(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    store = recorded.Store.for_device("cpu")
    problems = []
    for req in requests(tmp_path):
        entry = store.get(req)
        why = "never recorded" if entry is None else recorded.why_stale(entry)
        if why:
            problems.append(f"{recorded.entry_id(req)}: {why}")
    assert not problems, ("the recorded CPU oracle is not current; run `python scripts/record_oracle.py`:\n"
                          + "\n".join(problems))


def test_every_module_the_child_imports_is_said_to_measure_or_not() -> None:
    """A module the child comes to import either decides what is measured (and keys the store) or not."""
    said = set(recorded.MEASURING) | set(recorded.NOT_MEASURING)
    assert set(recorded.child_modules()) - said == set()
    assert set(recorded.MEASURING) <= set(recorded.child_modules())


def _fake_measure(calls: list[dict]):
    def measure(request: dict, timeout: float) -> tuple[dict, str]:
        calls.append(request)
        return {"device": "cpu", "functions": [{"qualname": "f", "measured": {"eager": {"kernels": len(calls)}}}],
                "error": None}, ""
    return measure


def _program(tmp_path: Path, body: str = "return x + 1") -> Path:
    pkg = tmp_path / "proj"
    pkg.mkdir(exist_ok=True)
    (pkg / "helper.py").write_text("def g(x):\n    return x * 2\n")
    f = pkg / "prog.py"
    f.write_text(f"from helper import g\n\n# kpredict: example x=randn(4)\ndef f(x):\n    {body}\n")
    return f


@pytest.mark.parametrize("how,measured", [("recorded", 2), ("update", 1), ("live", 2), ("record", 2)])
def test_modes_read_and_write_as_documented(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str,
                                            measured: int) -> None:
    monkeypatch.setenv("KPREDICT_ORACLE", how)
    store = recorded.Store(tmp_path / "store")
    calls: list[dict] = []
    run = recorded.child(store, _fake_measure(calls))
    req = child_request(str(_program(tmp_path)), "*", "cpu")
    run(req, 1)
    second, _ = run(req, 1)
    assert len(calls) == measured
    written = how in ("update", "record")
    assert (store.get(req) is not None) == written
    if how == "update":
        assert second["path"] == req["path"]  # a stored answer names the file as asked


def test_an_entry_goes_stale_when_its_file_a_local_import_or_the_oracle_moves(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = recorded.Store(tmp_path / "store")
    prog = _program(tmp_path)
    req = child_request(str(prog), "*", "cpu")
    store.put(req, {"functions": [], "error": None})
    entry = store.get(req)
    assert sorted(entry["inputs"]) == ["helper.py", "prog.py"]
    assert recorded.why_stale(entry) is None and store.current(req) is not None

    (prog.parent / "helper.py").write_text("def g(x):\n    return x * 3\n")
    # a file outside the repository is named by the content of what it runs: an edit is another entry
    assert store.get(req) is None

    moved = dict(entry, oracle="0" * 16)
    assert "measuring code" in recorded.why_stale(moved)
    other_torch = dict(entry, torch="0.0.0")
    assert "torch" in recorded.why_stale(other_torch)


def test_a_changed_repository_fixture_is_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys of files inside the repository are their paths: editing the file or what it imports moves them."""
    repo = tmp_path / "repo"
    (repo / "fixtures" / "m").mkdir(parents=True)
    monkeypatch.setattr(recorded, "REPO", repo)
    prog = _program(repo / "fixtures" / "m")
    req = child_request(str(prog), "*", "cpu")
    store = recorded.Store(tmp_path / "store")
    store.put(req, {"functions": [], "error": None})
    assert store.current(req) is not None
    helper = prog.parent / "helper.py"
    helper.write_text(helper.read_text() + "\n# edited\n")
    assert "helper.py changed" in recorded.why_stale(store.get(req))
    helper.unlink()
    assert "no longer exists" in recorded.why_stale(store.get(req))


def test_entries_are_plain_readable_json(tmp_path: Path) -> None:
    store = recorded.Store(tmp_path / "store")
    req = child_request(str(_program(tmp_path)), "*", "cpu", mode="train")
    f = store.put(req, {"path": "/abs/elsewhere", "functions": [], "error": None})
    doc = json.loads(f.read_text())
    assert set(doc) == {"id", "request", "inputs", "oracle", "torch", "answer"}
    assert "mode=train" in doc["id"] and "path" not in doc["request"]


def test_cuda_and_script_requests_are_never_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KPREDICT_ORACLE", "record")
    store = recorded.Store(tmp_path / "store")
    calls: list[dict] = []
    run = recorded.child(store, _fake_measure(calls))
    prog = str(_program(tmp_path))
    run(child_request(prog, "*", "cuda"), 1)
    run(child_request(prog, None, "cpu"), 1)
    assert len(calls) == 2
    assert not list((tmp_path / "store").glob("*.json"))


def test_an_unknown_mode_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KPREDICT_ORACLE", "sometimes")
    with pytest.raises(ValueError, match="KPREDICT_ORACLE"):
        recorded.mode()
