"""kpredict: predict GPU kernel launches and memory traffic of PyTorch code without running it."""

__version__ = "0.1.0"
