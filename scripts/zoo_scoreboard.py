"""kpredict on public model zoos (torchvision, timm, diffusers): predictions against the CPU oracle and cudagen.

    PYTHONPATH=/work/zoo-site python scripts/zoo_scoreboard.py --site /work/zoo-site --measure
    python scripts/zoo_scoreboard.py --site /work/zoo-site            # predict again, measured figures from the store
    python scripts/zoo_scoreboard.py --site /work/zoo-site --cuda     # also cudagen's H100 compiled counts

--site is a folder holding the installed `torchvision`, `timm` and `diffusers` packages (pip install --target
... --no-deps timm==1.0.31 torchvision==0.28.0 diffusers==0.42.1, with numpy, pillow, pyyaml, huggingface_hub,
safetensors, regex, importlib_metadata, zipp, requests, urllib3, and huggingface_hub 2.x's httpx2, httpcore2,
truststore).
For each model of the fixed list below, a short script that builds it through its public builder
(`torchvision.models.resnet.resnet18(num_classes=10)`, timm's entrypoint function, a diffusers model class
with a small config) with an example
input given in a `# kpredict: example` comment is written next to the packages, so kpredict reads
their source as part of the analyzed tree (the static path never imports them). Then:

- predicted: kpredict's static report of the script's `run`, --target cpu (and --target cuda with --cuda);
- measured: `kpredict verify --device cpu --format json` in a child process (torch's profiler and
  torch.compile on cpu), and with --cuda, ../shared/tools/cudagen (Inductor's own CUDA code generation
  on fake H100 tensors) for the compiled launches on cuda.

Measuring takes minutes per model (torch.compile on cpu), so measured figures are stored in the
results file keyed by model, torch version and device, with a hash of the script measured, and are
only measured again when the script changes or with --remeasure; predictions are always made afresh.
Prints one row per model and the % exact per zoo; writes the whole to --out (JSON). Nothing here is
a test. torchvision's compiled extension does not load against a CPU torch build without its
operators, so each script first puts an empty module at sys.modules['torchvision._meta_registrations'].
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CUDAGEN = ROOT.parent / "shared" / "tools" / "cudagen" / "cudagen.py"
DEFAULT_OUT = ROOT / "benchmarks" / "zoo_scoreboard.json"


@dataclass(frozen=True)
class Model:
    """One zoo model: where its builder lives, the keywords it is built with, its example input."""
    zoo: str
    name: str
    module: str
    builder: str
    kwargs: str = "num_classes=10"
    example: str = "x=randn(1, 3, 64, 64)"
    call: str = "MODEL(x)"

    def inputs(self) -> list[tuple[str, str]]:
        """The example's (name, expression) pairs: `x=randn(1, 4, 16, 16), c=randn(1, 8, 32)`."""
        return [tuple(part.split("=", 1)) for part in re.split(r",\s*(?=[A-Za-z_]\w*=)", self.example)]


TV = "torchvision.models."
# timm's builders take in_chans (and num_classes, img_size) from the pretrained config registry filled by
# @register_model at import, which kpredict does not follow: without in_chans=3 the kernels are the same
# and the bytes are unknown (the stem's weight shape). So it is given, at its default value.
TIMM = "num_classes=10, in_chans=3"
def timm_model(name: str, module: str, extra: str = "", example: str = "x=randn(1, 3, 64, 64)") -> Model:
    """timm's entrypoint `name` of timm.models.<module>, built with TIMM's keywords and `extra`."""
    return Model("timm", name, f"timm.models.{module}", name, TIMM + (", " + extra if extra else ""), example)


