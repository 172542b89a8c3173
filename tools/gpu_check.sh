#!/usr/bin/env bash
# GPU tests, built here and run on a machine that has a GPU.
#
# Development machines have the CUDA toolkit but no GPU, so every *_CUDA / *_MultiCUDA test skips
# there. This script closes the gap in two steps:
#
#   tools/gpu_check.sh build [TARGETS...]   # here: build (CUDA on) and bundle the GPU test binaries
#   tools/gpu_check.sh run                  # on the GPU machine: run the bundle's *CUDA* tests
#
# `build` runs `bazel build //tests/...` (or TARGETS) without --config=cpu, keeps the test binaries
# that list at least one *CUDA* test, and copies them into out/gpu_check/bin, with the shared
# libraries they need from this machine (Colony's own .so files, Gloo, ...) in out/gpu_check/lib.
# CUDA's libraries are left out on purpose: the GPU machine supplies its own (driver-matched).
# out/ is git-ignored, so hand the folder over explicitly; with the device tool:
#   run(command="tools/gpu_check.sh run", carry=["out/gpu_check"])
#
# `run` points LD_LIBRARY_PATH at the bundle's lib/ and at the CUDA, cuBLAS, cuDNN and NCCL
# libraries of that machine's PyTorch installation (site-packages/nvidia/*/lib), runs every binary
# with --gtest_filter='*CUDA*', and prints one line per binary and a summary. It exits non-zero
# when any test fails or a binary crashes. If $OUT is set, the logs are also written there.
#
# Environment: BAZEL (default bazel), BAZEL_STARTUP (e.g. --output_base=/tmp/bazel_me),
# BAZEL_FLAGS (default --jobs=2), GPU_CHECK_DIR (default out/gpu_check), GPU_CHECK_TIMEOUT
# (seconds per binary, default 300). Tests that read runfiles data are not supported by the bundle.
set -euo pipefail

cd "$(dirname "$0")/.."
BUNDLE="${GPU_CHECK_DIR:-out/gpu_check}"

