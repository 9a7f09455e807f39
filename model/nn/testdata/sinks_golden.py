#!/usr/bin/python3
"""Golden values for TestSinksGolden (attention_sinks_test.go), computed apart from the Go code:
the weights of attention with a learned sink logit per head, as Hugging Face's gpt_oss
eager_attention_forward computes them: the scores with the causal mask added, the head's sink
appended as one more column, the row's maximum subtracted, the softmax, and the sink's column
dropped. Two heads share the scores and have sinks 0.5 and -1.
Run: /usr/bin/python3 model/nn/testdata/sinks_golden.py
"""
import torch
import torch.nn.functional as F

z = torch.tensor([[0.5, 9, 9, 9],
                  [-1.0, 2.0, 9, 9],
                  [0.3, -0.2, 0.0, 9],
                  [1.5, -3.0, 0.7, -0.4]], dtype=torch.float64)
mask = torch.zeros(4, 4, dtype=torch.float64).masked_fill(torch.ones(4, 4, dtype=torch.bool).triu(1), float("-inf"))
sinks = torch.tensor([0.5, -1.0], dtype=torch.float64)
w = (z + mask).expand(2, 4, 4)
combined = torch.cat([w, sinks.reshape(-1, 1, 1).expand(2, 4, 1)], dim=-1)
combined = combined - combined.max(dim=-1, keepdim=True).values
probs = F.softmax(combined, dim=-1)[..., :-1]
for head in probs.tolist():
    print("{")
    for row in head:
        print("\t{" + ", ".join(f"{v:.17g}" for v in row) + "},")
    print("},")
