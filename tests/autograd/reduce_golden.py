"""Writes tests/autograd/reduce_golden.h: torch's results (values, indices and the gradient of
sum(out * grad_output)) for the scans, products, order statistics and NaN-aware reductions that
scan_test.cc and order_stats_test.cc check by name (and norm, cumsum and clamp's gradient, for
reduce_test.cc, cumsum_test.cc and unary_test.cc).

    /tmp/torch2/bin/python tests/autograd/reduce_golden.py > tests/autograd/reduce_golden.h
"""
import math

import torch

nan, inf = float("nan"), float("inf")
F64, F32, I64, I32, U8, B = torch.float64, torch.float32, torch.int64, torch.int32, torch.uint8, torch.bool
DTYPES = {F64: "kFloat64", F32: "kFloat32", I64: "kInt64", I32: "kInt32", U8: "kUInt8", B: "kBool"}

CASES = []


def case(name, values, dtype, fn, shape=None, grad=True):
    """values: a nested list (or a flat one with shape). fn(x) returns a tensor or (values, indices).
    grad=False compares the values only (where Colony's gradient deliberately differs from torch's)."""
    x = torch.tensor(values, dtype=dtype)
    if shape is not None:
        x = x.reshape(shape)
    CASES.append((name, x, fn, grad))


def lit(v):
    v = float(v)
    if math.isnan(v):
        return "kNaN"
    if math.isinf(v):
        return "kInf" if v > 0 else "-kInf"
    return repr(v)


def vec(t):
    return "{" + ", ".join(lit(v) for v in t.reshape(-1).tolist()) + "}"


def shape(t):
    return "{" + ", ".join(str(s) for s in t.shape) + "}"


def emit(name, x, fn, grad):
    differentiable = x.dtype.is_floating_point and grad
    xin = x.clone().requires_grad_(differentiable)
    res = fn(xin)
    values, indices = (res[0], res[1]) if isinstance(res, tuple) else (res, None)
    grad_out = grad = None
    if differentiable and values.requires_grad:
        grad_out = torch.linspace(0.5, 1.5, values.numel(), dtype=values.dtype).reshape(values.shape) \
            if values.numel() > 1 else torch.full(values.shape, 0.75, dtype=values.dtype)
        (values * grad_out).sum().backward()
        grad = xin.grad if xin.grad is not None else torch.zeros_like(x)
    idx = "{" + ", ".join(str(i) for i in indices.reshape(-1).tolist()) + "}" if indices is not None else "{}"
    print(f'    {{"{name}", {DTYPES[x.dtype]}, {shape(x)}, {vec(x)},')
    print(f'     {shape(values)}, {DTYPES[values.dtype]}, {vec(values.detach())}, {idx},')
    print(f'     {vec(grad_out) if grad_out is not None else "{}"}, {vec(grad) if grad is not None else "{}"}}},')


# ---- scans and products (scan_test.cc) ----
case("cumprod/f64", [[0.5, -2.0, 3.0, 1.5], [1.25, 0.8, -0.6, 2.0]], F64, lambda x: torch.cumprod(x, 1))
case("cumprod/f64/dim0", [[0.5, -2.0, 3.0, 1.5], [1.25, 0.8, -0.6, 2.0]], F64, lambda x: torch.cumprod(x, -2))
case("cumprod/f64/one_zero", [[0.5, 0.0, 3.0, 1.5], [1.25, 0.8, -0.6, 0.0]], F64, lambda x: torch.cumprod(x, 1))
case("cumprod/f64/two_zeros", [[0.0, 2.0, 0.0, 1.5, 3.0]], F64, lambda x: torch.cumprod(x, -1))
case("cumprod/f32/3d", [0.9, 1.1, -1.3, 0.7, 2.0, 0.0, 1.5, -0.5, 0.25, 4.0, 1.2, 0.8], F32,
     lambda x: torch.cumprod(x, 1), shape=(2, 3, 2))
