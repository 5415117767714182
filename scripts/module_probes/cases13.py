"""scaled_dot_product_attention on query/key/value whose last dim is strided (timm's cpubone: chunks of
a permuted projection, [N, Head, SeqLen, 3*Dims] with the last dim of stride SeqLen): neither the flash
nor the efficient kernel takes them, the math path runs."""
import torch
import torch.nn.functional as F
from torch import nn

MODES = ("eval",)


class Strided(nn.Module):
    def __init__(self, mask=False):
        super().__init__()
        self.mask = mask

    def forward(self, x):
        n, c, h, w = x.shape
        qkv = x.reshape(n, 2, c // 2, h * w).permute(0, 1, 3, 2)
        q, k, v = qkv.chunk(3, dim=3)
        m = torch.ones(h * w, h * w, dtype=torch.bool).tril() if self.mask else None
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m) + 1


class LastContiguous(nn.Module):
    def forward(self, x):
        n, c, h, w = x.shape
        q, k, v = x.reshape(n, 2, c // 2, h * w).transpose(-1, -2).contiguous().chunk(3, dim=3)
        return F.scaled_dot_product_attention(q, k, v)


R = lambda *s: (lambda: (torch.randn(*s),))  # noqa: E731
CASES = {
    "sdpa_strided": (lambda: Strided(), R(2, 48, 4, 4)),
    "sdpa_strided_mask": (lambda: Strided(True), R(2, 48, 4, 4)),
    "sdpa_chunks_contiguous": (lambda: LastContiguous(), R(2, 48, 4, 4)),
}
