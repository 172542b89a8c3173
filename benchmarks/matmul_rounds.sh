#!/usr/bin/env bash
# Colony's matrix products against torch.mm over a grid of shapes, in alternating rounds (on a
# shared VM timings drift by 20 % from minute to minute, so only figures taken side by side count).
#
#   benchmarks/matmul_rounds.sh [--rounds 2] [--threads "1 2"] [--dtype f32|bf16] [--grid gpt|square|all]
#                               [--torch PYTHON] [--kernel auto|eigen|tiles|packed] [--isa avx2]
#
# For each round, thread count and shape, in that order: benchmarks/matmul_bench, then
# benchmarks/matmul_pytorch.py with the same arguments (1 thread: --cpu-time, the thread's CPU
# time, which leaves out the time other processes held the core; 2 threads: wall clock). Trials
# per product: 3e9 / (2 M N K) clamped to 12-60. Prints one line per measurement as it goes, then
# per cell the median GFLOP/s of each and Colony / torch, the last line `worst_ratio=X`.
# Shapes (M, N, K, form; A^T @ B reads A stored [K, M], A @ B^T reads B stored [N, K]):
#   square: 256^3-2048^3, each form;
#   gpt: the char-level GPT's linear layers (width 128: [768, 128] x [128, 384|512|128] and back)
#        and the width-384 GPT's ([4096, 384] x [384, 1152|1536|384], [4096, 1536] x [1536, 384]),
#        forward (A @ B^T), input gradient (A @ B) and weight gradient (A^T @ B).
# --isa avx2: both sides as on a CPU with AVX2 and no AVX-512 (isa_cap.sh says how).
# Run from the repository root; MATMUL_BENCH names a built matmul_bench (default: built here with
# `./bazelw build -c opt --config=cpu`).
set -euo pipefail

rounds=2 threads="1 2" dtype=f32 grid=all torch=/tmp/torch2/bin/python kernel=auto isa=native
while [ "$#" -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2" ;;
    --threads) threads="$2" ;;
    --dtype) dtype="$2" ;;
    --grid) grid="$2" ;;
    --torch) torch="$2" ;;
    --kernel) kernel="$2" ;;
    --isa) isa="$2" ;;
    *) echo "matmul_rounds.sh: unknown argument $1 (see the usage at the top of the script)" >&2; exit 2 ;;
  esac
  shift 2 || { echo "matmul_rounds.sh: $1 needs a value" >&2; exit 2; }
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "matmul_rounds.sh: --rounds '$rounds' is not a positive integer" >&2; exit 2; }
for t in $threads; do
  [[ "$t" =~ ^[1-9][0-9]*$ ]] || { echo "matmul_rounds.sh: --threads '$threads': expected positive integers" >&2; exit 2; }
done
case "$dtype" in f32|bf16) ;; *) echo "matmul_rounds.sh: --dtype $dtype: expected f32 or bf16" >&2; exit 2 ;; esac
case "$grid" in gpt|square|all) ;; *) echo "matmul_rounds.sh: --grid $grid: expected gpt, square or all" >&2; exit 2 ;; esac
case "$kernel" in auto|eigen|tiles|packed) ;; *) echo "matmul_rounds.sh: --kernel $kernel: expected auto, eigen, tiles or packed" >&2; exit 2 ;; esac
source "$(dirname "$0")/isa_cap.sh"
isa_cap matmul_rounds.sh "$isa"
[ -x "$torch" ] || { echo "matmul_rounds.sh: --torch $torch is not an executable Python" >&2; exit 2; }

here="$(cd "$(dirname "$0")" && pwd)"
if [ -z "${MATMUL_BENCH:-}" ]; then
  (cd "$here/.." && ./bazelw build -c opt --config=cpu //benchmarks:matmul_bench >&2)
  MATMUL_BENCH="$here/../.bazel/bin/benchmarks/matmul_bench"
fi

shapes=()
if [ "$grid" != gpt ]; then
  for s in 256 512 1024 2048; do
    for f in ab abt atb; do shapes+=("$s $s $s $f"); done
  done
fi
if [ "$grid" != square ]; then
  shapes+=(
    "768 384 128 abt" "768 512 128 abt" "768 128 512 abt" "768 128 128 abt"
    "768 128 384 ab" "768 128 512 ab" "768 512 128 ab" "768 128 128 ab"
    "384 128 768 atb" "512 128 768 atb" "128 512 768 atb" "128 128 768 atb"
    "4096 1152 384 abt" "4096 1536 384 abt" "4096 384 384 abt" "4096 384 1536 abt"
    "4096 384 1152 ab" "4096 384 1536 ab" "4096 384 384 ab" "4096 1536 384 ab"
    "1152 384 4096 atb" "1536 384 4096 atb" "384 384 4096 atb" "384 1536 4096 atb"
  )
fi

gflops() { "$@" 2>&1 | tail -1 | sed -n 's/^gflops=//p'; }
declare -A colony_runs torch_runs
for ((r = 1; r <= rounds; ++r)); do
  for t in $threads; do
    for shape in "${shapes[@]}"; do
      read -r m n k form <<<"$shape"
      trials=$((3000000000 / (2 * m * n * k)))
      trials=$((trials < 12 ? 12 : trials > 60 ? 60 : trials))
      args=(--dtype "$dtype" --m "$m" --n "$n" --k "$k" --form "$form" --threads "$t" --trials "$trials")
      [ "$t" -eq 1 ] && args+=(--cpu-time)
      c="$(gflops env "${colony_env[@]}" "$MATMUL_BENCH" "${args[@]}" --kernel "$kernel")"
      p="$(gflops env "${torch_env[@]}" "$torch" "$here/matmul_pytorch.py" "${args[@]}")"
      [ -n "$c" ] && [ -n "$p" ] || { echo "matmul_rounds.sh: no gflops= from a run of $shape, $t threads" >&2; exit 1; }
      key="$t $shape"
      colony_runs[$key]="${colony_runs[$key]:-} $c"
      torch_runs[$key]="${torch_runs[$key]:-} $p"
      echo "round $r threads $t ($m, $n, $k) $form colony $c torch $p load $(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "threads (m, n, k) form: colony / torch median GFLOP/s, ratio"
worst=""
for t in $threads; do
  for shape in "${shapes[@]}"; do
    read -r m n k form <<<"$shape"
    key="$t $shape"
    c="$(echo "${colony_runs[$key]}" | median)"
    p="$(echo "${torch_runs[$key]}" | median)"
    ratio="$(awk -v c="$c" -v p="$p" 'BEGIN {printf "%.2f", c / p}')"
    echo "$t ($m, $n, $k) $form: $c / $p $ratio"
    worst="$(awk -v w="${worst:-$ratio}" -v r="$ratio" 'BEGIN {print (r < w) ? r : w}')"
  done
done
echo "worst_ratio=$worst"
