"""rules/libraries.toml: transformers' helpers that model code imports, when transformers is not part
of the analyzed tree.

The figures are torch's, never typed here: fixtures/observed/cpu-transformers-5.25.0.json holds what
the CPU oracle measured with transformers installed (checked by tests/test_observed.py without it),
and the live test below re-measures when transformers is importable.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from kpredict.api import analyze_file, analyze_source
from kpredict.settings import Settings

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "fixtures" / "libraries" / "transformers_lib.py"


@pytest.mark.oracle
@pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="transformers is not installed")
def test_library_fixture_matches_cpu_oracle_live() -> None:
    pytest.importorskip("torch")
    from kpredict.verify.runner import run_verify

    res = run_verify(str(FIXTURE), "*", device="cpu", timeout=1200)
    assert res.error is None, res.error
    wrong = [f.qualname for f in res.functions if not f.match]
    assert res.functions and not wrong, wrong


def test_fixture_understands_every_library_call() -> None:
    """Nothing in the fixture is left as an unknown call: the library rules describe each one."""
    rep = analyze_file(FIXTURE, Settings(target="cpu"))
    assert rep.error is None
    assert {f.qualname: [u.name for u in f.unknown] for f in rep.functions if f.unknown} == {}


def test_relative_import_out_of_a_partial_tree_finds_the_library(tmp_path: Path) -> None:
    """A checkout of transformers/models/ only: `from ...activations import ACT2FN` leaves the tree,
    and is read as transformers.activations.ACT2FN because the folder it points to is `transformers`."""
    pkg = tmp_path / "transformers" / "models" / "tiny"
    pkg.mkdir(parents=True)
    (tmp_path / "transformers" / "models" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    src = (
        "import torch\n"
        "from torch import nn\n"
        "from ...activations import ACT2FN\n"
        "from ...modeling_outputs import BaseModelOutput\n"
        "class MLP(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.act = ACT2FN['quick_gelu']\n"
        "    def forward(self, x):\n"
        "        return BaseModelOutput(last_hidden_state=self.act(x))\n"
    )
    (pkg / "modeling_tiny.py").write_text(src)
    rep = analyze_file(pkg / "modeling_tiny.py", Settings(target="cpu"), only="MLP.forward")
    fn = rep.functions[0]
    assert fn.unknown == [] and fn.compiled.graph_breaks == []
    # the same module as fixtures/libraries/transformers_lib.py::act_quick_gelu, whose figures torch measured
    ref = analyze_file(FIXTURE, Settings(target="cpu"), only="act_quick_gelu").functions[0]
    assert (fn.eager.kernels, fn.compiled.kernels) == (ref.eager.kernels, ref.compiled.kernels)
    elsewhere = tmp_path / "other" / "models" / "tiny"
    elsewhere.mkdir(parents=True)
    (elsewhere / "modeling_tiny.py").write_text(src)
    other = analyze_file(elsewhere / "modeling_tiny.py", Settings(target="cpu"), only="MLP.forward").functions[0]
    assert other.unknown, "a folder not named after the library is not taken for it"


def test_unknown_attention_implementation_is_taken_as_sdpa_and_says_so() -> None:
    src = (
        "from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS\n"
        "def attend(module, q, k, v, impl):\n"
        "    fn = ALL_ATTENTION_FUNCTIONS.get_interface(impl, None)\n"
        "    return fn(module, q, k, v, None)[0]\n"
    )
    fn = analyze_source(src, settings=Settings(target="cpu")).functions[0]
    assert any("taken as 'sdpa'" in a for a in fn.assumptions)
    assert "scaled_dot_product_attention" in [r.op for r in fn.ops] and fn.unknown == []


def test_override_replaces_the_librarys_own_function_in_the_tree(tmp_path: Path) -> None:
    """With transformers' own files in the tree, PreTrainedModel._check_and_adjust_attn_implementation
    (whose checks of installed kernels do not resolve statically) is read from rules/libraries.toml:
    'sdpa' when the model class sets _supports_sdpa, else 'eager'."""
    pkg = tmp_path / "transformers"
    (pkg / "models" / "tiny").mkdir(parents=True)
    for init in (pkg, pkg / "models", pkg / "models" / "tiny"):
        (init / "__init__.py").write_text("")
    (pkg / "modeling_utils.py").write_text(
        "import importlib\n"
        "from torch import nn\n"
        "class PreTrainedModel(nn.Module):\n"
        "    _supports_sdpa = False\n"
        "    def __init__(self, config):\n"
        "        super().__init__()\n"
        "        self.impl = self._check_and_adjust_attn_implementation(None, is_init_check=True)\n"
        "    def _check_and_adjust_attn_implementation(self, attn_implementation, is_init_check=False,\n"
        "                                              allow_all_kernels=False):\n"
        "        return importlib.import_module('kernels').pick(attn_implementation)\n"
    )
    (pkg / "models" / "tiny" / "modeling_tiny.py").write_text(
        "import torch\n"
        "from ...modeling_utils import PreTrainedModel\n"
        "class WithSdpa(PreTrainedModel):\n"
        "    _supports_sdpa = True\n"
        "    def forward(self, x):\n"
        "        return x.sin() if self.impl == 'sdpa' else x.cos()\n"
        "class Without(PreTrainedModel):\n"
        "    def forward(self, x):\n"
        "        return x.sin() if self.impl == 'sdpa' else x.cos()\n"
    )
    rep = analyze_file(pkg / "models" / "tiny" / "modeling_tiny.py", Settings(target="cpu"))
    ops = {f.qualname: [r.op for r in f.ops] for f in rep.functions}
    assert ops["WithSdpa.forward"] == ["sin"] and ops["Without.forward"] == ["cos"]


def test_an_activation_key_not_known_is_taken_as_gelu_and_says_so() -> None:
    """`ACT2FN[config.hidden_act]` with a config whose class kpredict cannot tell (CLIP's layers): the
    registry's stated choice, gelu, with the line that says so; before, an unknown op with no shape, and
    every byte after it `?`. The kernels are those of ACT2FN['gelu'] written out."""
    src = (
        "from transformers.activations import ACT2FN\n"
        "def act(x, config):\n"
        "    return ACT2FN[config.hidden_act](x) * 2\n"
        "def gelu(x):\n"
        "    return ACT2FN['gelu'](x) * 2\n"
    )
    rep = analyze_source(src, settings=Settings(target="cpu"))
    fn, ref = rep.functions
    assert any("ACT2FN[config.hidden_act]: key not known statically; taken as gelu" in a for a in fn.assumptions)
    assert fn.unknown == [] and (fn.eager.kernels, fn.compiled.kernels) == (ref.eager.kernels, ref.compiled.kernels)


def _mask_stub_and_reading(tmp_path: Path, name: str, builder: str, example: str | None = None
                           ) -> tuple[list[tuple], tuple, list[tuple], tuple, dict]:
    """The scoreboard model `name` analyzed twice with the scoreboard's own command (or `example`): from
    a tree holding only its model files (the mask builder `builder` is then rules/libraries.toml's stub)
    and from transformers' installed package (read from masking_utils.py). Returns, for each, the ops
    of the line that calls the builder (none when it makes none) and the figures, and what the CPU
    oracle measured for the scoreboard's command."""
    from test_transformers_scoreboard import EXAMPLE, MODELS, STORE
    from test_verify_real_models import TRANSFORMERS, _install

    from kpredict.verify.recorded import torch_version

    site = _install(TRANSFORMERS)
    own = site / "transformers" / "models" / name
    part = tmp_path / "transformers" / "models" / name
    part.mkdir(parents=True)
    for f in (f"modeling_{name}.py", f"configuration_{name}.py", "__init__.py"):
        (part / f).write_text((own / f).read_text())
    (tmp_path / "transformers" / "models" / "__init__.py").write_text("")
    m = MODELS[name]  # the scoreboard's command: its figures are what the CPU oracle measured
    q, init = f"{m.model}.forward", f"config={m.config}({m.keywords})"

    def mask_ops(path: Path) -> tuple[list[tuple], tuple]:
        fn = analyze_file(path, Settings(target="cpu"), only=q, inits={q: init},
                          examples={q: example or EXAMPLE}).functions[0]
        line = next((o.span.line for o in fn.graph.ops if builder in "".join(o.via)), -1)
        return ([(o.name, o.category, o.only, [fn.graph.values[i].meta.shape for i in o.inputs])
                 for o in fn.graph.ops if o.span is not None and o.span.line == line],
                (fn.eager.kernels, fn.eager.bytes, fn.compiled.kernels, fn.lower_bound))

    stub, stub_figures = mask_ops(part / f"modeling_{name}.py")
    read, read_figures = mask_ops(own / f"modeling_{name}.py")
    return stub, stub_figures, read, read_figures, STORE["measured"][f"{name}|{torch_version()}|cpu"]


@pytest.mark.oracle
def test_causal_mask_stub_makes_the_ops_of_transformers_own_code(tmp_path: Path) -> None:
    """rules/libraries.toml's create_causal_mask, used when transformers' own files are not in the tree (a
    checkout of transformers/models/, user code importing transformers), makes the ops that kpredict
    reads from transformers' masking_utils.py, in both modes: eager's packed-sequence check (one sync,
    then no mask: sdpa's is_causal), torch.compile's (B, 1, T, T) mask. The in-tree reading is the one
    the CPU oracle holds for llama (tests/test_verify_real_models.py)."""
    stub, stub_figures, read, read_figures, measured = _mask_stub_and_reading(tmp_path, "llama", "mask")
    assert stub == read
    # the whole model too (the config base's rope defaults, HFPreTrainedConfig.__post_init__, included),
    # at the CPU oracle's figures for this command (benchmarks/transformers_scoreboard.json)
    assert stub_figures == read_figures, (stub_figures, read_figures)
    assert (stub_figures[0], stub_figures[2]) == (measured["eager"], measured["compiled"]), (stub_figures, measured)
    assert [o[0] for o in stub if o[2] == "eager"][-1] == "is_nonzero"  # eager: one host check, no mask
    assert any(o[0] == "expand" and o[2] == "compiled" for o in stub)  # compiled: the mask is built


@pytest.mark.oracle
def test_bidirectional_mask_stub_makes_the_ops_of_transformers_own_code(tmp_path: Path) -> None:
    """The same for create_bidirectional_mask (159 modeling files of transformers 5.25.0 call it: BERT
    and its kin): with no padding mask it makes nothing in either mode (no bias: the figures the CPU
    oracle measured); with one, eager checks it on the host and torch.compile builds the (B, 1, T, T)
    mask of `q >= 0` and the padding, op for op as transformers' own code."""
    stub, stub_figures, read, read_figures, measured = _mask_stub_and_reading(tmp_path, "bert", "bidirectional")
    assert stub == read == []
    assert stub_figures == read_figures, (stub_figures, read_figures)
    assert (stub_figures[0], stub_figures[2]) == (measured["eager"], measured["compiled"]), (stub_figures, measured)
    padded = "input_ids=randint(0, 128, (1, 16)), attention_mask=randint(0, 2, (1, 16))"
    stub, stub_figures, read, read_figures, _ = _mask_stub_and_reading(tmp_path / "padded", "bert", "bidirectional",
                                                                       padded)
    # the mask torch.compile builds, op for op; eager's host check of the mask is one read in the stub
    # and two in the reading, which returns the tested tensor from `not (...) and (mask is None or
    # mask.all()) and (...)` and tests it again in the `if` (CPython does so only when it is false)
    assert [o for o in stub if o[2] != "eager"] == [o for o in read if o[2] != "eager"]
    assert [o[0] for o in stub if o[2] == "eager"] == ["all", "is_nonzero"]
    assert stub_figures == read_figures, (stub_figures, read_figures)
    assert any(o[0] == "expand" and o[2] == "compiled" for o in stub)


@pytest.mark.parametrize("qual", ["sub_config_default", "sub_config_from_dict"])
def test_sub_configs_from_transformers_own_files(tmp_path: Path, qual: str) -> None:
    """The fixture's composite configs read from transformers' own configuration_utils.py (the tree holds
    transformers): its PreTrainedConfig.__init_subclass__ runs for each config class (`subclass_hook`),
    so its __post_init__ builds the sub-config; the figures are the CPU oracle's (recorded with
    transformers 5.25.0 installed), as the catalogue's reading gives them (tests/test_observed.py)."""
    import json

    from test_verify_real_models import TRANSFORMERS, _install

    site = _install(TRANSFORMERS)
    (tmp_path / "transformers").symlink_to(site / "transformers")
    probe = tmp_path / "probe.py"
    probe.write_text(FIXTURE.read_text().replace("from transformers import PreTrainedConfig",
                                                 "from transformers.configuration_utils import PreTrainedConfig"))
    observed = json.loads((REPO / "fixtures" / "observed" / "cpu-transformers-5.25.0.json").read_text())
    measured = observed["functions"][f"fixtures/libraries/transformers_lib.py::{qual}"]["eager"]
    fn = analyze_file(probe, Settings(target="cpu"), only=qual).functions[0]
    assert (fn.eager.kernels, fn.eager.bytes) == (measured["kernels"], measured["bytes"])


def test_auto_model_from_config_builds_the_configs_model(tmp_path: Path) -> None:
    """`AutoModel.from_config(config)` read from transformers' own auto classes (the tree holds
    transformers): auto_class_update's copied from_config and PreTrainedModel._from_config's init
    contexts are rules/libraries.toml overrides, the rest (the config's model type through the auto
    mappings, importlib) transformers' code. It builds the model the config names, with the same figures
    as building that class directly; before, the call was not understood (composite models such as llava
    built no language model). Llava itself is held to the CPU oracle by the transformers scoreboard."""
    from test_verify_real_models import TRANSFORMERS, _install

    site = _install(TRANSFORMERS)
    (tmp_path / "transformers").symlink_to(site / "transformers")
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from transformers.models.auto import AutoModel\n"
        "from transformers.models.llama.configuration_llama import LlamaConfig\n"
        "from transformers.models.llama.modeling_llama import LlamaModel\n"
        "CONFIG = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,\n"
        "                     num_attention_heads=4, num_key_value_heads=2, use_cache=False)\n"
        "\n"
        "\n"
        "# kpredict: example ids=randint(0, 128, (1, 16))\n"
        "def auto(ids):\n"
        "    return AutoModel.from_config(CONFIG)(input_ids=ids)\n"
        "\n"
        "\n"
        "# kpredict: example ids=randint(0, 128, (1, 16))\n"
        "def direct(ids):\n"
        "    return LlamaModel(CONFIG)(input_ids=ids)\n")
    rep = analyze_file(probe, Settings(target="cpu"))
    fig = {f.qualname: (f.eager.kernels, f.eager.bytes, f.compiled.kernels, [u.name for u in f.unknown])
           for f in rep.functions}
    assert fig["auto"] == fig["direct"] and not fig["auto"][3] and fig["auto"][0] > 50, fig


@pytest.mark.parametrize("keep", [None, "logits_to_keep=1"])
def test_slice_logits_to_keep_stub_gives_the_figures_of_transformers_own_code(tmp_path: Path, keep: str | None) -> None:
    """rules/libraries.toml's slice_logits_to_keep (257 modeling files of transformers 5.25.0 call it, in
    every *ForCausalLM.forward) gives, from a tree holding only llama's model files, the figures kpredict
    gets reading transformers' own modeling_utils.py: nothing not understood, the same kernels and eager
    bytes. (Compiled bytes differ by a few bytes in this tree, not from this stub: LlamaModel's output
    container leaves hidden_states and attentions unknown without utils/generic.py's capture_outputs, so
    the graph's unread results, an arange(1) of the mask builder and sdpa's logsumexp, are kept live.)"""
    from test_transformers_scoreboard import EXAMPLE, MODELS
    from test_verify_real_models import TRANSFORMERS, _install

    own = _install(TRANSFORMERS) / "transformers" / "models" / "llama"
    part = tmp_path / "transformers" / "models" / "llama"
    part.mkdir(parents=True)
    for f in ("modeling_llama.py", "configuration_llama.py", "__init__.py"):
        (part / f).write_text((own / f).read_text())
    (tmp_path / "transformers" / "models" / "__init__.py").write_text("")
    m = MODELS["llama"]
    q, init = "LlamaForCausalLM.forward", f"config={m.config}({m.keywords})"
    example = EXAMPLE + (f", {keep}" if keep else "")

    def figures(path: Path) -> tuple:
        fn = analyze_file(path, Settings(target="cpu"), only=q, inits={q: init}, examples={q: example}).functions[0]
        assert isinstance(fn.compiled.bytes, int), fn.compiled
        return fn.eager.kernels, fn.eager.bytes, fn.compiled.kernels, fn.lower_bound

    stub = figures(part / "modeling_llama.py")
    assert stub == figures(own / "modeling_llama.py")
    assert isinstance(stub[1], int) and not stub[3], stub


def _in_both_trees(tmp_path: Path, name: str, source: str, qual: str, **given: dict) -> list:
    """`source` as the module transformers/models/<name>/m.py analyzed twice (cpu): from a tree without
    transformers' own files (rules/libraries.toml's descriptions stand in) and inside the installed
    package (its files read); the two function reports, in that order."""
    from test_verify_real_models import TRANSFORMERS, _install

    own = _install(TRANSFORMERS) / "transformers" / "models" / name
    out = []
    for folder in (tmp_path / "transformers" / "models" / name, own):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "m.py").write_text(source)
        try:
            out.append(analyze_file(folder / "m.py", Settings(target="cpu"), only=qual, **given).functions[0])
        finally:
            if folder == own:
                shutil.rmtree(own, ignore_errors=True)
    return out


