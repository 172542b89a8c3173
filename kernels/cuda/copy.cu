#include "kernels/common/convert.h"
#include "kernels/common/dispatch.h"
#include "kernels/common/copy.h"
#include "kernels/cuda/elementwise_launch.cuh"

namespace colony::kernels::cuda {
namespace {

template <typename Dst, typename Src>
struct CopyFn {
  Dst* dst;
  const Src* src;
  __device__ void operator()(const int64_t* off) const { dst[off[0]] = convert<Dst>(src[off[1]]); }
};

template <typename T>
struct FillFn {
  T* out;
  T value;
  __device__ void operator()(const int64_t* off) const { out[off[0]] = value; }
};

}  // namespace

}  // namespace colony::kernels::cuda

namespace colony::kernels {

using namespace cuda;  // NOLINT(build/namespaces): the helpers above

void Copy::cuda(DType src_dtype, const void* src, const StridedLayout& src_layout, DType dst_dtype, void* dst,
                const StridedLayout& dst_layout, void* stream) {
  COLONY_DISPATCH_ALL(dst_dtype, "copy", [&] {
    using Dst = scalar_t;
    COLONY_DISPATCH_ALL(src_dtype, "copy", [&] {
      using Src = scalar_t;
      CopyFn<Dst, Src> f{static_cast<Dst*>(dst), static_cast<const Src*>(src)};
      launch_elementwise<2>({&dst_layout, &src_layout}, f, stream, "copy");
    });
  });
}

void Fill::cuda(DType dtype, void* out, const StridedLayout& out_layout, double value, void* stream) {
  COLONY_DISPATCH_ALL(dtype, "fill", [&] {
    FillFn<scalar_t> f{static_cast<scalar_t*>(out), convert<scalar_t>(value)};
    launch_elementwise<1>({&out_layout}, f, stream, "fill");
  });
}

}  // namespace colony::kernels
