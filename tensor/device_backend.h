// The device seam: every kernel an op runs goes through the Backend of the device its tensors live
// on. An op's front function (tensor/*_ops.cc) checks its arguments, allocates its outputs and makes
// one call, backend_for(out.device()).f(...); the backend knows how to run f on its device:
//  - the CPU backend (cpu_backend.cc) forwards to kernels::cpu;
//  - a CUDA backend (cuda_backend.cc, built only with CUDA) makes its device current and queues
//    kernels::cuda::f on that device's current stream, in one place for every kernel.
// Adding a device, or a layer in front of every kernel, means a new Backend here, not a change to
// each op file. The entry points speak the kernels' language (raw pointers, layouts, geometries),
// so kernels/ stays ignorant of Tensor; their contracts are the kernels' headers
// (kernels/cpu/*.h, whose CUDA twins take the same arguments).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/common/conv_geometry.h"
#include "kernels/common/cross_entropy.h"
#include "kernels/common/dtype.h"
#include "kernels/common/elementwise_functors.h"
#include "kernels/common/layout.h"
#include "kernels/common/matrix.h"
#include "kernels/common/optim_functors.h"
#include "kernels/common/random_fill.h"
#include "tensor/device.h"
#include "tensor/stream.h"

namespace colony {

// Which way a dense byte copy crosses a device boundary (copy.cc's transfers).
enum class MemcpyKind { HostToDevice, DeviceToHost, DeviceToDevice };

class Backend {
 public:
  using Layout = kernels::StridedLayout;

  virtual ~Backend() = default;

  // --- elementwise (kernels/cpu/elementwise.h): layouts carry the output's sizes ---
  virtual void unary(kernels::UnaryOp op, DType dtype, const void* in, const Layout& in_layout, void* out,
                     const Layout& out_layout, const kernels::UnaryAttrs& attrs) const = 0;
  virtual void binary(kernels::BinaryOp op, DType dtype, const void* a, const Layout& a_layout, const void* b,
                      const Layout& b_layout, void* out, const Layout& out_layout, double alpha) const = 0;
  virtual void binary_scalar(kernels::BinaryOp op, DType dtype, const void* a, const Layout& a_layout, double s,
                             bool scalar_first, void* out, const Layout& out_layout) const = 0;
  virtual void clamp(DType dtype, const void* in, const Layout& in_layout, void* out, const Layout& out_layout,
                     bool has_min, double min, bool has_max, double max) const = 0;
  virtual void where(DType dtype, const bool* cond, const Layout& cond_layout, const void* a, const Layout& a_layout,
                     const void* b, const Layout& b_layout, void* out, const Layout& out_layout) const = 0;
  virtual void activation_backward(kernels::ActivationGrad op, DType dtype, const void* grad,
                                   const Layout& grad_layout, const void* saved, const Layout& saved_layout,
                                   void* out, const Layout& out_layout, const kernels::UnaryAttrs& attrs) const = 0;

  // --- copy and fill on this device (kernels/cpu/copy.h) ---
  virtual void copy(DType src_dtype, const void* src, const Layout& src_layout, DType dst_dtype, void* dst,
                    const Layout& dst_layout) const = 0;
  virtual void fill(DType dtype, void* out, const Layout& out_layout, double value) const = 0;
  // nbytes dense bytes between the host and this device, or from this device to another, queued on
  // `stream` (a stream of this device: the current one, or copy.cc's upload stream); returns once
  // they have landed unless `async`.
  virtual void memcpy(void* dst, const void* src, size_t nbytes, MemcpyKind kind, const Stream& stream,
                      bool async) const = 0;

  // --- reductions (kernels/cpu/reduce.h) ---
  virtual void sum(DType x_dtype, const void* x, DType y_dtype, void* y, int64_t outer, int64_t len, int64_t inner,
                   double scale) const = 0;
  virtual void var(DType dtype, const void* x, void* y, int64_t rows, int64_t len, int64_t correction) const = 0;
  virtual void max_min(DType dtype, const void* x, void* values, int64_t* indices, int64_t rows, int64_t len,
                       bool is_max) const = 0;

  // --- matrix products (kernels/cpu/gemm.h) ---
  virtual void gemm(DType dtype, int64_t batch, int64_t m, int64_t n, int64_t k, const kernels::MatrixArg& a,
                    const kernels::MatrixArg& b, void* c, int64_t ldc, int64_t c_batch_stride, double alpha,
                    double beta) const = 0;

  // --- convolution (kernels/cpu/conv.h); grad_x, grad_w, grad_b may each be null ---
  virtual void conv2d_forward(DType dtype, const kernels::Conv2dGeometry& g, const void* x, const void* w,
                              const void* bias, void* y) const = 0;
  virtual void conv2d_backward(DType dtype, const kernels::Conv2dGeometry& g, const void* grad_y, const void* x,
                               const void* w, void* grad_x, void* grad_w, void* grad_b) const = 0;

  // --- pooling (kernels/cpu/pool.h) ---
  virtual void max_pool2d_forward(DType dtype, const kernels::Pool2dGeometry& g, const void* x, void* y,
                                  int64_t* indices) const = 0;
  virtual void max_pool2d_backward(DType dtype, const kernels::Pool2dGeometry& g, const void* grad_y,
                                   const int64_t* indices, void* grad_x) const = 0;
  virtual void avg_pool2d_forward(DType dtype, const kernels::Pool2dGeometry& g, bool count_include_pad,
                                  int64_t divisor_override, const void* x, void* y) const = 0;
  virtual void avg_pool2d_backward(DType dtype, const kernels::Pool2dGeometry& g, bool count_include_pad,
                                   int64_t divisor_override, const void* grad_y, void* grad_x) const = 0;
  virtual void adaptive_avg_pool2d_forward(DType dtype, const kernels::Pool2dGeometry& g, const void* x,
                                           void* y) const = 0;
  virtual void adaptive_avg_pool2d_backward(DType dtype, const kernels::Pool2dGeometry& g, const void* grad_y,
                                            void* grad_x) const = 0;

