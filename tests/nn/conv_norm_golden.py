"""Golden values of tests/nn/conv_norm_golden_test.cc: Conv1d, the transposed convolutions, the 1-D
pools, group_norm, instance_norm and 1-D batch_norm of torch.nn.functional in float64, on the
closed-form inputs the test builds the same way (wave below): each op's output and the gradient of
sum(output * wave(output.shape, 0.31, 0.2)) for each input marked `g`; for the ops with running
statistics, their values after the call (name.rm, name.rv).

    /tmp/torch2/bin/python tests/nn/conv_norm_golden.py > tests/nn/conv_norm_golden.h
"""
import math

import torch
import torch.nn.functional as F

D = torch.float64


def wave(shape, a, b, s=1.0):
    n = math.prod(shape)
    return torch.tensor([s * math.sin(a * i + b) for i in range(n)], dtype=D).reshape(shape)


def unit(shape, a, b):  # in (0.05, 0.95)
    n = math.prod(shape)
    return torch.tensor([0.05 + 0.9 * (0.5 + 0.5 * math.sin(a * i + b)) for i in range(n)], dtype=D).reshape(shape)


CASES = []


def case(name, inputs, grads, fn, stats=()):
    CASES.append((name, inputs, grads, fn, stats))


# Conv1d: odd length, stride, padding, dilation, groups; unbatched; no bias.
case("conv1d", [wave([2, 4, 11], 0.7, 0.1), wave([6, 2, 3], 0.45, 0.3), wave([6], 0.9, 0.5)], [0, 1, 2],
     lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=2, dilation=2, groups=2))
case("conv1d_unbatched", [wave([3, 9], 0.3, 0.2), wave([5, 3, 4], 0.55, 0.7)], [0, 1],
     lambda x, w: F.conv1d(x, w, None, stride=1, padding=1))
# ConvTranspose2d: uneven stride, padding, output_padding, dilation, groups.
case("conv_transpose2d", [wave([2, 4, 5, 4], 0.37, 0.1), wave([4, 3, 3, 2], 0.51, 0.4), wave([6], 0.8, 0.2)],
     [0, 1, 2], lambda x, w, b: F.conv_transpose2d(x, w, b, stride=(2, 3), padding=(1, 0), output_padding=(1, 2),
                                                   groups=2, dilation=(1, 2)))
case("conv_transpose2d_plain", [wave([1, 3, 4, 3], 0.29, 0.6), wave([3, 2, 2, 2], 0.63, 0.1)], [0, 1],
     lambda x, w: F.conv_transpose2d(x, w))
case("conv_transpose2d_unbatched", [wave([2, 3, 3], 0.41, 0.5), wave([2, 3, 3, 3], 0.27, 0.9), wave([3], 0.6, 0.1)],
     [0, 1, 2], lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1))
# ConvTranspose1d
case("conv_transpose1d", [wave([2, 3, 7], 0.33, 0.2), wave([3, 4, 4], 0.47, 0.8), wave([4], 0.7, 0.3)], [0, 1, 2],
     lambda x, w, b: F.conv_transpose1d(x, w, b, stride=3, padding=1, output_padding=2))
case("conv_transpose1d_groups", [wave([2, 4, 6], 0.23, 0.2), wave([4, 1, 3], 0.61, 0.5)], [0, 1],
     lambda x, w: F.conv_transpose1d(x, w, None, stride=2, padding=2, output_padding=1, groups=2, dilation=3))
# 1-D pools
case("max_pool1d", [wave([2, 3, 11], 0.77, 0.3)], [0],
     lambda x: F.max_pool1d(x, 3, stride=2, padding=1, dilation=2, ceil_mode=True))
case("max_pool1d_unbatched", [wave([3, 10], 0.91, 0.1)], [0], lambda x: F.max_pool1d(x, 2))
case("avg_pool1d", [wave([2, 3, 10], 0.67, 0.4)], [0],
     lambda x: F.avg_pool1d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False))
