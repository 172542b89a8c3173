#include "kernels/common/copy.h"

#include "kernels/common/convert.h"
#include "kernels/common/dispatch.h"
#include "kernels/cpu/bf16_rows.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/strided_loop.h"

namespace colony::kernels {

using namespace cpu;  // NOLINT(build/namespaces): the CPU helpers (parallel.h, strided_loop.h)

void Copy::cpu(DType src_dtype, const void* src, const StridedLayout& src_layout, DType dst_dtype, void* dst,
               const StridedLayout& dst_layout) {
  // float32 <-> bfloat16 between contiguous tensors (autocast's casts) in vector rows: bf16_rows.h.
  if (src_layout.is_contiguous() && dst_layout.is_contiguous()) {
    if (src_dtype == DType::Float32 && dst_dtype == DType::BFloat16) {
      auto s = static_cast<const float*>(src);
      auto d = static_cast<BFloat16*>(dst);
      parallel_for(dst_layout.numel(), kElementwiseGrain,
                   [&](int64_t b, int64_t e) { round_row_to_bf16<false>(s + b, e - b, 0.0f, d + b); });
      return;
    }
    if (src_dtype == DType::BFloat16 && dst_dtype == DType::Float32) {
      auto s = static_cast<const BFloat16*>(src);
      auto d = static_cast<float*>(dst);
      parallel_for(dst_layout.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) { widen_row_from_bf16(s + b, e - b, d + b); });
      return;
    }
  }
  COLONY_DISPATCH_ALL(dst_dtype, "copy", [&] {
    using Dst = scalar_t;
    COLONY_DISPATCH_ALL(src_dtype, "copy", [&] {
      using Src = scalar_t;
      map1<Dst, Src>(dst, dst_layout, src, src_layout, [](Src x) { return convert<Dst>(x); });
    });
  });
}

void Fill::cpu(DType dtype, void* out, const StridedLayout& out_layout, double value) {
  COLONY_DISPATCH_ALL(dtype, "fill", [&] {
    const scalar_t v = convert<scalar_t>(value);
    map0<scalar_t>(out, out_layout, [v] { return v; });
  });
}

}  // namespace colony::kernels
