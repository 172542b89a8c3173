#!/usr/bin/env bash
# The GPU check: built here (bazel, CUDA on), run on a lent GPU machine with ONE device call.
#
# Development machines have the CUDA toolkit but no GPU, so every *_CUDA / *_MultiCUDA test skips
# there. The device machine has a GPU, PyTorch and its nvidia/*/lib wheels, but no Bazel. So:
#
#   tools/gpu_check.sh build      # here: build, bundle into out/gpu_check/bundle.tar.xz (<= 64 MiB)
#   tools/gpu_check.sh libs VENV  # here: check the bundle loads with only VENV's nvidia/*/lib
#   tools/gpu_check.sh run        # there: versions, every *CUDA* test, debug reruns, benchmarks
#   tools/gpu_check.sh run --sync # there: the same with COLONY_CUDA_SYNC=1 for every binary
#
# The lead's device call (one call, inside the 10-minute command limit; the working tree carries
# this script and benchmarks/lenet_gpu_pytorch.py, the bundle is git-ignored so it is carried):
#   run(command="tools/gpu_check.sh run", carry=["out/gpu_check"], timeout_s=600)
# Results come back as $OUT/gpu_check.log (everything, in order) and $OUT/summary.txt.
#
# `run`, in order, within GPU_CHECK_BUDGET seconds (default 540, under the 600 s limit):
#  1. versions: GPU, driver, CUDA runtime, cuBLAS, cuDNN and NCCL (PyTorch's wheels), and the paths
#     the bundle's CUDA libraries resolve to;
#  2. every bundled test binary with --gtest_filter='*CUDA*', each under `timeout 60`
#     (GPU_CHECK_TIMEOUT), so one hang cannot eat the session; no new binary starts after 300 s;
#  3. debug reruns: each binary that failed or crashed runs again with COLONY_CUDA_SYNC=1 (every
#     launch waits, so a fault is reported by the op that caused it), its failed tests only;
#  4. benchmarks/lenet_gpu (Colony eager, then --cuda_graph: the step captured as one CUDA graph)
#     and benchmarks/lenet_gpu_pytorch.py (PyTorch eager and CUDA graphs), each with its own timeout.
#  5. DDP on the device: benchmarks/allreduce_bench --device cuda (NCCL, busbw per size; alone it is
#     an NCCL group of one) and lenet_cifar10 --device cuda under colonyrun (max(2, GPUs) ranks: with
#     one GPU the ranks share it through Gloo), each run only when the budget still holds its timeout.
#     The DDP *_CUDA tests (tests/distributed/ddp/ddp_gpu_test) run in step 2 with the others.
# It exits non-zero when a test failed or a binary crashed.
#
# Environment (build): BAZEL (default ./bazelw), BAZEL_FLAGS (default --jobs=2), GPU_CHECK_DIR
# (default out/gpu_check). Tests that read runfiles data are not supported by the bundle.
set -uo pipefail

cd "$(dirname "$0")/.."
BUNDLE="${GPU_CHECK_DIR:-out/gpu_check}"
SKIP_LIBS='^(libc|libm|libdl|librt|libpthread|ld-linux.*|libresolv|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libcudnn.*|libnccl|libnvrtc.*|libnvJitLink)\.so'