case("cumprod/i32", [[2, -3, 4], [0, 5, 6]], I32, lambda x: torch.cumprod(x, 1))
case("cumprod/bool", [True, True, False, True], B, lambda x: torch.cumprod(x, 0))
case("cumprod/u8", [200, 2, 3], U8, lambda x: torch.cumprod(x, 0))
# torch's gradient divides by the input, so it is NaN at the NaN too; Colony's is the exact product
# of the others there (11 for grad_output [0.5, 1, 1.5]), so the values only.
case("cumprod/nan", [2.0, nan, 3.0], F64, lambda x: torch.cumprod(x, 0), grad=False)
case("cumprod/size1", [[1.5], [-2.0]], F64, lambda x: torch.cumprod(x, 1))
case("cumprod/scalar", 2.5, F64, lambda x: torch.cumprod(x, 0))
case("prod/all", [[0.5, -2.0, 3.0], [1.25, 0.8, -0.6]], F64, lambda x: torch.prod(x))
case("prod/all/one_zero", [[0.5, -2.0, 0.0], [1.25, 0.8, -0.6]], F64, lambda x: torch.prod(x))
case("prod/all/two_zeros", [[0.5, 0.0, 3.0], [1.25, 0.0, -0.6]], F64, lambda x: torch.prod(x))
case("prod/dim1", [[0.5, -2.0, 3.0], [1.25, 0.0, -0.6], [0.0, 0.0, 2.0]], F64, lambda x: torch.prod(x, 1))
case("prod/dim0/keepdim", [[0.5, -2.0, 3.0], [1.25, 0.0, -0.6]], F64, lambda x: torch.prod(x, -2, keepdim=True))
case("prod/f32", [1.5, 2.0, -0.25, 4.0], F32, lambda x: torch.prod(x))
case("prod/i32", [[2, -3, 4], [1, 5, 6]], I32, lambda x: torch.prod(x, 1))
case("prod/bool", [True, True, True], B, lambda x: torch.prod(x))
case("prod/empty", [], F64, lambda x: torch.prod(x))
case("prod/empty_dim", [], F64, lambda x: torch.prod(x, 1), shape=(2, 0))
case("prod/nan", [2.0, nan, 0.0], F64, lambda x: torch.prod(x))
case("cummax/f64", [1.0, 3.0, 3.0, 2.0, 5.0, 5.0, 4.0], F64, lambda x: torch.cummax(x, 0))
case("cummax/nan", [1.0, 3.0, nan, 2.0, nan, 5.0], F64, lambda x: torch.cummax(x, 0))
case("cummax/2d", [[1.0, 4.0, 2.0], [3.0, 0.5, 2.0], [2.0, 6.0, 2.0]], F64, lambda x: torch.cummax(x, 0))
case("cummin/2d", [[1.0, 4.0, 2.0], [3.0, 0.5, 2.0], [0.0, 6.0, 2.0]], F64, lambda x: torch.cummin(x, -1))
case("cummin/nan", [3.0, 1.0, 1.0, nan, 0.0], F64, lambda x: torch.cummin(x, 0))
case("cummax/f32", [0.5, -1.0, 2.5, 2.5], F32, lambda x: torch.cummax(x, 0))
case("cummax/i32", [[2, 2, 1, 3, 3]], I32, lambda x: torch.cummax(x, 1))
case("cummin/i64", [[5, -2, 7, -2, -3]], I64, lambda x: torch.cummin(x, 1))
case("cummax/bool", [True, False, True], B, lambda x: torch.cummax(x, 0))
case("cummax/empty", [], F64, lambda x: torch.cummax(x, 0))
case("logcumsumexp/f64", [[0.5, -2.0, 3.0, 1.5], [100.0, 101.0, -50.0, 99.0]], F64, lambda x: torch.logcumsumexp(x, 1))
case("logcumsumexp/f64/dim0", [[0.5, -2.0, 3.0], [1.25, 0.8, -0.6]], F64, lambda x: torch.logcumsumexp(x, 0))
case("logcumsumexp/inf", [-inf, -inf, 1.0, inf, 2.0], F64, lambda x: torch.logcumsumexp(x, 0))
case("logcumsumexp/nan", [1.0, nan, 2.0], F64, lambda x: torch.logcumsumexp(x, 0))
case("logcumsumexp/f32", [-1000.0, -999.0, 0.0, 80.0, 90.0], F32, lambda x: torch.logcumsumexp(x, 0))

# ---- the 2-norm by one read (reduce_test.cc), cumsum's reversed-scan gradient (cumsum_test.cc) ----
# Rows of 13 (a vector loop's tail), a zero row (gradient 0), a NaN, an infinity, -0.
_g = torch.Generator().manual_seed(21)
NR = (torch.rand(4, 13, generator=_g, dtype=F64) * 4 - 2).tolist()
NR[1] = [0.0] * 12 + [-0.0]
NR[2][5] = nan
NR[3][7] = -inf
NC = (torch.rand(3, 5, 7, generator=_g, dtype=F64) * 4 - 2).tolist()
case("norm2/rows", NR, F64, lambda x: torch.linalg.vector_norm(x, 2, dim=1))
case("norm2/rows/f32", NR, F32, lambda x: torch.linalg.vector_norm(x, 2, dim=-1, keepdim=True))
case("norm2/dim0/f32", NC, F32, lambda x: torch.linalg.vector_norm(x, 2, dim=0))
case("norm2/dim1/keepdim", NC, F64, lambda x: torch.linalg.vector_norm(x, 2, dim=1, keepdim=True))
case("norm2/dims02", NC, F32, lambda x: torch.linalg.vector_norm(x, 2, dim=(0, 2)))
case("norm2/all", NC, F64, lambda x: torch.linalg.vector_norm(x, 2))
case("norm2/overflow/f32", [[3e19, 4e19], [3e-30, 4e-30]], F32, lambda x: torch.linalg.vector_norm(x, 2, dim=1))
case("norm2/empty_rows", [], F64, lambda x: torch.linalg.vector_norm(x, 2, dim=1), shape=(3, 0))
case("norm2/scalar", -2.5, F64, lambda x: torch.linalg.vector_norm(x, 2))
CS = (torch.rand(3, 37, generator=_g, dtype=F64) * 4 - 2)
CS[1, 20] = nan
CS[2, 3] = inf
case("cumsum/rows/f32", CS.tolist(), F32, lambda x: torch.cumsum(x, 1))
case("cumsum/rows/f64", CS.tolist(), F64, lambda x: torch.cumsum(x, -1))
case("cumsum/dim0/f32", (torch.rand(9, 2, 5, generator=_g, dtype=F64) * 4 - 2).tolist(), F32,
     lambda x: torch.cumsum(x, 0))
case("cumsum/dim1/f64", (torch.rand(2, 9, 5, generator=_g, dtype=F64) * 4 - 2).tolist(), F64,
     lambda x: torch.cumsum(x, 1))
