#!/usr/bin/env bash
# The CPU benchmarks as run by hand, kept short: fma_peak reports its ISA and the LeNet peak it
# implies, lenet_cpu trains a few steps and prints images/s, and both refuse bad arguments.
set -u
fail() { echo "FAIL: $*"; exit 1; }

out="$(benchmarks/fma_peak --threads 1 --seconds 0.05 2>&1)"; rc=$?
[ "$rc" -eq 0 ] || fail "fma_peak exited $rc: $out"
echo "$out" | grep -Eq '^isa=(avx512f|avx2\+fma) threads=1$' || fail "fma_peak: no isa line: $out"
echo "$out" | grep -Eq '^gflops=[0-9]+\.[0-9]$' || fail "fma_peak: no gflops line: $out"
echo "$out" | grep -q '^lenet_mflop_per_image=3.20$' || fail "fma_peak: LeNet's FLOPs per image changed: $out"
out="$(benchmarks/fma_peak --threads 0 2>&1)"; rc=$?
[ "$rc" -eq 2 ] || fail "fma_peak --threads 0 exited $rc, expected 2: $out"

out="$(benchmarks/lenet_cpu --batch 4 --threads 1 --steps 3 --warmup 1 2>&1)"; rc=$?
[ "$rc" -eq 0 ] || fail "lenet_cpu exited $rc: $out"
echo "$out" | grep -Eq '^images_per_s=[0-9]+\.[0-9]$' || fail "lenet_cpu: no images_per_s line: $out"
out="$(benchmarks/lenet_cpu --batch 0 2>&1)"; rc=$?
[ "$rc" -eq 2 ] || fail "lenet_cpu --batch 0 exited $rc, expected 2: $out"
echo PASS
