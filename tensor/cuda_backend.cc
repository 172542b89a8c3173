// The CUDA backend, one instance per device: each entry point makes its device current and queues
// the kernels::cuda function of the same name on the device's current stream (run() below, the one
// place that does this). Compiled only when CUDA is (tensor/BUILD, if_cuda).
#include <utility>
#include <vector>

#include "kernels/cuda/amp.h"
#include "kernels/cuda/batch_norm.h"
#include "kernels/cuda/blas.h"
#include "kernels/cuda/copy.h"
#include "kernels/cuda/cross_entropy.h"
#include "kernels/cuda/cudnn_conv.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/index.h"
#include "kernels/cuda/optim.h"
#include "kernels/cuda/pool.h"
#include "kernels/cuda/random.h"
#include "kernels/cuda/reduce.h"
#include "kernels/cuda/runtime.h"
#include "tensor/device_backend.h"
#include "tensor/cuda.h"
#include "tensor/raw_ops.h"
#include "tensor/stream.h"

namespace colony {
namespace {

namespace k = kernels::cuda;

// cuDNN asks for scratch memory once it has chosen an algorithm; it comes from the caching
// allocator as a byte tensor and is released (to the cache, stream-ordered) after the call.
struct Workspaces {
  Device device;
  std::vector<Tensor> held;
  k::WorkspaceAllocator allocator() {
    return [this](size_t bytes) -> void* {
      if (bytes == 0) return nullptr;
      held.push_back(raw::empty({static_cast<int64_t>(bytes)}, TensorOptions(kUInt8).device(device)));
      return held.back().data_ptr_raw();
    };
  }
};

k::CopyKind copy_kind(MemcpyKind kind) {
  switch (kind) {
    case MemcpyKind::HostToDevice: return k::CopyKind::HostToDevice;
    case MemcpyKind::DeviceToHost: return k::CopyKind::DeviceToHost;
    case MemcpyKind::DeviceToDevice: return k::CopyKind::DeviceToDevice;
  }
  return k::CopyKind::DeviceToDevice;
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int index) : device_(Device::cuda(index)) {}

  void unary(kernels::UnaryOp op, DType dtype, const void* in, const Layout& in_layout, void* out,
             const Layout& out_layout, const kernels::UnaryAttrs& attrs) const override {
    run(k::unary, op, dtype, in, in_layout, out, out_layout, attrs);
  }
  void binary(kernels::BinaryOp op, DType dtype, const void* a, const Layout& a_layout, const void* b,
              const Layout& b_layout, void* out, const Layout& out_layout, double alpha) const override {
    run(k::binary, op, dtype, a, a_layout, b, b_layout, out, out_layout, alpha);
  }
  void binary_scalar(kernels::BinaryOp op, DType dtype, const void* a, const Layout& a_layout, double s,
                     bool scalar_first, void* out, const Layout& out_layout) const override {
    run(k::binary_scalar, op, dtype, a, a_layout, s, scalar_first, out, out_layout);
  }
  void clamp(DType dtype, const void* in, const Layout& in_layout, void* out, const Layout& out_layout, bool has_min,
             double min, bool has_max, double max) const override {
    run(k::clamp, dtype, in, in_layout, out, out_layout, has_min, min, has_max, max);
  }
  void where(DType dtype, const bool* cond, const Layout& cond_layout, const void* a, const Layout& a_layout,
             const void* b, const Layout& b_layout, void* out, const Layout& out_layout) const override {
    run(k::where, dtype, cond, cond_layout, a, a_layout, b, b_layout, out, out_layout);
  }
  void activation_backward(kernels::ActivationGrad op, DType dtype, const void* grad, const Layout& grad_layout,
                           const void* saved, const Layout& saved_layout, void* out,
                           const Layout& out_layout, const kernels::UnaryAttrs& attrs) const override {
    run(k::activation_backward, op, dtype, grad, grad_layout, saved, saved_layout, out, out_layout, attrs);
  }

  void copy(DType src_dtype, const void* src, const Layout& src_layout, DType dst_dtype, void* dst,
            const Layout& dst_layout) const override {
    run(k::copy, src_dtype, src, src_layout, dst_dtype, dst, dst_layout);
  }
  void fill(DType dtype, void* out, const Layout& out_layout, double value) const override {
    run(k::fill, dtype, out, out_layout, value);
  }
  void memcpy(void* dst, const void* src, size_t nbytes, MemcpyKind kind, const Stream& stream,
              bool async) const override {
    cuda::DeviceGuard guard(device_.index);
    k::memcpy(dst, src, nbytes, copy_kind(kind), stream.handle(), async);
  }

