#!/usr/bin/python3
"""Golden values for TestSoftpickGolden (attention_softpick_test.go), computed apart from the Go
code: the weights of softpick attention on four tokens whose scores are set by hand, with the
reference's softpick (zaydzuhri/softpick-attention, the naive PyTorch version: the row's max
subtracted, ReLU over the sum of absolute values plus eps 1e-8) and the causal mask as -inf.
Run: /usr/bin/python3 model/nn/testdata/softpick_golden.py
"""
import torch
import torch.nn.functional as F


def softpick(x, dim=-1, eps=1e-8):
    x_m = torch.max(x, dim=dim, keepdim=True).values
    x_m_e_m = torch.exp(-x_m)
    x_e_1 = torch.exp(x - x_m) - x_m_e_m
    r_x_e_1 = F.relu(x_e_1)
    a_x_e_1 = torch.where(x.isfinite(), torch.abs(x_e_1), torch.zeros_like(x))
    return r_x_e_1 / (torch.sum(a_x_e_1, dim=dim, keepdim=True) + eps)


z = torch.tensor([[0.5, 9, 9, 9],
                  [-1.0, 2.0, 9, 9],
                  [0.3, -0.2, 0.0, 9],
                  [1.5, -3.0, 0.7, -0.4]], dtype=torch.float64)
mask = torch.ones(4, 4, dtype=torch.bool).triu(1)
y = softpick(z.masked_fill(mask, float("-inf")))
for row in y.tolist():
    print("{" + ", ".join(f"{v:.17g}" for v in row) + "},")