case("cumsum/one", [[1.5], [-2.0]], F64, lambda x: torch.cumsum(x, 1))
case("cumsum/scalar", 2.5, F64, lambda x: torch.cumsum(x, 0))

# ---- clamp's gradient (unary_test.cc; one input, so this table's format) ----
# torch 2.15's clamp_backward: 0 at the bounds themselves, beyond them and at NaN; a float32 input
# compared with the bounds rounded to float32 (0.1 and 0.2 below sit exactly on them).
CX = [nan, -1.0, -0.5, 0.0, -0.0, 0.5, 1.0, inf, -inf, 0.3, -0.7, 0.49999]
case("clamp/both", CX, F64, lambda x: torch.clamp(x, -0.5, 0.5))
case("clamp/both/f32", CX, F32, lambda x: torch.clamp(x, -0.5, 0.5))
case("clamp/min/f32", CX, F32, lambda x: torch.clamp(x, min=-0.5))
case("clamp/max", CX, F64, lambda x: torch.clamp(x, max=0.5))
case("clamp/crossed", CX, F64, lambda x: torch.clamp(x, 0.5, -0.5))
case("clamp/rounded_bounds/f32", [0.1, 0.2, 0.15, 0.1000001, 0.0999999], F32, lambda x: torch.clamp(x, 0.1, 0.2))
case("clamp/rows/f32", (torch.rand(3, 37, generator=_g, dtype=F64) * 4 - 2).tolist(), F32,
     lambda x: torch.clamp(x, -0.5, 0.5))

# ---- order statistics and NaN-aware reductions (order_stats_test.cc) ----
M = [[0.3, -1.2, 2.5, 0.7, -0.4], [1.1, 0.9, -2.0, 3.3, 0.2], [-0.6, 0.8, 1.7, -1.5, 2.2]]
case("median/all", M, F64, lambda x: torch.median(x))
case("median/all/even", [0.3, -1.2, 2.5, 0.7], F64, lambda x: torch.median(x))
case("median/dim1", M, F64, lambda x: torch.median(x, 1))
case("median/dim0/keepdim", M, F64, lambda x: torch.median(x, -2, keepdim=True))
case("median/nan", [[1.0, nan, 3.0, nan], [4.0, 2.0, 2.5, 1.0]], F64, lambda x: torch.median(x, 1))
case("median/all/nan", [1.0, nan, 3.0], F64, lambda x: torch.median(x))
case("median/f32", [[0.5, -1.0, 2.5, 7.0]], F32, lambda x: torch.median(x, 1))
case("median/i64", [[5, -2, 7, 1], [3, 3, 9, 0]], I64, lambda x: torch.median(x, 1))
case("median/empty", [], F64, lambda x: torch.median(x))
case("median/scalar", 2.5, F64, lambda x: torch.median(x, 0))
case("nanmedian/dim1", [[1.0, nan, 3.0, nan, 0.5], [nan, 2.0, 4.0, 1.0, nan]], F64, lambda x: torch.nanmedian(x, 1))
case("nanmedian/all", [1.0, nan, 3.0, nan, 0.5, 7.0], F64, lambda x: torch.nanmedian(x))
case("nanmedian/i32", [[5, -2, 7], [1, 3, 3]], I32, lambda x: torch.nanmedian(x, 1))
case("nanmedian/all_nan", [nan, nan], F64, lambda x: torch.nanmedian(x))
case("kthvalue/dim1", M, F64, lambda x: torch.kthvalue(x, 2, 1))
case("kthvalue/dim0/keepdim", M, F64, lambda x: torch.kthvalue(x, 3, 0, keepdim=True))
case("kthvalue/nan", [[1.0, nan, 3.0, 2.0]], F64, lambda x: torch.kthvalue(x, 4, -1))
case("kthvalue/i64", [[4, 1, 3, 2]], I64, lambda x: torch.kthvalue(x, 1))
# Ties, where the element named among equal values is torch's CPU rule (kernels/common/select.h):
# median and nanmedian the stable sort's; kthvalue its quickselect's; a row of NaNs in nanmedian
# the NaN libstdc++'s std::nth_element leaves first.
_g = torch.Generator().manual_seed(15)
TIES = torch.randint(0, 4, (3, 40), generator=_g).tolist()
TIES3 = torch.randint(-2, 3, (2, 9, 3), generator=_g).tolist()
case("kthvalue/ties", TIES, F64, lambda x: torch.kthvalue(x, 17, 1))
case("kthvalue/ties/first", TIES, F64, lambda x: torch.kthvalue(x, 1, 1))
case("kthvalue/ties/last", TIES, F64, lambda x: torch.kthvalue(x, 40, 1))
case("kthvalue/ties/dim0/keepdim", TIES, F64, lambda x: torch.kthvalue(x, 2, 0, keepdim=True))
case("kthvalue/ties/f32", TIES, F32, lambda x: torch.kthvalue(x, 29, -1))
case("kthvalue/ties/i64", TIES, I64, lambda x: torch.kthvalue(x, 11, 1))
case("kthvalue/ties/u8", TIES, U8, lambda x: torch.kthvalue(x, 23, 1))
case("kthvalue/ties/3d", TIES3, F64, lambda x: torch.kthvalue(x, 5, 1))
case("kthvalue/short_ties", [[2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0]], F64, lambda x: torch.kthvalue(x, 2, 1))
case("kthvalue/signed_zero", [[0.0, -0.0, 0.0, -0.0]], F64, lambda x: torch.kthvalue(x, 2, 1))
case("kthvalue/nan_ties", [[nan, 1.0, nan, 2.0, nan, 1.0, nan]], F64, lambda x: torch.kthvalue(x, 6, 1))
case("median/ties", TIES, F64, lambda x: torch.median(x, 1))
case("median/ties/dim0", TIES, F64, lambda x: torch.median(x, 0))
case("median/ties/3d/keepdim", TIES3, F64, lambda x: torch.median(x, 1, keepdim=True))
case("median/ties/i32", TIES, I32, lambda x: torch.median(x, -1))
case("median/signed_zero", [[0.0, -0.0, 0.0, -0.0]], F64, lambda x: torch.median(x, 1))
case("median/nan_ties", [[2.0, nan, 1.0, nan], [nan, nan, nan, 0.0]], F64, lambda x: torch.median(x, 1))
case("nanmedian/ties", [[1.0, nan, 1.0, 3.0, nan, 1.0, 3.0], [nan, 2.0, 2.0, 2.0, nan, nan, 2.0]], F64,
     lambda x: torch.nanmedian(x, 1))