build() {
  set -e
  local bazel="${BAZEL:-./bazelw}"
  # shellcheck disable=SC2206
  local flags=(${BAZEL_FLAGS:---jobs=2})
  local targets=("$@")
  [ ${#targets[@]} -eq 0 ] && targets=("//tests/...")

  local programs=(benchmarks/lenet_gpu benchmarks/allreduce_bench distributed/colonyrun examples/lenet_cifar10/lenet_cifar10)
  "$bazel" build "${flags[@]}" "${targets[@]}" //benchmarks:lenet_gpu //benchmarks:allreduce_bench \
    //distributed:colonyrun //examples/lenet_cifar10
  local bin
  bin="$("$bazel" info "${flags[@]}" bazel-bin 2>/dev/null)"

  # Staged outside the bundle folder: only the archive travels (the device call carries 64 MiB).
  local stage
  stage="$(mktemp -d)"
  rm -rf "$BUNDLE"
  mkdir -p "$BUNDLE" "$stage/bin" "$stage/lib"
  local label path name n=0 expr
  expr="$(printf ' + %s' "${targets[@]}")"
  for label in $("$bazel" query "kind(cc_test, ${expr# + })" 2>/dev/null); do
    path="$bin/$(echo "${label#//}" | tr ':' '/')"
    [ -x "$path" ] || continue
    # Listing tests runs no test code, so it works without a GPU.
    "$path" --gtest_list_tests 2>/dev/null | grep -q 'CUDA' || continue
    name="$(echo "${label#//}" | tr ':/' '__')"  # tests/tensor:foo_test -> tests_tensor_foo_test
    cp -L "$path" "$stage/bin/$name"
    copy_libs "$path" "$stage/lib"
    n=$((n + 1))
  done
  local program
  for program in "${programs[@]}"; do
    cp -L "$bin/$program" "$stage/$(basename "$program")"
    copy_libs "$bin/$program" "$stage/lib"
  done
  chmod -R u+w "$stage"
  find "$stage" -type f -exec strip --strip-unneeded {} \; 2>/dev/null || true
  # One solid archive: the test binaries share most of their code, which xz then stores once.
  tar -C "$stage" -cJf "$BUNDLE/bundle.tar.xz" .
  local size
  size=$(stat -c %s "$BUNDLE/bundle.tar.xz")
  echo "gpu_check: bundled $n test binaries with CUDA tests and ${programs[*]##*/}: $BUNDLE/bundle.tar.xz ($((size / 1024 / 1024)) MiB; unpacked $(du -sh "$stage" | cut -f1))"
  rm -rf "$stage"
  [ "$n" -gt 0 ] || { echo "gpu_check: no test binary lists a *CUDA* test" >&2; exit 1; }
  [ "$size" -lt $((56 * 1024 * 1024)) ] || { echo "gpu_check: bundle over 56 MiB; the device call carries 64 MiB in all" >&2; exit 1; }
}

# Copies the shared libraries `binary` resolves here into `dest`, except glibc and the C++ runtime
# (the GPU machine's are at least as new) and CUDA's own libraries (that machine's PyTorch wheels
# bring them, matched to its driver).
copy_libs() {
  local lib
  ldd "$1" | awk '/=> \//{print $3}' | while read -r lib; do
    basename "$lib" | grep -Eq "$SKIP_LIBS" && continue
    [ -e "$2/$(basename "$lib")" ] || cp -L "$lib" "$2/"
  done
}

# Library folders of the pip-installed CUDA stack (torch's dependencies) of python `$1`.
nvidia_lib_dirs() {
  "$1" - <<'PYEOF' 2>/dev/null
import glob, os
try:
    import nvidia
    roots = list(nvidia.__path__)
except ImportError:
    roots = []
seen = []
for r in roots:
    for d in sorted(glob.glob(os.path.join(r, "*", "lib")) + glob.glob(os.path.join(r, "*", "lib64"))):
        if d not in seen and glob.glob(os.path.join(d, "*.so*")):
            seen.append(d)
print(":".join(seen))
PYEOF
}

find_python() {
  local py
  for py in /opt/torch/.venv/bin/python3 python3; do
    command -v "$py" >/dev/null 2>&1 && "$py" -c 'import torch' 2>/dev/null && { echo "$py"; return; }
  done
  echo python3
}

unpack() {  # $1: where
  [ -f "$BUNDLE/bundle.tar.xz" ] || { echo "gpu_check: no bundle at $BUNDLE; run 'tools/gpu_check.sh build' here first" >&2; exit 1; }
  rm -rf "$1" && mkdir -p "$1" && tar -C "$1" -xJf "$BUNDLE/bundle.tar.xz"
}

# Here: would the bundle load on a machine that has only VENV's PyTorch wheels for CUDA? Every CUDA
# library must resolve into VENV's nvidia/*/lib, everything else into the bundle or the system.
libs() {
  local venv="${1:?usage: tools/gpu_check.sh libs VENV (a virtual environment with PyTorch)}"
  local dirs dir bad=0 f
  dirs="$(nvidia_lib_dirs "$venv/bin/python3")"
  [ -n "$dirs" ] || { echo "gpu_check: $venv has no nvidia/*/lib folders" >&2; exit 1; }
  dir="$(mktemp -d)"
  unpack "$dir"
  echo "gpu_check: CUDA libraries from $dirs"
  for f in "$dir"/bin/* "$dir"/lenet_gpu "$dir"/allreduce_bench "$dir"/colonyrun "$dir"/lenet_cifar10; do
    # Only the bundle and the wheels on the path; the toolkit's folders are not searched.
    local out
    out="$(env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$dir/lib:$dirs" ldd "$f" 2>&1)"
    if echo "$out" | grep -v 'libcuda.so.1' | grep -q 'not found'; then
      echo "MISSING $(basename "$f"):"; echo "$out" | grep 'not found' | sed 's/^/    /'; bad=1
    fi
    if echo "$out" | grep -E 'lib(cudart|cublas|cublasLt|cudnn|nccl)[^ ]* => ' | grep -vq -F "/nvidia/"; then
      echo "OUTSIDE THE WHEELS $(basename "$f"):"
      echo "$out" | grep -E 'lib(cudart|cublas|cublasLt|cudnn|nccl)[^ ]* => ' | grep -v -F "/nvidia/" | sed 's/^/    /'; bad=1
    fi
  done
  echo "gpu_check: CUDA libraries the bundle needs: $(for f in "$dir"/bin/* "$dir"/lenet_gpu "$dir"/lenet_cifar10; do
    env -i LD_LIBRARY_PATH="$dir/lib:$dirs" ldd "$f"; done | grep -oE 'lib(cuda|cudart|cublas|cublasLt|cudnn|nccl)\.so[.0-9]*' | sort -u | paste -sd' ')"
  rm -rf "$dir"
  [ "$bad" -eq 0 ] && echo "gpu_check: every bundled binary loads with $venv's wheels (libcuda.so.1 is the driver's)"
  return "$bad"
}

run() {
  local out="${OUT:-/tmp/gpu_check_out}"
  mkdir -p "$out"
  : >"$out/gpu_check.log"
  run_all "$out" "$@" 2>&1 | tee -a "$out/gpu_check.log"
}

# A crash ends a test binary: its later tests run again without the one that was running, up to 4
# times, so that one fault does not hide the rest of the binary. Adds to the caller's totals.
continue_after_crash() {
  local bin="$1" main="$2" src="$2" excluded="" attempt last rc2 log2 p f k
  for attempt in 1 2 3 4; do
    last="$(grep '^\[ RUN      \]' "$src" | tail -1 | awk '{print $4}')"
    [ -n "$last" ] || return
    echo "$last" >>"$main.crashed"
    [ $((SECONDS - t0)) -gt 300 ] && return
    excluded="$excluded:$last"
    log2="$src.after$attempt"
    rc2=0
    COLONY_CUDA_SYNC="${COLONY_CUDA_SYNC:-0}" timeout -k 5 "$per" "$bin" --gtest_filter="*CUDA*:-${excluded#:}" >"$log2" 2>&1 || rc2=$?
    p=$(grep -c '^\[       OK \]' "$log2"); f=$(grep -c '^\[  FAILED  \] .* ([0-9]* ms)$' "$log2")
    k=$(grep -c '^\[  SKIPPED \] .* ([0-9]* ms)$' "$log2")
    total_p=$((total_p + p)); total_f=$((total_f + f)); total_s=$((total_s + k))
    echo "      without ${excluded#:}: $p passed, $f failed, $k skipped$([ "$rc2" -ne 0 ] && [ "$f" -eq 0 ] && echo ", crashed again (exit $rc2)")"
    [ "$f" -eq 0 ] || grep -B15 '^\[  FAILED  \] .* ([0-9]* ms)$' "$log2" | head -60 | sed 's/^/    | /'
    cat "$log2" >>"$main"
    { [ "$rc2" -ne 0 ] && [ "$f" -eq 0 ]; } || return
    broken=$((broken + 1))
    src="$log2"
  done
}

run_all() {
  local out="$1" sync_all=0
  [ "${2:-}" = "--sync" ] && sync_all=1
  local work=/tmp/gpu_check_bundle logs=/tmp/gpu_check_logs
  rm -rf "$logs" && mkdir -p "$logs"
  local log="$out/gpu_check.log" summary="$out/summary.txt"
  local t0=$SECONDS budget="${GPU_CHECK_BUDGET:-540}" per="${GPU_CHECK_TIMEOUT:-60}"
  unpack "$work"
  local py nv
  py="$(find_python)"
  nv="$(nvidia_lib_dirs "$py")"
  export LD_LIBRARY_PATH="$work/lib${nv:+:$nv}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

  echo "== versions ($(date -u +%FT%TZ))"
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  nvidia-smi 2>/dev/null | grep -o 'CUDA Version: [0-9.]*' | sed 's/^/driver supports /'
  "$py" - <<'PYEOF' 2>&1
import torch
print(f"python torch {torch.__version__}: CUDA runtime {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}, "
      f"NCCL {'.'.join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else 'n/a'}, "
      f"cuBLAS from {torch.__file__.rsplit('/', 2)[0]}/nvidia")
PYEOF
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  ldd "$work/lenet_gpu" | grep -E 'lib(cuda|cudart|cublas|cublasLt|cudnn|nccl)\.so' | sed 's/^[[:space:]]*/bundle resolves /'
  [ "$sync_all" -eq 1 ] && echo "mode: COLONY_CUDA_SYNC=1 for every binary"

  echo "== tests (--gtest_filter='*CUDA*', timeout ${per}s each)"
  local bin name rc passed failed skipped total_p=0 total_f=0 total_s=0 broken=0 not_run=0
  local rerun=()
  for bin in "$work"/bin/*; do
    name="$(basename "$bin")"
    if [ $((SECONDS - t0)) -gt 300 ]; then
      echo "NOT RUN $name (time budget)"; not_run=$((not_run + 1)); continue
    fi
    rc=0
    if [ "$sync_all" -eq 1 ]; then
      COLONY_CUDA_SYNC=1 timeout -k 5 "$per" "$bin" --gtest_filter='*CUDA*' >"$logs/$name.log" 2>&1 || rc=$?
    else
      timeout -k 5 "$per" "$bin" --gtest_filter='*CUDA*' >"$logs/$name.log" 2>&1 || rc=$?
    fi
    passed=$(grep -c '^\[       OK \]' "$logs/$name.log")
    failed=$(grep -c '^\[  FAILED  \] .* ([0-9]* ms)$' "$logs/$name.log")
    skipped=$(grep -c '^\[  SKIPPED \] .* ([0-9]* ms)$' "$logs/$name.log")
    total_p=$((total_p + passed)); total_f=$((total_f + failed)); total_s=$((total_s + skipped))
    if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
      broken=$((broken + 1)); rerun+=("$name")
      echo "CRASH $name (exit $rc$([ "$rc" -eq 124 ] && echo ': timed out')); last lines:"
      tail -n 20 "$logs/$name.log" | sed 's/^/    /'
      continue_after_crash "$bin" "$logs/$name.log"
    else
      printf '%-5s %s: %d passed, %d failed, %d skipped\n' \
        "$([ "$failed" -eq 0 ] && echo ok || echo FAIL)" "$name" "$passed" "$failed" "$skipped"
      if [ "$failed" -gt 0 ]; then
        rerun+=("$name")
        grep -B15 '^\[  FAILED  \] .* ([0-9]* ms)$' "$logs/$name.log" | head -80 | sed 's/^/    | /'
      fi
    fi
  done

  if [ "$sync_all" -eq 0 ] && [ ${#rerun[@]} -gt 0 ]; then
    echo "== debug reruns with COLONY_CUDA_SYNC=1 (faults reported at the op that launched the kernel)"
    for name in "${rerun[@]}"; do
      if [ $((SECONDS - t0)) -gt 380 ]; then echo "NOT RERUN $name (time budget)"; continue; fi
      local filter
      # The failed tests, and those that were running when the binary died.
      filter="$({ grep '^\[  FAILED  \] .* ([0-9]* ms)$' "$logs/$name.log" | awk '{print $4}'
                 cat "$logs/$name.log.crashed" 2>/dev/null; } | sort -u | paste -sd: -)"
      echo "-- $name --gtest_filter=${filter:-*CUDA*}"
      COLONY_CUDA_SYNC=1 timeout -k 5 "$per" "$work/bin/$name" --gtest_filter="${filter:-*CUDA*}" 2>&1 |
        grep -vE '^\[ *(RUN|OK) ' | tail -n 60 | sed 's/^/    /'
    done
  fi

  echo "== benchmarks/lenet_gpu"
  timeout -k 5 90 "$work/lenet_gpu" || echo "lenet_gpu: exit $?"
  echo "== benchmarks/lenet_gpu --cuda_graph"
  timeout -k 5 60 "$work/lenet_gpu" --cuda_graph || echo "lenet_gpu --cuda_graph: exit $?"
  echo "== benchmarks/lenet_gpu_pytorch.py"
  local left=$((budget - (SECONDS - t0)))
  [ "$left" -gt 150 ] && left=150
  if [ "$left" -gt 20 ]; then
    PYTHONUNBUFFERED=1 timeout -k 5 "$left" "$py" benchmarks/lenet_gpu_pytorch.py || echo "lenet_gpu_pytorch: exit $?"
  else
    echo "lenet_gpu_pytorch: NOT RUN (time budget)"
  fi

  echo "== benchmarks/allreduce_bench --device cuda"
  if [ $((budget - (SECONDS - t0))) -gt 45 ]; then
    timeout -k 5 40 "$work/allreduce_bench" --device cuda || echo "allreduce_bench: exit $?"
  else
    echo "allreduce_bench: NOT RUN (time budget)"
  fi
  local gpus ranks
  gpus="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')"
  ranks=$((gpus > 2 ? gpus : 2))
  echo "== lenet_cifar10 --device cuda under colonyrun ($ranks ranks, $gpus GPU(s))"
  if [ $((budget - (SECONDS - t0))) -gt 65 ]; then
    timeout -k 5 60 "$work/colonyrun" --nproc_per_node="$ranks" --master_port=0 "$work/lenet_cifar10" --device cuda \
      --epochs 1 --max_steps 60 --workers 0 --benchmark --warmup_steps 10 --checkpoint /tmp/gpu_check_lenet.safetensors \
      2>&1 | grep -E 'trains on|images_per_s|allreduce_seconds|error|failed' || echo "lenet_cifar10 under colonyrun: failed"
  else
    echo "lenet_cifar10 under colonyrun: NOT RUN (time budget)"
  fi

  {
    echo "gpu_check $(date -u +%FT%TZ): $total_p passed, $total_f failed, $total_s skipped, $broken crashed, $not_run not run ($((SECONDS - t0)) s)"
    grep -E '^(gpu:|python torch|colony batch|colony-graph batch|pytorch-|allreduce_bench:| +[0-9]+ B )|trains on|images_per_s' "$log"
  } | tee "$summary"
  # The full logs of failing binaries, after the summary (the combined log is the one file to read).
  for name in "${rerun[@]}"; do echo "== full log of $name"; cat "$logs/$name.log"; done
  if [ "$total_p" -eq 0 ]; then
    echo "gpu_check: no CUDA test passed (every one skipped: is the GPU visible to this process?)"
    return 1
  fi
  [ "$total_f" -eq 0 ] && [ "$broken" -eq 0 ]
}

case "${1:-}" in
  build) shift; build "$@" ;;
  libs) shift; libs "$@" ;;
  run) shift; run "$@" ;;
  *) sed -n '2,35p' "$0"; exit 2 ;;
esac
