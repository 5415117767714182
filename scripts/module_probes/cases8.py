"""Simple torch.nn modules of issue 27 item 2 that had no catalogue entry."""
import torch
import torch.nn.functional as F
from torch import nn

MODES = ("eval",)


def mod(fn):
    class M(nn.Module):
        def forward(self, *a):
            return fn(*a)
    return M


R = lambda *s: (lambda: (torch.randn(*s),))
R2 = lambda *s: (lambda: (torch.randn(*s), torch.randn(*s)))
CASES = {
    "aap3d_1": (lambda: nn.AdaptiveAvgPool3d(1), R(2, 3, 4, 4, 4)),
    "drop2d": (lambda: nn.Dropout2d(0.1), R(2, 3, 4, 4)),
    "zeropad2d": (lambda: nn.ZeroPad2d(1), R(2, 3, 4, 4)),
    "constpad1d": (lambda: nn.ConstantPad1d((1, 2), 0.5), R(2, 3, 4)),
    "softmin": (lambda: nn.Softmin(dim=-1), R(4, 8)),
    "softshrink": (lambda: nn.Softshrink(), R(4, 8)),
    "hardshrink": (lambda: nn.Hardshrink(), R(4, 8)),
    "threshold": (lambda: nn.Threshold(0.1, 20.0), R(4, 8)),
    "softmax2d": (lambda: nn.Softmax2d(), R(2, 3, 4, 4)),
    "smoothl1": (lambda: nn.SmoothL1Loss(), R2(4, 8)),
    "huber": (lambda: nn.HuberLoss(), R2(4, 8)),
    "kldivloss": (lambda: nn.KLDivLoss(reduction="batchmean"), R2(4, 8)),
    "pixunshuffle": (lambda: nn.PixelUnshuffle(2), R(2, 3, 4, 4)),
    "cossim": (lambda: nn.CosineSimilarity(dim=1), R2(4, 8)),
    "softsign_f": (mod(lambda x: F.softsign(x)), R(4, 8)),
    "tanhshrink_f": (mod(lambda x: F.tanhshrink(x)), R(4, 8)),
    "instance_norm_f": (mod(lambda x: F.instance_norm(x)), R(2, 4, 8)),
    "maxpool3d_f": (mod(lambda x: F.max_pool3d(x, 2)), R(2, 3, 8, 8, 8)),
    "avgpool3d_f": (mod(lambda x: F.avg_pool3d(x, 2)), R(2, 3, 8, 8, 8)),
}
