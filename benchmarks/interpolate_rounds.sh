#!/usr/bin/env bash
# F::interpolate's modes, forward and forward + backward, Colony (benchmarks/interpolate_bench.cc)
# against PyTorch (benchmarks/interpolate_pytorch.py) in alternating rounds, through
# benchmarks/pair_rounds.sh:
#
#   benchmarks/interpolate_rounds.sh [--rounds 5] [--threads 2] [--trials 10] [--python /tmp/torch2/bin/python]
exec "$(dirname "$0")/pair_rounds.sh" interpolate "$@"