case("nanmedian/all_nan_rows", [[nan] * 5, [nan] * 5, [1.0, nan, 1.0, nan, 1.0]], F64,
     lambda x: torch.nanmedian(x, 1))
case("nanmedian/all_nan_long", [[nan] * 37], F32, lambda x: torch.nanmedian(x, -1))
case("median/empty_rows", [], F64, lambda x: torch.median(x, 0), shape=(3, 0))
case("kthvalue/empty_rows", [], F64, lambda x: torch.kthvalue(x, 2, 1), shape=(0, 3))
case("kthvalue/scalar", 4.5, F64, lambda x: torch.kthvalue(x, 1))
# mode (mode_test.cc): ties go to the smallest value; rows of up to 16 elements, where torch's CPU
# index is the last occurrence (its std::sort is then an insertion sort, stable).
case("mode/all_ties", [3.0, 1.0, 3.0, 1.0, 2.0, 1.0, 3.0], F64, lambda x: torch.mode(x))
case("mode/dim1", [[2.0, 2.0, 5.0, 5.0, 1.0], [7.0, 7.0, 7.0, 0.0, 0.0]], F64, lambda x: torch.mode(x, 1))
case("mode/dim0", [[2.0, 2.0, 5.0, 5.0, 1.0], [7.0, 7.0, 7.0, 0.0, 0.0], [2.0, 7.0, 5.0, 0.0, 1.0]], F64,
     lambda x: torch.mode(x, 0))
case("mode/keepdim", [[0.5, -1.0, 0.5, -1.0], [4.0, 4.0, 4.0, 3.0]], F64, lambda x: torch.mode(x, -1, keepdim=True))
case("mode/signed_zero", [0.0, -0.0, 1.0], F64, lambda x: torch.mode(x))
case("mode/nan", [[nan, nan, 1.0, 1.0, nan], [nan, nan, 1.0, 1.0, 2.0]], F64, lambda x: torch.mode(x, 1))
case("mode/distinct", [4.0, -3.0, 9.0, 0.5], F64, lambda x: torch.mode(x))
case("mode/f32", [[1.5, 2.5, 2.5, 1.5, 1.5, 0.5, 9.0, 9.0, 9.0, 9.0, 1.5, 1.5, 2.5, 2.5, 2.5, 2.5]], F32,
     lambda x: torch.mode(x, 1))
case("mode/i64", [[5, -2, 5, 1, -2], [3, 3, 9, 0, 9]], I64, lambda x: torch.mode(x, 1))
case("mode/i32", [[5, -2, 5, 1, -2]], I32, lambda x: torch.mode(x, 1))
case("mode/u8", [[200, 3, 3, 200, 7]], U8, lambda x: torch.mode(x, 1))
case("mode/bool", [True, False, True], B, lambda x: torch.mode(x))
case("mode/scalar", 2.5, F64, lambda x: torch.mode(x, 0))
case("nansum/all", [[1.0, nan, 3.0], [nan, 2.0, 0.5]], F64, lambda x: torch.nansum(x))
case("nansum/dim1", [[1.0, nan, 3.0], [nan, nan, nan]], F64, lambda x: torch.nansum(x, 1))
case("nansum/keepdim", [[1.0, nan, 3.0], [nan, 2.0, 0.5]], F32, lambda x: torch.nansum(x, [0], keepdim=True))
case("nansum/i32", [[1, 2], [3, 4]], I32, lambda x: torch.nansum(x, 0))
case("nansum/bool", [True, True, False], B, lambda x: torch.nansum(x))
case("nanmean/all", [[1.0, nan, 3.0], [nan, 2.0, 0.5]], F64, lambda x: torch.nanmean(x))
case("nanmean/dim1", [[1.0, nan, 3.0], [nan, nan, nan]], F64, lambda x: torch.nanmean(x, 1))
case("nanmean/f32", [[1.0, nan, 3.0], [4.0, 2.0, 0.5]], F32, lambda x: torch.nanmean(x, [-1], keepdim=True))
Q = torch.tensor([0.0, 0.25, 0.5, 0.8, 1.0], dtype=F64)
for mode in ["linear", "lower", "higher", "midpoint", "nearest"]:
    case(f"quantile/{mode}", M, F64, lambda x, mode=mode: torch.quantile(x, Q, dim=1, interpolation=mode))
