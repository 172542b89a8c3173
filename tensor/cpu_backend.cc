// The CPU backend: each entry point is the kernels::cpu function of the same name. CPU kernels run
// synchronously on the calling thread (and its worker pool), so there is no stream or device state.
#include <stdexcept>

#include "kernels/cpu/amp.h"
#include "kernels/cpu/batch_norm.h"
#include "kernels/cpu/cross_entropy.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/index.h"
#include "kernels/cpu/optim.h"
#include "kernels/cpu/pool.h"
#include "kernels/cpu/random.h"
#include "kernels/cpu/reduce.h"
#include "tensor/device_backend.h"

namespace colony {
namespace {

namespace k = kernels::cpu;

class CpuBackend final : public Backend {
 public:
  void unary(kernels::UnaryOp op, DType dtype, const void* in, const Layout& in_layout, void* out,
             const Layout& out_layout, const kernels::UnaryAttrs& attrs) const override {
    k::unary(op, dtype, in, in_layout, out, out_layout, attrs);
  }
  void binary(kernels::BinaryOp op, DType dtype, const void* a, const Layout& a_layout, const void* b,
              const Layout& b_layout, void* out, const Layout& out_layout, double alpha) const override {
    k::binary(op, dtype, a, a_layout, b, b_layout, out, out_layout, alpha);
  }
  void binary_scalar(kernels::BinaryOp op, DType dtype, const void* a, const Layout& a_layout, double s,
                     bool scalar_first, void* out, const Layout& out_layout) const override {
    k::binary_scalar(op, dtype, a, a_layout, s, scalar_first, out, out_layout);
  }
  void clamp(DType dtype, const void* in, const Layout& in_layout, void* out, const Layout& out_layout, bool has_min,
             double min, bool has_max, double max) const override {
    k::clamp(dtype, in, in_layout, out, out_layout, has_min, min, has_max, max);
  }
  void where(DType dtype, const bool* cond, const Layout& cond_layout, const void* a, const Layout& a_layout,
             const void* b, const Layout& b_layout, void* out, const Layout& out_layout) const override {
    k::where(dtype, cond, cond_layout, a, a_layout, b, b_layout, out, out_layout);
  }
  void activation_backward(kernels::ActivationGrad op, DType dtype, const void* grad, const Layout& grad_layout,
                           const void* saved, const Layout& saved_layout, void* out,
                           const Layout& out_layout, const kernels::UnaryAttrs& attrs) const override {
    k::activation_backward(op, dtype, grad, grad_layout, saved, saved_layout, out, out_layout, attrs);
  }

  void copy(DType src_dtype, const void* src, const Layout& src_layout, DType dst_dtype, void* dst,
            const Layout& dst_layout) const override {
    k::copy(src_dtype, src, src_layout, dst_dtype, dst, dst_layout);
  }
  void fill(DType dtype, void* out, const Layout& out_layout, double value) const override {
    k::fill(dtype, out, out_layout, value);
  }
  void memcpy(void*, const void*, size_t, MemcpyKind, const Stream&, bool) const override {
    // copy.cc asks the backend of the CUDA side of a transfer; two CPU tensors are on one device.
    throw std::logic_error("memcpy: the CPU backend has no device memory to transfer to or from");
  }

  void sum(DType x_dtype, const void* x, DType y_dtype, void* y, int64_t outer, int64_t len, int64_t inner,
           double scale) const override {
    k::sum(x_dtype, x, y_dtype, y, outer, len, inner, scale);
  }
  void var(DType dtype, const void* x, void* y, int64_t rows, int64_t len, int64_t correction) const override {
    k::var(dtype, x, y, rows, len, correction);
  }
  void max_min(DType dtype, const void* x, void* values, int64_t* indices, int64_t rows, int64_t len,
               bool is_max) const override {
    k::max_min(dtype, x, values, indices, rows, len, is_max);
  }

