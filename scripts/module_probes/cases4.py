import torch
from torch import nn
R = lambda *s: (lambda: (torch.randn(*s),))
MODES = ("eval",)
class F1(nn.Module):
    def forward(self, x, s): return x.sum(-1), s.add_(1)
class F2(nn.Module):
    def forward(self, x, s): return x.relu(), s.add_(1)
class CC(nn.Module):
    def __init__(self): super().__init__(); self.a = nn.Conv2d(8, 8, 3, padding=1); self.b = nn.Conv2d(8, 8, 3, padding=1)
    def forward(self, x): return self.b(self.a(x))
class CRC(nn.Module):
    def __init__(self): super().__init__(); self.a = nn.Conv2d(8, 8, 3, padding=1); self.b = nn.Conv2d(8, 8, 3, padding=1)
    def forward(self, x): return self.b(self.a(x).relu())
class RC(nn.Module):
    def __init__(self): super().__init__(); self.a = nn.Conv2d(8, 8, 3, padding=1)
    def forward(self, x): return self.a(x.relu())
class CR(nn.Module):
    def __init__(self): super().__init__(); self.a = nn.Conv2d(8, 8, 3, padding=1)
    def forward(self, x): return self.a(x).relu()
class Res(nn.Module):
    def __init__(self): super().__init__(); self.a = nn.Conv2d(8, 8, 3, padding=1)
    def forward(self, x): return self.a(x) + x
class CPool(nn.Module):
    def __init__(self): super().__init__(); self.a = nn.Conv2d(8, 8, 3, padding=1); self.p = nn.AdaptiveAvgPool2d(1)
    def forward(self, x): return self.p(self.a(x)).flatten(1)
class CBR(nn.Module):
    def __init__(self): super().__init__(); self.m = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
    def forward(self, x): return self.m(x)
class C1x1(nn.Module):
    def __init__(self): super().__init__(); self.a = nn.Conv2d(8, 8, 1)
    def forward(self, x): return self.a(x)
class CS2(nn.Module):
    def __init__(self): super().__init__(); self.a = nn.Conv2d(8, 8, 3, stride=2, padding=1)
    def forward(self, x): return self.a(x)
class CG(nn.Module):
    def __init__(self): super().__init__(); self.a = nn.Conv2d(8, 8, 3, padding=1, groups=8)
    def forward(self, x): return self.a(x)
class CLin(nn.Module):
    def __init__(self): super().__init__(); self.a = nn.Conv2d(8, 8, 3, padding=1); self.l = nn.Linear(8*16*16, 10)
    def forward(self, x): return self.l(self.a(x).flatten(1))
CASES = {
 "sum_and_counter": (F1, lambda: (torch.randn(8, 64), torch.zeros((), dtype=torch.long))),
 "relu_and_counter": (F2, lambda: (torch.randn(8, 64), torch.zeros((), dtype=torch.long))),
 "conv_conv": (CC, R(2, 8, 16, 16)), "conv_relu_conv": (CRC, R(2, 8, 16, 16)), "relu_conv": (RC, R(2, 8, 16, 16)),
 "conv_relu": (CR, R(2, 8, 16, 16)), "conv_res": (Res, R(2, 8, 16, 16)), "conv_pool": (CPool, R(2, 8, 16, 16)),
 "conv_bn_relu": (CBR, R(2, 8, 16, 16)), "conv1x1": (C1x1, R(2, 8, 16, 16)), "conv_s2": (CS2, R(2, 8, 16, 16)),
 "conv_dw": (CG, R(2, 8, 16, 16)), "conv_linear": (CLin, R(2, 8, 16, 16)),
 "conv_b1": (C1x1, R(1, 8, 16, 16)),
}