case("quantile/all", M, F64, lambda x: torch.quantile(x, 0.3))
case("quantile/all/keepdim", M, F64, lambda x: torch.quantile(x, Q, keepdim=True))
case("quantile/dim0/keepdim", M, F64, lambda x: torch.quantile(x, 0.4, dim=0, keepdim=True))
case("quantile/nearest_tie", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], F64, lambda x: torch.quantile(x, torch.tensor([0.1, 0.3, 0.5, 0.7], dtype=F64), interpolation="nearest"))
case("quantile/f32", [[0.5, -1.0, 2.5, 7.0]], F32, lambda x: torch.quantile(x, torch.tensor([0.1, 0.9]), dim=-1))
case("quantile/nan", [[1.0, nan, 3.0, 2.0], [4.0, 2.0, 2.5, 1.0]], F64, lambda x: torch.quantile(x, 0.5, dim=1))
case("nanquantile/dim1", [[1.0, nan, 3.0, 2.0], [nan, nan, nan, nan], [4.0, 2.0, 2.5, 1.0]], F64,
     lambda x: torch.nanquantile(x, Q, dim=1))
case("nanquantile/all", [1.0, nan, 3.0, 2.0, 7.0], F64, lambda x: torch.nanquantile(x, 0.6))
case("quantile/scalar", 2.5, F64, lambda x: torch.quantile(x, 0.5, dim=0))

# ---- several inputs and outputs: scatter and friends (scatter_test.cc), unique and searching (unique_test.cc) ----
MULTI = []


def multi(name, inputs, fn, grad=()):
    """inputs: tensors; grad: the positions of the inputs that require grad. fn(*inputs) gives a
    tensor or a tuple of tensors; the gradient is of sum(outputs[0] * grad_output)."""
    MULTI.append((name, inputs, fn, grad))


def operand(t):
    return f"{{{DTYPES[t.dtype]}, {shape(t)}, {vec(t.detach())}}}"


def emit_multi(name, inputs, fn, grad):
    xs = [t.clone().requires_grad_(i in grad) for i, t in enumerate(inputs)]
    res = fn(*xs)
    outs = list(res) if isinstance(res, tuple) else [res]
    grad_out, grads = None, []
    if grad:
        y = outs[0]
        grad_out = torch.linspace(0.5, 1.5, y.numel(), dtype=y.dtype).reshape(y.shape) if y.numel() > 1 \
            else torch.full(y.shape, 0.75, dtype=y.dtype)
        (y * grad_out).sum().backward()
        grads = [vec(x.grad if x.grad is not None else torch.zeros_like(x)) if i in grad else "{}"
                 for i, x in enumerate(xs)]
    print(f'    {{"{name}",')
    print(f'     {{{", ".join(operand(t) for t in inputs)}}},')
    print(f'     {{{", ".join(operand(t) for t in outs)}}},')
    print(f'     {vec(grad_out) if grad_out is not None else "{}"}, {{{", ".join(grads)}}}}},')


S = torch.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]], dtype=F64)
SRC = torch.tensor([[0.5, -1.0, 2.0, 0.0], [3.0, 0.25, -2.0, 1.5], [4.0, 0.0, 1.0, -0.5]], dtype=F64)
IDX0 = torch.tensor([[0, 2, 1, 0], [0, 0, 1, 2]])           # dim 0: duplicates in columns 0 and 1
IDX1 = torch.tensor([[3, 0, 3], [1, 1, 2], [0, 0, 0]])     # dim 1, narrower than src
multi("scatter/src/dim1", [S, IDX1[:, :2].clone(), SRC[:, :2].clone()], lambda s, i, x: torch.scatter(s, 1, i, x), grad=(0, 2))
multi("scatter/src/dim0/unique", [S, torch.tensor([[2, 0, 1, 1]]), SRC[:1].clone()], lambda s, i, x: torch.scatter(s, 0, i, x), grad=(0, 2))
multi("scatter/value", [S, IDX1], lambda s, i: torch.scatter(s, -1, i, 7.5), grad=(0,))
multi("scatter/i32", [torch.tensor([[1, 2, 3]], dtype=I32), torch.tensor([[2, 0]]), torch.tensor([[7, 8]], dtype=I32)],
      lambda s, i, x: torch.scatter(s, 1, i, x))
for reduce in ["sum", "prod", "mean", "amax", "amin"]:
    for include_self in [True, False]:
        tag = "self" if include_self else "noself"
        multi(f"scatter_reduce/{reduce}/{tag}", [S, IDX0, SRC[:2].clone()],
              lambda s, i, x, r=reduce, inc=include_self: torch.scatter_reduce(s, 0, i, x, r, include_self=inc),
              grad=(0, 2))
        multi(f"scatter_reduce/{reduce}/{tag}/dim1", [S, IDX1, SRC[:, :3].clone()],
              lambda s, i, x, r=reduce, inc=include_self: torch.scatter_reduce(s, 1, i, x, r, include_self=inc),
              grad=(0, 2))
ZS = torch.tensor([2.0, 0.0, 3.0, 1.0], dtype=F64)
ZSRC = torch.tensor([0.0, 5.0, 0.0, 0.0, 4.0, 2.0], dtype=F64)
ZI = torch.tensor([0, 0, 1, 2, 2, 3])
for include_self in [True, False]:
    multi(f"scatter_reduce/prod/zeros/{'self' if include_self else 'noself'}", [ZS, ZI, ZSRC],
          lambda s, i, x, inc=include_self: torch.scatter_reduce(s, 0, i, x, "prod", include_self=inc), grad=(0, 2))