case("avg_pool1d_pad", [wave([2, 2, 9], 0.67, 0.4)], [0], lambda x: F.avg_pool1d(x, 4, stride=3, padding=2))
case("adaptive_avg_pool1d", [wave([2, 3, 10], 0.53, 0.7)], [0], lambda x: F.adaptive_avg_pool1d(x, 4))
# GroupNorm
case("group_norm", [wave([2, 6, 3, 5], 0.43, 0.1, 2.0), wave([6], 0.9, 0.4), wave([6], 0.7, 1.1)], [0, 1, 2],
     lambda x, w, b: F.group_norm(x, 3, w, b, eps=1e-5))
case("group_norm_3d_noaffine", [wave([3, 4, 7], 0.61, 0.3, 1.5)], [0], lambda x: F.group_norm(x, 2, eps=1e-3))
# InstanceNorm with running statistics (updated: name.rm, name.rv) and affine; and without either.
case("instance_norm_stats", [wave([3, 4, 7], 0.43, 0.2, 2.0), wave([4], 0.9, 0.4), wave([4], 0.7, 1.1),
                             wave([4], 0.3, 0.5), unit([4], 0.8, 0.2)], [0, 1, 2],
     lambda x, w, b, rm, rv: F.instance_norm(x, rm, rv, w, b, use_input_stats=True, momentum=0.2, eps=1e-5),
     stats=(3, 4))
case("instance_norm2d", [wave([2, 3, 4, 5], 0.37, 0.6)], [0], lambda x: F.instance_norm(x))
case("instance_norm_eval", [wave([2, 4, 6], 0.37, 0.6), wave([4], 0.3, 0.5), unit([4], 0.8, 0.2)], [0],
     lambda x, rm, rv: F.instance_norm(x, rm, rv, use_input_stats=False))
# BatchNorm1d: [N, C] and [N, C, L] in training.
case("batch_norm1d_2d", [wave([5, 4], 0.43, 0.2, 2.0), wave([4], 0.9, 0.4), wave([4], 0.7, 1.1),
                         wave([4], 0.3, 0.5), unit([4], 0.8, 0.2)], [0, 1, 2],
     lambda x, w, b, rm, rv: F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.1, eps=1e-5), stats=(3, 4))
case("batch_norm1d_3d", [wave([3, 4, 5], 0.29, 0.7, 2.0), wave([4], 0.9, 0.4), wave([4], 0.7, 1.1),
                         wave([4], 0.3, 0.5), unit([4], 0.8, 0.2)], [0, 1, 2],
     lambda x, w, b, rm, rv: F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.1, eps=1e-5), stats=(3, 4))


def fmt(t):
    return "{" + ", ".join(repr(float(v)) for v in t.detach().reshape(-1).tolist()) + "}"


def main():
    lines = []
    for name, inputs, grads, fn, stats in CASES:
        xs = [x.clone().requires_grad_(i in grads) for i, x in enumerate(inputs)]
        out = fn(*xs)
        (out * wave(list(out.shape), 0.31, 0.2)).sum().backward()
        lines.append(f'      {{"{name}.out", {fmt(out)}}},')
        lines.append(f'      {{"{name}.shape", {{{", ".join(str(s) + ".0" for s in out.shape)}}}}},')
        for i in grads:
            lines.append(f'      {{"{name}.g{i}", {fmt(xs[i].grad)}}},')
        if stats:
            lines.append(f'      {{"{name}.rm", {fmt(xs[stats[0]])}}},')
            lines.append(f'      {{"{name}.rv", {fmt(xs[stats[1]])}}},')
    print(f"""// Generated by tests/nn/conv_norm_golden.py (torch {torch.__version__}, float64); do not edit.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace colony::testing {{

// name.out: the output (name.shape its shape); name.gK: the gradient of input K; name.rm / name.rv:
// the running statistics after the call (see conv_norm_golden.py).
inline const std::map<std::string, std::vector<double>>& conv_norm_golden() {{
  static const std::map<std::string, std::vector<double>> values = {{""")
    print("\n".join(lines))
    print("""  };
  return values;
}

}  // namespace colony::testing""")


if __name__ == "__main__":
    main()
