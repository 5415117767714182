"""Ops met in the public model zoos (scripts/zoo_scoreboard.py, timm's wider list): interpolation modes
other than nearest 2-D (efficientformerv2, csatv2: bilinear; crossvit, sam2: bicubic), padding modes other
than constant (tresnet's blur pool: reflect), im2col / col2im (volo, tnt: nn.Unfold, F.fold) and
Tensor.tile (sam2's window position embedding)."""
import torch
import torch.nn.functional as F
from torch import nn

MODES = ("eval",)


def mod(fn):
    class M(nn.Module):
        def forward(self, *a):
            return fn(*a)
    return M


R = lambda *s: (lambda: (torch.randn(*s),))  # noqa: E731
CASES = {
    "bilinear": (mod(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear")), R(2, 4, 8, 8)),
    "bilinear_ac": (mod(lambda x: F.interpolate(x, size=(12, 10), mode="bilinear", align_corners=True)), R(2, 4, 8, 8)),
    "bilinear_relu": (mod(lambda x: F.interpolate(x.relu(), scale_factor=2, mode="bilinear") + 1), R(2, 4, 8, 8)),
    "bicubic": (mod(lambda x: F.interpolate(x, size=(12, 12), mode="bicubic", align_corners=False)), R(2, 4, 8, 8)),
    "linear1d": (mod(lambda x: F.interpolate(x, scale_factor=2, mode="linear")), R(2, 4, 16)),
    "nearest1d": (mod(lambda x: F.interpolate(x, scale_factor=2)), R(2, 4, 16)),
    "nearest3d": (mod(lambda x: F.interpolate(x, scale_factor=2)), R(1, 2, 4, 4, 4)),
    "trilinear": (mod(lambda x: F.interpolate(x, scale_factor=2, mode="trilinear")), R(1, 2, 4, 4, 4)),
    "nearest_exact": (mod(lambda x: F.interpolate(x, size=(12, 12), mode="nearest-exact")), R(2, 4, 8, 8)),
    "area": (mod(lambda x: F.interpolate(x, size=(4, 4), mode="area")), R(2, 4, 8, 8)),
    "upsample_bilinear_m": (lambda: nn.Upsample(scale_factor=2, mode="bilinear"), R(2, 4, 8, 8)),
    "upsampling_bilinear2d": (lambda: nn.UpsamplingBilinear2d(scale_factor=2), R(2, 4, 8, 8)),
    "upsampling_nearest2d": (lambda: nn.UpsamplingNearest2d(scale_factor=2), R(2, 4, 8, 8)),
    "reflect2d": (mod(lambda x: F.pad(x, (1, 1, 1, 1), mode="reflect")), R(2, 4, 8, 8)),
    "reflect2d_relu": (mod(lambda x: F.pad(x.relu(), (1, 2, 0, 1), mode="reflect") * 2), R(2, 4, 8, 8)),
    "reflect1d": (mod(lambda x: F.pad(x, (2, 1), mode="reflect")), R(2, 4, 16)),
    "replicate2d": (mod(lambda x: F.pad(x, (1, 1, 1, 1), mode="replicate")), R(2, 4, 8, 8)),
    "replicate3d": (mod(lambda x: F.pad(x, (1, 1, 1, 1, 1, 1), mode="replicate")), R(1, 2, 4, 4, 4)),
    "circular2d": (mod(lambda x: F.pad(x, (1, 1, 1, 1), mode="circular")), R(2, 4, 8, 8)),
    "reflectionpad2d_m": (lambda: nn.ReflectionPad2d(1), R(2, 4, 8, 8)),
    "replicationpad1d_m": (lambda: nn.ReplicationPad1d((1, 2)), R(2, 4, 16)),
    "circularpad2d_m": (lambda: nn.CircularPad2d(1), R(2, 4, 8, 8)),
    "unfold": (mod(lambda x: F.unfold(x, kernel_size=3, padding=1, stride=2)), R(2, 4, 8, 8)),
    "unfold_patch": (lambda: nn.Unfold(kernel_size=4, stride=4), R(2, 3, 16, 16)),
    "unfold_relu": (mod(lambda x: F.unfold(x.relu(), kernel_size=2, stride=2) * 2), R(2, 4, 8, 8)),
    "fold": (mod(lambda x: F.fold(x, output_size=(8, 8), kernel_size=3, padding=1, stride=2)), R(2, 36, 16)),
    "fold_m": (lambda: nn.Fold(output_size=(8, 8), kernel_size=2, stride=2), R(2, 16, 16)),
    "tile": (mod(lambda x: x.tile((2, 3))), R(4, 8)),
    "tile_short": (mod(lambda x: torch.tile(x, (2,))), R(3, 4, 8)),
    "tile_add": (mod(lambda x: x + x[0].tile((4, 1))), R(4, 8)),
}