# torchvision's classification models (small input, 10 classes), and a sample of timm's families.
MODELS: list[Model] = [
    Model("torchvision", "alexnet", TV + "alexnet", "alexnet"),
    Model("torchvision", "resnet18", TV + "resnet", "resnet18"),
    Model("torchvision", "resnet50", TV + "resnet", "resnet50"),
    Model("torchvision", "squeezenet1_1", TV + "squeezenet", "squeezenet1_1"),
    Model("torchvision", "densenet121", TV + "densenet", "densenet121"),
    Model("torchvision", "mobilenet_v2", TV + "mobilenetv2", "mobilenet_v2"),
    Model("torchvision", "mobilenet_v3_small", TV + "mobilenetv3", "mobilenet_v3_small"),
    Model("torchvision", "shufflenet_v2_x0_5", TV + "shufflenetv2", "shufflenet_v2_x0_5"),
    Model("torchvision", "mnasnet0_5", TV + "mnasnet", "mnasnet0_5"),
    Model("torchvision", "efficientnet_b0", TV + "efficientnet", "efficientnet_b0"),
    Model("torchvision", "regnet_y_400mf", TV + "regnet", "regnet_y_400mf"),
    Model("torchvision", "convnext_tiny", TV + "convnext", "convnext_tiny"),
    Model("torchvision", "vit_b_16", TV + "vision_transformer", "vit_b_16", "num_classes=10, image_size=64"),
    Model("torchvision", "swin_t", TV + "swin_transformer", "swin_t"),
    Model("torchvision", "googlenet", TV + "googlenet", "googlenet",
          "num_classes=10, aux_logits=False, init_weights=False"),
    Model("timm", "resnet18", "timm.models.resnet", "resnet18", TIMM),
    Model("timm", "resnet50d", "timm.models.resnet", "resnet50d", TIMM),
    Model("timm", "vit_tiny_patch16_224", "timm.models.vision_transformer", "vit_tiny_patch16_224",
          "num_classes=10, img_size=64"),
    Model("timm", "deit_tiny_patch16_224", "timm.models.deit", "deit_tiny_patch16_224",
          "num_classes=10, img_size=64"),
    Model("timm", "convnext_atto", "timm.models.convnext", "convnext_atto", TIMM),
    Model("timm", "efficientnet_b0", "timm.models.efficientnet", "efficientnet_b0", TIMM),
    Model("timm", "mobilenetv3_small_050", "timm.models.mobilenetv3", "mobilenetv3_small_050", TIMM),
    Model("timm", "mobilenetv2_050", "timm.models.efficientnet", "mobilenetv2_050", TIMM),
    Model("timm", "swin_tiny_patch4_window7_224", "timm.models.swin_transformer", "swin_tiny_patch4_window7_224",
          "num_classes=10, img_size=64, window_size=2"),
    Model("timm", "regnetx_002", "timm.models.regnet", "regnetx_002", TIMM),
    Model("timm", "mixer_s16_224", "timm.models.mlp_mixer", "mixer_s16_224", TIMM + ", img_size=64"),
    Model("timm", "ghostnet_050", "timm.models.ghostnet", "ghostnet_050", TIMM),
    Model("timm", "seresnet18", "timm.models.resnet", "seresnet18", TIMM),
    Model("timm", "resnext26ts", "timm.models.byobnet", "resnext26ts", TIMM),
    Model("timm", "repvgg_a0", "timm.models.byobnet", "repvgg_a0", TIMM),
    Model("timm", "lcnet_050", "timm.models.mobilenetv3", "lcnet_050", TIMM),
    Model("timm", "convnextv2_atto", "timm.models.convnext", "convnextv2_atto", TIMM),
    Model("timm", "rexnet_100", "timm.models.rexnet", "rexnet_100", TIMM),
    Model("timm", "dla34", "timm.models.dla", "dla34", TIMM),
    Model("timm", "levit_128s", "timm.models.levit", "levit_128s", TIMM + ", img_size=64"),
    # The smallest architecture of every other timm model module (parameters counted on the meta device),
    # with test_* models where a module has them, a few more of the large modules; kept only if torch runs
    # it at the input given. In order of the aten ops they run, so that the cheap ones are measured first.
    timm_model("vgg11", "vgg"),
    timm_model("test_efficientnet", "efficientnet"),
    timm_model("resnet10t", "resnet"),
    timm_model("test_resnet", "resnet"),
    timm_model("resnetv2_18", "resnetv2"),
    timm_model("test_byobnet", "byobnet"),
    timm_model("starnet_s050", "starnet"),
    timm_model("lcnet_035", "mobilenetv3"),
    timm_model("test_mambaout", "mambaout"),
    timm_model("ese_vovnet19b_dw", "vovnet"),
    timm_model("fasternet_t0", "fasternet"),
    timm_model("legacy_seresnet18", "senet"),
    timm_model("cs3darknet_s", "cspnet"),
    timm_model("test_coatnet", "maxxvit", "img_size=64"),
    timm_model("resnest14d", "resnest"),
    timm_model("cspnext_tiny", "cspnext"),
    timm_model("test_convnext", "convnext"),
    timm_model("test_vit", "vision_transformer", "img_size=64"),
    timm_model("selecsls42", "selecsls"),
    timm_model("inception_next_atto", "inception_next"),
    timm_model("cpubone_nano", "cpubone"),
    timm_model("lcnetv2_small", "lcnetv2"),
    timm_model("tinynet_e", "efficientnet"),
    timm_model("hardcorenas_a", "hardcorenas"),
    timm_model("efficientnet_lite0", "efficientnet"),
    timm_model("poolformerv2_s12", "metaformer"),
    timm_model("mnasnet_050", "efficientnet"),
    timm_model("legacy_xception", "xception"),
    timm_model("dla46_c", "dla"),
    timm_model("xception41p", "xception_aligned"),
    timm_model("skresnet18", "sknet"),
    timm_model("hgnetv2_b0", "hgnet"),
    timm_model("test_nfnet", "nfnet"),
    timm_model("efficientvit_b0", "efficientvit_mit"),
    timm_model("spnasnet_100", "efficientnet"),
    timm_model("fbnetc_100", "efficientnet"),
    timm_model("regnety_002", "regnet"),
    timm_model("mobilevitv2_050", "mobilevit"),
    timm_model("resmlp_12_224", "mlp_mixer", "img_size=64"),
    timm_model("efficientformer_l1", "efficientformer", "", "x=randn(1, 3, 224, 224)"),
    timm_model("convmixer_768_32", "convmixer"),
    timm_model("dpn48b", "dpn"),
    timm_model("rdnet_tiny", "rdnet"),
    timm_model("fastvit_t8", "fastvit"),
    timm_model("visformer_tiny", "visformer", "img_size=64"),
    timm_model("tf_efficientnetv2_b0", "efficientnet"),
    timm_model("vit_tiny_r_s16_p8_224", "vision_transformer_hybrid", "img_size=64"),
    timm_model("lowformer_b0", "lowformer"),
    timm_model("eca_botnext26ts_256", "byoanet", "img_size=64"),
    timm_model("swiftformer_xs", "swiftformer"),
    timm_model("pit_ti_224", "pit", "img_size=64"),
    timm_model("tresnet_m", "tresnet"),
    timm_model("edgenext_xx_small", "edgenext"),
    timm_model("pvt_v2_b0", "pvt_v2"),
    timm_model("mixnet_s", "efficientnet"),
    timm_model("focalnet_tiny_srf", "focalnet"),
    timm_model("mobileone_s1", "byobnet"),
    timm_model("test_vit_relpos", "vision_transformer_relpos", "img_size=64"),
    timm_model("hrnet_w18_small", "hrnet"),
    timm_model("inception_v3", "inception_v3", "", "x=randn(1, 3, 96, 96)"),
    timm_model("test_maxvit", "maxxvit", "img_size=64"),
    timm_model("mobilevit_xxs", "mobilevit"),
    timm_model("iformer_t", "iformer"),
    timm_model("repghostnet_050", "repghost"),
    timm_model("beit_base_patch16_224", "beit", "img_size=64"),
    timm_model("nextvit_small", "nextvit"),
    timm_model("efficientformerv2_s0", "efficientformer_v2", "img_size=64"),
    timm_model("hiera_tiny_224", "hiera", "img_size=64"),
    timm_model("sam2_hiera_tiny", "hieradet_sam2"),
    timm_model("repvit_m1", "repvit"),
    timm_model("efficientvim_m1", "efficientvim"),
    timm_model("shvit_s1", "shvit"),
    timm_model("vitamin_small_224", "vitamin", "img_size=64"),
    timm_model("densenet121", "densenet"),
    timm_model("coat_lite_tiny", "coat", "img_size=64"),
    timm_model("caformer_s18", "metaformer"),
    timm_model("nest_tiny", "nest", "img_size=64"),
    timm_model("nf_regnet_b0", "nfnet"),
    timm_model("gmlp_ti16_224", "mlp_mixer", "img_size=64"),
    timm_model("inception_v4", "inception_v4", "", "x=randn(1, 3, 96, 96)"),
    timm_model("twins_pcpvt_small", "twins"),
    timm_model("eva02_tiny_patch14_224", "eva", "img_size=56", "x=randn(1, 3, 56, 56)"),
    timm_model("davit_tiny", "davit"),
    timm_model("volo_d1_224", "volo", "img_size=64"),
    timm_model("tiny_vit_5m_224", "tiny_vit"),
    timm_model("res2net50_14w_8s", "res2net"),
    timm_model("convit_tiny", "convit", "img_size=64"),
    timm_model("crossvit_tiny_240", "crossvit", "", "x=randn(1, 3, 240, 240)"),
    timm_model("twins_svt_small", "twins"),
    timm_model("gcvit_xxtiny", "gcvit", "img_size=64"),
    timm_model("xcit_nano_12_p16_224", "xcit", "img_size=64"),
    timm_model("sequencer2d_s", "sequencer"),
    timm_model("swinv2_cr_tiny_ns_224", "swin_transformer_v2_cr", "img_size=64, window_size=2"),
    timm_model("efficientvit_m0", "efficientvit_msra", "img_size=64"),
    timm_model("inception_resnet_v2", "inception_resnet_v2", "", "x=randn(1, 3, 96, 96)"),
    timm_model("swinv2_tiny_window8_256", "swin_transformer_v2", "img_size=64, window_size=2"),
    timm_model("csatv2", "csatv2"),
    timm_model("mvitv2_tiny", "mvitv2", "img_size=64"),
    timm_model("samvit_base_patch16_224", "vision_transformer_sam", "img_size=64"),
    timm_model("tnt_s_patch16_224", "tnt", "img_size=64"),
    timm_model("ghostnetv3_050", "ghostnet"),
    timm_model("cait_xxs24_224", "cait", "img_size=64"),
]

