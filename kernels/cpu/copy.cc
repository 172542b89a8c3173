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
      round_to_bf16_parallel(static_cast<const float*>(src), dst_layout.numel(), static_cast<BFloat16*>(dst));
      return;
    }
    if (src_dtype == DType::BFloat16 && dst_dtype == DType::Float32) {
      widen_from_bf16_parallel(static_cast<const BFloat16*>(src), dst_layout.numel(), static_cast<float*>(dst));
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
