"""`kpredict graph FILE::QUALNAME`: one function's op graph, with the kernels of a mode as clusters
labelled with their bytes and modelled time (issue 29), as DOT, Mermaid or GraphML.

Layer: a command, beside the report command: it analyzes one function, runs the models again on its
op graph for the kernel lists (the report keeps only their costs), and draws with kpredict.render.graph.
"""

from __future__ import annotations

import dataclasses
import sys

import click
import networkx as nx

from kpredict.api import analyze_file
from kpredict.cli_options import given_inputs, input_options, parse_dims
from kpredict.cost import kernel_costs
from kpredict.devices import UnknownDevice, default_flop_kinds, device_for
from kpredict.ir import FunctionGraph, Kernel, KernelCost
from kpredict.lint.config import ConfigError, Overrides, resolve_for
from kpredict.lint.figures import plural
from kpredict.models.eager import eager_kernels
from kpredict.models.inductor import compiled_schedule
from kpredict.opfacts import default_table
from kpredict.render.graph import FORMATS, render
from kpredict.render.text_report import human_bytes, human_time


def op_graph(fg: FunctionGraph, kernels: list[Kernel], costs: list[KernelCost], title: str) -> nx.DiGraph:
    """Ops (and input tensors) as nodes, an edge where an op reads a value another op (or the input)
    made, each op tagged with the first kernel of `kernels` that runs it (-1: none, a view or free op)."""
    g = nx.DiGraph(name=fg.qualname, title=title)
    labels = []
    for k, c in zip(kernels, costs, strict=True):
        t = "?" if c.time_us is None else f"{human_time(c.time_us)} {c.bound}"
        times = f" x{k.launches}" if k.launches > 1 else ""
        labels.append(f"{k.name}{times}\n{human_bytes(c.bytes)}, {t}")
    g.graph["kernels"] = labels
    first: dict[int, int] = {}
    for i, k in enumerate(kernels):
        for oid in k.ops:
            first.setdefault(oid, i)
    for op in fg.ops:
        k = first.get(op.oid, -1)
        g.add_node(f"op{op.oid}", label=f"{op.name} (line {op.span.line})", kernel=k, op=op.name,
                   line=op.span.line, category=op.category, free=k < 0,
                   kernel_name=kernels[k].name if k >= 0 else "")
    for op in fg.ops:
        for vid in op.inputs + op.mutates:
            v = fg.values.get(vid)
            if v is None:
                continue
            if v.producer is not None and f"op{v.producer}" in g:
                g.add_edge(f"op{v.producer}", f"op{op.oid}")
            elif v.is_input or v.producer is None:
                name = f"in{vid}"
                if name not in g:
                    shape = "?" if v.meta.shape is None else "x".join("?" if d is None else str(d) for d in v.meta.shape)
                    g.add_node(name, label=f"{v.name or 'tensor'} [{shape}]", input=True, kernel=-1)
                g.add_edge(name, f"op{op.oid}")
    return g


@click.command("graph")
@click.argument("spec")
@click.option("--output-format", "--format", "fmt", type=click.Choice(FORMATS), default="dot", show_default=True)
@click.option("--mode", "which", type=click.Choice(["compiled", "eager"]), default="compiled", show_default=True,
              help="Whose kernels are the clusters.")
@click.option("--target", type=click.Choice(["cuda", "cpu"]), default=None, help="Backend [default cuda].")
@click.option("--gpu", default=None, metavar="NAME", help="Device preset of the time model (rules/devices.toml).")
@click.option("--dim", "dims", multiple=True, metavar="NAME=INT", help="Value for a symbolic size (repeatable).")
@input_options
def graph_command(spec: str, fmt: str, which: str, target: str | None, gpu: str | None, dims: tuple[str, ...],
                  init: str | None, example: str | None) -> None:
    """Draw one function's op graph with its kernels as clusters, labelled with bytes and modelled time."""
    path, _, qual = spec.partition("::")
    if not qual:
        raise click.BadParameter("name one function as FILE::QUALNAME", param_hint="SPEC")
    try:
        settings = resolve_for(path, Overrides(target=target, dims=parse_dims(dims))).settings
    except ConfigError as e:
        click.echo(f"kpredict: error: {e}", err=True)
        sys.exit(2)
    try:
        device = device_for(settings.target, gpu)
    except UnknownDevice as e:
        raise click.BadParameter(str(e), param_hint="--gpu") from None
    settings = dataclasses.replace(settings, gpu=device.name)
    examples, inits = given_inputs(init, example, [(path, qual)])
    rep = analyze_file(path, settings, only=qual, examples=examples, inits=inits)
    if rep.error or not rep.functions or rep.functions[0].graph is None:
        click.echo(f"{path}: error: {rep.error or 'nothing to draw'}", err=True)
        sys.exit(2)
    fn = rep.functions[0]
    fg = fn.graph
    assert fg is not None
    # compiled kernels refer to Inductor's graph (with the copies its rewrites add): drawn and costed on it
    kernels, fg = (compiled_schedule(fg, settings.target) if which == "compiled"
                   else (eager_kernels(fg, settings.target, default_table()), fg))
    costs = kernel_costs(kernels, fg, device, default_flop_kinds())
    mc = fn.compiled_cost if which == "compiled" else fn.eager_cost
    title = (f"{fn.qualname}: {which}, {plural(len(kernels), 'kernel')}, {human_time(mc.time_us)} "
             f"(roofline model on {device.name}, unchecked against a measurement)")
    click.echo(render(op_graph(fg, kernels, costs, title), fmt), nl=False)
