"""The causes behind issue 32's false and useless findings, each held here by a case that must still
be reported beside the rule's VALID examples (which must not): code off the hot path
(kpredict.lint.hotpath), chains cut at ops that cannot fuse, parameters that are lists or flags."""

from __future__ import annotations

import ast

import pytest

from kpredict.frontend.parse import ModuleInfo
from kpredict.lint.examples import run_example
from kpredict.lint.hotpath import function_reason, lazy_init_blocks, path_reason
from kpredict.lint.model import Example
from kpredict.lint.registry import by_code

FUSE = """\
import torch


class Fuse(torch.nn.Module):
    # kpredict: example w=randn(64, 64) b=randn(64)
    def _fuse_bn_tensor(self, w, b):
        return (w * 0.5 + b) * 2
"""


def test_cold_code_is_reported_again_with_the_option():
    rule = by_code()["KP101"]
    assert not run_example(rule, Example(FUSE))
    (d,) = run_example(rule, Example(FUSE, options={"cold-code": True}))
    assert "mul x2, add, line 7" in d.message


def test_a_chain_after_a_norm_is_still_one_chain():
    """adaLN's `norm(x) * (1 + scale) + shift`: `1 + scale` comes before the norm and feeds the
    multiply directly, so no barrier lies between them (the cut is per edge, not per stage)."""
    src = ("import torch\nimport torch.nn.functional as F\n\n\n"
           "# kpredict: example x=randn(8, 64) scale=randn(8, 64) shift=randn(8, 64)\n"
           "def modulate(x, scale, shift):\n"
           "    return F.layer_norm(x, (64,)) * (1 + scale) + shift\n")
    (d,) = run_example(by_code()["KP101"], Example(src))
    assert d.figures["names"] == ["add", "mul", "add"] and d.figures["fused"]["kernels"] == 1


def test_loop_over_a_typed_tensor_is_still_reported():
    src = ("import torch\n\n\n"
           "def rows(x: torch.Tensor):\n"
           "    out = []\n"
           "    for row in x:\n"
           "        out.append(row * 2 + 1)\n"
           "    return out\n")
    assert [d.span.line for d in run_example(by_code()["KP301"], Example(src))] == [6]


def test_sync_on_a_computed_value_is_still_reported():
    src = ("import torch\nfrom torch import nn\n\n\n"
           "class Gate(nn.Module):\n"
           "    def forward(self, x, output_attentions):\n"
           "        if output_attentions:\n"
           "            x = x * 2\n"
           "        if x.sum() > 0:\n"
           "            return x.relu()\n"
           "        return x\n")
    assert [d.span.line for d in run_example(by_code()["KP402"], Example(src))] == [9]


@pytest.mark.parametrize("path,qualname,why", [
    ("timm/models/repvit.py", "RepVggDw.fuse", "runs once"),
    ("m/models/tapas/tokenization_tapas.py", "TapasTokenizer._get_table_values", "host-side"),
    ("m/modeling_x.py", "XPreTrainedModel._init_weights", "runs once"),
    ("timm/models/coat.py", "checkpoint_filter_fn", "runs once"),
    ("d/pipelines/flux/pipeline_flux.py", "FluxPipeline.encode_prompt", "runs once"),
    ("m/modular_mask2former.py", "Mask2FormerImageProcessor.post_process_instance_segmentation", "host-side"),
    ("timm/models/metaformer.py", "StarReLU.forward", None),
    ("d/models/attention_processor.py", "AttnProcessor2_0.__call__", None),
    ("m/models/x/modeling_x.py", "fused_add_tanh", None),
    ("m/models/x/modeling_x.py", "XModel.fuse_feature_maps", None),  # a forward step, not BN fusion
    ("d/schedulers/scheduling_x.py", "XScheduler.convert_model_output", None),  # every denoising step
    ("d/loaders/single_file_utils.py", "convert_ldm_unet_checkpoint", "runs once"),
])
def test_function_reason(path, qualname, why):
    tree = ast.parse("class Mask2FormerImageProcessor(BaseImageProcessor):\n    pass\n"
                     "class AttnProcessor2_0:\n    pass\n")
    module = ModuleInfo(path, tree, [], classes={c.name: c for c in tree.body if isinstance(c, ast.ClassDef)})
    reason = path_reason(path) or function_reason(module, qualname)
    assert (reason is None) if why is None else (why in reason), reason


def test_data_pipeline_is_a_package(tmp_path):
    """torchvision/transforms/v2/_geometry.py is in a `transforms` package; a checkout that lives
    under a folder named data/ is not the data pipeline."""
    pkg = tmp_path / "torchvision" / "transforms" / "v2"
    pkg.mkdir(parents=True)
    (pkg.parent / "__init__.py").write_text("")
    assert "data pipeline" in path_reason(str(pkg / "_geometry.py"))
    other = tmp_path / "data" / "me" / "project"
    other.mkdir(parents=True)
    assert path_reason(str(other / "model.py")) is None


def test_lazy_init_blocks():
    tree = ast.parse("def step(self, p):\n"
                     "    state = self.state[p]\n"
                     "    if len(state) == 0:\n"
                     "        state['exp_avg'] = torch.zeros([]).to(p.device)\n"
                     "    if x is None:\n"
                     "        y = 1\n"
                     "    if mask is None:\n"  # an optional argument's default: every call that omits it
                     "        mask = torch.ones(4).to(p.device)\n"
                     "    if inputs_embeds is None:\n"
                     "        inputs_embeds = self.embed(ids)\n"
                     "        inputs_embeds[:, 0] = first\n"
                     "    if self._table is None:\n"
                     "        self._table = torch.arange(4).to(p.device)\n")
    assert [b.line for b in lazy_init_blocks(tree.body[0])] == [4, 13]
