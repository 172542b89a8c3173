#!/usr/bin/env bash
# allreduce_bench as run by hand: --device cuda skips clearly without a GPU (or runs NCCL with one),
# and an unknown device or collective is refused.
set -u
bench=benchmarks/allreduce_bench
fail() { echo "FAIL: $*"; exit 1; }

out="$("$bench" --device cuda 2>&1)"; rc=$?
[ "$rc" -eq 0 ] || fail "--device cuda exited $rc: $out"
if echo "$out" | grep -q "skipped: --device cuda needs a GPU"; then
  echo "no GPU: $out"
else
  echo "$out" | grep -q "backend nccl, cuda:0 tensors" || fail "with a GPU, expected an NCCL run: $out"
  echo "$out" | grep -q "busbw" || fail "no busbw column: $out"
fi

out="$("$bench" --device tpu 2>&1)"; rc=$?
[ "$rc" -eq 2 ] || fail "--device tpu exited $rc, expected 2: $out"
echo "$out" | grep -q 'must be cpu or cuda, got "tpu"' || fail "unclear refusal: $out"
out="$("$bench" --op gather 2>&1)"; rc=$?
[ "$rc" -eq 2 ] || fail "--op gather exited $rc, expected 2: $out"
echo "$out" | grep -q 'must be allreduce, reduce_scatter, all_gather or all, got "gather"' || fail "unclear refusal: $out"
echo PASS