build() {
  local bazel="${BAZEL:-bazel}"
  # shellcheck disable=SC2206
  local startup=(${BAZEL_STARTUP:-}) flags=(${BAZEL_FLAGS:---jobs=2})
  local targets=("$@")
  [ ${#targets[@]} -eq 0 ] && targets=("//tests/...")

  "$bazel" "${startup[@]}" build "${flags[@]}" "${targets[@]}"
  local bin
  bin="$("$bazel" "${startup[@]}" info "${flags[@]}" bazel-bin)"

  rm -rf "$BUNDLE"
  mkdir -p "$BUNDLE/bin" "$BUNDLE/lib"
  local label path name n=0
  local expr
  expr="$(printf ' + %s' "${targets[@]}")"
  for label in $("$bazel" "${startup[@]}" query "kind(cc_test, ${expr# + })" 2>/dev/null); do
    path="$bin/$(echo "${label#//}" | tr ':' '/')"
    [ -x "$path" ] || continue
    # Listing tests runs no test code, so it works without a GPU.
    "$path" --gtest_list_tests 2>/dev/null | grep -q 'CUDA' || continue
    name="$(echo "${label#//}" | tr ':/' '__')"  # tests/tensor:foo_test -> tests_tensor_foo_test
    cp -L "$path" "$BUNDLE/bin/$name"
    strip --strip-unneeded "$BUNDLE/bin/$name" 2>/dev/null || true
    copy_libs "$path"
    n=$((n + 1))
  done
  chmod -R u+w "$BUNDLE"
  echo "gpu_check: bundled $n test binaries with CUDA tests in $BUNDLE ($(du -sh "$BUNDLE" | cut -f1))"
  [ "$n" -gt 0 ] || { echo "gpu_check: no test binary lists a *CUDA* test" >&2; exit 1; }
}

# Copies the shared libraries `binary` resolves here, except glibc (the GPU machine's is at least as
# new), the C++ runtime (likewise, and newer ones stay compatible) and CUDA's own libraries.
copy_libs() {
  local lib
  ldd "$1" | awk '/=> \//{print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so* | libm.so* | libdl.so* | librt.so* | libpthread.so* | ld-linux* | libresolv.so* | \
        libstdc++.so* | libgcc_s.so* | \
        libcuda.so* | libcudart* | libcublas* | libcudnn* | libnccl* | libnvrtc* | libnvJitLink*)
        ;;
      *)
        if [ ! -e "$BUNDLE/lib/$(basename "$lib")" ]; then
          cp -L "$lib" "$BUNDLE/lib/"
          strip --strip-unneeded "$BUNDLE/lib/$(basename "$lib")" 2>/dev/null || true
        fi
        ;;
    esac
  done
}

# Library folders of the pip-installed CUDA stack (torch's dependencies), wherever python lives.
nvidia_lib_dirs() {
  local py dirs=""
  for py in python3 /opt/torch/.venv/bin/python3; do
    command -v "$py" >/dev/null 2>&1 || continue
    dirs="$("$py" - <<'EOF' 2>/dev/null || true
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
EOF
)"
    [ -n "$dirs" ] && break
  done
  if [ -z "$dirs" ]; then
    dirs="$(find /opt /usr/local/lib/python3* /usr/lib/python3* "$HOME/.local" -maxdepth 6 -type d \
              -path '*-packages/nvidia/*/lib' 2>/dev/null | sort -u | paste -sd: -)"
  fi
  echo "$dirs"
}

run() {
  [ -d "$BUNDLE/bin" ] || { echo "gpu_check: no bundle at $BUNDLE; run 'tools/gpu_check.sh build' first" >&2; exit 1; }
  local nv
  nv="$(nvidia_lib_dirs)"
  export LD_LIBRARY_PATH="$(cd "$BUNDLE/lib" && pwd)${nv:+:$nv}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "gpu_check: $(nvidia-smi -L 2>&1 | head -4 | paste -sd';' -)"
  else
    echo "gpu_check: nvidia-smi not found (no GPU here? every *CUDA* test will skip)"
  fi
  echo "gpu_check: LD_LIBRARY_PATH=$LD_LIBRARY_PATH"

  local logdir="${OUT:-/tmp}/gpu_check_logs"
  mkdir -p "$logdir"
  local bin name rc passed failed skipped total_p=0 total_f=0 total_s=0 broken=0
  for bin in "$BUNDLE"/bin/*; do
    name="$(basename "$bin")"
    rc=0
    timeout "${GPU_CHECK_TIMEOUT:-300}" "$bin" --gtest_filter='*CUDA*' >"$logdir/$name.log" 2>&1 || rc=$?
    passed=$(grep -c '^\[       OK \]' "$logdir/$name.log" || true)
    failed=$(grep -c '^\[  FAILED  \] .* ([0-9]* ms)$' "$logdir/$name.log" || true)
    skipped=$(grep -c '^\[  SKIPPED \] .* ([0-9]* ms)$' "$logdir/$name.log" || true)
    total_p=$((total_p + passed)); total_f=$((total_f + failed)); total_s=$((total_s + skipped))
    if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
      broken=$((broken + 1))
      echo "CRASH $name (exit $rc); last lines:"
      tail -n 15 "$logdir/$name.log" | sed 's/^/    /'
    else
      printf '%-5s %s: %d passed, %d failed, %d skipped\n' \
        "$([ "$failed" -eq 0 ] && echo ok || echo FAIL)" "$name" "$passed" "$failed" "$skipped"
      grep '^\[  FAILED  \] .* ([0-9]* ms)$' "$logdir/$name.log" | sed 's/^/    /' || true
      # Failure details (expected vs actual) precede the FAILED lines.
      [ "$failed" -eq 0 ] || grep -B12 '^\[  FAILED  \] .* ([0-9]* ms)$' "$logdir/$name.log" | head -60 | sed 's/^/    | /'
    fi
  done
  echo "gpu_check summary: $total_p passed, $total_f failed, $total_s skipped, $broken crashed (logs: $logdir)"
  [ "$total_f" -eq 0 ] && [ "$broken" -eq 0 ]
}

case "${1:-}" in
  build) shift; build "$@" ;;
  run) run ;;
  *) sed -n '2,24p' "$0"; exit 2 ;;
esac