SLIDING = """import torch
from ...masking_utils import create_sliding_window_causal_mask


class Cfg:
    sliding_window = {window}
    _attn_implementation = "sdpa"


# kpredict: example x=randn(1, 16, 32)
def f(x):
    pos = torch.arange(16).unsqueeze(0)
    kw = {{"config": Cfg(), "inputs_embeds": x, "attention_mask": None, "cache": None, "position_ids": pos}}
    return create_sliding_window_causal_mask(**kw)
"""


@pytest.mark.parametrize("window", [4096, 8])
def test_sliding_window_mask_stub_gives_the_figures_of_transformers_own_code(tmp_path: Path, window: int) -> None:
    """rules/libraries.toml's create_sliding_window_causal_mask (55 modeling files call it) as a model
    calls it, with position ids: a window above the sequence (eager checks for packed sequences on the
    host and leaves the mask to sdpa's is_causal; compiled builds it) and below it (both modes build the
    windowed mask), the figures kpredict gets reading transformers' masking_utils.py."""
    stub, read = (
        (fn.eager.kernels, fn.eager.bytes, fn.eager.syncs, fn.compiled.kernels, fn.compiled.bytes, fn.lower_bound)
        for fn in _in_both_trees(tmp_path, f"kp_sliding_{window}", SLIDING.format(window=window), "f"))
    assert stub == read
    assert not stub[-1] and stub[2] == 1 and stub[3] == 3, stub  # the packed-sequence check, its cumsum, the mask
    assert (stub[0] > 10) == (window < 16), stub  # eager builds the mask only when the window is shorter


