# Sourced by benchmarks/gpt_rounds.sh and matmul_rounds.sh for their --isa flag.
#
#   isa_cap SCRIPT ISA
#
# sets colony_env and torch_env (arrays of VAR=value, for `env`) so that both sides run as on a CPU
# that has no more than ISA: native (no cap), or avx2 (AVX2 and no AVX-512): Colony through
# COLONY_CPU_ISA=avx2; PyTorch's own kernels and inductor's generated code through
# ATEN_CPU_CAPABILITY=avx2, MKL through MKL_ENABLE_INSTRUCTIONS=AVX2, oneDNN through
# ONEDNN_MAX_CPU_ISA=AVX2. Capping Colony alone would compare it with a PyTorch still on AVX-512.
# Any other ISA: a message naming SCRIPT, and exit 2.
isa_cap() {
  colony_env=() torch_env=()
  case "$2" in
    native) ;;
    avx2)
      colony_env=(COLONY_CPU_ISA=avx2)
      torch_env=(ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2) ;;
    *) echo "$1: --isa $2: expected avx2 (or leave it out)" >&2; exit 2 ;;
  esac
}