# diffusers' UNet, VAE and transformer blocks at small configs (diffusers 0.42.1). Their forwards take a
# timestep and return a tuple (return_dict=False), so each names its call; a Python int timestep is what
# a pipeline passes (UNet2DModel makes a tensor of it).
MODELS += [
    Model("diffusers", "unet_2d", "diffusers.models.unets.unet_2d", "UNet2DModel",
          "sample_size=16, in_channels=3, out_channels=3, layers_per_block=1, block_out_channels=(32, 64), "
          "norm_num_groups=8, down_block_types=('DownBlock2D', 'AttnDownBlock2D'), "
          "up_block_types=('AttnUpBlock2D', 'UpBlock2D')",
          "x=randn(1, 3, 16, 16)",
          "MODEL(x, 1, return_dict=False)[0]"),
    Model("diffusers", "unet_2d_condition", "diffusers.models.unets.unet_2d_condition", "UNet2DConditionModel",
          "sample_size=16, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64), "
          "norm_num_groups=8, down_block_types=('CrossAttnDownBlock2D', 'DownBlock2D'), "
          "up_block_types=('UpBlock2D', 'CrossAttnUpBlock2D'), cross_attention_dim=32, attention_head_dim=8",
          "x=randn(1, 4, 16, 16), c=randn(1, 8, 32)",
          "MODEL(x, 1, c, return_dict=False)[0]"),
    Model("diffusers", "autoencoder_kl", "diffusers.models.autoencoders.autoencoder_kl", "AutoencoderKL",
          "block_out_channels=(32, 64), down_block_types=('DownEncoderBlock2D', 'DownEncoderBlock2D'), "
          "up_block_types=('UpDecoderBlock2D', 'UpDecoderBlock2D'), latent_channels=4, norm_num_groups=8, "
          "layers_per_block=1",
          "x=randn(1, 3, 32, 32)",
          "MODEL(x, return_dict=False)[0]"),
    Model("diffusers", "autoencoder_tiny", "diffusers.models.autoencoders.autoencoder_tiny", "AutoencoderTiny",
          "encoder_block_out_channels=(16, 16, 16, 16), decoder_block_out_channels=(16, 16, 16, 16), "
          "num_encoder_blocks=(1, 1, 1, 1), num_decoder_blocks=(1, 1, 1, 1)",
          "x=randn(1, 3, 32, 32)",
          "MODEL(x, return_dict=False)[0]"),
    Model("diffusers", "vq_model", "diffusers.models.autoencoders.vq_model", "VQModel",
          "block_out_channels=(32, 64), down_block_types=('DownEncoderBlock2D', 'DownEncoderBlock2D'), "
          "up_block_types=('UpDecoderBlock2D', 'UpDecoderBlock2D'), latent_channels=4, norm_num_groups=8, "
          "num_vq_embeddings=32, layers_per_block=1",
          "x=randn(1, 3, 32, 32)",
          "MODEL(x, return_dict=False)[0]"),
    Model("diffusers", "resnet_block_2d", "diffusers.models.resnet", "ResnetBlock2D",
          "in_channels=32, out_channels=64, temb_channels=64, groups=8",
          "x=randn(1, 32, 16, 16), t=randn(1, 64)",
          "MODEL(x, t)"),
    Model("diffusers", "attention", "diffusers.models.attention_processor", "Attention",
          "query_dim=32, heads=2, dim_head=16",
          "x=randn(1, 64, 32)",
          "MODEL(x)"),
    Model("diffusers", "transformer_2d", "diffusers.models.transformers.transformer_2d", "Transformer2DModel",
          "num_attention_heads=2, attention_head_dim=16, in_channels=32, norm_num_groups=8, num_layers=1",
          "x=randn(1, 32, 8, 8)",
          "MODEL(x, return_dict=False)[0]"),
    Model("diffusers", "basic_transformer_block", "diffusers.models.attention", "BasicTransformerBlock",
          "dim=32, num_attention_heads=2, attention_head_dim=16, cross_attention_dim=32",
          "x=randn(1, 64, 32), c=randn(1, 8, 32)",
          "MODEL(x, encoder_hidden_states=c)"),
    Model("diffusers", "dit", "diffusers.models.transformers.dit_transformer_2d", "DiTTransformer2DModel",
          "num_attention_heads=2, attention_head_dim=16, in_channels=4, num_layers=1, sample_size=8, "
          "patch_size=2, num_embeds_ada_norm=10",
          "x=randn(1, 4, 8, 8), t=randint(1, 2, (1,)), y=randint(1, 2, (1,))",
          "MODEL(x, timestep=t, class_labels=y, return_dict=False)[0]"),
    Model("diffusers", "flux", "diffusers.models.transformers.transformer_flux", "FluxTransformer2DModel",
          "patch_size=1, in_channels=4, num_layers=1, num_single_layers=1, attention_head_dim=16, "
          "num_attention_heads=2, joint_attention_dim=32, pooled_projection_dim=32, axes_dims_rope=(4, 6, 6)",
          "x=randn(1, 16, 4), c=randn(1, 8, 32), p=randn(1, 32), t=ones(1), i=zeros(16, 3), j=zeros(8, 3)",
          "MODEL(x, c, p, t, i, j, return_dict=False)[0]"),
    Model("diffusers", "sd3", "diffusers.models.transformers.transformer_sd3", "SD3Transformer2DModel",
          "sample_size=8, patch_size=2, in_channels=4, num_layers=1, attention_head_dim=16, "
          "num_attention_heads=2, joint_attention_dim=32, caption_projection_dim=32, "
          "pooled_projection_dim=32, out_channels=4",
          "x=randn(1, 4, 8, 8), c=randn(1, 8, 32), p=randn(1, 32), t=randint(1, 2, (1,))",
          "MODEL(x, c, p, t, return_dict=False)[0]"),
]

