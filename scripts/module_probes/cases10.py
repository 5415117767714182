"""Ops met in the public model zoos (scripts/zoo_scoreboard.py): torch.roll, in swin's shifted windows
(torchvision swin_t, timm swin), with one and two dims, as a method, and feeding a pointwise op."""
import torch
from torch import nn

MODES = ("eval",)


def mod(fn):
    class M(nn.Module):
        def forward(self, *a):
            return fn(*a)
    return M


R = lambda *s: (lambda: (torch.randn(*s),))  # noqa: E731
CASES = {
    "roll": (mod(lambda x: torch.roll(x, 3, -1)), R(4, 16)),
    "roll2": (mod(lambda x: torch.roll(x, shifts=(-2, -2), dims=(1, 2))), R(2, 8, 8, 4)),
    "roll_m": (mod(lambda x: x.roll(1, 0) + 1), R(4, 16)),
    "roll_flat": (mod(lambda x: torch.roll(x, 5)), R(4, 16)),
}
