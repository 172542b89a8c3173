#include "kernels/common/batch_norm.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu {
namespace {

// Channels per chunk: ~32K elements of work per chunk outweighs waking a pool thread.
int64_t channel_grain(int64_t n, int64_t s) { return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, n * s)); }

template <typename T>
void forward(int64_t n, int64_t c, int64_t s, const T* x, const T* weight, const T* bias, T* running_mean,
             T* running_var, bool training, double momentum, double eps, T* y, T* save_mean, T* save_invstd) {
  const int64_t m = n * s;
  parallel_for(c, channel_grain(n, s), [&](int64_t c0, int64_t c1) {
    for (int64_t ch = c0; ch < c1; ++ch) {
      double mean, invstd;
      if (training) {
        // Two passes (mean, then squared deviations): no cancellation when |mean| >> std.
        double sum = 0.0;
        for (int64_t b = 0; b < n; ++b) {
          const T* xp = x + (b * c + ch) * s;
          for (int64_t i = 0; i < s; ++i) sum += xp[i];
        }
        mean = sum / static_cast<double>(m);
        double sq = 0.0;
        for (int64_t b = 0; b < n; ++b) {
          const T* xp = x + (b * c + ch) * s;
          for (int64_t i = 0; i < s; ++i) {
            const double d = xp[i] - mean;
            sq += d * d;
          }
        }
        const double var = sq / static_cast<double>(m);
        invstd = 1.0 / std::sqrt(var + eps);
        if (running_mean != nullptr) {
          running_mean[ch] = static_cast<T>((1.0 - momentum) * running_mean[ch] + momentum * mean);
        }
        if (running_var != nullptr) {
          const double unbiased = m > 1 ? sq / static_cast<double>(m - 1) : var;
          running_var[ch] = static_cast<T>((1.0 - momentum) * running_var[ch] + momentum * unbiased);
        }
      } else {
        mean = running_mean[ch];
        invstd = 1.0 / std::sqrt(static_cast<double>(running_var[ch]) + eps);
      }
      save_mean[ch] = static_cast<T>(mean);
      save_invstd[ch] = static_cast<T>(invstd);
      // y = x * scale + shift, the form PyTorch's CPU kernel uses.
      const double w = weight != nullptr ? static_cast<double>(weight[ch]) : 1.0;
      const double bb = bias != nullptr ? static_cast<double>(bias[ch]) : 0.0;
      const T scale = static_cast<T>(invstd * w);
      const T shift = static_cast<T>(bb - mean * invstd * w);
      for (int64_t b = 0; b < n; ++b) {
        const T* xp = x + (b * c + ch) * s;
        T* yp = y + (b * c + ch) * s;
        for (int64_t i = 0; i < s; ++i) yp[i] = xp[i] * scale + shift;
      }
    }
  });
}

template <typename T>
void backward(int64_t n, int64_t c, int64_t s, const T* gy, const T* x, const T* weight, const T* save_mean,
              const T* save_invstd, bool training, T* gx, T* gw, T* gb) {
  const int64_t m = n * s;
  parallel_for(c, channel_grain(n, s), [&](int64_t c0, int64_t c1) {
    for (int64_t ch = c0; ch < c1; ++ch) {
      const double mean = save_mean[ch], invstd = save_invstd[ch];
      double sum_g = 0.0, dot = 0.0;  // sum(g), sum(g * (x - mean))
      for (int64_t b = 0; b < n; ++b) {
        const T* gp = gy + (b * c + ch) * s;
        const T* xp = x + (b * c + ch) * s;
        for (int64_t i = 0; i < s; ++i) {
          sum_g += gp[i];
          dot += gp[i] * (xp[i] - mean);
        }
      }
      if (gw != nullptr) gw[ch] = static_cast<T>(dot * invstd);
      if (gb != nullptr) gb[ch] = static_cast<T>(sum_g);
      if (gx == nullptr) continue;
      const double w = weight != nullptr ? static_cast<double>(weight[ch]) : 1.0;
      for (int64_t b = 0; b < n; ++b) {
        const T* gp = gy + (b * c + ch) * s;
        const T* xp = x + (b * c + ch) * s;
        T* out = gx + (b * c + ch) * s;
        if (training) {
          // d/dx of the normalized value through mean and variance:
          // (g - mean(g) - (x - mean) * invstd^2 * mean(g * (x - mean))) * invstd * w
          const double proj = dot * invstd * invstd / static_cast<double>(m);
          const double grad_mean = sum_g / static_cast<double>(m);
          for (int64_t i = 0; i < s; ++i) {
            out[i] = static_cast<T>((gp[i] - (xp[i] - mean) * proj - grad_mean) * invstd * w);
          }
        } else {
          const T scale = static_cast<T>(invstd * w);
          for (int64_t i = 0; i < s; ++i) out[i] = gp[i] * scale;
        }
      }
    }
  });
}

}  // namespace

}  // namespace colony::kernels::cpu

namespace colony::kernels {

using namespace cpu;  // NOLINT(build/namespaces): the helpers above

// The CPU takes float32/float64 inputs only (ops/batch_norm_ops.cc checks), whose parameters
// share their dtype: param_dtype is dtype here.
void BatchNormForward::cpu(DType dtype, DType /*param_dtype*/, int64_t n, int64_t c, int64_t s, const void* x,
                           const void* weight, const void* bias, void* running_mean, void* running_var, bool training,
                           double momentum, double eps, void* y, void* save_mean, void* save_invstd) {
  COLONY_DISPATCH_FLOAT32_64(dtype, "batch_norm", [&] {
    using T = scalar_t;
    forward<T>(n, c, s, static_cast<const T*>(x), static_cast<const T*>(weight), static_cast<const T*>(bias),
               static_cast<T*>(running_mean), static_cast<T*>(running_var), training, momentum, eps,
               static_cast<T*>(y), static_cast<T*>(save_mean), static_cast<T*>(save_invstd));
  });
}

void BatchNormBackward::cpu(DType dtype, DType /*param_dtype*/, int64_t n, int64_t c, int64_t s, const void* grad_y,
                            const void* x, const void* weight, const void* save_mean, const void* save_invstd,
                            bool training, void* grad_x, void* grad_weight, void* grad_bias) {
  COLONY_DISPATCH_FLOAT32_64(dtype, "batch_norm_backward", [&] {
    using T = scalar_t;
    backward<T>(n, c, s, static_cast<const T*>(grad_y), static_cast<const T*>(x), static_cast<const T*>(weight),
                static_cast<const T*>(save_mean), static_cast<const T*>(save_invstd), training,
                static_cast<T*>(grad_x), static_cast<T*>(grad_weight), static_cast<T*>(grad_bias));
  });
}

}  // namespace colony::kernels