  void sum(DType x_dtype, const void* x, DType y_dtype, void* y, int64_t outer, int64_t len, int64_t inner,
           double scale) const override {
    // Few long rows are summed in two passes over the whole device, through a workspace.
    Tensor workspace = scratch(k::sum_workspace_bytes(x_dtype, outer, len, inner));
    run(k::sum, x_dtype, x, y_dtype, y, outer, len, inner, scale,
        workspace.defined() ? workspace.data_ptr_raw() : nullptr);
  }
  void var(DType dtype, const void* x, void* y, int64_t rows, int64_t len, int64_t correction) const override {
    Tensor workspace = scratch(k::var_workspace_bytes(dtype, rows, len));
    run(k::var, dtype, x, y, rows, len, correction, workspace.defined() ? workspace.data_ptr_raw() : nullptr);
  }
  void max_min(DType dtype, const void* x, void* values, int64_t* indices, int64_t rows, int64_t len,
               bool is_max) const override {
    Tensor workspace = scratch(k::max_min_workspace_bytes(dtype, rows, len));
    run(k::max_min, dtype, x, values, indices, rows, len, is_max,
        workspace.defined() ? workspace.data_ptr_raw() : nullptr);
  }

  void gemm(DType dtype, int64_t batch, int64_t m, int64_t n, int64_t k_, const kernels::MatrixArg& a,
            const kernels::MatrixArg& b, void* c, int64_t ldc, int64_t c_batch_stride, double alpha,
            double beta) const override {
    run(k::gemm, dtype, batch, m, n, k_, a, b, c, ldc, c_batch_stride, alpha, beta);
  }

  // cuDNN takes a workspace allocator after the stream; the workspaces live until the call returns.
  void conv2d_forward(DType dtype, const kernels::Conv2dGeometry& g, const void* x, const void* w, const void* bias,
                      void* y) const override {
    cuda::DeviceGuard guard(device_.index);
    Workspaces ws{device_, {}};
    k::conv2d_forward(dtype, g, x, w, bias, y, current_stream(device_).handle(), ws.allocator());
  }
  void conv2d_backward(DType dtype, const kernels::Conv2dGeometry& g, const void* grad_y, const void* x,
                       const void* w, void* grad_x, void* grad_w, void* grad_b) const override {
    cuda::DeviceGuard guard(device_.index);
    Workspaces ws{device_, {}};
    k::conv2d_backward(dtype, g, grad_y, x, w, grad_x, grad_w, grad_b, current_stream(device_).handle(),
                       ws.allocator());
  }

  void max_pool2d_forward(DType dtype, const kernels::Pool2dGeometry& g, const void* x, void* y,
                          int64_t* indices) const override {
    run(k::max_pool2d_forward, dtype, g, x, y, indices);
  }
  void max_pool2d_backward(DType dtype, const kernels::Pool2dGeometry& g, const void* grad_y, const int64_t* indices,
                           void* grad_x) const override {
    run(k::max_pool2d_backward, dtype, g, grad_y, indices, grad_x);
  }
  void avg_pool2d_forward(DType dtype, const kernels::Pool2dGeometry& g, bool count_include_pad,
                          int64_t divisor_override, const void* x, void* y) const override {
    run(k::avg_pool2d_forward, dtype, g, count_include_pad, divisor_override, x, y);
  }
  void avg_pool2d_backward(DType dtype, const kernels::Pool2dGeometry& g, bool count_include_pad,
                           int64_t divisor_override, const void* grad_y, void* grad_x) const override {
    run(k::avg_pool2d_backward, dtype, g, count_include_pad, divisor_override, grad_y, grad_x);
  }
  void adaptive_avg_pool2d_forward(DType dtype, const kernels::Pool2dGeometry& g, const void* x,
                                   void* y) const override {
    run(k::adaptive_avg_pool2d_forward, dtype, g, x, y);
  }
  void adaptive_avg_pool2d_backward(DType dtype, const kernels::Pool2dGeometry& g, const void* grad_y,
                                    void* grad_x) const override {
    run(k::adaptive_avg_pool2d_backward, dtype, g, grad_y, grad_x);
  }

  void batch_norm_forward(DType dtype, DType param_dtype, int64_t n, int64_t c, int64_t s, const void* x,
                          const void* weight, const void* bias, void* running_mean, void* running_var, bool training,
                          double momentum, double eps, void* y, void* save_mean, void* save_invstd) const override {
    run(k::batch_norm_forward, dtype, param_dtype, n, c, s, x, weight, bias, running_mean, running_var, training, momentum, eps, y,
        save_mean, save_invstd);
  }
  void batch_norm_backward(DType dtype, DType param_dtype, int64_t n, int64_t c, int64_t s, const void* grad_y,
                           const void* x, const void* weight, const void* save_mean, const void* save_invstd,
                           bool training, void* grad_x, void* grad_weight, void* grad_bias) const override {
    run(k::batch_norm_backward, dtype, param_dtype, n, c, s, grad_y, x, weight, save_mean, save_invstd, training, grad_x,
        grad_weight, grad_bias);
  }

