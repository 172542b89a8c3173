#!/usr/bin/env bash
# A Colony benchmark against its PyTorch twin in alternating rounds: <name>_bench (built from
# benchmarks/<name>_bench.cc; or <name>, from benchmarks/<name>.cc, as op_sweep) and
# benchmarks/<name>_pytorch.py, which print the same lines
# "<case ...> us=<time>". The machine's load drifts from minute to minute, so only figures taken side
# by side count. Prints every round with the load, then per case the medians and PyTorch's time over
# Colony's (above 1: Colony is faster). norm_rounds.sh, interpolate_rounds.sh and rnn_rounds.sh are
# this script with their name.
#
#   benchmarks/pair_rounds.sh NAME [--rounds 5] [--threads 2] [--trials 10] [--python /tmp/torch2/bin/python]
#
# Run from the repository root; <NAME>_BENCH (NORM_BENCH, OP_SWEEP_BENCH, ...) names a built <name>_bench (default:
# built here with `./bazelw build -c opt --config=cpu`).
set -euo pipefail

name="${1:-}"
here="$(cd "$(dirname "$0")" && pwd)"
target="${name}_bench"
[ -n "$name" ] && [ ! -f "$here/${name}_bench.cc" ] && [ -f "$here/${name}.cc" ] && target="$name"
if [ -z "$name" ] || [ ! -f "$here/${target}.cc" ] || [ ! -f "$here/${name}_pytorch.py" ]; then
  echo "pair_rounds.sh: the first argument names a benchmark pair <name>_bench.cc (or <name>.cc) / <name>_pytorch.py in benchmarks/, got '$name'" >&2
  exit 2
fi
shift
rounds=5 threads=2 trials=10 python=python3
while [ "$#" -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2" ;;
    --threads) threads="$2" ;;
    --trials) trials="$2" ;;
    --python) python="$2" ;;
    *) echo "${name}_rounds: unknown argument $1 (see the usage at the top of benchmarks/pair_rounds.sh)" >&2; exit 2 ;;
  esac
  shift 2 || { echo "${name}_rounds: $1 needs a value" >&2; exit 2; }
done
for v in "$rounds" "$threads" "$trials"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "${name}_rounds: '$v' is not a positive integer" >&2; exit 2; }
done

bench_var="${name^^}_BENCH"
bench="${!bench_var:-}"
if [ -z "$bench" ]; then
  (cd "$here/.." && ./bazelw build -c opt --config=cpu "//benchmarks:${target}" >&2)
  bench="$here/../.bazel/bin/benchmarks/${target}"
fi

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), threads $threads, rounds $rounds"
results="$(mktemp)"
trap 'rm -f "$results"' EXIT
for r in $(seq 1 "$rounds"); do
  echo "round $r: load $(cut -d' ' -f1 /proc/loadavg)"
  "$bench" --threads "$threads" --trials "$trials" | grep 'us=' | sed "s/^/colony /" | tee -a "$results" |
    sed "s/^/round $r: /"
  "$python" "$here/${name}_pytorch.py" --threads "$threads" --trials "$trials" | grep 'us=' | sed "s/^/torch /" |
    tee -a "$results" | sed "s/^/round $r: /"
done
# Lines "<who> <case ...> us=<t>": medians per (who, case), then the ratio. The times are made
# numbers (+ 0): as the strings awk reads they would sort as text ("8544.1" above "26199.8").
awk '
  {
    key = ""; val = ""
    for (i = 2; i <= NF; i++) {
      if ($i ~ /^us=/) val = substr($i, 4) + 0; else key = key (key == "" ? "" : " ") $i
    }
    v[$1, key, ++n[$1, key]] = val; keys[key] = 1
  }
  function median(who, key,   m, i, j, t, a) {
    m = n[who, key]
    for (i = 1; i <= m; i++) a[i] = v[who, key, i]
    for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    for (key in keys) {
      c = median("colony", key); t = median("torch", key)
      printf "%-28s colony %12.1f us  torch %12.1f us  torch/colony %.2f\n", key, c, t, t / c
    }
  }' "$results" | sort
