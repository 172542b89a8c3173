"""A sweep of everyday torch ops, float32 on the CPU, to compare with benchmarks/op_sweep.

    python benchmarks/op_sweep_pytorch.py --threads T [--trials R]

The same inputs (shapes and distributions), cases, order, timing and output lines as op_sweep.cc:
forward under no_grad and, for the differentiable ops, forward + backward of sum(op(x) * g) with
x.grad set to None first; torch.set_num_threads(T).
"""
import sys

import torch
import torch.nn.functional as F

from bench_timing import median_us, run_leaf, threads_trials

ROWS, COLS = 4096, 1024


def print_forward(name, fn, x, trials):
    """"<name> fwd us=<median>" of fn(x) under no_grad, for the ops without a gradient."""
    def fwd():
        with torch.no_grad():
            fn(x)
    print(f"{name} fwd us={median_us(fwd, trials):.1f}", flush=True)


def main() -> int:
    args = threads_trials(__doc__.splitlines()[0], threads=1)
    torch.manual_seed(1)
    trials = args.trials

    def matrix():
        return torch.randn(ROWS, COLS)

    def positive():
        return torch.randn(ROWS, COLS).abs() + 0.5

    def leaf(name, fn, x):
        run_leaf(name, fn, x, trials)

    leaf("exp", torch.exp, matrix())
    leaf("log", torch.log, positive())
    leaf("tanh", torch.tanh, matrix())
    leaf("sigmoid", torch.sigmoid, matrix())
    leaf("gelu", F.gelu, matrix())
    leaf("silu", F.silu, matrix())
    leaf("sqrt", torch.sqrt, positive())
    leaf("abs", torch.abs, matrix())
    leaf("pow2", lambda x: torch.pow(x, 2.0), matrix())

    row = torch.randn(COLS).requires_grad_()

    def with_row(op):
        def fn(x):
            row.grad = None
            return op(x, row)
        return fn

    leaf("add_row", with_row(torch.add), matrix())
    leaf("mul_row", with_row(torch.mul), matrix())
    leaf("add_scalar", lambda x: torch.add(x, 2.0), matrix())
    leaf("mul_scalar", lambda x: torch.mul(x, 2.0), matrix())
    cond = torch.randn(ROWS, COLS) > 0
    other = torch.randn(ROWS, COLS)
    leaf("where", lambda x: torch.where(cond, x, other), matrix())
    leaf("masked_fill", lambda x: x.masked_fill(cond, 0.0), matrix())
    leaf("clamp", lambda x: torch.clamp(x, -0.5, 0.5), matrix())

    for dim in (1, 0):
        d = "_last" if dim == 1 else "_dim0"
        leaf("sum" + d, lambda x, dim=dim: x.sum(dim), matrix())
        leaf("mean" + d, lambda x, dim=dim: x.mean(dim), matrix())
        leaf("max" + d, lambda x, dim=dim: x.max(dim).values, matrix())
        print_forward("argmax" + d, lambda x, dim=dim: x.argmax(dim), matrix(), trials)
    leaf("var_last", lambda x: x.var(1), matrix())
    leaf("std_last", lambda x: x.std(1), matrix())
    leaf("norm_last", lambda x: torch.norm(x, 2.0, 1), matrix())
    leaf("logsumexp_last", lambda x: torch.logsumexp(x, 1), matrix())
    leaf("cumsum_last", lambda x: torch.cumsum(x, 1), matrix())

    for cols in (1024, 64):
        shape = (ROWS * COLS // cols, cols)
        leaf(f"softmax{cols}", lambda x: torch.softmax(x, 1), torch.randn(shape))
        leaf(f"log_softmax{cols}", lambda x: torch.log_softmax(x, 1), torch.randn(shape))
    target = torch.randint(0, 1000, (ROWS,))
    leaf("cross_entropy", lambda x: F.cross_entropy(x, target), torch.randn(ROWS, 1000))

    rows = torch.randint(0, ROWS, (ROWS,))
    leaf("index_select", lambda x: torch.index_select(x, 0, rows), matrix())
    tokens = torch.randint(0, 10000, (32, 128))
    leaf("embedding", lambda w: F.embedding(tokens, w), torch.randn(10000, 512))
    cols = torch.randint(0, COLS, (ROWS, 256))
    leaf("gather", lambda x: torch.gather(x, 1, cols), matrix())
    targets = torch.randint(0, COLS, (ROWS, COLS))
    leaf("scatter_add", lambda x: torch.zeros(ROWS, COLS).scatter_add(1, targets, x), matrix())
    values = torch.randn(ROWS, COLS)
    leaf("index_put_acc", lambda x: x.clone().index_put_((rows,), values, accumulate=True), matrix())

    leaf("sort", lambda x: torch.sort(x, 1).values, matrix())
    leaf("topk10", lambda x: torch.topk(x, 10, 1).values, matrix())
    print_forward("argsort", lambda x: torch.argsort(x, 1), matrix(), trials)

    other = torch.randn(ROWS, COLS)
    leaf("cat0", lambda x: torch.cat([x, other], 0), matrix())
    leaf("cat1", lambda x: torch.cat([x, other], 1), matrix())
    leaf("stack", lambda x: torch.stack([x, other], 0), matrix())
    leaf("transpose_contig", lambda x: x.transpose(0, 1).contiguous(), matrix())

    weight, bias = torch.randn(COLS), torch.randn(COLS)
    leaf("layer_norm", lambda x: F.layer_norm(x, (COLS,), weight, bias), matrix())
    bn_weight, bn_bias = torch.randn(64), torch.randn(64)
    running_mean, running_var = torch.zeros(64), torch.ones(64)
    leaf("batch_norm_train",
         lambda x: F.batch_norm(x, running_mean, running_var, bn_weight, bn_bias, training=True),
         torch.randn(32, 64, 56, 56))
    leaf("dropout_train", lambda x: F.dropout(x, 0.5, training=True), matrix())
    print_forward("one_hot", lambda labels: F.one_hot(labels, 1000), torch.randint(0, 1000, (ROWS,)), trials)
    return 0


if __name__ == "__main__":
    sys.exit(main())
