# Generates the golden values of sort_ops_test.cc (NaN and signed-zero ordering) with PyTorch.
import torch

x = torch.tensor([[3.0, float("nan"), 1.0, 2.0, float("nan"), -0.0, 0.0, 1.0]])
print(torch.sort(x, stable=True))
print(torch.sort(x, descending=True, stable=True))
print(torch.topk(x, 3))
print(torch.topk(x, 3, largest=False))
