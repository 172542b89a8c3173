#!/usr/bin/env bash
# LayerNorm / RMSNorm forward + backward, Colony (benchmarks/norm_bench.cc) against PyTorch
# (benchmarks/norm_pytorch.py) in alternating rounds, through benchmarks/pair_rounds.sh:
#
#   benchmarks/norm_rounds.sh [--rounds 5] [--threads 2] [--trials 20] [--python /tmp/torch2/bin/python]
exec "$(dirname "$0")/pair_rounds.sh" norm --trials 20 "$@"
