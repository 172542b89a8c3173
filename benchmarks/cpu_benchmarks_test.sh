#!/usr/bin/env bash
# The CPU benchmarks as run by hand, kept short: fma_peak reports its ISA and the LeNet peak it
# implies, small_gemm_bench times the tiles' five LeNet passes, lenet_cpu trains a few steps
# (float32 and bfloat16 autocast) and prints its kernels' ISA and images/s, matmul_bench --dtype
# ends with the gflops= line scripts compare with matmul_pytorch.py's, lenet_rounds.sh alternates
# rounds and prints medians, gpt_cpu trains a tiny GPT a few steps (float32 and bfloat16 autocast)
# and ends with tokens_per_s= (as gpt_gpu, whose step runs on the CPU here), and all refuse bad
# arguments.
set -u
fail() { echo "FAIL: $*"; exit 1; }

out="$(benchmarks/fma_peak --threads 1 --seconds 0.05 2>&1)"; rc=$?
[ "$rc" -eq 0 ] || fail "fma_peak exited $rc: $out"
echo "$out" | grep -Eq '^isa=(avx512f|avx2\+fma) threads=1$' || fail "fma_peak: no isa line: $out"
echo "$out" | grep -Eq '^gflops=[0-9]+\.[0-9]$' || fail "fma_peak: no gflops line: $out"
echo "$out" | grep -q '^lenet_mflop_per_image=3.20$' || fail "fma_peak: LeNet's FLOPs per image changed: $out"
if grep -qw avx512_bf16 /proc/cpuinfo; then
  echo "$out" | grep -Eq '^bf16_dot_over_fma=[0-9]+\.[0-9]+$' || fail "fma_peak: no bfloat16 dot rate on an AVX512_BF16 CPU: $out"
elif echo "$out" | grep -q '^bf16_dot'; then
  fail "fma_peak: a bfloat16 dot rate without AVX512_BF16: $out"
fi
out="$(benchmarks/fma_peak --threads 0 2>&1)"; rc=$?
[ "$rc" -eq 2 ] || fail "fma_peak --threads 0 exited $rc, expected 2: $out"
out="$(benchmarks/fma_peak --threads 1 --seconds 0.05 --isa avx2 2>&1)"; rc=$?
[ "$rc" -eq 0 ] && echo "$out" | grep -q '^isa=avx2+fma threads=1$' || fail "fma_peak --isa avx2 (exit $rc): $out"
echo "$out" | grep -q '^bf16_dot' && fail "fma_peak --isa avx2 compares a bfloat16 dot with 256-bit FMAs: $out"
out="$(benchmarks/fma_peak --isa sse 2>&1)"; rc=$?
[ "$rc" -eq 2 ] && echo "$out" | grep -q 'expected avx2' || fail "fma_peak --isa sse exited $rc, expected 2: $out"

out="$(COLONY_CPU_ISA=avx2 benchmarks/small_gemm_bench --quick 2>&1)"; rc=$?
[ "$rc" -eq 0 ] && echo "$out" | grep -q '^isa=avx2$' || fail "small_gemm_bench (exit $rc): $out"
[ "$(echo "$out" | grep -Ec '^conv[12] +(forward|input_grad|weight_grad) +[0-9.]+ us +[0-9.]+ GFLOP/s useful +[0-9.]+ computed$')" -eq 5 ] ||
  fail "small_gemm_bench: expected 5 passes (both layers' forward and weight_grad, conv2's input_grad): $out"
out="$(benchmarks/small_gemm_bench --slow 2>&1)"; rc=$?
[ "$rc" -eq 2 ] || fail "small_gemm_bench --slow exited $rc, expected 2: $out"

for dtype in bf16 f32; do
  out="$(benchmarks/matmul_bench --dtype "$dtype" --size 40 --threads 1 --trials 2 2>&1)"; rc=$?
  [ "$rc" -eq 0 ] || fail "matmul_bench --dtype $dtype exited $rc: $out"
  echo "$out" | tail -1 | grep -Eq '^gflops=[0-9]+\.[0-9]$' || fail "matmul_bench --dtype $dtype: last line not gflops=: $out"
