#include "kernels/common/scan.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/column_blocks.h"

namespace colony::kernels {
namespace {

template <typename T>
void scan_prod(const T* x, void* y, int64_t outer, int64_t dim, int64_t inner) {
  using Acc = cumprod_acc_t<T>;
  using Out = std::conditional_t<std::is_same_v<Acc, int64_t>, int64_t, T>;
  auto* yp = static_cast<Out*>(y);
  cpu::for_each_column_block(outer, dim, inner, [&](int64_t base, int64_t w) {
    Acc acc[cpu::kScanWidth];
    std::fill(acc, acc + w, Acc(1));
    for (int64_t r = 0; r < dim; ++r) {
      const int64_t at = base + r * inner;
      for (int64_t j = 0; j < w; ++j) {
        acc[j] *= static_cast<Acc>(static_cast<compute_t<T>>(x[at + j]));
        yp[at + j] = static_cast<Out>(acc[j]);
      }
    }
  });
}

template <typename T>
void scan_extreme(const T* x, T* y, int64_t* indices, int64_t outer, int64_t dim, int64_t inner, bool is_max) {
  using C = compute_t<T>;
  cpu::for_each_column_block(outer, dim, inner, [&](int64_t base, int64_t w) {
    C acc[cpu::kScanWidth];
    int64_t at_index[cpu::kScanWidth];
    for (int64_t j = 0; j < w; ++j) {
      acc[j] = static_cast<C>(x[base + j]);
      at_index[j] = 0;
    }
    for (int64_t r = 0; r < dim; ++r) {
      const int64_t at = base + r * inner;
      for (int64_t j = 0; j < w; ++j) {
        if (extreme_step(static_cast<C>(x[at + j]), acc[j], is_max)) at_index[j] = r;
        y[at + j] = static_cast<T>(acc[j]);
        indices[at + j] = at_index[j];
      }
    }
  });
}

template <typename T>
void scan_log_sum_exp(const T* x, T* y, int64_t outer, int64_t dim, int64_t inner) {
  using C = compute_t<T>;
  cpu::for_each_column_block(outer, dim, inner, [&](int64_t base, int64_t w) {
    C acc[cpu::kScanWidth];
    std::fill(acc, acc + w, -std::numeric_limits<C>::infinity());
    for (int64_t r = 0; r < dim; ++r) {
      const int64_t at = base + r * inner;
      for (int64_t j = 0; j < w; ++j) {
        acc[j] = log_add_exp(acc[j], static_cast<C>(x[at + j]));
        y[at + j] = static_cast<T>(acc[j]);
      }
    }
  });
}

}  // namespace

void Scan::cpu(ScanOp op, DType dtype, const void* x, void* y, int64_t* indices, int64_t outer, int64_t dim,
               int64_t inner) {
  if (op == ScanOp::LogSumExp) {
    COLONY_DISPATCH_FLOATING(dtype, "logcumsumexp", [&] {
      scan_log_sum_exp(static_cast<const scalar_t*>(x), static_cast<scalar_t*>(y), outer, dim, inner);
    });
    return;
  }
  COLONY_DISPATCH_ALL(dtype, op == ScanOp::Prod ? "cumprod" : op == ScanOp::Max ? "cummax" : "cummin", [&] {
    const auto* xp = static_cast<const scalar_t*>(x);
    if (op == ScanOp::Prod) {
      scan_prod(xp, y, outer, dim, inner);
    } else {
      scan_extreme(xp, static_cast<scalar_t*>(y), indices, outer, dim, inner, op == ScanOp::Max);
    }
  });
}

void CumprodBackward::cpu(DType dtype, const void* x, const void* grad_y, void* grad_x, int64_t outer, int64_t dim,
                          int64_t inner) {
  COLONY_DISPATCH_FLOATING(dtype, "cumprod_backward", [&] {
    using C = compute_t<scalar_t>;
    const auto* xp = static_cast<const scalar_t*>(x);
    const auto* gp = static_cast<const scalar_t*>(grad_y);
    auto* op = static_cast<scalar_t*>(grad_x);
    cpu::for_each_column_block(outer, dim, inner, [&](int64_t base, int64_t w) {
      // S from the end, written into grad_x; then L from the start, multiplied in.
      C acc[cpu::kScanWidth];
      std::fill(acc, acc + w, C(0));
      for (int64_t r = dim - 1; r >= 0; --r) {
        const int64_t at = base + r * inner;
        for (int64_t j = 0; j < w; ++j) {
          const C next_x = r + 1 < dim ? static_cast<C>(xp[at + inner + j]) : C(0);
          acc[j] = static_cast<C>(gp[at + j]) + next_x * acc[j];
          op[at + j] = static_cast<scalar_t>(acc[j]);
        }
      }
      std::fill(acc, acc + w, C(1));
      for (int64_t r = 0; r < dim; ++r) {
        const int64_t at = base + r * inner;
        for (int64_t j = 0; j < w; ++j) {
          op[at + j] = static_cast<scalar_t>(acc[j] * static_cast<C>(op[at + j]));
          acc[j] *= static_cast<C>(xp[at + j]);
        }
      }
    });
  });
}

}  // namespace colony::kernels
