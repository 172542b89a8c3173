// attention_head.h: the AVX2 copy of the kernels (the baseline ISA), the choice between it and the
// AVX-512 one, and the loops over heads and panels on the thread pool.
#include "kernels/cpu/attention_head.h"

#include <algorithm>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/isa_dispatch_impl.h"
#include "kernels/cpu/parallel.h"

#define COLONY_ATTENTION_HEAD_ISA avx2
#define COLONY_ATTENTION_HEAD_TRAIT Avx2
#include "kernels/cpu/attention_head_kernels.h"
#undef COLONY_ATTENTION_HEAD_ISA
#undef COLONY_ATTENTION_HEAD_TRAIT

namespace colony::kernels::cpu {

bool head_attention_applies(const AttentionArgs& a) {
  return a.dtype == DType::Float32 && a.dropout_p == 0.0 && a.S >= 1 && a.S <= kHeadAttentionMaxKeys && a.E >= 1 &&
         a.Ev >= 1;
}

float* AlignedFloats::get(int64_t n) {
  constexpr int64_t kPad = 64 / sizeof(float);
  if (data == nullptr || static_cast<int64_t>(storage.size()) < n + kPad) {
    storage.assign(n + kPad, 0.0f);
    const uintptr_t p = reinterpret_cast<uintptr_t>(storage.data());
    data = storage.data() + (64 - p % 64) % 64 / sizeof(float);
  }
  return data;
}

const AttentionHeadFns& active_attention_head_fns() {
  return *active_copy<AttentionHeadFns>(
      {{CpuIsa::Avx2, &avx2::attention_head_fns}, {CpuIsa::Avx512, &avx512::attention_head_fns}});
}

HeadAttentionScratch& thread_head_scratch() {
  thread_local HeadAttentionScratch scratch;
  scratch.packed_bh = -1;
  return scratch;
}

void head_attention_forward(const AttentionArgs& a, const AttentionHeadFns& fns) {
  const int64_t panels = (a.L + kHeadPanelRows - 1) / kHeadPanelRows;
  parallel_for(a.batch * a.heads * panels, 1, [&](int64_t begin, int64_t end) {
    HeadAttentionScratch& scratch = thread_head_scratch();
    for (int64_t task = begin; task < end; ++task) {
      fns.forward_panel(a, task / panels, (task % panels) * kHeadPanelRows, scratch);
    }
  });
}

void head_attention_backward(const AttentionArgs& a, const AttentionHeadFns& fns) {
  parallel_for(a.batch * a.heads, 1, [&](int64_t begin, int64_t end) {
    HeadAttentionScratch& scratch = thread_head_scratch();
    for (int64_t bh = begin; bh < end; ++bh) fns.backward_head(a, bh, scratch);
  });
}

}  // namespace colony::kernels::cpu
