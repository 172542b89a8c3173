#include "kernels/common/search.h"

#include <algorithm>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels {
namespace {

// Values per chunk of the thread pool: the project's 16,384 element steps (kernels/cpu/index.cc)
// counted as bisection steps, so a search in a long row is split finer than one in a short row.
constexpr int64_t kGrainSteps = 16384;

int64_t bisection_steps(int64_t n) {
  int64_t steps = 1;
  while ((int64_t{1} << steps) <= n) ++steps;
  return steps;
}

template <typename T, typename Out>
void search_rows(const T* boundaries, const int64_t* sorter, const T* values, Out* out, int64_t rows, int64_t n,
                 int64_t per_row, bool right) {
  const int64_t total = rows * per_row;
  cpu::parallel_for(total, std::max<int64_t>(1, kGrainSteps / bisection_steps(n)), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t r = i / per_row;
      const int64_t* order = sorter != nullptr ? sorter + r * n : nullptr;
      out[i] = static_cast<Out>(
          search_sorted_position(boundaries + r * n, order, n, static_cast<compute_t<T>>(values[i]), right));
    }
  });
}

}  // namespace

void SearchSorted::cpu(DType dtype, const void* boundaries, const int64_t* sorter, const void* values, void* out,
                       bool out_int32, int64_t rows, int64_t n, int64_t per_row, bool right) {
  if (rows * per_row == 0) return;
  COLONY_DISPATCH_NUMERIC(dtype, "searchsorted", [&] {
    const auto* b = static_cast<const scalar_t*>(boundaries);
    const auto* v = static_cast<const scalar_t*>(values);
    if (out_int32) {
      search_rows(b, sorter, v, static_cast<int32_t*>(out), rows, n, per_row, right);
    } else {
      search_rows(b, sorter, v, static_cast<int64_t*>(out), rows, n, per_row, right);
    }
  });
}

}  // namespace colony::kernels