SCRIPT = '''import sys
import types

# torchvision's compiled operators do not load against a CPU torch build without them
sys.modules.setdefault("torchvision._meta_registrations", types.ModuleType("torchvision._meta_registrations"))
import torch  # noqa: E402,F401
from {module} import {builder}  # noqa: E402

MODEL = {builder}({kwargs}).eval()


# kpredict: example {example}
def run({params}):
    return {call}
'''


@dataclass
class Figures:
    """Eager kernels and bytes, compiled kernels (and graphs) of one call; None where not known."""
    eager: int | None = None
    eager_bytes: int | None = None
    compiled: int | None = None
    graphs: int | None = None
    lower_bound: bool = False
    causes: list[str] = field(default_factory=list)
    error: str | None = None


def script_text(m: Model) -> str:
    return SCRIPT.format(module=m.module, builder=m.builder, kwargs=m.kwargs, example=m.example,
                         params=", ".join(n for n, _ in m.inputs()), call=m.call)


def predict(path: Path, target: str) -> Figures:
    """kpredict's static figures for the script's `run` (no torch, nothing imported)."""
    from kpredict.api import analyze_file
    from kpredict.settings import Settings

    rep = analyze_file(path, Settings(target=target), only="run")
    if rep.error or not rep.functions:
        return Figures(error=str(rep.error or "no function"))
    f = rep.functions[0]
    causes = sorted({u.name for u in f.lower_bound_causes})
    # cudagen reads Inductor's wrapper: an extern call is one launch, the ATen kernels inside it unseen
    compiled = f.compiled.kernels - (f.compiled.extern_inner if target == "cuda" else 0)
    return Figures(f.eager.kernels, f.eager.bytes, compiled, f.compiled.graphs, f.lower_bound, causes[:8])


