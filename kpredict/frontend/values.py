"""Abstract values the interpreter computes for Python expressions.

A value is either a tensor in the op graph (`TensorRef`), a Python value known exactly (`Py`),
a Python value of unknown content (`Opaque`: ints from shapes, results of unknown calls that are
surely not tensors), or something else the interpreter can act on (references to torch APIs,
local functions, classes, module instances, sequences).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class TensorRef:
    vid: int


@dataclass(frozen=True, slots=True)
class Py:
    value: object


@dataclass(frozen=True, slots=True)
class Opaque:
    """A non-tensor value whose content is unknown (e.g. x.shape[0] when shapes are unknown)."""

    what: str = ""


@dataclass(frozen=True, slots=True)
class Unknown:
    """A value kpredict cannot see into; it may or may not be a tensor."""

    what: str = ""


@dataclass(frozen=True, slots=True)
class ModRef:
    """A dotted reference into an imported module: torch, torch.nn.functional.gelu, numpy..."""

    dotted: str


@dataclass(frozen=True, slots=True)
class FuncRef:
    qualname: str  # key into ModuleInfo.functions
    bound: object = None  # the `self` value for bound methods


@dataclass(frozen=True, slots=True)
class ClassRef:
    name: str


@dataclass(frozen=True, slots=True)
class CompiledRef:
    """The result of torch.compile(f): calling it runs f under Inductor."""

    target: object


@dataclass(frozen=True, slots=True)
class MethodRef:
    """`t.relu` before it is called."""

    vid: int
    name: str


@dataclass(frozen=True, slots=True)
class ShapeRef:
    """`t.shape` / `t.size()`: indexing it yields ints (known or opaque), never tensors."""

    vid: int


@dataclass(eq=False, slots=True)
class Seq:
    items: list
    kind: str = "tuple"  # tuple | list


@dataclass(eq=False, slots=True)
class Dict:
    items: dict


@dataclass(eq=False, slots=True)
class Instance:
    """An instance of a class defined in the analyzed file (often an nn.Module subclass)."""

    cls: str
    attrs: dict = field(default_factory=dict)


@dataclass(eq=False, slots=True)
class NNModule:
    """An instance of a torch.nn module class (nn.Linear(...)): its call is looked up in rules/modules.toml."""

    kind: str  # e.g. "Linear"
    args: list = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)  # name -> TensorRef of its parameters, made lazily
    training: bool | None = None


def is_tensor(v: object) -> bool:
    return isinstance(v, TensorRef)


def py_value(v: object, default: object = None) -> object:
    return v.value if isinstance(v, Py) else default


def known(v: object) -> bool:
    return isinstance(v, Py)