multi("scatter_reduce/amax/ties", [torch.tensor([3.0, 1.0, 2.0], dtype=F64), torch.tensor([0, 0, 1, 2]),
                                   torch.tensor([3.0, 2.0, 1.0, 5.0], dtype=F64)],
      lambda s, i, x: torch.scatter_reduce(s, 0, i, x, "amax"), grad=(0, 2))
multi("scatter_reduce/amax/nan", [torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=F64), torch.tensor([0, 0, 1, 1]),
                                  torch.tensor([nan, 5.0, 0.5, 7.0], dtype=F64)],
      lambda s, i, x: torch.scatter_reduce(s, 0, i, x, "amax"))
multi("scatter_reduce/amin/nan", [torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=F64), torch.tensor([0, 0, 1, 1]),
                                  torch.tensor([5.0, nan, 0.5, 7.0], dtype=F64)],
      lambda s, i, x: torch.scatter_reduce(s, 0, i, x, "amin", include_self=False))
multi("scatter_reduce/mean/i64", [torch.tensor([1, 2, 3]), torch.tensor([0, 0, 2]), torch.tensor([4, 5, 6])],
      lambda s, i, x: torch.scatter_reduce(s, 0, i, x, "mean"))
multi("scatter_reduce/mean/i64/noself", [torch.tensor([1, 2, 3]), torch.tensor([0, 0, 2]), torch.tensor([4, 5, 6])],
      lambda s, i, x: torch.scatter_reduce(s, 0, i, x, "mean", include_self=False))
multi("scatter_reduce/amax/i32/noself", [torch.tensor([1, 2, 3], dtype=I32), torch.tensor([0, 0, 2]),
                                         torch.tensor([-4, -5, 6], dtype=I32)],
      lambda s, i, x: torch.scatter_reduce(s, 0, i, x, "amax", include_self=False))
multi("scatter_reduce/sum/f32", [S.float(), IDX0, SRC[:2].float()], lambda s, i, x: torch.scatter_reduce(s, 0, i, x, "sum"),
      grad=(0, 2))
multi("scatter_reduce/prod/bool", [torch.tensor([True, True, False]), torch.tensor([0, 1]), torch.tensor([False, True])],
      lambda s, i, x: torch.scatter_reduce(s, 0, i, x, "prod"))
multi("index_fill/dim1", [S, torch.tensor([3, 0])], lambda s, i: torch.index_fill(s, 1, i, -1.5), grad=(0,))
multi("index_fill/dim0/neg", [S, torch.tensor([1])], lambda s, i: s.index_fill(-2, i, 0.0), grad=(0,))
multi("index_copy/dim0", [S, torch.tensor([2, 0]), SRC[:2].clone()], lambda s, i, x: torch.index_copy(s, 0, i, x),
      grad=(0, 2))
multi("index_copy/dim1", [S, torch.tensor([1, 3, 0]), SRC[:, :3].clone()], lambda s, i, x: s.index_copy(1, i, x),
      grad=(0, 2))
multi("index_put/accumulate", [S, torch.tensor([0, 2, 0]), torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=F64)],
      lambda s, i, v: s.clone().index_put_((i,), v, accumulate=True), grad=(0, 2))
multi("index_put/accumulate/slice", [S, torch.tensor([0.5, -1.0, 2.0, 3.0], dtype=F64)],
      lambda s, v: torch.cat([s[:1], s[1:].clone().add_(v)]), grad=(0, 1))
