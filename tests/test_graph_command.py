"""`kpredict graph`: the op graph with the kernels of a mode as clusters (issue 29)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import networkx as nx

REPO = Path(__file__).resolve().parent.parent


def graph(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kpredict", "graph", *args], cwd=REPO, capture_output=True, text=True)


def test_dot_clusters_are_the_compiled_kernels():
    out = graph("fixtures/ops/matmul.py::center_then_matmul").stdout
    clusters = re.findall(r'subgraph cluster_(\d+) \{\n    label="([^"]*)";[^\n]*\n((?:    "op\d+";\n)+)', out)
    # Inductor: mean and sub fused into one kernel, then the mm
    assert [(label.split("\\n")[0], body.count('"op')) for _, label, body in clusters] == [
        ("triton_per_fused_mean_sub_0", 2), ("aten::mm", 1)]
    assert all("µs" in label for _, label, _ in clusters)
    assert "unchecked against a measurement" in out


def test_eager_mode_has_a_cluster_per_kernel_and_edges_follow_the_data():
    out = graph("--mode", "eager", "--format", "graphml", "fixtures/seed/seed.py::add_relu").stdout
    g = nx.parse_graphml(out)
    ops = {d["op"]: n for n, d in g.nodes(data=True) if "op" in d}
    assert set(ops) == {"add", "relu"}
    assert g.nodes[ops["add"]]["kernel"] != g.nodes[ops["relu"]]["kernel"]  # two eager launches
    assert g.has_edge(ops["add"], ops["relu"])
    inputs = [n for n, d in g.nodes(data=True) if d.get("input")]
    assert len(inputs) == 2 and all(g.has_edge(i, ops["add"]) for i in inputs)


def test_mermaid_and_errors():
    out = graph("--format", "mermaid", "fixtures/seed/seed.py::add_relu").stdout
    assert out.startswith("flowchart TD") and out.count("subgraph ") == 1 and "12.0 MB" in out
    assert graph("fixtures/seed/seed.py").returncode == 2  # a whole file: name one function
    assert graph("--gpu", "nope", "fixtures/seed/seed.py::add_relu").returncode == 2
