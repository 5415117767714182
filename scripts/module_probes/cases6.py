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
CASES = {
    "pad": (mod(lambda x: F.pad(x, (1, 1))), R(4, 16)),
    "pad_relu": (mod(lambda x: F.pad(x.relu(), (1, 1, 2, 2))), R(2, 4, 8)),
    "greater": (mod(lambda x: torch.greater(x, 0)), R(4, 16)),
    "topk": (mod(lambda x: torch.topk(x, 3)[0]), R(4, 16)),
    "topk_both": (mod(lambda x: x.topk(3, dim=-1)), R(4, 16)),
    "repeat": (mod(lambda x: x.repeat(2, 3)), R(4, 16)),
    "cumsum": (mod(lambda x: torch.cumsum(x, dim=-1)), R(4, 16)),
    "cumsum_m": (mod(lambda x: x.cumsum(0) * 2), R(4, 16)),
    "normalize": (mod(lambda x: F.normalize(x, dim=-1)), R(4, 16)),
    "flip": (mod(lambda x: x.flip(-1)), R(4, 16)),
    "reshape_as": (mod(lambda x: (x * 2).reshape_as(x.t())), R(4, 16)),
    "scatter_": (mod(lambda x: x.clone().scatter_(1, torch.zeros(4, 2, dtype=torch.long), 1.0)), R(4, 16)),
}