def _env(site: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}


def measure_cpu(path: Path, site: Path, timeout: int, eager_only: bool = False) -> Figures:
    """The CPU oracle: kpredict verify --device cpu in a child (the profiler, then torch.compile; with
    eager_only the compiled half is skipped: seconds where torch.compile takes minutes)."""
    try:
        res = subprocess.run([sys.executable, "-m", "kpredict", "verify", "--device", "cpu", "--format", "json",
                              "--timeout", str(timeout), *(["--eager-only"] if eager_only else []),
                              f"{path.name}::run"], cwd=path.parent, env=_env(site),
                             capture_output=True, text=True, timeout=timeout + 60)
    except subprocess.TimeoutExpired:
        return Figures(error="timeout")
    try:
        fn = json.loads(res.stdout)["functions"][0]
        m = fn["measured"]
        e, c = m["eager"], m["compiled"]
        ek = e["kernels"] - int(e.get("library_extra") or 0)
        if eager_only:
            return Figures(ek, e["bytes"], error=fn.get("error"))
        ck = c["kernels"] - int(c.get("library_extra") or 0) if c else None
        return Figures(ek, e["bytes"], ck, c.get("graphs") if c else None, error=fn.get("error"))
    except (json.JSONDecodeError, KeyError, IndexError, TypeError):
        return Figures(error=(res.stderr or res.stdout).strip().splitlines()[-1][:300] if (res.stderr or res.stdout)
                       else f"exit {res.returncode}")


