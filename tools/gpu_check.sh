#!/usr/bin/env bash
# The GPU check: built here (Bazel, CUDA on), run on a lent GPU machine with ONE device call.
#
# Development machines have the CUDA toolkit but no GPU, so every *_CUDA / *_MultiCUDA test skips
# there. The device machine has a GPU, PyTorch and its nvidia/*/lib wheels, but no Bazel. So:
#
#   tools/gpu_check.sh build      # here: build, bundle into out/gpu_check/bundle.tar.xz (<= 48 MiB)
#   tools/gpu_check.sh libs VENV  # here: check the bundle loads with only VENV's nvidia/*/lib
#   tools/gpu_check.sh selftest   # here (and in CI): the `run` path against a small fake bundle
#   tools/gpu_check.sh run        # there: machine, every *CUDA* test, debug reruns, benchmarks
#   tools/gpu_check.sh run --sync # there: the same with COLONY_CUDA_SYNC=1 for every test process
#   tools/gpu_check.sh run --only REGEX --no-benchmarks  # there: some binaries again, after a fix
#
# The device call (docs/gpu_check.md): one call, its 420 s budget inside the call's 480 s, which
# leaves a short rerun room in the session's ~15 minutes (the machine's start counts too):
#   run(command="tools/gpu_check.sh run", carry=["out/gpu_check"], timeout_s=480)
# The working tree brings this script, tools/gpu_check_run.py, benchmarks/lenet_gpu_pytorch.py, gpt_pytorch.py;
# the bundle is git-ignored, so carry names it. Back in $OUT: summary.txt, gpu_check.log, tests.tsv
# and logs/ (tools/gpu_check_run.py says what each holds).
#
# Environment: GPU_CHECK_DIR (default out/gpu_check); for build BAZEL (default ./bazelw) and
# BAZEL_FLAGS (default --jobs=2); for run GPU_CHECK_BUDGET (seconds, default 420) and
# GPU_CHECK_TIMEOUT (seconds per test process, default 60). Tests that read runfiles data are not
# supported by the bundle.
set -uo pipefail

SELF="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/.."
BUNDLE_DIR="${GPU_CHECK_DIR:-out/gpu_check}"
BUNDLE="$BUNDLE_DIR/bundle.tar.xz"
# The device call carries 64 MiB in all (the working tree included): 48 for the bundle.
MAX_BUNDLE_MIB=48
# Libraries the GPU machine brings itself: glibc and the C++ runtime (at least as new there) and
# NVIDIA's (its PyTorch wheels, matched to its driver). Whole sonames: Colony's own libraries are
# named libdistributed_Snccl_Slibprocess_group_nccl.so and the like, and must travel.
SYSTEM_SONAMES='^(libc|libm|libdl|librt|libpthread|libresolv|libutil|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libcudnn(_[a-z_]+)?|libnccl|libnvrtc(-builtins)?|libnvJitLink)\.so(\.[0-9]+)*$'
CUDA_SONAMES='^(libcudart|libcublas|libcublasLt|libcudnn(_[a-z_]+)?|libnccl|libnvrtc(-builtins)?|libnvJitLink)\.so(\.[0-9]+)*$'
PROGRAMS=(benchmarks/lenet_gpu benchmarks/gpt_gpu benchmarks/allreduce_bench distributed/colonyrun examples/lenet_cifar10/lenet_cifar10)

