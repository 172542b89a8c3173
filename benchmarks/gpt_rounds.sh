#!/usr/bin/env bash
# Character-level GPT training speed, Colony (benchmarks/gpt_cpu) against PyTorch eager and
# torch.compile (benchmarks/gpt_pytorch.py: the same model, AdamW groups, clipping and step on random
# batches in memory), in alternating rounds with medians: timings on a small VM drift by 20 % from
# minute to minute, so only figures taken side by side count.
#
#   benchmarks/gpt_rounds.sh [--rounds 5] [--config cpu|384] [--threads 2] [--steps 60] [--torch VENV]
#                            [--amp bf16] [--isa avx2]
#
# --config cpu is nanoGPT's CPU run of shakespeare_char (4 layers, 4 heads, width 128, context 64,
# batch 12); 384 its full one (6 layers, 6 heads, width 384, context 256, batch 64). --amp bf16 adds
# Colony and PyTorch eager under bfloat16 autocast. --isa avx2 runs both sides as on a CPU with AVX2
# and no AVX-512 (isa_cap.sh says how). --torch names the virtual environment with torch
# (default /tmp/torch2). Prints every round, then the medians and Colony's ratios to the faster of
# eager and torch.compile. Run from the repository root; GPT_CPU names a built gpt_cpu (default:
# built here with `./bazelw build -c opt --config=cpu`).
set -euo pipefail

rounds=5 config=cpu threads=2 steps=60 torch=/tmp/torch2 amp=off isa=native
while [ "$#" -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2" ;;
    --config) config="$2" ;;
    --threads) threads="$2" ;;
    --steps) steps="$2" ;;
    --torch) torch="$2" ;;
    --amp) amp="$2" ;;
    --isa) isa="$2" ;;
    *) echo "gpt_rounds.sh: unknown argument $1 (see the usage at the top of the script)" >&2; exit 2 ;;
  esac
  shift 2 || { echo "gpt_rounds.sh: $1 needs a value" >&2; exit 2; }
done
case "$config" in
  cpu) model=(--layers 4 --heads 4 --embd 128 --block 64 --batch 12) ;;
  384) model=(--layers 6 --heads 6 --embd 384 --block 256 --batch 64) ;;
  *) echo "gpt_rounds.sh: --config $config: expected cpu or 384" >&2; exit 2 ;;
esac
case "$amp" in off|bf16) ;; *) echo "gpt_rounds.sh: --amp $amp: expected off or bf16" >&2; exit 2 ;; esac
source "$(dirname "$0")/isa_cap.sh"
isa_cap gpt_rounds.sh "$isa"
for v in "$rounds" "$threads" "$steps"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "gpt_rounds.sh: '$v' is not a positive integer" >&2; exit 2; }
done
[ -x "$torch/bin/python" ] || { echo "gpt_rounds.sh: no $torch/bin/python (make it: python3 -m venv $torch && $torch/bin/pip install torch numpy)" >&2; exit 2; }

here="$(cd "$(dirname "$0")" && pwd)"
if [ -z "${GPT_CPU:-}" ]; then
  (cd "$here/.." && ./bazelw build -c opt --config=cpu //benchmarks:gpt_cpu >&2)
  GPT_CPU="$here/../.bazel/bin/benchmarks/gpt_cpu"
fi

figure() { grep -E '^tokens_per_s=' | tail -1 | cut -d= -f2; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Both sides take the same flags: 10 warm-up steps (torch.compile compiles in them), then the timed ones.
common=("${model[@]}" --threads "$threads" --steps "$steps" --warmup 10)
colony_run() { env "${colony_env[@]}" "$GPT_CPU" "${common[@]}" "$@" | figure; }
torch_run() { env "${torch_env[@]}" "$torch/bin/python" "$here/gpt_pytorch.py" "${common[@]}" "$@" | figure; }

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); isa $isa; config $config," \
  "threads $threads, steps $steps, rounds $rounds; torch $("$torch/bin/python" -c 'import torch; print(torch.__version__)')"
declare -A runs
names=(colony torch torch_compile)
[ "$amp" = bf16 ] && names+=(colony_bf16 torch_bf16)
for r in $(seq 1 "$rounds"); do
  line="round $r:"
  for n in "${names[@]}"; do
    case "$n" in
      colony) v="$(colony_run)" ;;
      torch) v="$(torch_run)" ;;
      colony_bf16) v="$(colony_run --amp bf16)" ;;
      torch_bf16) v="$(torch_run --amp bf16)" ;;
      torch_compile) v="$(torch_run --compile)" ;;
    esac
    runs[$n]="${runs[$n]:-} $v"
    line="$line $n $v"
  done
  echo "$line"
done
declare -A med
for n in "${names[@]}"; do
  med[$n]="$(echo "${runs[$n]}" | tr ' ' '\n' | grep . | median)"
  echo "median $n tokens_per_s=${med[$n]}"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
faster="$(awk -v a="${med[torch]}" -v b="${med[torch_compile]}" 'BEGIN { print (a > b) ? a : b }')"
echo "colony / torch eager (float32): $(ratio "${med[colony]}" "${med[torch]}")"
echo "colony / torch.compile (float32): $(ratio "${med[colony]}" "${med[torch_compile]}")"
echo "colony / the faster of eager and torch.compile (float32): $(ratio "${med[colony]}" "$faster")"
if [ "$amp" = bf16 ]; then
  echo "colony / torch (bf16): $(ratio "${med[colony_bf16]}" "${med[torch_bf16]}")"
  echo "colony bf16 / colony float32: $(ratio "${med[colony_bf16]}" "${med[colony]}")"
fi
exit 0
