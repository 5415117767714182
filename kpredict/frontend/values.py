"""Abstract values the interpreter computes for Python expressions.

A value is either a tensor in the op graph (`TensorRef`), a Python value known exactly (`Py`),
a Python value of unknown content (`Opaque`: ints from shapes, results of unknown calls that are
surely not tensors; `Sym`: a named int such as `n_layer` that `--dim` can fix), or something else
the interpreter can act on (references to torch APIs, functions, classes, module instances,
sequences).

Functions and classes carry the key of the module they are defined in (`mod`, a file path; None
means the file being analyzed), because model code calls into other files of its package and into
kpredict's own torch.nn catalogue (`CATALOGUE`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

CATALOGUE = "<torch.nn catalogue>"  # module key of the stub classes built from rules/modules.toml
CONTAINER = "<library container>"  # module key of a library's output container (transformers' ModelOutput)


@dataclass(frozen=True, slots=True)
class TensorRef:
    vid: int


@dataclass(frozen=True, slots=True)
class Py:
    value: object


class Tracked(Py):
    """A plain attribute value read while a call is being recorded (frontend/summaries.py). Passing
    it along, storing it or returning it does not make the call depend on the value; reading `.value`
    (a branch, arithmetic, a shape, a comparison) does, and calls `on_use` the first time: a decoder
    layer that only hands `self.layer_idx` to a cache that is None is then replayed for every layer."""

    __slots__ = ("_v", "_on_use")

    def __init__(self, value: object, on_use: Callable[[], None] | None) -> None:
        object.__setattr__(self, "_v", value)
        object.__setattr__(self, "_on_use", on_use)

    @property
    def value(self) -> object:  # type: ignore[override]
        self.used()
        return self._v

    def used(self) -> None:
        f = self._on_use
        if f is not None:
            object.__setattr__(self, "_on_use", None)
            f()

    def is_none(self) -> bool:
        """`x is None` (a constructor argument watched for templates counts only its None-ness)."""
        return self.value is None

    def compare(self, fn: Callable[[object, object], object], other: object, flipped: bool) -> object:
        """`x < other` (or `other < x` when flipped): a watched constructor argument counts only the outcome."""
        return fn(other, self.value) if flipped else fn(self.value, other)

    def pick(self, items: list) -> object:
        """`items[x]` (a watched constructor argument counts only the item it picks)."""
        return items[self.value]  # type: ignore[index]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Py) and self.value == other.value

    def __hash__(self) -> int:
        return hash((self.value,))

    def __reduce__(self) -> tuple:
        return (Py, (self.value,))

    def __repr__(self) -> str:  # shown as the plain value it stands for
        return f"Py(value={self.value!r})"


@dataclass(frozen=True, slots=True)
class Opaque:
    """A non-tensor value whose content is unknown (e.g. x.shape[0] when shapes are unknown)."""

    what: str = ""


@dataclass(frozen=True, slots=True)
class Sym:
    """A named int that is not known statically (a constructor argument without default, a config
    field without default): a loop over `range(Sym)` makes the figures symbolic in `name`."""

    name: str


@dataclass(frozen=True, slots=True)
class SymRange:
    """`range(n)` with `n` a `Sym`: a loop over it has an unknown trip count named `name`."""

    name: str


@dataclass(frozen=True, slots=True)
class SymObj:
    """An object of unknown class whose fields are read (a `config` parameter nobody describes):
    its attributes are `Sym`s named after the field."""

    name: str


@dataclass(frozen=True, slots=True)
class Unknown:
    """A value kpredict cannot see into; it may or may not be a tensor. `src` is the result tensor of
    the placeholder op of the call it came from: used as a tensor, it is that tensor, so what is
    computed from an attention function kpredict cannot resolve still depends on its inputs."""

    what: str = ""
    src: int | None = None


@dataclass(frozen=True, slots=True)
class ModRef:
    """A dotted reference into an imported module: torch, torch.nn.functional.gelu, numpy..."""

    dotted: str


@dataclass(frozen=True, slots=True)
class FuncRef:
    qualname: str  # key into the defining module's functions
    bound: object = None  # the `self` value for bound methods
    mod: str | None = None  # defining module (None: the analyzed file)


@dataclass(frozen=True, slots=True)
class ClassRef:
    name: str
    mod: str | None = None


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


@dataclass(frozen=True, slots=True)
class SplitRef:
    """`t.split(n)` / `t.chunk(n)` / `t.unbind()` whose number of pieces is not known statically:
    unpacking or indexing it gives views of `t` (of unknown shape)."""

    vid: int
    op: str = "split"


@dataclass(frozen=True, slots=True)
class BoundBuiltin:
    """A method of a value the interpreter models natively before it is called: `layers.append`,
    `self.blocks.items`, `model.eval`, `d.get`."""

    obj: object
    name: str


@dataclass(frozen=True, slots=True)
class DataclassInit:
    """`super().__init__` reaching a dataclass base that has no `__init__` written: calling it sets
    the fields as the generated `__init__` would (torchvision's MBConvConfig over _MBConvConfig)."""

    obj: object
    cls: ClassRef


@dataclass(frozen=True, slots=True)
class Super:
    """`super()` inside a method of class `cls`: attribute lookup starts after `cls` in the bases."""

    obj: object
    cls: str
    mod: str | None = None


@dataclass(eq=False, slots=True)
class Closure:
    """A `lambda`: its node and the frame it was made in. Called, it reads that frame's names as they
    are then (Python closures see later assignments), and its parameters are bound on a copy."""

    node: object  # ast.Lambda
    frame: object  # frame.Frame


@dataclass(eq=False, slots=True)
class Partial:
    """`functools.partial(func, *args, **kwargs)`: calling it calls func with these arguments first."""

    func: object
    args: tuple
    kwargs: dict


# The holders (Seq, Dict, Instance) carry `ver`, bumped wherever their contents change, so that the
# construction memo can tell an object left as it was without rebuilding its snapshot (`touch`).


@dataclass(eq=False, slots=True)
class Seq:
    items: list
    kind: str = "tuple"  # tuple | list
    ver: int = 0  # bumped by touch() on every change of items


@dataclass(eq=False, slots=True)
class Dict:
    items: dict
    ver: int = 0


@dataclass(eq=False, slots=True)
class Instance:
    """An instance of a class the interpreter can read: defined in the analyzed file, in another
    file of the analyzed tree, or a torch.nn catalogue stub (an `NNModule`)."""

    cls: str
    attrs: dict = field(default_factory=dict)
    mod: str | None = None
    training: bool | None = None  # set by .train()/.eval(); None follows --mode
    children: list | None = None  # nn.Sequential / nn.ModuleList items, in order
    named: dict | None = None  # nn.ModuleDict items
    ver: int = 0  # bumped by touch() on every change of attrs, children, named or training
    # (ver, plain values, key item, held values reversed): its part of a call signature at version
    # ver (summaries.signature); a heads' call of the model signs the same objects again
    signed: tuple | None = field(default=None, repr=False)


@dataclass(eq=False, slots=True)
class NNModule(Instance):
    """An instance of a torch.nn module class (nn.Linear(...)): a stub class generated from
    rules/modules.toml, interpreted like user code. `kind` is the torch class name."""

    @property
    def kind(self) -> str:
        return self.cls


def touch(v: Seq | Dict | Instance) -> None:
    """Say that a holder's contents changed (every write to attrs, items, children, named, training
    goes with one): the construction memo compares versions instead of snapshots."""
    v.ver += 1


def is_tensor(v: object) -> bool:
    return isinstance(v, TensorRef)


def py_value(v: object, default: object = None) -> object:
    return v.value if isinstance(v, Py) else default


def known(v: object) -> bool:
    return isinstance(v, Py)


@dataclass(frozen=True, slots=True)
class FileMod:
    """A module of the analyzed tree bound by `import pkg.layers as L` / `from . import layers`:
    attribute access reads that file's functions, classes and module-level names."""

    path: str