done
out="$(benchmarks/matmul_bench --dtype f16 2>&1)"; rc=$?
[ "$rc" -eq 2 ] || fail "matmul_bench --dtype f16 exited $rc, expected 2: $out"
# A rectangular product on a named kernel, in CPU time; --cpu-time needs 1 thread, --kernel a known name.
out="$(benchmarks/matmul_bench --dtype f32 --m 300 --n 70 --k 20 --form abt --kernel packed --threads 1 --trials 2 --cpu-time 2>&1)"; rc=$?
[ "$rc" -eq 0 ] || fail "matmul_bench --m 300 --n 70 --k 20 --kernel packed exited $rc: $out"
echo "$out" | grep -q 'abt f32 \[300,20\]x\[20,70\] threads=1 kernel=packed/' || fail "matmul_bench: shape or kernel not printed: $out"
echo "$out" | tail -1 | grep -Eq '^gflops=[0-9]+\.[0-9]$' || fail "matmul_bench --kernel packed: last line not gflops=: $out"
out="$(benchmarks/matmul_bench --dtype f32 --threads 2 --cpu-time 2>&1)"; rc=$?
[ "$rc" -eq 2 ] || fail "matmul_bench --threads 2 --cpu-time exited $rc, expected 2: $out"
out="$(benchmarks/matmul_bench --dtype f32 --kernel blas 2>&1)"; rc=$?
[ "$rc" -eq 2 ] || fail "matmul_bench --kernel blas exited $rc, expected 2: $out"

# matmul_rounds.sh (its rounds need torch and take minutes) refuses bad arguments before building anything.
for bad in "--dtype f16" "--rounds 0" "--grid tiny" "--threads two" "--kernel blas" "--isa sse2"; do
  out="$(MATMUL_BENCH=benchmarks/matmul_bench benchmarks/matmul_rounds.sh $bad 2>&1)"; rc=$?
  [ "$rc" -eq 2 ] || fail "matmul_rounds.sh $bad exited $rc, expected 2: $out"
done

out="$(benchmarks/lenet_cpu --batch 4 --threads 1 --steps 3 --warmup 1 2>&1)"; rc=$?
[ "$rc" -eq 0 ] || fail "lenet_cpu exited $rc: $out"
echo "$out" | grep -Eq '^images_per_s=[0-9]+\.[0-9]$' || fail "lenet_cpu: no images_per_s line: $out"
echo "$out" | grep -Eq '^cpu_isa=(avx2|avx512|avx512_bf16|amx)$' || fail "lenet_cpu: no cpu_isa line: $out"
out="$(benchmarks/lenet_cpu --batch 4 --threads 1 --steps 2 --warmup 1 --amp bf16 2>&1)"; rc=$?
[ "$rc" -eq 0 ] || fail "lenet_cpu --amp bf16 exited $rc: $out"
echo "$out" | grep -q '^amp=bf16$' && echo "$out" | grep -Eq '^bf16_kernels=(native|widened)$' &&
  echo "$out" | grep -Eq '^images_per_s=[0-9]+\.[0-9]$' || fail "lenet_cpu --amp bf16: missing lines: $out"
out="$(benchmarks/lenet_cpu --amp fp8 2>&1)"; rc=$?
[ "$rc" -eq 2 ] || fail "lenet_cpu --amp fp8 exited $rc, expected 2: $out"
out="$(COLONY_CPU_ISA=avx2 benchmarks/lenet_cpu --batch 4 --threads 1 --steps 1 --warmup 0 2>&1)"; rc=$?
[ "$rc" -eq 0 ] && echo "$out" | grep -q '^cpu_isa=avx2$' || fail "COLONY_CPU_ISA=avx2 not obeyed (exit $rc): $out"
out="$(COLONY_CPU_ISA=sse2 benchmarks/lenet_cpu --batch 4 --steps 1 2>&1)"; rc=$?
[ "$rc" -ne 0 ] && echo "$out" | grep -q 'COLONY_CPU_ISA=sse2: expected avx2, avx512, avx512_bf16 or amx' ||
  fail "a bad COLONY_CPU_ISA was not refused with its reason (exit $rc): $out"
out="$(benchmarks/lenet_cpu --batch 0 2>&1)"; rc=$?
[ "$rc" -eq 2 ] || fail "lenet_cpu --batch 0 exited $rc, expected 2: $out"
out="$(LENET_CPU=benchmarks/lenet_cpu benchmarks/lenet_rounds.sh --rounds 3 --batch 2 --threads 1 --steps 2 2>&1)"
rc=$?
[ "$rc" -eq 0 ] || fail "lenet_rounds.sh exited $rc: $out"
[ "$(echo "$out" | grep -c '^round [123]: colony [0-9.]*')" -eq 3 ] || fail "lenet_rounds.sh: not 3 rounds: $out"
echo "$out" | grep -Eq '^median colony=[0-9.]+$' || fail "lenet_rounds.sh: no median: $out"
echo "$out" | grep -q 'libtorch' && fail "lenet_rounds.sh ran libtorch without --torch: $out"
out="$(LENET_CPU=benchmarks/lenet_cpu benchmarks/lenet_rounds.sh --rounds 1 --batch 2 --threads 1 --steps 2 \
       --amp bf16 2>&1)"; rc=$?
