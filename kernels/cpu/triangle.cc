#include "kernels/common/triangle.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/parallel.h"

namespace colony::kernels {

void TriangleMask::cpu(int64_t elem_size, const void* x, void* y, int64_t batch, int64_t rows, int64_t cols,
                       int64_t diagonal, bool lower) {
  const auto* xp = static_cast<const char*>(x);
  auto* yp = static_cast<char*>(y);
  const int64_t row_bytes = cols * elem_size;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, cols));
  // Each row is at most three runs: zeros, a copied run, zeros; the run's bounds come from the
  // diagonal, so there is no per-element test.
  cpu::parallel_for(batch * rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t i = r % rows;
      // tril keeps j in [0, i + diagonal]; triu keeps j in [i + diagonal, cols).
      int64_t lo = lower ? 0 : std::clamp<int64_t>(i + diagonal, 0, cols);
      int64_t hi = lower ? std::clamp<int64_t>(i + diagonal + 1, 0, cols) : cols;
      if (hi < lo) hi = lo;
      const char* src = xp + r * row_bytes;
      char* dst = yp + r * row_bytes;
      std::memset(dst, 0, lo * elem_size);
      if (hi > lo && src != dst) std::memcpy(dst + lo * elem_size, src + lo * elem_size, (hi - lo) * elem_size);
      std::memset(dst + hi * elem_size, 0, (cols - hi) * elem_size);
    }
  });
}

}  // namespace colony::kernels
