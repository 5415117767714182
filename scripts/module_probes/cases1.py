import torch
from torch import nn
R = lambda *s: (lambda: (torch.randn(*s),))
CASES = {
 "linear": (lambda: nn.Linear(64, 32), R(4, 16, 64)),
 "linear2d": (lambda: nn.Linear(64, 32), R(16, 64)),
 "linear_nobias": (lambda: nn.Linear(64, 32, bias=False), R(4, 16, 64)),
 "linear_1d": (lambda: nn.Linear(64, 32), R(64)),
 "conv1d": (lambda: nn.Conv1d(8, 16, 3, padding=1), R(2, 8, 32)),
 "conv2d": (lambda: nn.Conv2d(8, 16, 3, padding=1), R(2, 8, 16, 16)),
 "conv2d_nobias": (lambda: nn.Conv2d(8, 16, 3, padding=1, bias=False), R(2, 8, 16, 16)),
 "conv3d": (lambda: nn.Conv3d(4, 8, 3), R(2, 4, 8, 8, 8)),
 "convT2d": (lambda: nn.ConvTranspose2d(8, 4, 2, stride=2), R(2, 8, 8, 8)),
 "convT1d": (lambda: nn.ConvTranspose1d(8, 4, 2, stride=2), R(2, 8, 8)),
 "bn1d": (lambda: nn.BatchNorm1d(16), R(8, 16)),
 "bn1d_3d": (lambda: nn.BatchNorm1d(16), R(8, 16, 10)),
 "bn2d": (lambda: nn.BatchNorm2d(16), R(4, 16, 8, 8)),
 "bn2d_noaffine": (lambda: nn.BatchNorm2d(16, affine=False), R(4, 16, 8, 8)),
 "bn2d_nostats": (lambda: nn.BatchNorm2d(16, track_running_stats=False), R(4, 16, 8, 8)),
 "ln": (lambda: nn.LayerNorm(64), R(4, 16, 64)),
 "ln_nobias": (lambda: nn.LayerNorm(64, bias=False), R(4, 16, 64)),
 "ln_noaffine": (lambda: nn.LayerNorm(64, elementwise_affine=False), R(4, 16, 64)),
 "gn": (lambda: nn.GroupNorm(4, 16), R(2, 16, 8, 8)),
 "rms": (lambda: nn.RMSNorm(64), R(4, 16, 64)),
 "rms_eps": (lambda: nn.RMSNorm(64, eps=1e-6), R(4, 16, 64)),
 "emb": (lambda: nn.Embedding(100, 32), lambda: (torch.randint(0, 100, (4, 16)),)),
 "drop": (lambda: nn.Dropout(0.1), R(4, 64)),
 "drop0": (lambda: nn.Dropout(0.0), R(4, 64)),
}