[ "$rc" -eq 0 ] && echo "$out" | grep -Eq '^round 1: colony [0-9.]+.*, colony bf16 \((native|widened) kernels\) [0-9.]+' &&
  echo "$out" | grep -Eq '^bf16_over_float32=[0-9.]+$' || fail "lenet_rounds.sh --amp bf16 (exit $rc): $out"
out="$(LENET_CPU=benchmarks/lenet_cpu benchmarks/lenet_rounds.sh --rounds 0 2>&1)"; rc=$?
[ "$rc" -eq 2 ] && echo "$out" | grep -q "'0' is not a positive integer" ||
  fail "lenet_rounds.sh --rounds 0: exit $rc, expected 2 with the reason: $out"
# Runs the command with stderr joined to stdout into $out; fails unless it exits with the first argument.
expect_exit() {
  local want="$1"; shift
  out="$("$@" 2>&1)"; local rc=$?
  [ "$rc" -eq "$want" ] || fail "$* exited $rc, expected $want: $out"
}
gpt=(--layers 1 --heads 2 --embd 32 --block 16 --batch 2 --vocab 20 --threads 1 --steps 2 --warmup 1)
for amp in off bf16; do
  expect_exit 0 benchmarks/gpt_cpu "${gpt[@]}" --amp "$amp"
  for line in "amp=$amp" 'loss=[0-9]+\.[0-9]{4}'; do
    echo "$out" | grep -Eq "^$line$" || fail "gpt_cpu --amp $amp: no line $line: $out"
  done
  echo "$out" | tail -1 | grep -Eq '^tokens_per_s=[0-9]+\.[0-9]$' || fail "gpt_cpu --amp $amp: last line not tokens_per_s=: $out"
done
expect_exit 2 benchmarks/gpt_cpu --layers 0
expect_exit 2 benchmarks/gpt_cpu --amp fp8
expect_exit 1 benchmarks/gpt_cpu --layers 1 --heads 3 --embd 32 --block 16 --batch 2 --threads 1 --steps 1
echo "$out" | grep -q 'must be a multiple of n_head 3' || fail "gpt_cpu --heads 3 --embd 32: no reason given: $out"
expect_exit 2 env GPT_CPU=benchmarks/gpt_cpu benchmarks/gpt_rounds.sh --rounds 0
echo "$out" | grep -q "'0' is not a positive integer" || fail "gpt_rounds.sh --rounds 0: no reason given: $out"
expect_exit 2 env GPT_CPU=benchmarks/gpt_cpu benchmarks/gpt_rounds.sh --config 768
echo "$out" | grep -q 'expected cpu or 384' || fail "gpt_rounds.sh --config 768: no reason given: $out"
expect_exit 2 env GPT_CPU=benchmarks/gpt_cpu benchmarks/gpt_rounds.sh --isa avx512
echo "$out" | grep -q 'gpt_rounds.sh: --isa avx512: expected avx2' || fail "gpt_rounds.sh --isa avx512: no reason given: $out"
# gpt_gpu is gpt_cpu's body with the GPT-2-small defaults on cuda: here, the same step on the CPU,
# and without a GPU a refusal that says so.
expect_exit 0 benchmarks/gpt_gpu "${gpt[@]}" --device cpu
echo "$out" | grep -q '^colony gpt_gpu, 1 layers' && echo "$out" | grep -q '^amp=bf16$' &&
  echo "$out" | tail -1 | grep -Eq '^tokens_per_s=[0-9]+\.[0-9]$' || fail "gpt_gpu --device cpu: $out"
# pool_bench: a line per case after the threads line, and no run on fewer than 2 threads.
expect_exit 0 benchmarks/pool_bench --threads 2 --trials 40
[ "$(echo "$out" | grep -Ec '^(empty|2 x 20 us).* median +[0-9]+ ns +p90 +[0-9]+ ns +worker took a chunk in +[0-9.]+ % of calls$')" -eq 7 ] ||
  fail "pool_bench: expected 7 cases: $out"
expect_exit 2 benchmarks/pool_bench --threads 1
echo "$out" | grep -q 'expected --threads >= 2' || fail "pool_bench --threads 1: no reason given: $out"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  expect_exit 1 benchmarks/gpt_gpu "${gpt[@]}"
  echo "$out" | grep -q 'gpt_gpu: --device cuda: no CUDA device' || fail "gpt_gpu without a GPU: no reason given: $out"
fi
echo PASS
