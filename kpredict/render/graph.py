"""The op graph of one function as DOT, Mermaid or GraphML (issue 29, `kpredict graph`): one node per
op (and per input tensor), an edge where an op reads what another wrote, and each kernel of the mode a
cluster labelled with its name, bytes, modelled time and bound. The graph is a networkx DiGraph built
by the command; this module only draws it (core types and networkx)."""

from __future__ import annotations

import io
import re

import networkx as nx

FORMATS = ("dot", "mermaid", "graphml")


def _esc(text: str) -> str:
    """A DOT string's body: quotes and backslashes escaped, line breaks as DOT's \\n."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _clusters(g: nx.DiGraph) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for n, d in g.nodes(data=True):
        k = d.get("kernel")
        if k is not None and k >= 0:
            out.setdefault(k, []).append(n)
    return out


def render_dot(g: nx.DiGraph) -> str:
    lines = [f'digraph "{_esc(g.graph.get("name", "f"))}" {{', "  rankdir=TB;",
             '  node [shape=box, fontname="monospace", fontsize=10];']
    if g.graph.get("title"):
        lines.append(f'  label="{_esc(g.graph["title"])}"; labelloc=t;')
    kernels = g.graph.get("kernels", [])
    for k, members in sorted(_clusters(g).items()):
        lines.append(f"  subgraph cluster_{k} {{")
        lines.append(f'    label="{_esc(kernels[k])}"; style=rounded; color=gray40;')
        lines += [f'    "{_esc(n)}";' for n in members]
        lines.append("  }")
    for n, d in g.nodes(data=True):
        shape = ", shape=ellipse" if d.get("input") else (", style=dashed" if d.get("free") else "")
        lines.append(f'  "{_esc(n)}" [label="{_esc(d["label"])}"{shape}];')
    lines += [f'  "{_esc(a)}" -> "{_esc(b)}";' for a, b in g.edges]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _mid(n: str) -> str:
    return re.sub(r"\W", "_", n)


def _mtext(text: str) -> str:
    """A Mermaid label: no double quotes, line breaks as <br/>."""
    return text.replace('"', "'").replace("\n", "<br/>")


def render_mermaid(g: nx.DiGraph) -> str:
    lines = ["flowchart TD"]
    kernels = g.graph.get("kernels", [])
    for k, members in sorted(_clusters(g).items()):
        lines.append(f'  subgraph k{k}["{_mtext(kernels[k])}"]')
        lines += [f"    {_mid(n)}" for n in members]
        lines.append("  end")
    for n, d in g.nodes(data=True):
        label = _mtext(d["label"])
        lines.append(f'  {_mid(n)}(["{label}"])' if d.get("input") else f'  {_mid(n)}["{label}"]')
    lines += [f"  {_mid(a)} --> {_mid(b)}" for a, b in g.edges]
    return "\n".join(lines) + "\n"


def render_graphml(g: nx.DiGraph) -> str:
    plain = nx.DiGraph()
    plain.graph.update({k: v for k, v in g.graph.items() if isinstance(v, (str, int, float))})
    for n, d in g.nodes(data=True):
        plain.add_node(n, **{k: v for k, v in d.items() if isinstance(v, (str, int, float, bool))})
    plain.add_edges_from(g.edges)
    buf = io.StringIO()
    for line in nx.generate_graphml(plain):
        buf.write(line + "\n")
    return buf.getvalue()


def render(g: nx.DiGraph, fmt: str) -> str:
    return {"dot": render_dot, "mermaid": render_mermaid, "graphml": render_graphml}[fmt](g)
