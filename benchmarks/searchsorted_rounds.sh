#!/usr/bin/env bash
# torch.searchsorted of 1e6 float32 values into 1e3 and 1e5 boundaries (and 1e5 through a sorter),
# Colony (benchmarks/searchsorted_bench.cc) against PyTorch (benchmarks/searchsorted_pytorch.py) in
# alternating rounds, through benchmarks/pair_rounds.sh:
#
#   benchmarks/searchsorted_rounds.sh [--rounds 5] [--threads 2] [--trials 10] [--python /tmp/torch2/bin/python]
exec "$(dirname "$0")/pair_rounds.sh" searchsorted "$@"