  void cross_entropy_forward(DType dtype, const void* x, const int64_t* target, const kernels::CrossEntropyParams& p,
                             void* loss, void* lse, void* counted) const override {
    Tensor block_sums = scratch(k::cross_entropy_scratch_bytes(p));
    run(k::cross_entropy_forward, dtype, x, target, p, loss, lse, counted,
        block_sums.defined() ? block_sums.data_ptr_raw() : nullptr);
  }
  void cross_entropy_backward(DType dtype, const void* grad_output, const void* x, const int64_t* target,
                              const void* lse, const void* counted, const kernels::CrossEntropyParams& p,
                              void* grad_x) const override {
    run(k::cross_entropy_backward, dtype, grad_output, x, target, lse, counted, p, grad_x);
  }

  void index_select(int64_t elem_size, const void* x, void* y, int64_t outer, int64_t x_dim, int64_t inner,
                    const int64_t* index, int64_t n) const override {
    run(k::index_select, elem_size, x, y, outer, x_dim, inner, index, n);
  }
  void index_add(DType dtype, void* out, const void* src, int64_t outer, int64_t out_dim, int64_t inner,
                 const int64_t* index, int64_t n) const override {
    run(k::index_add, dtype, out, src, outer, out_dim, inner, index, n);
  }
  void gather(int64_t elem_size, const void* x, const Layout& x_layout, int dim, const int64_t* index,
              const Layout& index_layout, void* y) const override {
    run(k::gather, elem_size, x, x_layout, dim, index, index_layout, y);
  }
  void scatter_add(DType dtype, void* out, const Layout& out_layout, int dim, const int64_t* index,
                   const Layout& index_layout, const void* src, const Layout& src_layout) const override {
    run(k::scatter_add, dtype, out, out_layout, dim, index, index_layout, src, src_layout);
  }
  void one_hot(const int64_t* labels, int64_t n, int64_t num_classes, int64_t* y) const override {
    run(k::one_hot, labels, n, num_classes, y);
  }

  void fill_random(DType dtype, void* out, int64_t n, bool normal, double a, double b,
                   const kernels::PhiloxArgs& philox) const override {
    run(k::fill_random, dtype, out, n, normal, a, b, philox);
  }

  void sgd_step(DType dtype, int64_t n, void* param, const void* grad, void* buf,
                const kernels::SgdParams& s) const override {
    run(k::sgd_step, dtype, n, param, grad, buf, s);
  }
  void adam_step(DType dtype, int64_t n, void* param, const void* grad, void* m, void* v, void* vmax,
                 const kernels::AdamParams& a) const override {
    run(k::adam_step, dtype, n, param, grad, m, v, vmax, a);
  }
  void unscale_and_check(int64_t count, void* const* grads, const int64_t* numel, const DType* dtypes,
                         const float* scale, float* found_inf) const override {
    run(k::unscale_and_check, count, grads, numel, dtypes, scale, found_inf);
  }
  void update_scale(float* scale, int32_t* growth_tracker, const float* found_inf, double growth_factor,
                    double backoff_factor, int64_t growth_interval) const override {
    run(k::update_scale, scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval);
  }
  void sgd_step_multi(DType dtype, const std::vector<void*>& params, const std::vector<const void*>& grads,
                      const std::vector<void*>& bufs, const std::vector<int64_t>& sizes,
                      const kernels::SgdParams& s) const override {
    run(k::sgd_step_multi, dtype, params, grads, bufs, sizes, s);
  }
  void adam_step_multi(DType dtype, const std::vector<void*>& params, const std::vector<const void*>& grads,
                       const std::vector<void*>& m, const std::vector<void*>& v, const std::vector<void*>& vmax,
                       const std::vector<void*>& steps, const std::vector<int64_t>& sizes,
                       const kernels::AdamParams& a) const override {
    run(k::adam_step_multi, dtype, params, grads, m, v, vmax, steps, sizes, a);
  }

 private:
  // Device scratch for one call, from the caching allocator (released stream-ordered after it).
  Tensor scratch(size_t bytes) const {
    if (bytes == 0) return Tensor();
    return raw::empty({static_cast<int64_t>(bytes)}, TensorOptions(kUInt8).device(device_));
  }

  // The device is made current so that what acts on "the current device" (cudaMalloc in a kernel's
  // scratch, the legacy default stream) reaches it; the kernel is queued on the stream ops on this
  // device are ordered on (current_stream, per thread: a StreamGuard redirects it).
  template <typename Kernel, typename... Args>
  void run(Kernel kernel, Args&&... args) const {
    cuda::DeviceGuard guard(device_.index);
    kernel(std::forward<Args>(args)..., current_stream(device_).handle());
  }

  Device device_;
};

}  // namespace

namespace detail {

const Backend& cuda_backend(int index) {
  // Built once, on first use, for every device the process sees (a function-local static is
  // initialised exactly once even when threads race to it).
  static const std::vector<CudaBackend> backends = [] {
    std::vector<CudaBackend> all;
    for (int i = 0; i < cuda::device_count(); ++i) all.emplace_back(i);
    return all;
  }();
  if (index < 0 || index >= static_cast<int>(backends.size())) cuda::check_device(index, Device::cuda(index).str());
  return backends[static_cast<size_t>(index)];
}

}  // namespace detail
}  // namespace colony
