#!/usr/bin/env bash
# nn::LSTM training step, Colony (benchmarks/rnn_bench.cc) against torch.nn.LSTM
# (benchmarks/rnn_pytorch.py) in alternating rounds (the machine's load drifts from minute to
# minute, so only figures taken side by side count). Prints every round.
#
#   benchmarks/rnn_rounds.sh [--rounds 5] [--threads 2] [--trials 10] [--python /tmp/torch2/bin/python]
#
# RNN_BENCH names a built rnn_bench (default: built here with `./bazelw build -c opt --config=cpu`).
set -euo pipefail

rounds=5 threads=2 trials=10 python=python3
while [ "$#" -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2" ;;
    --threads) threads="$2" ;;
    --trials) trials="$2" ;;
    --python) python="$2" ;;
    *) echo "rnn_rounds.sh: unknown argument $1 (see the usage at the top of the script)" >&2; exit 2 ;;
  esac
  shift 2 || { echo "rnn_rounds.sh: $1 needs a value" >&2; exit 2; }
done
here="$(cd "$(dirname "$0")" && pwd)"
if [ -z "${RNN_BENCH:-}" ]; then
  (cd "$here/.." && ./bazelw build -c opt --config=cpu //benchmarks:rnn_bench >&2)
  RNN_BENCH="$here/../.bazel/bin/benchmarks/rnn_bench"
fi
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), threads $threads, rounds $rounds"
for r in $(seq 1 "$rounds"); do
  echo "round $r: load $(cut -d' ' -f1 /proc/loadavg) colony $("$RNN_BENCH" --threads "$threads" --trials "$trials" | grep 'us=')"
  echo "round $r: load $(cut -d' ' -f1 /proc/loadavg) torch  $("$python" "$here/rnn_pytorch.py" --threads "$threads" --trials "$trials" | grep 'us=')"
done
