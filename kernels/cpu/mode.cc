#include "kernels/common/mode.h"

#include <algorithm>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels {
namespace {

// Rows per chunk of the thread pool: the project's 16,384 element steps (kernels/cpu/index.cc).
constexpr int64_t kGrainElements = 16384;

}  // namespace

void ModeOfSortedRows::cpu(DType dtype, const void* sorted, const int64_t* order, void* values, int64_t* indices,
                           int64_t rows, int64_t n) {
  if (rows == 0) return;
  COLONY_DISPATCH_ALL(dtype, "mode", [&] {
    const auto* s = static_cast<const scalar_t*>(sorted);
    auto* v = static_cast<scalar_t*>(values);
    cpu::parallel_for(rows, std::max<int64_t>(1, kGrainElements / n), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) mode_of_sorted_row(s + r * n, order + r * n, n, v + r, indices + r);
    });
  });
}

}  // namespace colony::kernels
