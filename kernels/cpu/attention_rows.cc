// attention_rows.h: the AVX2 copy of the loops (the baseline ISA) and the choice between it and the
// AVX-512 one.
#include "kernels/cpu/attention_rows.h"

#include "kernels/cpu/isa_dispatch_impl.h"

#define COLONY_ATTENTION_ROWS_ISA avx2
#define COLONY_ATTENTION_ROWS_TRAIT Avx2
#include "kernels/cpu/attention_rows_kernels.h"
#undef COLONY_ATTENTION_ROWS_ISA
#undef COLONY_ATTENTION_ROWS_TRAIT

namespace colony::kernels::cpu {

const AttentionRowFns& active_attention_row_fns() {
  return *active_copy<AttentionRowFns>(
      {{CpuIsa::Avx2, &avx2::attention_row_fns}, {CpuIsa::Avx512, &avx512::attention_row_fns}});
}

}  // namespace colony::kernels::cpu
