"""The PyTorch outputs embedded in tests/nn/normalization_test.cc (RMSNorm.DefaultEps...).

    /tmp/torch2/bin/python tests/nn/normalization_golden.py    # torch 2.15.0

rms_norm with eps=None on a row of 1e-4 in each dtype (the default eps is float32's epsilon for the
16-bit dtypes), and layer_norm of a bfloat16 row.
"""
import torch

row = torch.full((1, 4), 1e-4)
for dt in (torch.bfloat16, torch.float16, torch.float32, torch.float64):
    print(dt, repr(torch.nn.functional.rms_norm(row.to(dt), (4,)).double()[0, 0].item()))
x = torch.tensor([[1.0, 2.0, 3.5, -4.25, 100.0]]).bfloat16()
print("layer_norm bfloat16", torch.nn.functional.layer_norm(x, (5,)).double().tolist())