CUDA_CHILD = """
import importlib, json, os, sys
sys.path[:0] = [sys.argv[1], sys.argv[2], os.environ["KPREDICT_SCRIPTS"]]
import torch, fakecuda, kp, cudagen_child
from torch._prims_common import suggest_memory_format
cudagen_child.retarget_positional_devices(fakecuda)

# A CPU build of torch cannot pick cuDNN for a fake CUDA convolution, so FakeTensor's conv gives every
# output the contiguous layout; on a GPU cuDNN writes channels-last where the input or the weight is
# channels-last (ATen ConvUtils.h cudnn_conv_suggest_memory_format, cuDNN >= 7603, 4-D; a channels-last
# depthwise convolution takes cuDNN too: Convolution.cpp use_cudnn_depthwise). What a reduction after
# a convolution reads (LayerNorm2d, GroupNorm: inner or outer rows) follows that layout.
_backend_format = torch._C._conv_determine_backend_memory_format
def _cudnn_format(inp, weight, backend):
    if weight.dim() == 4 and inp.dtype != torch.float64 and torch.channels_last in (
            suggest_memory_format(inp), suggest_memory_format(weight)):
        return torch.channels_last
    return _backend_format(inp, weight, backend)
torch._C._conv_determine_backend_memory_format = _cudnn_format
mod = importlib.import_module(sys.argv[3])  # a module of its own name, so that Dynamo finds MODEL
xs = [eval("torch." + e) for e in json.loads(sys.argv[4])]
with torch.no_grad():
    res = fakecuda.cuda_compile(lambda: mod.run(*xs))
launches = cudagen_child.launches(res, kp)
print(json.dumps({"graphs": res.graphs, "kernels": len(launches),
                  "errors": [e.strip().splitlines()[-1] for e in res.errors]}))
"""


