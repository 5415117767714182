import torch
from torch import nn
import torch.nn.functional as F
R = lambda *s: (lambda: (torch.randn(*s),))
MODES = ("eval", "train")
class DL(nn.Module):
    def __init__(self): super().__init__(); self.d = nn.Dropout(0.1); self.l = nn.Linear(64, 64)
    def forward(self, x): return self.l(self.d(x))
class LD(nn.Module):
    def __init__(self): super().__init__(); self.d = nn.Dropout(0.1); self.l = nn.Linear(64, 64)
    def forward(self, x): return self.d(self.l(x))
class DR(nn.Module):
    def __init__(self): super().__init__(); self.d = nn.Dropout(0.1)
    def forward(self, x): return self.d(x).relu()
class RD(nn.Module):
    def __init__(self): super().__init__(); self.d = nn.Dropout(0.1)
    def forward(self, x): return self.d(x.relu())
class ResD(nn.Module):
    def __init__(self): super().__init__(); self.d = nn.Dropout(0.1); self.l = nn.Linear(64, 64)
    def forward(self, x): return x + self.d(self.l(x))
class DD(nn.Module):
    def __init__(self): super().__init__(); self.d = nn.Dropout(0.1)
    def forward(self, x): return self.d(x) + self.d(x)
class SDPAdrop(nn.Module):
    def forward(self, q): return F.scaled_dot_product_attention(q, q, q, dropout_p=0.1 if self.training else 0.0, is_causal=True)
class BNtr(nn.Module):
    def __init__(self): super().__init__(); self.b = nn.BatchNorm2d(8)
    def forward(self, x): return self.b(x).relu()
class Emb2(nn.Module):
    def __init__(self): super().__init__(); self.a = nn.Embedding(100, 32); self.b = nn.Embedding(16, 32)
    def forward(self, i): return self.a(i) + self.b(torch.arange(i.shape[1]))
CASES = {
 "drop_lin": (DL, R(4, 64)), "lin_drop": (LD, R(4, 64)), "drop_relu": (DR, R(4, 64)), "relu_drop": (RD, R(4, 64)),
 "res_drop": (ResD, R(4, 64)), "drop_drop": (DD, R(4, 64)), "sdpa_drop": (SDPAdrop, R(2, 2, 16, 8)),
 "bn_relu": (BNtr, R(2, 8, 8, 8)), "emb2": (Emb2, lambda: (torch.randint(0, 100, (2, 16)),)),
}
