# The PyTorch results indexing_test.cc embeds (shapes and values of x[...] and x[...] = v).
import torch

x = torch.arange(24).reshape(2, 3, 4)
print(x[..., None, 1:3, torch.tensor([[0, 1], [2, 2]])].shape)  # (2, 1, 2, 2, 2)
t = torch.arange(10)
print(t[-3:], t[::2], t[8:2], t[-100:100])
print(x[1, 1:3, ::3])
y = torch.arange(8.0).reshape(4, 2)
y[torch.tensor([3, -4])] = torch.tensor([[5.0, 6.0], [8.0, 9.0]])
print(y)
