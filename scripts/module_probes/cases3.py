import torch
from torch import nn
R = lambda *s: (lambda: (torch.randn(*s),))
class Loss(nn.Module):
    def __init__(self, l): super().__init__(); self.l = l
    def forward(self, x, t): return self.l(x, t)
class MHA(nn.Module):
    def __init__(self, **kw): super().__init__(); self.m = nn.MultiheadAttention(64, 4, **kw)
    def forward(self, x): return self.m(x, x, x, need_weights=False)[0]
class MHAw(nn.Module):
    def __init__(self, **kw): super().__init__(); self.m = nn.MultiheadAttention(64, 4, **kw)
    def forward(self, x): return self.m(x, x, x)[0]
class MHAkv(nn.Module):
    def __init__(self, **kw): super().__init__(); self.m = nn.MultiheadAttention(64, 4, **kw)
    def forward(self, x, y): return self.m(x, y, y, need_weights=False)[0]
CASES = {
 "ce": (lambda: Loss(nn.CrossEntropyLoss()), lambda: (torch.randn(16, 10), torch.randint(0, 10, (16,)))),
 "ce3d": (lambda: Loss(nn.CrossEntropyLoss()), lambda: (torch.randn(4, 10, 8), torch.randint(0, 10, (4, 8)))),
 "ce_ls": (lambda: Loss(nn.CrossEntropyLoss(label_smoothing=0.1)), lambda: (torch.randn(16, 10), torch.randint(0, 10, (16,)))),
 "ce_ignore": (lambda: Loss(nn.CrossEntropyLoss(ignore_index=-1)), lambda: (torch.randn(16, 10), torch.randint(0, 10, (16,)))),
 "mse": (lambda: Loss(nn.MSELoss()), lambda: (torch.randn(16, 10), torch.randn(16, 10))),
 "mse_sum": (lambda: Loss(nn.MSELoss(reduction="sum")), lambda: (torch.randn(16, 10), torch.randn(16, 10))),
 "l1": (lambda: Loss(nn.L1Loss()), lambda: (torch.randn(16, 10), torch.randn(16, 10))),
 "nll": (lambda: Loss(nn.NLLLoss()), lambda: (torch.randn(16, 10), torch.randint(0, 10, (16,)))),
 "bce_logits": (lambda: Loss(nn.BCEWithLogitsLoss()), lambda: (torch.randn(16, 10), torch.rand(16, 10))),
 "mha_bf": (lambda: MHA(batch_first=True), R(2, 16, 64)),
 "mha": (lambda: MHA(), R(16, 2, 64)),
 "mha_w": (lambda: MHAw(batch_first=True), R(2, 16, 64)),
 "mha_kv": (lambda: MHAkv(batch_first=True), lambda: (torch.randn(2, 16, 64), torch.randn(2, 8, 64))),
 "mha_nobias": (lambda: MHA(batch_first=True, bias=False), R(2, 16, 64)),
}
