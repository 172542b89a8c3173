#!/usr/bin/env bash
# F::pad's modes and F::unfold / F::fold, forward and forward + backward, Colony
# (benchmarks/pad_bench.cc) against PyTorch (benchmarks/pad_pytorch.py) in alternating rounds,
# through benchmarks/pair_rounds.sh:
#
#   benchmarks/pad_rounds.sh [--rounds 5] [--threads 2] [--trials 10] [--python /tmp/torch2/bin/python]
exec "$(dirname "$0")/pair_rounds.sh" pad "$@"
