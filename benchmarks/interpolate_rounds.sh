#!/usr/bin/env bash
# F::interpolate's modes, forward and forward + backward, Colony (benchmarks/interpolate_bench.cc) against PyTorch
# (benchmarks/interpolate_pytorch.py) in alternating rounds: the machine's load drifts from minute to
# minute, so only figures taken side by side count. Prints every round, then per case and pass the
# medians and PyTorch's time over Colony's (above 1: Colony is faster).
#
#   benchmarks/interpolate_rounds.sh [--rounds 5] [--threads 2] [--trials 10] [--python /tmp/torch2/bin/python]
#
# Run from the repository root; INTERPOLATE_BENCH names a built interpolate_bench (default: built here with
# `./bazelw build -c opt --config=cpu`).
set -euo pipefail

rounds=5 threads=2 trials=10 python=python3
while [ "$#" -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2" ;;
    --threads) threads="$2" ;;
    --trials) trials="$2" ;;
    --python) python="$2" ;;
    *) echo "interpolate_rounds.sh: unknown argument $1 (see the usage at the top of the script)" >&2; exit 2 ;;
  esac
  shift 2 || { echo "interpolate_rounds.sh: $1 needs a value" >&2; exit 2; }
done
for v in "$rounds" "$threads" "$trials"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "interpolate_rounds.sh: '$v' is not a positive integer" >&2; exit 2; }
done

here="$(cd "$(dirname "$0")" && pwd)"
if [ -z "${INTERPOLATE_BENCH:-}" ]; then
  (cd "$here/.." && ./bazelw build -c opt --config=cpu //benchmarks:interpolate_bench >&2)
  INTERPOLATE_BENCH="$here/../.bazel/bin/benchmarks/interpolate_bench"
fi

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), threads $threads, rounds $rounds"
results="$(mktemp)"
trap 'rm -f "$results"' EXIT
for r in $(seq 1 "$rounds"); do
  "$INTERPOLATE_BENCH" --threads "$threads" --trials "$trials" | grep 'us=' | sed "s/^/colony /" | tee -a "$results" |
    sed "s/^/round $r: /"
  "$python" "$here/interpolate_pytorch.py" --threads "$threads" --trials "$trials" | grep 'us=' | sed "s/^/torch /" |
    tee -a "$results" | sed "s/^/round $r: /"
done
# Lines "<who> <op> <shape> us=<t>": medians per (who, op, shape), then the ratio.
awk '
  { split($4, kv, "="); key = $2 " " $3; v[$1, key, ++n[$1, key]] = kv[2]; keys[key] = 1 }
  function median(who, key,   m, i, j, t, a) {
    m = n[who, key]
    for (i = 1; i <= m; i++) a[i] = v[who, key, i]
    for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    for (key in keys) {
      c = median("colony", key); t = median("torch", key)
      printf "%-22s colony %10.1f us  torch %10.1f us  torch/colony %.2f\n", key, c, t, t / c
    }
  }' "$results" | sort
