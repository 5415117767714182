"""Recurrent layers of issue 27 item 2 (rules/modules.toml LSTM, GRU, RNN): the configurations whose
dispatch-mode op lists the catalogue entries follow (one and two layers, bidirectional, batch_first,
with and without an initial state, unbatched input, LSTM's proj_size and bias=False, dropout between
layers in train mode). fixtures/ops/recurrent.py holds the predictions against the oracle."""
import torch
from torch import nn

MODES = ("eval", "train")

CASES = {
    "lstm_bf": (lambda: nn.LSTM(8, 16, batch_first=True), lambda: (torch.randn(2, 5, 8),)),
    "lstm_2l": (lambda: nn.LSTM(8, 16, num_layers=2), lambda: (torch.randn(5, 2, 8),)),
    "lstm_bi": (lambda: nn.LSTM(8, 16, bidirectional=True), lambda: (torch.randn(5, 2, 8),)),
    "lstm_h0": (lambda: nn.LSTM(8, 16), lambda: (torch.randn(5, 2, 8), (torch.randn(1, 2, 16), torch.randn(1, 2, 16)))),
    "lstm_unb": (lambda: nn.LSTM(8, 16), lambda: (torch.randn(5, 8),)),
    "lstm_proj": (lambda: nn.LSTM(8, 16, proj_size=4), lambda: (torch.randn(5, 2, 8),)),
    "lstm_nobias": (lambda: nn.LSTM(8, 16, bias=False), lambda: (torch.randn(5, 2, 8),)),
    "lstm_drop": (lambda: nn.LSTM(8, 16, num_layers=2, dropout=0.5), lambda: (torch.randn(3, 2, 8),)),
    "gru_bf": (lambda: nn.GRU(8, 16, batch_first=True), lambda: (torch.randn(2, 5, 8),)),
    "gru_2l": (lambda: nn.GRU(8, 16, num_layers=2), lambda: (torch.randn(5, 2, 8),)),
    "gru_bi": (lambda: nn.GRU(8, 16, bidirectional=True), lambda: (torch.randn(5, 2, 8),)),
    "gru_h0": (lambda: nn.GRU(8, 16), lambda: (torch.randn(5, 2, 8), torch.randn(1, 2, 16))),
    "gru_drop": (lambda: nn.GRU(8, 16, num_layers=2, dropout=0.5), lambda: (torch.randn(2, 2, 8),)),
    "rnn_bf": (lambda: nn.RNN(8, 16, batch_first=True), lambda: (torch.randn(2, 5, 8),)),
    "rnn_relu": (lambda: nn.RNN(8, 16, nonlinearity="relu"), lambda: (torch.randn(5, 2, 8),)),
    "rnn_2lbi": (lambda: nn.RNN(8, 16, num_layers=2, bidirectional=True), lambda: (torch.randn(5, 2, 8),)),
}
