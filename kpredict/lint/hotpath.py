"""Code off the hot path (issue 32): what runs once, or on the host around the model, and so is not
worth a reviewer's time however many kernels it launches.

A finding in `__init__`, `_init_weights`, a BN-fusion or checkpoint-conversion helper, an optimizer's
`if len(state) == 0:` block, a tokenizer, an image processor's `post_process_*` or a data transform is
true but costs nothing per training or inference step: one-time setup, or host-side pre- and
post-processing whose values the host needs anyway. Rules that report a per-call cost (kernels,
syncs, copies) keep these out by default; their `cold-code` option reports them again. Everything
here reads names, paths and the source only: it never changes a prediction.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from kpredict.frontend.parse import ModuleInfo, node_text
from kpredict.ir import Span

OPTION = "cold-code"
OPTION_DOC = ("Also report code off the hot path: code that runs once (`__init__`, `_init_weights`, "
              "`reset_parameters`, BN fusion, checkpoint conversion, lazily built optimizer state, prompt "
              "encoding) and host-side pre/post-processing (`post_process_*`, `preprocess*`, tokenizers, image "
              "processors, data transforms). Off by default: they are true but cost nothing per step.")

# functions that run once: construction, initialization, re-parameterization, conversion, loading
_ONCE = re.compile(
    r"^(__init__|__post_init__|post_init|_?init_\w*|_initialize_weights|_?reset_parameters|"
    r"from_pretrained|_?load_state_dict|_load_from_state_dict|load_pretrained|\w*_filter_fn|"
    r"\w*convert\w*(checkpoint|state_dict)\w*|\w*_to_diffusers|reparameterize|reparam|switch_to_deploy|"
    r"_?fuse(_(bn|lora|qkv|projections|model|children|conv|modules|weights)\w*)?|"
    r"encode_prompt|_encode_prompt|_get_\w*prompt_embeds|decode_latents)$")
# host-side pre- and post-processing, and debugging helpers, by name
_HOST = re.compile(r"^_?(post_?process|pre_?process|debug)\w*$")
# files of host-side code: transformers' processors and tokenizers, test helpers, conversion scripts
_HOST_FILES = re.compile(r"^(image_processing_|video_processing_|processing_|feature_extraction_|tokenization_|"
                         r"convert_|testing_utils$)")
# folders of the data pipeline: transforms and datasets run on the CPU in DataLoader workers
_DATA_DIRS = {"transforms", "data", "datasets"}
# classes of host-side pre/post-processing (their own name or a base's)
_HOST_CLASSES = re.compile(r"(ImageProcessor|VideoProcessor|Tokenizer|FeatureExtractor|ProcessorMixin|"
                           r"ImageProcessingMixin|FeatureExtractionMixin)\w*$")


def path_reason(path: str) -> str | None:
    """Why a whole file is off the hot path (a tokenizer, a processor, a data transform), or None."""
    p = Path(path)
    if _HOST_FILES.match(p.stem):
        return f"host-side code ({p.name})"
    for d in list(p.parents)[:3]:
        if d.name in _DATA_DIRS and (d / "__init__.py").is_file():  # a package, not where a checkout lives
            return f"the data pipeline ({d.name}/: transforms and datasets run on the CPU)"
    return None


def function_reason(module: ModuleInfo, qualname: str) -> str | None:
    """Why a whole function is off the hot path, or None when it may be on it."""
    parts = qualname.split(".")
    name = parts[-1]
    if _ONCE.match(name):
        return f"runs once ({name})"
    if _HOST.match(name):
        return f"host-side pre/post-processing ({name})"
    for i in range(len(parts) - 1, 0, -1):
        cls = module.classes.get(".".join(parts[:i]))
        if cls is not None:
            names = [cls.name] + [_base_name(b) for b in cls.bases]
            if any(_HOST_CLASSES.search(n) for n in names if n):
                return f"host-side pre/post-processing (class {cls.name})"
            break
    return None


def _base_name(e: ast.expr) -> str:
    if isinstance(e, ast.Subscript):
        e = e.value
    if isinstance(e, ast.Attribute):
        return e.attr
    return e.id if isinstance(e, ast.Name) else ""


def lazy_init_blocks(scope: ast.AST) -> list[Span]:
    """Spans of the `if` bodies that build state once and keep it: `if len(state) == 0:`, `if not
    state:`, `if "k" not in state:`, `if self.x is None:` whose body assigns into what the test reads
    (an optimizer's first step, a cache filled on the first call)."""
    out = []
    for node in ast.walk(scope):
        if not isinstance(node, ast.If):
            continue
        target = _empty_test(node.test)
        if target is None or not _assigns_into(node.body, target):
            continue
        first, last = node.body[0], node.body[-1]
        out.append(Span(first.lineno, first.col_offset, last.end_lineno or last.lineno, last.end_col_offset or 0))
    return out


def _empty_test(test: ast.expr) -> str | None:
    """The source of X in `len(X) == 0`, `not X`, `"k" not in X`, `X is None`; else None."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return node_text(test.operand)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if (isinstance(op, ast.Eq) and isinstance(right, ast.Constant) and right.value == 0
                and isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "len"
                and left.args):
            return node_text(left.args[0])
        if isinstance(op, ast.NotIn):
            return node_text(right)
        if isinstance(op, ast.Is) and isinstance(right, ast.Constant) and right.value is None \
                and isinstance(left, ast.Attribute):  # `self._table is None`; a local is an argument's default
            return node_text(left)
    return None


def _assigns_into(body: list[ast.stmt], target: str) -> bool:
    """Whether `body` stores into the state `target` names and keeps it: `state["k"] = ...`,
    `cache.x = ...`, `self._table = ...`. Rebinding a local (`if mask is None: mask = ones(...)`, an
    optional argument's default) is no such state: it runs on every call that omits the argument."""
    nodes = [n for stmt in body for n in ast.walk(stmt)]
    if any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == target for n in nodes):
        return False
    for node in nodes:
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, (ast.Subscript, ast.Attribute)) and node_text(t.value) == target:
                    return True
                if isinstance(t, ast.Attribute) and node_text(t) == target:
                    return True
    return False
