#!/usr/bin/env bash
# The AVX-512 copy of the small-GEMM tiles (kernels/cpu/small_gemm_avx512.cc) is built with
# -march=x86-64-v4. Any inline function or template it emits as a weak (COMDAT) symbol outside its
# own namespace could be the copy the linker keeps for every caller, and then AVX2-only CPUs would
# run AVX-512 instructions (SIGILL). So: every weak symbol it defines is in
# colony::kernels::cpu::avx512, and it does emit AVX-512 code.
set -u
fail() { echo "FAIL: $*"; exit 1; }
[ "$#" -ge 1 ] || fail "usage: $0 OBJECT..."
object=""
for f in "$@"; do
  case "$f" in *.o) [ -z "$object" ] && [ -f "$f" ] && object="$f" ;; esac
done
[ -n "$object" ] || fail "none of these is an object file present here: $*"
command -v nm >/dev/null && command -v objdump >/dev/null || fail "nm and objdump (binutils) are needed"

weak="$(nm -C --defined-only "$object" | awk '$2 ~ /^[WVu]$/ { $1 = ""; $2 = ""; print }')"
[ -n "$weak" ] || fail "no weak symbols at all in $object: did the table functions move?"
stray="$(echo "$weak" | grep -v '^ *colony::kernels::cpu::SmallGemmFns<[a-z]*> const& colony::kernels::cpu::avx512::' \
                      | grep -v '^ *colony::kernels::cpu::avx512::')"
[ -z "$stray" ] || fail "weak symbols outside colony::kernels::cpu::avx512 in $object:
$stray"
zmm="$(objdump -d "$object" | grep -c '%zmm')"
[ "$zmm" -gt 100 ] || fail "only $zmm instructions use zmm registers: is $object built for AVX-512?"
echo "PASS: $(echo "$weak" | wc -l) weak symbols, all in avx512; $zmm zmm instructions"