  void gemm(DType dtype, int64_t batch, int64_t m, int64_t n, int64_t k_, const kernels::MatrixArg& a,
            const kernels::MatrixArg& b, void* c, int64_t ldc, int64_t c_batch_stride, double alpha,
            double beta) const override {
    k::gemm(dtype, batch, m, n, k_, a, b, c, ldc, c_batch_stride, alpha, beta);
  }

  void conv2d_forward(DType dtype, const kernels::Conv2dGeometry& g, const void* x, const void* w, const void* bias,
                      void* y) const override {
    k::conv2d_forward(dtype, g, x, w, bias, y);
  }
  void conv2d_backward(DType dtype, const kernels::Conv2dGeometry& g, const void* grad_y, const void* x,
                       const void* w, void* grad_x, void* grad_w, void* grad_b) const override {
    k::conv2d_backward(dtype, g, grad_y, x, w, grad_x, grad_w, grad_b);
  }

  void max_pool2d_forward(DType dtype, const kernels::Pool2dGeometry& g, const void* x, void* y,
                          int64_t* indices) const override {
    k::max_pool2d_forward(dtype, g, x, y, indices);
  }
  void max_pool2d_backward(DType dtype, const kernels::Pool2dGeometry& g, const void* grad_y, const int64_t* indices,
                           void* grad_x) const override {
    k::max_pool2d_backward(dtype, g, grad_y, indices, grad_x);
  }
  void avg_pool2d_forward(DType dtype, const kernels::Pool2dGeometry& g, bool count_include_pad,
                          int64_t divisor_override, const void* x, void* y) const override {
    k::avg_pool2d_forward(dtype, g, count_include_pad, divisor_override, x, y);
  }
  void avg_pool2d_backward(DType dtype, const kernels::Pool2dGeometry& g, bool count_include_pad,
                           int64_t divisor_override, const void* grad_y, void* grad_x) const override {
    k::avg_pool2d_backward(dtype, g, count_include_pad, divisor_override, grad_y, grad_x);
  }
  void adaptive_avg_pool2d_forward(DType dtype, const kernels::Pool2dGeometry& g, const void* x,
                                   void* y) const override {
    k::adaptive_avg_pool2d_forward(dtype, g, x, y);
  }
  void adaptive_avg_pool2d_backward(DType dtype, const kernels::Pool2dGeometry& g, const void* grad_y,
                                    void* grad_x) const override {
    k::adaptive_avg_pool2d_backward(dtype, g, grad_y, grad_x);
  }

  // The CPU kernels take float32/float64 inputs only (batch_norm_ops.cc checks), whose parameters
  // share their dtype: param_dtype is dtype here.
  void batch_norm_forward(DType dtype, DType /*param_dtype*/, int64_t n, int64_t c, int64_t s, const void* x, const void* weight,
                          const void* bias, void* running_mean, void* running_var, bool training, double momentum,
                          double eps, void* y, void* save_mean, void* save_invstd) const override {
    k::batch_norm_forward(dtype, n, c, s, x, weight, bias, running_mean, running_var, training, momentum, eps, y,
                          save_mean, save_invstd);
  }
  void batch_norm_backward(DType dtype, DType /*param_dtype*/, int64_t n, int64_t c, int64_t s, const void* grad_y, const void* x,
                           const void* weight, const void* save_mean, const void* save_invstd, bool training,
                           void* grad_x, void* grad_weight, void* grad_bias) const override {
    k::batch_norm_backward(dtype, n, c, s, grad_y, x, weight, save_mean, save_invstd, training, grad_x, grad_weight,
                           grad_bias);
  }

  void cross_entropy_forward(DType dtype, const void* x, const int64_t* target, const kernels::CrossEntropyParams& p,
                             void* loss, void* lse, void* counted) const override {
    k::cross_entropy_forward(dtype, x, target, p, loss, lse, counted);
  }
  void cross_entropy_backward(DType dtype, const void* grad_output, const void* x, const int64_t* target,
                              const void* lse, const void* counted, const kernels::CrossEntropyParams& p,
                              void* grad_x) const override {
    k::cross_entropy_backward(dtype, grad_output, x, target, lse, counted, p, grad_x);
  }

