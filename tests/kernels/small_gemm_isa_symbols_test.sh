#!/usr/bin/env bash
# The AVX-512 copies of the small-GEMM tiles (kernels/cpu/small_gemm_avx512.cc, built with
# -march=x86-64-v4, and small_gemm_avx512_bf16.cc, with AVX512_BF16 on top) and the AMX tiles
# (kernels/cpu/amx_bf16.cc, with AMX-TILE and AMX-BF16 on top), and GELU's and SiLU's loops
# (kernels/cpu/activation_simd_avx512.cc, -march=x86-64-v4) and attention's row loops
# (kernels/cpu/attention_rows_avx512.cc, -march=x86-64-v4) and attention's whole-head float32
# kernels (kernels/cpu/attention_head_avx512.cc, -march=x86-64-v4) and attention's tile products
# (kernels/cpu/attention_tiles_amx.cc, AMX on x86-64-v4) and the convolution's AMX products
# (kernels/cpu/conv_pixels_amx.cc, conv_channels_amx.cc, conv_weight_rows_amx.cc) must stay in
# their own namespaces. Any inline function or template they emit as a weak (COMDAT) symbol outside
# it could be the copy the linker keeps for every caller, and then AVX2-only CPUs would run AVX-512
# or AMX instructions (SIGILL): the run-time choice's templates (kernels/cpu/isa_dispatch.h), which
# they see through their families' headers, are one such risk. So: every global symbol each object
# defines (weak or not) is in its copy's namespace (colony::kernels::cpu::avx512, ::avx512_bf16,
# ::amx_bf16, ::conv_pixels_amx, ...), and each does emit the instructions it exists for.
set -u
fail() { echo "FAIL: $*"; exit 1; }
[ "$#" -ge 1 ] || fail "usage: $0 OBJECT..."
command -v nm >/dev/null && command -v objdump >/dev/null || fail "nm and objdump (binutils) are needed"

# One object per copy (bazel may list both the .o and the .pic.o of one).
declare -A seen=()
for f in "$@"; do
  case "$f" in *.o) ;; *) continue ;; esac
  [ -f "$f" ] || continue
  base="$(basename "$f")"; copy="${base%%.*}"
  [ -n "${seen[$copy]:-}" ] && continue
  seen[$copy]="$f"
done
for want in small_gemm_avx512 small_gemm_avx512_bf16 amx_bf16 activation_simd_avx512 attention_rows_avx512 \
    attention_head_avx512 attention_tiles_amx conv_pixels_amx conv_channels_amx conv_weight_rows_amx; do
  [ -n "${seen[$want]:-}" ] || fail "no object file of $want among: $*"
done

check() {  # object, namespace, instruction that must appear, minimum count
  local object="$1" ns="$2" insn="$3" min="$4"
  local global stray count
  global="$(nm -C --defined-only "$object" | awk '$2 ~ /^[A-Zu]$/ { $1 = ""; $2 = ""; print }')"
  [ -n "$global" ] || fail "no global symbols at all in $object: did the table functions move?"
  # A table function's name starts with its return type, colony::kernels::cpu::SmallGemm...Fns
  # or AmxGemmFns.
  stray="$(echo "$global" | sed -E 's/^ *colony::kernels::cpu::(SmallGemm[A-Za-z0-9]*|AmxGemm)Fns(<[a-z]*>)? const& //' \
                        | grep -v "^ *colony::kernels::cpu::$ns::")"
  [ -z "$stray" ] || fail "global symbols outside colony::kernels::cpu::$ns in $object:
$stray"
  count="$(objdump -d "$object" | grep -c "$insn")"
  [ "$count" -ge "$min" ] || fail "only $count instructions match '$insn' in $object: is it built for $ns?"
  echo "PASS: $object: $(echo "$global" | wc -l) global symbols, all in $ns; $count instructions match '$insn'"
}
check "${seen[small_gemm_avx512]}" avx512 '%zmm' 100
check "${seen[small_gemm_avx512_bf16]}" avx512_bf16 'vdpbf16ps' 100
check "${seen[amx_bf16]}" amx_bf16 'tdpbf16ps' 4
check "${seen[activation_simd_avx512]}" avx512 'vscalefps' 4
check "${seen[attention_rows_avx512]}" avx512 'vscalefps' 2
check "${seen[attention_head_avx512]}" avx512 'vscalefps' 2
check "${seen[attention_tiles_amx]}" amx_bf16 'tdpbf16ps' 4
check "${seen[conv_pixels_amx]}" conv_pixels_amx 'tdpbf16ps' 1
check "${seen[conv_channels_amx]}" conv_channels_amx 'tdpbf16ps' 1
check "${seen[conv_weight_rows_amx]}" conv_weight_rows_amx 'tdpbf16ps' 1
