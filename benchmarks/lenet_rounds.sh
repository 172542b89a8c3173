#!/usr/bin/env bash
# LeNet training speed, Colony against libtorch, in alternating rounds with medians: on a small VM
# timings drift by 20 % from minute to minute, so only figures taken side by side count.
#
#   benchmarks/lenet_rounds.sh [--rounds 5] [--batch 32] [--threads 2] [--steps 1500] [--torch VENV|debian|none]
#                              [--amp bf16]
#
# Each round runs, one after another: Colony's benchmarks/lenet_cpu with the CPU kernels' best
# instruction set; the same capped to AVX2 (COLONY_CPU_ISA=avx2) when the best is AVX-512; with
# --amp bf16, the same under bfloat16 autocast; and benchmarks/lenet_libtorch.cc built against
# --torch (default none). Prints every round, then the medians and Colony's ratios to libtorch
# and, with --amp, of bfloat16 to float32. Run from the repository root; LENET_CPU names a built
# lenet_cpu (default: built here with `./bazelw build -c opt --config=cpu`).
set -euo pipefail

rounds=5 batch=32 threads=2 steps=1500 torch=none amp=off
while [ "$#" -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2" ;;
    --batch) batch="$2" ;;
    --threads) threads="$2" ;;
    --steps) steps="$2" ;;
    --torch) torch="$2" ;;
    --amp) amp="$2" ;;
    *) echo "lenet_rounds.sh: unknown argument $1 (see the usage at the top of the script)" >&2; exit 2 ;;
  esac
  shift 2 || { echo "lenet_rounds.sh: $1 needs a value" >&2; exit 2; }
done
case "$amp" in off|bf16) ;; *) echo "lenet_rounds.sh: --amp $amp: expected off or bf16" >&2; exit 2 ;; esac
for v in "$rounds" "$batch" "$threads" "$steps"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "lenet_rounds.sh: '$v' is not a positive integer" >&2; exit 2; }
done

here="$(cd "$(dirname "$0")" && pwd)"
if [ -z "${LENET_CPU:-}" ]; then
  (cd "$here/.." && ./bazelw build -c opt --config=cpu //benchmarks:lenet_cpu >&2)
  LENET_CPU="$here/../.bazel/bin/benchmarks/lenet_cpu"
fi
args=(--batch "$batch" --threads "$threads" --steps "$steps")

figure() { grep -E '^images_per_s=' | tail -1 | cut -d= -f2; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

isa="$("$LENET_CPU" --batch 1 --threads 1 --steps 1 --warmup 0 | grep '^cpu_isa=' | cut -d= -f2)"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), kernels: $isa;" \
  "batch $batch, threads $threads, steps $steps, rounds $rounds"
colony=() avx2=() bf16=() libtorch=()
for r in $(seq 1 "$rounds"); do
  c="$("$LENET_CPU" "${args[@]}" | figure)"
  colony+=("$c")
  line="round $r: colony $c"
  if [ "$isa" != avx2 ]; then
    a="$(COLONY_CPU_ISA=avx2 "$LENET_CPU" "${args[@]}" | figure)"
    avx2+=("$a")
    line="$line, colony with avx2 $a"
  fi
  if [ "$amp" = bf16 ]; then
    out="$("$LENET_CPU" "${args[@]}" --amp bf16)"
    b="$(echo "$out" | figure)"
    bf16+=("$b")
    line="$line, colony bf16 ($(echo "$out" | grep '^bf16_kernels=' | cut -d= -f2) kernels) $b"
  fi
  if [ "$torch" != none ]; then
    t="$("$here/lenet_libtorch.sh" "$torch" "${args[@]}" | figure)"
    libtorch+=("$t")
    line="$line, libtorch $t"
  fi
  echo "$line"
done
mc="$(printf '%s\n' "${colony[@]}" | median)"
echo "median colony=$mc"
[ "${#avx2[@]}" -eq 0 ] || echo "median colony_avx2=$(printf '%s\n' "${avx2[@]}" | median)"
if [ "${#bf16[@]}" -gt 0 ]; then
  mb="$(printf '%s\n' "${bf16[@]}" | median)"
  echo "median colony_bf16=$mb"
  awk -v b="$mb" -v c="$mc" 'BEGIN { printf "bf16_over_float32=%.2f\n", b / c }'
fi
if [ "${#libtorch[@]}" -gt 0 ]; then
  mt="$(printf '%s\n' "${libtorch[@]}" | median)"
  echo "median libtorch=$mt"
  awk -v c="$mc" -v t="$mt" 'BEGIN { printf "colony_over_libtorch=%.2f\n", c / t }'
fi
