#!/usr/bin/env bash
# median and nanmedian over dim of [1024, 4096] float32 and kthvalue of [4096, 1024] along the last
# dim, Colony (benchmarks/select_bench.cc) against PyTorch (benchmarks/select_pytorch.py) in
# alternating rounds, through benchmarks/pair_rounds.sh:
#
#   benchmarks/select_rounds.sh [--rounds 5] [--threads 2] [--trials 10] [--python /tmp/torch2/bin/python]
exec "$(dirname "$0")/pair_rounds.sh" select "$@"