  // --- batch normalization over [n, c, s] (kernels/cpu/batch_norm.h); param_dtype is that of
  //     weight, bias and the running statistics: dtype, or float32 beside a 16-bit input ---
  virtual void batch_norm_forward(DType dtype, DType param_dtype, int64_t n, int64_t c, int64_t s, const void* x, const void* weight,
                                  const void* bias, void* running_mean, void* running_var, bool training,
                                  double momentum, double eps, void* y, void* save_mean,
                                  void* save_invstd) const = 0;
  virtual void batch_norm_backward(DType dtype, DType param_dtype, int64_t n, int64_t c, int64_t s, const void* grad_y, const void* x,
                                   const void* weight, const void* save_mean, const void* save_invstd, bool training,
                                   void* grad_x, void* grad_weight, void* grad_bias) const = 0;

  // --- fused cross-entropy / nll_loss over [rows, classes] (kernels/cpu/cross_entropy.h) ---
  virtual void cross_entropy_forward(DType dtype, const void* x, const int64_t* target,
                                     const kernels::CrossEntropyParams& p, void* loss, void* lse,
                                     void* counted) const = 0;
  virtual void cross_entropy_backward(DType dtype, const void* grad_output, const void* x, const int64_t* target,
                                      const void* lse, const void* counted, const kernels::CrossEntropyParams& p,
                                      void* grad_x) const = 0;

  // --- indexing (kernels/cpu/index.h); indices are int64 and already bounds-checked ---
  virtual void index_select(int64_t elem_size, const void* x, void* y, int64_t outer, int64_t x_dim, int64_t inner,
                            const int64_t* index, int64_t n) const = 0;
  virtual void index_add(DType dtype, void* out, const void* src, int64_t outer, int64_t out_dim, int64_t inner,
                         const int64_t* index, int64_t n) const = 0;
  virtual void gather(int64_t elem_size, const void* x, const Layout& x_layout, int dim, const int64_t* index,
                      const Layout& index_layout, void* y) const = 0;
  virtual void scatter_add(DType dtype, void* out, const Layout& out_layout, int dim, const int64_t* index,
                           const Layout& index_layout, const void* src, const Layout& src_layout) const = 0;
  virtual void one_hot(const int64_t* labels, int64_t n, int64_t num_classes, int64_t* y) const = 0;

  // --- random fill of n contiguous elements from Philox (seed, offset) (kernels/cpu/random.h);
  //     only a CUDA backend accepts a state in device memory (a graph capture's) ---
  virtual void fill_random(DType dtype, void* out, int64_t n, bool normal, double a, double b,
                           const kernels::PhiloxArgs& philox) const = 0;

  // --- fused optimizer steps over n contiguous elements (kernels/cpu/optim.h) ---
  virtual void sgd_step(DType dtype, int64_t n, void* param, const void* grad, void* buf,
                        const kernels::SgdParams& s) const = 0;
  virtual void adam_step(DType dtype, int64_t n, void* param, const void* grad, void* m, void* v, void* vmax,
                         const kernels::AdamParams& a) const = 0;
  // GradScaler's unscale: multiplies `count` contiguous gradients (numel[i] elements of dtypes[i])
  // by 1 / *scale in place and sets *found_inf to 1 when any element is inf or NaN; and its
  // update of the scale and growth count from the flag. scale, growth_tracker and found_inf are
  // float32 / int32 / float32 on this device (kernels/cpu/amp.h).
  virtual void unscale_and_check(int64_t count, void* const* grads, const int64_t* numel, const DType* dtypes,
                                 const float* scale, float* found_inf) const = 0;
  virtual void update_scale(float* scale, int32_t* growth_tracker, const float* found_inf, double growth_factor,
                            double backoff_factor, int64_t growth_interval) const = 0;
  // The same steps over many tensors of one dtype (sizes[i] elements each; bufs / vmax empty when
  // unused; steps, when not empty, each tensor's float64 step count, read for the bias corrections
  // and advanced): CUDA updates up to 24 tensors per launch (kernels/common/multi_tensor.h), the
  // CPU steps them one by one.
  virtual void sgd_step_multi(DType dtype, const std::vector<void*>& params, const std::vector<const void*>& grads,
                              const std::vector<void*>& bufs, const std::vector<int64_t>& sizes,
                              const kernels::SgdParams& s) const = 0;
  virtual void adam_step_multi(DType dtype, const std::vector<void*>& params, const std::vector<const void*>& grads,
                               const std::vector<void*>& m, const std::vector<void*>& v,
                               const std::vector<void*>& vmax, const std::vector<void*>& steps,
                               const std::vector<int64_t>& sizes, const kernels::AdamParams& a) const = 0;
};

// The backend that runs kernels on `device`. Throws std::runtime_error, as cuda::check_device does,
// when `device` is a CUDA device this process cannot use ("cuda:0: no CUDA device available (Colony
// was built without CUDA ...)", or an index out of range).
const Backend& backend_for(Device device);

namespace detail {
// The backends behind backend_for: cpu_backend.cc, and cuda_backend.cc (defined only in CUDA builds).
const Backend& cpu_backend();
const Backend& cuda_backend(int index);
}  // namespace detail

}  // namespace colony