PROBE = """import torch
from torch import nn
from ...activations import ACT2FN
from ...configuration_utils import PreTrainedConfig
from ...modeling_utils import PreTrainedModel


class KpConfig(PreTrainedConfig):
    model_type = "kp_probe"

    def __init__(self, vocab_size=32, hidden_size=16, hidden_act="xielu", **kwargs):
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.hidden_act = hidden_act
        super().__init__(**kwargs)


class KpText(PreTrainedModel):
    config_class = KpConfig

    def __init__(self, config):
        super().__init__(config)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.act = ACT2FN[config.hidden_act]


class KpModel(PreTrainedModel):
    config_class = KpConfig
    base_model_prefix = "model"

    def __init__(self, config):
        super().__init__(config)
        self.language_model = KpText(config)
        self.proj = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, input_ids):
        x = self.get_input_embeddings()(input_ids)
        return self.language_model.act(self.proj(x))
"""


def test_library_methods_and_xielu_stubs_give_the_figures_of_transformers_own_code(tmp_path: Path) -> None:
    """A model whose base class is transformers' PreTrainedModel, read from a tree without transformers'
    own files (a checkout of models/): `self.get_input_embeddings()` (299 modeling files call it) is
    rules/libraries.toml's description of the base's method, found through the base kpredict cannot
    read, and ACT2FN["xielu"] its activation (parameters in bfloat16, as the class makes them). The
    figures equal those of the reading of transformers' own files (modeling_utils.py, activations.py),
    which equal the CPU oracle's (kpredict verify --device cpu: 17 eager kernels, 19,352 bytes, 3
    compiled kernels, torch 2.13.0)."""
    q = "KpModel.forward"
    stub, read = ((fn.eager.kernels, fn.eager.bytes, fn.compiled.kernels, fn.compiled.bytes, fn.lower_bound,
                   [op.name for op in fn.graph.ops])
                  for fn in _in_both_trees(tmp_path, "kp_probe", PROBE, q, inits={q: "config=KpConfig()"},
                                           examples={q: "input_ids=randint(0, 32, (1, 8))"}))
    assert stub == read
    assert not stub[4] and stub[5][:2] == ["embedding", "linear"] and "expm1" in stub[5], stub