build() {
  set -e
  local bazel="${BAZEL:-./bazelw}"
  # shellcheck disable=SC2206
  local flags=(${BAZEL_FLAGS:---jobs=2})
  local targets=("$@")
  [ ${#targets[@]} -eq 0 ] && targets=("//tests/...")
  "$bazel" build "${flags[@]}" "${targets[@]}" //benchmarks:lenet_gpu //benchmarks:gpt_gpu //benchmarks:allreduce_bench \
    //distributed:colonyrun //examples/lenet_cifar10
  local bin
  bin="$("$bazel" info "${flags[@]}" bazel-bin 2>/dev/null)"

  # Staged outside the bundle folder: only the archive travels.
  local stage label path n=0 expr
  stage="$(mktemp -d)"
  expr="$(printf ' + %s' "${targets[@]}")"
  for label in $("$bazel" query "kind(cc_test, ${expr# + })" 2>/dev/null); do
    path="$bin/$(echo "${label#//}" | tr ':' '/')"
    [ -x "$path" ] || continue
    # Listing tests runs no test code, so it works without a GPU.
    "$path" --gtest_list_tests 2>/dev/null | grep -q 'CUDA' || continue
    stage_binary "$path" "$stage/bin/$(echo "${label#//}" | tr ':/' '__')"  # tests_tensor_foo_test
    n=$((n + 1))
  done
  local program
  for program in "${PROGRAMS[@]}"; do stage_binary "$bin/$program" "$stage/$(basename "$program")"; done
  [ "$n" -gt 0 ] || { echo "gpu_check: no test binary lists a *CUDA* test" >&2; exit 1; }
  pack "$stage" "$BUNDLE"
  echo "gpu_check: bundled $n test binaries with CUDA tests and ${PROGRAMS[*]##*/}"
  rm -rf "$stage"
}

# Copies `binary` to `dest` and the shared libraries it resolves here into dest's ../lib (or
# dest's folder's lib/ for a top-level program), except those the GPU machine brings itself.
stage_binary() {
  local binary="$1" dest="$2" libdir lib
  mkdir -p "$(dirname "$dest")"
  case "$(basename "$(dirname "$dest")")" in bin) libdir="$(dirname "$dest")/../lib" ;; *) libdir="$(dirname "$dest")/lib" ;; esac
  mkdir -p "$libdir"
  cp -L "$binary" "$dest"
  ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r soname lib; do
    echo "$soname" | grep -Eq "$SYSTEM_SONAMES" && continue
    [ -e "$libdir/$soname" ] || cp -L "$lib" "$libdir/$soname"
  done
}

# Strips the staged files and packs them into one solid xz archive: the test binaries share most
# of their code, which xz then stores once (GPU_CHECK_XZ_LEVEL: the selftest packs fast).
pack() {
  local stage="$1" archive="$2" size
  chmod -R u+w "$stage"
  find "$stage" -type f -exec strip --strip-unneeded {} \; 2>/dev/null || true
  mkdir -p "$(dirname "$archive")"
  rm -f "$archive"
  # -9: its 64 MiB window spans the three statically linked programs, which each carry the CUDA
  # kernels (~30 MiB) again; -6's 8 MiB window does not. 78 test binaries on 2026-12-07: 46 MiB at
  # -6, 37 at -9 (7 min to pack on 2 loaded cores; unpacking needs 65 MiB of memory).
  XZ_OPT="-${GPU_CHECK_XZ_LEVEL:-9}" tar -C "$stage" -cJf "$archive" . || { echo "gpu_check: tar -cJf failed" >&2; exit 1; }
  size=$(stat -c %s "$archive")
  echo "gpu_check: $archive: $((size / 1024 / 1024)) MiB (unpacked $(du -sh "$stage" | cut -f1))"
  # The call carries the working tree too (git's files, 12 MiB on 2026-12-07): say when the two
  # together come near the 64 MiB, before a device session finds out.
  local tree
  tree=$(git ls-files -z 2>/dev/null | du --files0-from=- -cb 2>/dev/null | tail -1 | cut -f1)
  [ -z "$tree" ] || [ $(((size + tree) / 1024 / 1024)) -lt 62 ] ||
    echo "gpu_check: WARNING: bundle + working tree = $(((size + tree) / 1024 / 1024)) MiB; the device call carries 64 in all" >&2
  [ "$size" -le $((MAX_BUNDLE_MIB * 1024 * 1024)) ] ||
    { echo "gpu_check: bundle over $MAX_BUNDLE_MIB MiB; the device call carries 64 MiB in all" >&2; exit 1; }
}

# A Python 3 for the runner: the one with PyTorch when there is one (versions, the PyTorch benchmark).
find_python() {
  local py
  for py in /opt/torch/.venv/bin/python3 python3; do
    command -v "$py" >/dev/null 2>&1 && "$py" -c 'import torch' 2>/dev/null && { echo "$py"; return; }
  done
  command -v python3 || { echo "gpu_check: no python3 on this machine" >&2; exit 1; }
}

# Here: would the bundle load on a machine that has only VENV's PyTorch wheels for CUDA? Every
# NVIDIA library must resolve into VENV's nvidia/*/lib under a versioned soname, everything else
# into the bundle or the system's own folders.
libs() {
  local venv="${1:?usage: tools/gpu_check.sh libs VENV (a virtual environment with PyTorch)}"
  local dirs dir f bad=0 out needed=""
  dirs="$("$venv/bin/python3" tools/gpu_check_run.py --nvidia-lib-dirs)"
  [ -n "$dirs" ] || { echo "gpu_check: $venv has no nvidia/*/lib folders" >&2; exit 1; }
  [ -f "$BUNDLE" ] || { echo "gpu_check: no bundle at $BUNDLE; run 'tools/gpu_check.sh build' first" >&2; exit 1; }
  dir="$(mktemp -d)"
  python3 tools/gpu_check_run.py --unpack-only --bundle "$BUNDLE" --work "$dir/b" || exit 1
  echo "gpu_check: CUDA libraries from $dirs"
  for f in "$dir"/b/bin/* "$dir"/b/lenet_gpu "$dir"/b/gpt_gpu "$dir"/b/allreduce_bench "$dir"/b/colonyrun "$dir"/b/lenet_cifar10; do
    # Only the bundle and the wheels on the path; the toolkit's folders are not searched.
    out="$(env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$dir/b/lib:$dirs" ldd "$f" 2>&1)"
    local problems
    problems="$(echo "$out" | awk -v cuda="$CUDA_SONAMES" -v bundle="$dir/b/lib/" -v wheels="$dirs" '
      BEGIN { n = split(wheels, w, ":") }
      $2 == "=>" && $3 == "not" { if ($1 != "libcuda.so.1") print "MISSING " $1; next }
      $2 == "=>" {
        inside = 0
        for (i = 1; i <= n; i++) if (index($3, w[i] "/") == 1) inside = 1
        if ($1 ~ cuda) {
          if ($1 ~ /\.so$/) print "UNVERSIONED " $1 " (the wheels bring versioned sonames only)"
          if (!inside) print "OUTSIDE THE WHEELS " $1 " => " $3
        } else if (!inside && index($3, bundle) != 1 && $3 !~ /^\/(usr\/)?lib(64|32)?\//) {
          print "OUTSIDE THE BUNDLE AND THE SYSTEM " $1 " => " $3
        }
      }')"
    if [ -n "$problems" ]; then
      echo "$(basename "$f"):"; echo "$problems" | sed 's/^/    /'; bad=1
    fi
    needed="$needed $(echo "$out" | awk -v cuda="$CUDA_SONAMES" '$2 == "=>" && ($1 ~ cuda || $1 == "libcuda.so.1") {print $1}')"
  done
  echo "gpu_check: CUDA libraries the bundle needs: $(echo "$needed" | tr ' ' '\n' | grep . | sort -u | paste -sd' ')"
  rm -rf "$dir"
  [ "$bad" -eq 0 ] && echo "gpu_check: every bundled binary loads with $venv's wheels (libcuda.so.1 is the driver's)"
  return "$bad"
}

run() {
  local py
  py="$(find_python)" || exit 1
  exec "$py" tools/gpu_check_run.py --bundle "$BUNDLE" --out "${OUT:-/tmp/gpu_check_out}" --python "$py" \
    --budget "${GPU_CHECK_BUDGET:-420}" --timeout "${GPU_CHECK_TIMEOUT:-60}" "$@"
}

# The `run` path here, against a small bundle of tests/tools:fake_cuda_tests under four names (no
# GPU: the device tests skip, nvidia-smi is a fake that records its environment, xz fails if
# called). Checks the unpacking, the library scope, the per-test counts, the debug reruns, the
# budget and the files that come back. tests/tools:gpu_check_test runs it in CI.
selftest() {
  local fake="${1:-}"
  if [ -z "$fake" ]; then
    ./bazelw build //tests/tools:fake_cuda_tests || exit 1
    fake=".bazel/bin/tests/tools/fake_cuda_tests"
  fi
  local tmp mode
  tmp="$(mktemp -d)"
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" EXIT
  for mode in fails fails_then_crashes crashes_at_exit hangs; do
    stage_binary "$fake" "$tmp/stage/bin/tests_tools_fake_$mode"
  done
  printf '#!/bin/sh\necho "colony batch=64 images_per_s=1.0 (fake)"\n' >"$tmp/stage/lenet_gpu"
  chmod +x "$tmp/stage/lenet_gpu"
  GPU_CHECK_XZ_LEVEL=0 pack "$tmp/stage" "$tmp/bundle/bundle.tar.xz" >/dev/null || exit 1

  mkdir -p "$tmp/path"
  printf '#!/bin/sh\necho "xz $*" >>%s/xz_called\nexit 127\n' "$tmp" >"$tmp/path/xz"
  cat >"$tmp/path/nvidia-smi" <<EOF
#!/bin/sh
echo "LD_LIBRARY_PATH=\${LD_LIBRARY_PATH:-}" >>$tmp/nvidia_smi_env
case "\$*" in
  *--query-gpu*) echo "Fake GPU, 999.99, 1 MiB, 0.0" ;;
  -L) echo "GPU 0: Fake GPU (UUID: GPU-0)" ;;
  *) echo "| NVIDIA-SMI 999.99    Driver Version: 999.99    CUDA Version: 99.9 |" ;;
esac
EOF
  chmod +x "$tmp/path/xz" "$tmp/path/nvidia-smi"

  # 90 s: about 10 s of tests and reruns here, room for a machine several times slower, and
  # still less than the shortest benchmark's timeout, so none runs.
  local start=$SECONDS rc=0 budget=90
  OUT="$tmp/out" GPU_CHECK_DIR="$tmp/bundle" GPU_CHECK_BUDGET=$budget GPU_CHECK_TIMEOUT=4 PATH="$tmp/path:$PATH" \
    "$SELF" run --work "$tmp/work" >"$tmp/stdout" 2>&1 || rc=$?
  local took=$((SECONDS - start)) failures=0 summary="$tmp/out/summary.txt" log="$tmp/out/gpu_check.log"
  expect() {  # description, then a command that must succeed
    local what="$1"; shift
    if "$@" >/dev/null 2>&1; then echo "ok    $what"; else echo "FAIL  $what"; failures=$((failures + 1)); fi
  }
  has() { grep -qP -- "$2" "$1"; }
  lacks() { ! grep -qP -- "$2" "$1"; }
  expect "run exits 1 (a test failed)" test "$rc" -eq 1
  expect "run ends within its budget ($took s of $budget)" test "$took" -le $((budget + 5))
  expect "unpacked with Python's lzma, xz never called" \
    sh -c "grep -q \"with Python's lzma\" '$log' && ! test -e '$tmp/xz_called'"
  expect "machine recorded first: OS and glibc, then the driver" \
    sh -c "head -1 '$summary' | grep -q '^os: .*glibc' && sed -n 2p '$summary' | grep -q '^gpu: Fake GPU, 999.99'"
  expect "nvidia-smi ran before and after the tests, never with the bundle's LD_LIBRARY_PATH" \
    sh -c "test \"\$(wc -l <'$tmp/nvidia_smi_env')\" -ge 3 && ! grep -q '$tmp/work' '$tmp/nvidia_smi_env'"
  expect "Colony's binaries ran, with the bundle's lib/ (without it they do not load)" \
    sh -c "grep -qE '^FAIL +tests_tools_fake_hangs: [1-9]' '$summary' &&
           { test -z \"\$(ls '$tmp/work/lib')\" ||
             ! env -u LD_LIBRARY_PATH '$tmp/work/bin/tests_tools_fake_hangs' --gtest_list_tests; }"
  expect "a failure alone: 3 passed, 1 failed, 1 skipped, exit 1 taken for gtest's own" \
    sh -c "grep -qE '^FAIL +tests_tools_fake_fails: 3 passed, 1 failed, 1 skipped$' '$summary' &&
           ! grep -A1 -E '^FAIL +tests_tools_fake_fails:' '$summary' | grep -q 'no test blamed'"
  expect "fail, then crash: 2 passed, 1 failed, 1 skipped, 1 crashed" \
    has "$summary" '^FAIL +tests_tools_fake_fails_then_crashes: 2 passed, 1 failed, 1 skipped, 1 crashed$'
  expect "the test after the crash ran in a new process" \
    has "$tmp/out/tests.tsv" '^tests_tools_fake_fails_then_crashes\tFake.RunsAfterIt_CUDA\tpassed'
  expect "crash at exit: every test counted, none blamed" \
    sh -c "grep -qE '^FAIL +tests_tools_fake_crashes_at_exit: 4 passed, 0 failed, 1 skipped$' '$summary' &&
           grep -q 'killed by SIGABRT after its tests ended' '$summary'"
  expect "a hang: killed at the timeout, the test after it run" \
    sh -c "grep -qE '^FAIL +tests_tools_fake_hangs: 3 passed, 0 failed, 1 skipped, 1 hung$' '$summary' &&
           grep -qP '^tests_tools_fake_hangs\tFake.RunsAfterIt_CUDA\tpassed' '$tmp/out/tests.tsv'"
  expect "tests without CUDA in their name never ran" lacks "$tmp/out/tests.tsv" 'IsNotACudaTest'
  expect "debug reruns: each bad test alone, COLONY_CUDA_SYNC=1, first error kept" \
    sh -c "grep -q 'rerun tests_tools_fake_fails_then_crashes Fake.Fails_CUDA with COLONY_CUDA_SYNC=1: failed' '$summary' &&
           grep -q 'rerun tests_tools_fake_fails_then_crashes Fake.Misbehaves_CUDA with COLONY_CUDA_SYNC=1: crashed' '$summary' &&
           grep -q 'rerun tests_tools_fake_hangs Fake.Misbehaves_CUDA with COLONY_CUDA_SYNC=1: hung' '$summary' &&
           grep -q 'the first error, COLONY_CUDA_SYNC=1' '$log' && grep -q 'about to crash, COLONY_CUDA_SYNC=1' '$log'"
  expect "benchmarks only when the budget holds them" \
    has "$summary" '^benchmarks/lenet_gpu: NOT RUN \(time budget'
  expect "totals: 12 passed, 2 failed, 4 skipped, 1 crashed, 1 hung" \
    has "$summary" '^gpu_check .*: 12 passed, 2 failed, 4 skipped, 1 crashed, 1 hung, 0 not run'
  expect "\$OUT holds summary.txt, gpu_check.log, tests.tsv and logs/ only, under 1 MiB" \
    sh -c "test \"\$(ls '$tmp/out' | paste -sd' ')\" = 'gpu_check.log logs summary.txt tests.tsv' &&
           test \"\$(du -sk '$tmp/out' | cut -f1)\" -lt 1024"
  if [ "$failures" -ne 0 ]; then
    echo "== gpu_check selftest: $failures check(s) failed; the run's output:"
    cat "$tmp/stdout"
    return 1
  fi
  echo "gpu_check selftest: every check passed ($took s)"
}

case "${1:-}" in
  build) shift; build "$@" ;;
  libs) shift; libs "$@" ;;
  run) shift; run "$@" ;;
  selftest) shift; selftest "$@" ;;
  *) sed -n '2,25p' "$SELF"; exit 2 ;;
esac