  void index_select(int64_t elem_size, const void* x, void* y, int64_t outer, int64_t x_dim, int64_t inner,
                    const int64_t* index, int64_t n) const override {
    k::index_select(elem_size, x, y, outer, x_dim, inner, index, n);
  }
  void index_add(DType dtype, void* out, const void* src, int64_t outer, int64_t out_dim, int64_t inner,
                 const int64_t* index, int64_t n) const override {
    k::index_add(dtype, out, src, outer, out_dim, inner, index, n);
  }
  void gather(int64_t elem_size, const void* x, const Layout& x_layout, int dim, const int64_t* index,
              const Layout& index_layout, void* y) const override {
    k::gather(elem_size, x, x_layout, dim, index, index_layout, y);
  }
  void scatter_add(DType dtype, void* out, const Layout& out_layout, int dim, const int64_t* index,
                   const Layout& index_layout, const void* src, const Layout& src_layout) const override {
    k::scatter_add(dtype, out, out_layout, dim, index, index_layout, src, src_layout);
  }
  void one_hot(const int64_t* labels, int64_t n, int64_t num_classes, int64_t* y) const override {
    k::one_hot(labels, n, num_classes, y);
  }

  void fill_random(DType dtype, void* out, int64_t n, bool normal, double a, double b,
                   const kernels::PhiloxArgs& philox) const override {
    if (philox.seed_ptr != nullptr) {  // Generator::philox_args never hands these to the CPU
      throw std::logic_error("fill_random: a Philox state in device memory reached the CPU backend");
    }
    k::fill_random(dtype, out, n, normal ? k::RandomKind::Normal : k::RandomKind::Uniform, a, b, philox.seed,
                   philox.offset);
  }

  void sgd_step(DType dtype, int64_t n, void* param, const void* grad, void* buf,
                const kernels::SgdParams& s) const override {
    k::sgd_step(dtype, n, param, grad, buf, s);
  }
  void adam_step(DType dtype, int64_t n, void* param, const void* grad, void* m, void* v, void* vmax,
                 const kernels::AdamParams& a) const override {
    k::adam_step(dtype, n, param, grad, m, v, vmax, a);
  }
  void unscale_and_check(int64_t count, void* const* grads, const int64_t* numel, const DType* dtypes,
                         const float* scale, float* found_inf) const override {
    k::unscale_and_check(count, grads, numel, dtypes, scale, found_inf);
  }
  void update_scale(float* scale, int32_t* growth_tracker, const float* found_inf, double growth_factor,
                    double backoff_factor, int64_t growth_interval) const override {
    k::update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval);
  }
  void sgd_step_multi(DType dtype, const std::vector<void*>& params, const std::vector<const void*>& grads,
                      const std::vector<void*>& bufs, const std::vector<int64_t>& sizes,
                      const kernels::SgdParams& s) const override {
    for (size_t i = 0; i < params.size(); ++i) {
      k::sgd_step(dtype, sizes[i], params[i], grads[i], bufs.empty() ? nullptr : bufs[i], s);
    }
  }
  void adam_step_multi(DType dtype, const std::vector<void*>& params, const std::vector<const void*>& grads,
                       const std::vector<void*>& m, const std::vector<void*>& v, const std::vector<void*>& vmax,
                       const std::vector<void*>& steps, const std::vector<int64_t>& sizes,
                       const kernels::AdamParams& a) const override {
    for (size_t i = 0; i < params.size(); ++i) {
      k::adam_step(dtype, sizes[i], params[i], grads[i], m[i], v[i], vmax.empty() ? nullptr : vmax[i], a,
                   steps.empty() ? nullptr : static_cast<double*>(steps[i]));
    }
  }
};

}  // namespace

namespace detail {

const Backend& cpu_backend() {
  static const CpuBackend backend;
  return backend;
}

}  // namespace detail
}  // namespace colony
