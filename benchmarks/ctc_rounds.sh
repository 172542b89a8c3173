#!/usr/bin/env bash
# F::ctc_loss (T=200, N=16, C=30, S=50) and F::embedding_bag (100000 x 64, 2048 bags of 20; sum,
# mean), forward and forward + backward, Colony (benchmarks/ctc_bench.cc) against PyTorch
# (benchmarks/ctc_pytorch.py) in alternating rounds, through benchmarks/pair_rounds.sh:
#
#   benchmarks/ctc_rounds.sh [--rounds 5] [--threads 2] [--trials 10] [--python /tmp/torch2/bin/python]
exec "$(dirname "$0")/pair_rounds.sh" ctc "$@"
