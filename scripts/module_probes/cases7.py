"""Modules and functions of issue 27 item 2: 3-D pooling, instance norm, recurrent layers and cells,
transformer layers, kl_div, polar."""
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
    "maxpool3d": (lambda: nn.MaxPool3d(2), R(2, 3, 8, 8, 8)),
    "avgpool3d": (lambda: nn.AvgPool3d(2), R(2, 3, 8, 8, 8)),
    "in1d": (lambda: nn.InstanceNorm1d(4), R(2, 4, 16)),
    "in2d": (lambda: nn.InstanceNorm2d(4), R(2, 4, 8, 8)),
    "in2d_affine": (lambda: nn.InstanceNorm2d(4, affine=True), R(2, 4, 8, 8)),
    "in2d_stats": (lambda: nn.InstanceNorm2d(4, track_running_stats=True), R(2, 4, 8, 8)),
    "in3d": (lambda: nn.InstanceNorm3d(4), R(2, 4, 4, 4, 4)),
    "kl_div": (mod(lambda a, b: F.kl_div(a, b, reduction="batchmean")), R2(4, 8)),
    "kl_div_mean": (mod(lambda a, b: F.kl_div(a, b)), R2(4, 8)),
    "kl_div_log": (mod(lambda a, b: F.kl_div(a, b, reduction="sum", log_target=True)), R2(4, 8)),
    "polar": (mod(lambda a, b: torch.polar(a.abs(), b)), R2(4, 8)),
    "lstm": (lambda: nn.LSTM(8, 16, batch_first=True), R(2, 5, 8)),
    "lstm2": (lambda: nn.LSTM(8, 16, num_layers=2), R(5, 2, 8)),
    "gru": (lambda: nn.GRU(8, 16, batch_first=True), R(2, 5, 8)),
    "rnn": (lambda: nn.RNN(8, 16, batch_first=True), R(2, 5, 8)),
    "lstmcell": (lambda: nn.LSTMCell(8, 16), R(2, 8)),
    "grucell": (lambda: nn.GRUCell(8, 16), R(2, 8)),
    "rnncell": (lambda: nn.RNNCell(8, 16), R(2, 8)),
    "enc": (lambda: nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, batch_first=True), R(2, 5, 16)),
    "enc_nf": (lambda: nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0), R(5, 2, 16)),
    "dec": (lambda: mod(lambda x, m: dl(x, m))(), R2(2, 5, 16)),
}
dl = nn.TransformerDecoderLayer(16, 2, dim_feedforward=32, batch_first=True).eval()
