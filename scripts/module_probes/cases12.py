"""Convolutions that read a channels-last view (timm's mambaout: `c = split(fc1(x), dim=-1)[2];
c.permute(0, 3, 1, 2)` into a depthwise convolution): which layout copies Inductor puts around them
on CPU, for depthwise, 1x1 and dense 3x3 kernels, from a split (padded rows) and from a whole tensor; and a convolution of a 1x1 image (timm's convolutional classifier heads)."""
import torch
from torch import nn

MODES = ("eval",)


class Split(nn.Module):
    def __init__(self, conv):
        super().__init__()
        self.fc = nn.Linear(8, 24)
        self.conv = conv

    def forward(self, x):
        a, b, c = torch.split(self.fc(x), [8, 8, 8], dim=-1)
        c = self.conv(c.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
        return torch.cat((a * b, c), dim=-1).sigmoid()


class Whole(nn.Module):
    def __init__(self, conv):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.conv = conv

    def forward(self, x):
        c = self.conv(self.fc(x).permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
        return c.sigmoid()


class PooledConv(nn.Module):
    """timm's ClassifierHead(use_conv=True): a global mean, then a 1x1 convolution as the classifier."""
    def __init__(self, k=1):
        super().__init__()
        self.conv = nn.Conv2d(8, 4, k, padding=k // 2)

    def forward(self, x):
        return self.conv(x.relu().mean((2, 3), keepdim=True)).flatten(1)


R = lambda *s: (lambda: (torch.randn(*s),))  # noqa: E731
CASES = {
    "split_dw": (lambda: Split(nn.Conv2d(8, 8, 7, padding=3, groups=8)), R(2, 6, 6, 8)),
    "split_1x1": (lambda: Split(nn.Conv2d(8, 8, 1)), R(2, 6, 6, 8)),
    "split_3x3": (lambda: Split(nn.Conv2d(8, 8, 3, padding=1)), R(2, 6, 6, 8)),
    "whole_dw": (lambda: Whole(nn.Conv2d(8, 8, 7, padding=3, groups=8)), R(2, 6, 6, 8)),
    "whole_1x1": (lambda: Whole(nn.Conv2d(8, 8, 1)), R(2, 6, 6, 8)),
    "whole_3x3": (lambda: Whole(nn.Conv2d(8, 8, 3, padding=1)), R(2, 6, 6, 8)),
    "pooled_1x1": (lambda: PooledConv(1), R(2, 8, 6, 6)),
    "pooled_3x3": (lambda: PooledConv(3), R(2, 8, 6, 6)),
}
