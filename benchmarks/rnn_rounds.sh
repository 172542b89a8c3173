#!/usr/bin/env bash
# nn::LSTM training step, Colony (benchmarks/rnn_bench.cc) against torch.nn.LSTM
# (benchmarks/rnn_pytorch.py) in alternating rounds, through benchmarks/pair_rounds.sh:
#
#   benchmarks/rnn_rounds.sh [--rounds 5] [--threads 2] [--trials 10] [--python /tmp/torch2/bin/python]
exec "$(dirname "$0")/pair_rounds.sh" rnn "$@"