# The in-place members (scatter_test.cc): on a clone of S, so torch records them as Colony does.
MASK = torch.tensor([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
SRC8 = torch.tensor([0.5, -1.0, 2.0, 0.25, 3.0, -2.0, 1.5, 4.0, 9.0], dtype=F64)
multi("scatter_/src", [S, torch.tensor([[2, 0, 1, 1]]), SRC[:1].clone()],
      lambda s, i, x: s.clone().scatter_(0, i, x), grad=(0, 2))
multi("scatter_/value", [S, IDX1], lambda s, i: s.clone().scatter_(-1, i, 7.5), grad=(0,))
multi("scatter_/add", [S, IDX0, SRC[:2].clone()], lambda s, i, x: s.clone().scatter_(0, i, x, reduce="add"))
multi("scatter_/multiply/value", [S, IDX0], lambda s, i: s.clone().scatter_(0, i, 2.0, reduce="multiply"))
multi("scatter_add_", [S, IDX0, SRC[:2].clone()], lambda s, i, x: s.clone().scatter_add_(0, i, x), grad=(0, 2))
multi("scatter_add", [S, IDX1, SRC[:, :3].clone()], lambda s, i, x: torch.scatter_add(s, 1, i, x), grad=(0, 2))
multi("scatter_reduce_/amax/noself", [S, IDX0, SRC[:2].clone()],
      lambda s, i, x: s.clone().scatter_reduce_(0, i, x, "amax", include_self=False), grad=(0, 2))
multi("scatter_reduce_/prod", [S, IDX0, SRC[:2].clone()],
      lambda s, i, x: s.clone().scatter_reduce_(0, i, x, "prod"), grad=(0, 2))
multi("index_fill_", [S, torch.tensor([0, 2])], lambda s, i: s.clone().index_fill_(1, i, -1.5), grad=(0,))
multi("index_copy_", [S, torch.tensor([2, 0]), SRC[:2].clone()], lambda s, i, x: s.clone().index_copy_(0, i, x),
      grad=(0, 2))
multi("index_add_", [S, torch.tensor([0, 2, 0]), SRC[:, :3].clone()],
      lambda s, i, x: s.clone().index_add_(1, i, x, alpha=2.5), grad=(0, 2))
multi("index_add", [S, torch.tensor([1, 1]), SRC[:2].clone()], lambda s, i, x: torch.index_add(s, 0, i, x), grad=(0, 2))
multi("index_add/i64", [torch.tensor([[1, 2], [3, 4]]), torch.tensor([1]), torch.tensor([[5, 6]])],
      lambda s, i, x: s.index_add(0, i, x, alpha=2))
multi("masked_fill_", [S, MASK], lambda s, m: s.clone().masked_fill_(m, 0.5), grad=(0,))
multi("masked_fill_/broadcast", [S, MASK[1].clone()], lambda s, m: s.clone().masked_fill_(m, -2.0), grad=(0,))
V = torch.tensor(-2.5, dtype=F64)
multi("masked_fill_/tensor", [S, MASK, V], lambda s, m, v: s.clone().masked_fill_(m, v), grad=(0, 2))
multi("masked_fill/tensor/broadcast", [S[0].clone(), MASK, V], lambda s, m, v: s.masked_fill(m, v), grad=(0, 2))
multi("masked_fill/tensor/f32", [S.float(), MASK, V], lambda s, m, v: s.masked_fill(m, v), grad=(0, 2))
multi("index_fill_/tensor/repeated", [S, torch.tensor([0, 2, 0]), V],
      lambda s, i, v: s.clone().index_fill_(1, i, v), grad=(0, 2))
multi("index_fill/tensor/repeated", [S, torch.tensor([2, 2]), V], lambda s, i, v: s.index_fill(0, i, v),
      grad=(0, 2))
multi("masked_scatter_", [S, MASK, SRC8], lambda s, m, x: s.clone().masked_scatter_(m, x), grad=(0, 2))
multi("masked_scatter/broadcast", [S[0].clone(), MASK, SRC8], lambda s, m, x: torch.masked_scatter(s, m, x),
      grad=(0, 2))
multi("masked_scatter/f32", [S.float(), MASK[0].clone(), SRC8.float()], lambda s, m, x: s.masked_scatter(m, x),
      grad=(0, 2))
multi("masked_scatter/none", [S, torch.zeros(3, 4, dtype=torch.bool), SRC8[:0].clone()],
      lambda s, m, x: s.masked_scatter(m, x), grad=(0,))
U = torch.tensor([[3.0, 1.0, nan, 2.0], [1.0, 3.0, nan, 3.0]], dtype=F64)
multi("unique/f64", [U], lambda x: torch.unique(x, return_inverse=True, return_counts=True))
multi("unique/i64", [torch.tensor([5, -2, 5, 0, -2, 5])], lambda x: torch.unique(x, return_inverse=True, return_counts=True))
multi("unique/bool", [torch.tensor([True, False, True])], lambda x: torch.unique(x, return_inverse=True, return_counts=True))
multi("unique/empty", [torch.tensor([], dtype=F32)], lambda x: torch.unique(x, return_inverse=True, return_counts=True))
# unique and unique_consecutive with dim: slices, sorted lexicographically (unique).
UD = torch.tensor([[1, 3, 1], [0, 2, 0], [1, 3, 1], [0, 1, 5], [0, 2, 0]])
UDF = torch.tensor([[[1.5, 0.0], [2.0, -1.0]], [[1.5, 0.0], [2.0, -1.0]], [[-3.0, 4.0], [2.0, 2.0]]], dtype=F64)
ALL3 = dict(return_inverse=True, return_counts=True)
multi("unique/dim0", [UD], lambda x: torch.unique(x, dim=0, **ALL3))
multi("unique/dim1", [UD], lambda x: torch.unique(x, dim=1, **ALL3))
multi("unique/dim0/f64_3d", [UDF], lambda x: torch.unique(x, dim=0, **ALL3))
multi("unique/dim-1/f64_3d", [UDF], lambda x: torch.unique(x, dim=-1, **ALL3))
multi("unique/dim1/f64_3d", [UDF], lambda x: torch.unique(x, dim=1, **ALL3))
multi("unique/dim0/signed_zero", [torch.tensor([[0.0, 1.0], [-0.0, 1.0]], dtype=F64)], lambda x: torch.unique(x, dim=0, **ALL3))
multi("unique/dim0/bool", [torch.tensor([[True, False], [False, False], [True, False]])],
      lambda x: torch.unique(x, dim=0, **ALL3))
multi("unique/dim0/empty", [torch.zeros(0, 3, dtype=F32)], lambda x: torch.unique(x, dim=0, **ALL3))
multi("unique/dim1/empty_slices", [torch.zeros(3, 0, dtype=F32)], lambda x: torch.unique(x, dim=1, **ALL3))
multi("unique_consecutive/dim0", [UD], lambda x: torch.unique_consecutive(x, dim=0, **ALL3))
multi("unique_consecutive/dim1", [torch.tensor([[1, 1, 2, 2, 1], [3, 3, 0, 0, 3]], dtype=I32)],
      lambda x: torch.unique_consecutive(x, dim=1, **ALL3))
multi("unique_consecutive/dim0/f64_3d", [UDF], lambda x: torch.unique_consecutive(x, dim=0, **ALL3))
multi("unique_consecutive/f64", [torch.tensor([1.0, 1.0, 2.0, nan, nan, 1.0, 1.0], dtype=F64)],
      lambda x: torch.unique_consecutive(x, return_inverse=True, return_counts=True))
multi("unique_consecutive/i32", [torch.tensor([[2, 2], [2, 3]], dtype=I32)],
      lambda x: torch.unique_consecutive(x, return_inverse=True, return_counts=True))
multi("bincount", [torch.tensor([0, 2, 2, 5, 1])], lambda x: torch.bincount(x))
multi("bincount/minlength", [torch.tensor([0, 2, 2], dtype=I32)], lambda x: torch.bincount(x, minlength=6))
multi("bincount/weights", [torch.tensor([0, 2, 2, 1]), torch.tensor([0.5, 1.0, 2.0, -1.0], dtype=F32)],
      lambda x, w: torch.bincount(x, w))
multi("bincount/weights/i64", [torch.tensor([0, 2, 2, 1]), torch.tensor([5, 1, 2, 3])], lambda x, w: torch.bincount(x, w))
multi("bincount/empty", [torch.tensor([], dtype=I64)], lambda x: torch.bincount(x, minlength=2))
multi("histc", [torch.tensor([1.0, 2.0, 1.0, 4.0, -1.0, 2.5, nan, 3.999], dtype=F32)],
      lambda x: torch.histc(x, bins=4, min=0, max=4))
multi("histc/range", [torch.tensor([[0.5, 2.0], [1.0, 3.5]], dtype=F64)], lambda x: torch.histc(x, bins=3))
multi("histc/constant", [torch.tensor([2.0, 2.0], dtype=F64)], lambda x: torch.histc(x, bins=4))
# No NaN among the boundaries: torch's binary search over one gives path-dependent answers.
B1 = torch.tensor([1.0, 2.0, 2.0, 3.0, 3.0], dtype=F64)
V1 = torch.tensor([[2.0, nan, 0.0], [5.0, 3.0, 1.5]], dtype=F64)
multi("searchsorted/left", [B1, V1], lambda b, v: torch.searchsorted(b, v))
multi("searchsorted/right", [B1, V1], lambda b, v: torch.searchsorted(b, v, right=True))
multi("searchsorted/side_int32", [B1, V1], lambda b, v: torch.searchsorted(b, v, side="right", out_int32=True))
multi("searchsorted/batched", [torch.tensor([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]], dtype=F64),
                               torch.tensor([[3.0, 6.0], [3.0, 6.0]], dtype=F64)],
      lambda b, v: torch.searchsorted(b, v))
multi("searchsorted/i64", [torch.tensor([1, 3, 5]), torch.tensor([0, 3, 9])], lambda b, v: torch.searchsorted(b, v))
multi("bucketize", [torch.tensor([[0.5, 2.0], [3.0, 9.0]], dtype=F64), torch.tensor([1.0, 2.0, 3.0], dtype=F64)],
      lambda v, b: torch.bucketize(v, b))
multi("bucketize/right", [torch.tensor([0.5, 2.0, 3.0, 9.0], dtype=F64), torch.tensor([1.0, 2.0, 3.0], dtype=F64)],
      lambda v, b: torch.bucketize(v, b, right=True, out_int32=True))

print("// Generated by tests/autograd/reduce_golden.py (torch %s); do not edit." % torch.__version__)
print("// torch's values, indices and gradients of sum(out * grad_output), by case name.")
print("#pragma once")
print()
print("#include <cstdint>")
print("#include <limits>")
print("#include <vector>")
print()
print('#include "tensor/dtype.h"')
print('#include "tensor/shape.h"')
print()
print("namespace colony::testing::reduce_golden {")
print()
print("constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();")
print("constexpr double kInf = std::numeric_limits<double>::infinity();")
print()
print("struct Case {")
print("  const char* name;")
print("  DType dtype;")
print("  Shape shape;")
print("  std::vector<double> input;")
print("  Shape out_shape;")
print("  DType out_dtype;")
print("  std::vector<double> out;")
print("  std::vector<int64_t> indices;      // empty when the op gives none")
print("  std::vector<double> grad_output;   // empty when not differentiable")
print("  std::vector<double> grad;")
print("};")
print()
print("inline const std::vector<Case> kCases = {")
for name, x, fn, grad in CASES:
    emit(name, x, fn, grad)
print("};")
print()
print("struct Operand {")
print("  DType dtype;")
print("  Shape shape;")
print("  std::vector<double> values;")
print("};")
print()
print("// Several inputs (those with a gradient require grad) and outputs; the gradient is of")
print("// sum(outputs[0] * grad_output), one list per input (empty for those without).")
print("struct MultiCase {")
print("  const char* name;")
print("  std::vector<Operand> inputs;")
print("  std::vector<Operand> outputs;")
print("  std::vector<double> grad_output;")
print("  std::vector<std::vector<double>> grads;")
print("};")
print()
print("inline const std::vector<MultiCase> kMultiCases = {")
for name, inputs, fn, grad in MULTI:
    emit_multi(name, inputs, fn, grad)
print("};")
print()
print("}  // namespace colony::testing::reduce_golden")