def measure_cuda(path: Path, m: Model, site: Path, timeout: int) -> Figures:
    """cudagen: Inductor's CUDA code generation on fake H100 tensors, the compiled launches of `run`. The
    script is imported by its module name (cudagen.py's own loader leaves it out of sys.modules, where
    Dynamo looks for the `MODEL` that `run` reads); the launches are read as cudagen.py reads them."""
    exprs = json.dumps([e for _, e in m.inputs()])
    env = _env(site)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [env["PYTHONPATH"], os.environ.get("CUDAGEN_PYLIB", "")] if p)
    env["KPREDICT_SCRIPTS"] = str(ROOT / "scripts")
    try:
        res = subprocess.run([sys.executable, "-c", CUDA_CHILD, str(CUDAGEN.parent), str(path.parent), path.stem, exprs],
                             cwd=path.parent, env=env, capture_output=True, text=True, timeout=timeout)
        d = json.loads(res.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        return Figures(error="timeout")
    except (json.JSONDecodeError, IndexError):
        return Figures(error=(res.stderr.strip().splitlines() or [f"exit {res.returncode}"])[-1][:300])
    return Figures(compiled=d["kernels"], graphs=d["graphs"], error="; ".join(d.get("errors") or []) or None)


def _exact(p: int | None, m: int | None) -> bool | None:
    return None if m is None else p == m


def _torch_version() -> str:
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                         capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def markdown(store: dict[str, Any]) -> str:
    """The scoreboard as a markdown table: predicted / measured per figure, a mark where they differ."""
    def cell(p: object, m: object, lb: bool = False) -> str:
        if m is None:
            return f"{'>= ' if lb else ''}{p} / -"
        mark = "" if p == m else " **x**"
        return f"{'>= ' if lb else ''}{p} / {m}{mark}"

    out = [f"torch {store.get('torch')}: kpredict's static prediction / the measurement: eager and compiled on cpu "
           "by the CPU oracle (`kpredict verify --device cpu`), compiled on cuda by cudagen (Inductor's CUDA code "
           "generation on fake H100 tensors); **x** marks a miss, `-` a figure not measured.", "",
           "| zoo | model | built as | eager kernels | eager bytes | compiled kernels, cpu | compiled, cuda | "
           "not understood |",
           "|---|---|---|---|---|---|---|---|"]
    for key, r in store["rows"].items():
        p, m = r["predicted_cpu"], r["measured_cpu"] or {}
        g, mg = r.get("predicted_cuda") or {}, r.get("measured_cuda_sim") or {}
        ok, okg = m and not m.get("error"), mg and not mg.get("error")
        out.append(f"| {r['zoo']} | {r['model']} | `{r['builder'].split('.')[-1]}` | "
                   f"{cell(p['eager'], m.get('eager') if ok else None, p['lower_bound'])} | "
                   f"{cell(p['eager_bytes'], m.get('eager_bytes') if ok else None, p['lower_bound'])} | "
                   f"{cell(p['compiled'], m.get('compiled') if ok else None, p['lower_bound'])} | "
                   f"{cell(g.get('compiled'), mg.get('compiled') if okg else None, bool(g.get('lower_bound')))} | "
                   f"{', '.join(p['causes']) or ''} |")
    out += ["", "| zoo | models | eager exact | bytes exact | compiled exact, cpu | compiled exact, cuda |",
            "|---|---|---|---|---|---|"]
    for zoo, sm in store["summary"].items():
        out.append(f"| {zoo} | {sm['models']} | {sm['eager_exact'] or '-'} | {sm['bytes_exact'] or '-'} | "
                   f"{sm['compiled_exact'] or '-'} | {sm.get('cuda_compiled_exact') or '-'} |")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", required=True, type=Path, help="folder holding the torchvision and timm packages")
    ap.add_argument("--models", help="comma list of zoo/name, measured in that order (default: all "
                    + str(len(MODELS)) + ")")
    ap.add_argument("--measure", action="store_true", help="measure what the store lacks (CPU oracle)")
    ap.add_argument("--remeasure", action="store_true", help="measure again even what the store has")
    ap.add_argument("--cuda", action="store_true", help="also predict --target cuda and measure with cudagen")
    ap.add_argument("--eager-only", action="store_true",
                    help="with --measure: the CPU oracle's eager half only, for models the store lacks (a full "
                         "measurement later replaces it)")
    ap.add_argument("--measure-only", choices=("cpu", "cuda-sim"),
                    help="with --measure: measure this device only (two runs can then share the machine)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per measurement")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--markdown", type=Path, help="also write the table as markdown here (docs/zoo-scoreboard.md)")
    args = ap.parse_args()
    t0 = time.time()
    store: dict[str, Any] = json.loads(args.out.read_text()) if args.out.is_file() else {}
    measured_store: dict[str, Any] = store.setdefault("measured", {})
    tv = _torch_version()
    by_key = {f"{m.zoo}/{m.name}": m for m in MODELS}
    chosen = [by_key[k] for k in args.models.split(",")] if args.models else MODELS  # in the order asked
    rows: dict[str, Any] = {}
    print(f"{'model':<40} {'eager p/m':>12} {'bytes':>6} {'compiled p/m':>13} {'cuda p/m':>10}  notes")
    for m in chosen:
        key = f"{m.zoo}/{m.name}"
        text = script_text(m)
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        path = args.site / f"_kp_zoo_{m.zoo}_{m.name}_{os.getpid()}.py"  # two runs never share a script
        path.write_text(text)
        try:
            pc = predict(path, "cpu")
            pg = predict(path, "cuda") if args.cuda else None
            for dev, fn in (("cpu", lambda: measure_cpu(path, args.site, args.timeout, args.eager_only)),
                            ("cuda-sim", lambda: measure_cuda(path, m, args.site, args.timeout))):
                if dev == "cuda-sim" and not args.cuda or args.measure_only not in (None, dev):
                    continue
                mkey = f"{key}|{tv}|{dev}"
                old = measured_store.get(mkey)
                partial = bool(old and old.get("eager_only"))  # a full measurement replaces an eager-only one
                stale_sim = dev == "cuda-sim" and old is not None and not old.get("cudnn_layout")
                if (args.measure or args.remeasure) and (args.remeasure or not old or old.get("script") != digest
                                                         or (partial and not args.eager_only) or stale_sim):
                    t1 = time.time()
                    fig = fn()
                    prev = {"cudagen_contiguous_conv": old["compiled"]} if (
                        dev == "cuda-sim" and old and not old.get("cudnn_layout") and old.get("compiled")) else {}
                    measured_store[mkey] = {"script": digest, "seconds": round(time.time() - t1, 1), **asdict(fig),
                                            **({"eager_only": True} if args.eager_only and dev == "cpu" else {}),
                                            **({"cudnn_layout": True} if dev == "cuda-sim" else {}), **prev}
                    args.out.write_text(json.dumps(store, indent=1, sort_keys=True) + "\n")
        finally:
            path.unlink()
        mc = measured_store.get(f"{key}|{tv}|cpu") or {}
        mg = measured_store.get(f"{key}|{tv}|cuda-sim") or {}
        row = {
            "zoo": m.zoo, "model": m.name, "builder": f"{m.module}.{m.builder}({m.kwargs})", "example": m.example,
            "predicted_cpu": asdict(pc), "predicted_cuda": asdict(pg) if pg else None,
            "measured_cpu": mc or None, "measured_cuda_sim": mg or None,
            "eager_exact": _exact(pc.eager, mc.get("eager")) if mc and not mc.get("error") else None,
            "bytes_exact": _exact(pc.eager_bytes, mc.get("eager_bytes")) if mc and not mc.get("error") else None,
            "compiled_exact": _exact(pc.compiled, mc.get("compiled")) if mc and not mc.get("error") else None,
            "cuda_compiled_exact": (_exact(pg.compiled, mg.get("compiled"))
                                    if pg and mg and not mg.get("error") else None),
        }
        rows[key] = row
        note = "lower bound: " + "; ".join(pc.causes[:2]) if pc.lower_bound else (pc.error or mc.get("error") or "")
        cuda = f"{pg.compiled if pg else '-'}/{mg.get('compiled', '-')}" if args.cuda else "-"
        eager = f"{pc.eager}/{mc.get('eager', '-')}"
        comp = f"{pc.compiled}/{mc.get('compiled', '-')}"
        b = {True: "=", False: "x", None: "-"}[row["bytes_exact"]]
        print(f"{key:<40} {eager:>12} {b:>6} {comp:>13} {cuda:>10}  {note[:120]}", flush=True)
    # a run over some models keeps the other rows (re-scored by the next run over all of them)
    rows = {**{k: v for k, v in (store.get("rows") or {}).items() if k in {f"{m.zoo}/{m.name}" for m in MODELS}},
            **rows}
    summary: dict[str, Any] = {}
    for zoo in sorted({r["zoo"] for r in rows.values()}):
        zr = [r for r in rows.values() if r["zoo"] == zoo]
        s: dict[str, Any] = {"models": len(zr)}
        for k in ("eager_exact", "bytes_exact", "compiled_exact", "cuda_compiled_exact"):
            judged = [r[k] for r in zr if r[k] is not None]
            s[k] = f"{sum(judged)}/{len(judged)}" if judged else None
            if judged:
                print(f"{zoo:<12} {k:<20} {sum(judged)}/{len(judged)} = {100 * sum(judged) / len(judged):.0f}%")
        summary[zoo] = s
    store.update({"torch": tv, "rows": rows, "summary": summary,
                  "seconds": round(time.time() - t0, 1)})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(store, indent=1, sort_keys=True) + "\n")
    if args.markdown:
        args.markdown.write_text(markdown(store))
    print(f"{len(rows)} models in {time.time() - t0:.0f} s; written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