@pytest.mark.parametrize("name", ["llama", "qwen2", "qwen3", "cohere2", "mistral", "bert"])
def test_a_models_only_tree_gives_the_figures_of_transformers_own_files(tmp_path: Path, name: str) -> None:
    """A scoreboard model analyzed from a tree holding only its modeling and configuration files (a
    checkout of transformers/models/, or user code importing an installed transformers) gets the figures
    of the reading of transformers' own files, bytes included: rules/libraries.toml describes what the
    model takes from the library (PreTrainedModel.__init__ keeping self.config and setting its attention
    implementation, the mask builders, the config base). Before PreTrainedModel.__init__ was described,
    qwen3 counted 125 eager kernels for 115 (its layer types and attention implementation unknown)."""
    from test_transformers_scoreboard import EXAMPLE, MODELS
    from test_verify_real_models import TRANSFORMERS, _install

    own = _install(TRANSFORMERS) / "transformers" / "models" / name
    part = tmp_path / "transformers" / "models" / name
    part.mkdir(parents=True)
    for f in (f"modeling_{name}.py", f"configuration_{name}.py", "__init__.py"):
        (part / f).write_text((own / f).read_text())
    (tmp_path / "transformers" / "models" / "__init__.py").write_text("")
    m = MODELS[name]
    q, init = f"{m.model}.forward", f"config={m.config}({m.keywords})"

    def figures(path: Path) -> tuple:
        fn = analyze_file(path, Settings(target="cpu"), only=q, inits={q: init}, examples={q: EXAMPLE}).functions[0]
        return fn.eager.kernels, fn.eager.bytes, fn.compiled.kernels, fn.compiled.bytes, fn.lower_bound

    stub = figures(part / f"modeling_{name}.py")
    assert stub == figures(own / f"modeling_{name}.py")
    assert not stub[-1] and isinstance(stub[1], int), stub
