import torch
from torch import nn
R = lambda *s: (lambda: (torch.randn(*s),))
MODES = ("eval",)
CASES = {n: (f, R(4, 64)) for n, f in {
 "relu": nn.ReLU, "relu_inplace": lambda: nn.ReLU(inplace=True), "gelu": nn.GELU, "gelu_tanh": lambda: nn.GELU(approximate="tanh"),
 "silu": nn.SiLU, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid, "softmax": lambda: nn.Softmax(dim=-1), "logsoftmax": lambda: nn.LogSoftmax(dim=-1),
 "leaky": nn.LeakyReLU, "elu": nn.ELU, "mish": nn.Mish, "hardswish": nn.Hardswish, "hardsigmoid": nn.Hardsigmoid, "relu6": nn.ReLU6,
 "softplus": nn.Softplus, "identity": nn.Identity, "flatten": nn.Flatten, "prelu": nn.PReLU, "selu": nn.SELU, "celu": nn.CELU,
 "hardtanh": nn.Hardtanh, "softsign": nn.Softsign, "tanhshrink": nn.Tanhshrink, "logsigmoid": nn.LogSigmoid, "glu": nn.GLU,
}.items()}
CASES.update({
 "maxpool2d": (lambda: nn.MaxPool2d(2), R(2, 8, 16, 16)),
 "maxpool2d_s": (lambda: nn.MaxPool2d(3, stride=2, padding=1), R(2, 8, 16, 16)),
 "maxpool1d": (lambda: nn.MaxPool1d(2), R(2, 8, 16)),
 "avgpool2d": (lambda: nn.AvgPool2d(2), R(2, 8, 16, 16)),
 "avgpool1d": (lambda: nn.AvgPool1d(2), R(2, 8, 16)),
 "aap2d_1": (lambda: nn.AdaptiveAvgPool2d(1), R(2, 8, 16, 16)),
 "aap2d_11": (lambda: nn.AdaptiveAvgPool2d((1, 1)), R(2, 8, 16, 16)),
 "aap2d_7": (lambda: nn.AdaptiveAvgPool2d(7), R(2, 8, 14, 14)),
 "aap1d_1": (lambda: nn.AdaptiveAvgPool1d(1), R(2, 8, 16)),
 "amp2d_1": (lambda: nn.AdaptiveMaxPool2d(1), R(2, 8, 16, 16)),
 "flatten4d": (lambda: nn.Flatten(), R(2, 8, 4, 4)),
 "upsample": (lambda: nn.Upsample(scale_factor=2, mode="nearest"), R(2, 8, 8, 8)),
 "pixelshuffle": (lambda: nn.PixelShuffle(2), R(2, 8, 8, 8)),
})
