#include "kernels/common/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/common/sum_dtype.h"
#include "kernels/common/vector_norm.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu {
namespace {

// Work below this many elements stays on one thread: waking the pool costs a few microseconds,
// about what one core needs to sum 32K floats.
constexpr int64_t kGrainElements = 32768;
// A row is cut into pieces only when each piece still has this many elements.
constexpr int64_t kMinPiece = 16384;

template <typename T>
using acc_t = std::conditional_t<std::is_floating_point_v<compute_t<T>>, compute_t<T>, int64_t>;

template <typename C>
bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// What each element adds to a sum: itself (Sum, mean) or its square (VectorNorm2, whose math is
// kernels/common/vector_norm.h's). The sums below are written once over a Term.
struct Plain {
  template <typename Acc, typename T>
  static Acc term(T x) {
    return static_cast<Acc>(x);
  }
};

struct Squared {
  template <typename Acc, typename T>
  static Acc term(T x) {
    return square_term<Acc>(x);
  }
};

// Pairwise summation: leaves of 128 elements summed by 8 interleaved accumulators (which the
// compiler keeps in vector registers), halves combined recursively.
template <typename Acc, typename Term = Plain, typename T>
Acc pairwise_sum(const T* x, int64_t n) {
  constexpr int64_t kLeaf = 128;
  if (n <= kLeaf) {
    Acc a[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      for (int k = 0; k < 8; ++k) a[k] += Term::template term<Acc>(x[i + k]);
    }
    Acc tail = Acc(0);
    for (; i < n; ++i) tail += Term::template term<Acc>(x[i]);
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7])) + tail;
  }
  int64_t left = (n / 2 + 7) / 8 * 8;
  return pairwise_sum<Acc, Term>(x, left) + pairwise_sum<Acc, Term>(x + left, n - left);
}

// How many pieces each of `rows` rows of `len` elements is cut into so that the threads get work
// when there are few, long rows (a full reduction is one row): up to kFewRowsPieces pieces over
// all rows, each at least kMinPiece long. The shape alone decides, not the thread count, since the
// pieces' partial results (variance's moments) are merged in piece order: the same bits on any
// number of threads. (It was one piece per thread.)
constexpr int64_t kFewRowsPieces = 16;

int64_t pieces_per_row(int64_t rows, int64_t len) {
  if (rows >= kFewRowsPieces || len < 2 * kMinPiece) return 1;
  return std::max<int64_t>(1, std::min((kFewRowsPieces + rows - 1) / rows, len / kMinPiece));
}

// Runs piece_fn(row, begin, count, task) for every (row, piece) task in parallel.
template <typename F>
void for_each_piece(int64_t rows, int64_t len, int64_t pieces, F&& piece_fn) {
  int64_t piece_len = (len + pieces - 1) / pieces;
  int64_t grain = std::max<int64_t>(1, kGrainElements / std::max<int64_t>(1, piece_len));
  parallel_for(rows * pieces, grain, [&](int64_t b, int64_t e) {
    for (int64_t task = b; task < e; ++task) {
      int64_t row = task / pieces, piece = task % pieces;
      int64_t begin = std::min(len, piece * piece_len);
      int64_t count = std::min(len, begin + piece_len) - begin;
      piece_fn(row, begin, count, task);
    }
  });
}

// The pieces sum_rows cuts a long row into: the nodes of pairwise_sum's own tree down to the depth
// where a node would fall under 2 * kMinPiece elements (at most kMaxTreeDepth levels), as [begin,
// count) in row order. The cut depends on len alone, and adding the pieces' pairwise sums back up
// the same tree (tree_total) repeats pairwise_sum's additions, so a row's sum is the same bits on
// any number of threads (it used to be cut into as many pieces as there were threads).
constexpr int kMaxTreeDepth = 4;

void tree_pieces(int64_t begin, int64_t n, int depth, std::vector<std::pair<int64_t, int64_t>>& out) {
  if (depth == kMaxTreeDepth || n < 2 * kMinPiece) {
    out.emplace_back(begin, n);
    return;
  }
  const int64_t left = (n / 2 + 7) / 8 * 8;  // pairwise_sum's split
  tree_pieces(begin, left, depth + 1, out);
  tree_pieces(begin + left, n - left, depth + 1, out);
}

// The sum of the pieces' sums in pairwise_sum's order; `next` walks `sums` in row order.
template <typename Acc>
Acc tree_total(int64_t n, int depth, const Acc* sums, int64_t& next) {
  if (depth == kMaxTreeDepth || n < 2 * kMinPiece) return sums[next++];
  const int64_t left = (n / 2 + 7) / 8 * 8;
  const Acc a = tree_total(left, depth + 1, sums, next);
  return a + tree_total(n - left, depth + 1, sums, next);
}

// The sum of each row's terms, handed to store(row, sum).
template <typename Term, typename T, typename Store>
void sum_rows(const T* x, int64_t rows, int64_t len, Store store) {
  using Acc = acc_t<T>;
  // Enough rows for every thread: whole rows per task.
  if (rows >= num_threads() || len < 2 * kMinPiece) {
    parallel_for(rows, std::max<int64_t>(1, kGrainElements / std::max<int64_t>(1, len)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) store(r, pairwise_sum<Acc, Term>(x + r * len, len));
    });
    return;
  }
  std::vector<std::pair<int64_t, int64_t>> pieces;
  tree_pieces(0, len, 0, pieces);
  const int64_t per_row = static_cast<int64_t>(pieces.size());
  std::vector<Acc> partial(static_cast<size_t>(rows * per_row));
  parallel_for(rows * per_row, 1, [&](int64_t b, int64_t e) {
    for (int64_t task = b; task < e; ++task) {
      const auto& [begin, count] = pieces[static_cast<size_t>(task % per_row)];
      partial[static_cast<size_t>(task)] = pairwise_sum<Acc, Term>(x + task / per_row * len + begin, count);
    }
  });
  for (int64_t r = 0; r < rows; ++r) {
    int64_t next = 0;
    store(r, tree_total<Acc>(len, 0, partial.data() + r * per_row, next));
  }
}

// Column sums of [len, width] blocks whose rows are `stride` apart: blocks of 64 rows are summed
// directly, and their sums combined like a binary counter (level l holds the sum of 2^l blocks),
// which is pairwise summation over the blocks without recursion or per-node allocation.
constexpr int64_t kBlockRows = 64;

template <typename Acc>
class BlockCounter {
 public:
  // Sums enter at level `base` (a group of 2^base blocks); levels up to `levels` - 1.
  BlockCounter(int levels, int base, int64_t width)
      : width_(width), base_(base), level_(static_cast<size_t>(levels) * width), used_(levels, false) {}
  // Adds the sum in `blk` (which it overwrites).
  void push(Acc* blk) {
    int l = base_;
    while (used_[l]) {
      for (int64_t j = 0; j < width_; ++j) blk[j] += level_[l * width_ + j];
      used_[l] = false;
      ++l;
    }
    std::copy(blk, blk + width_, level_.begin() + l * width_);
    used_[l] = true;
  }
  // out = start (zeros when null) plus the levels, lowest first.
  void finish(const Acc* start, Acc* out) const {
    if (start) {
      std::copy(start, start + width_, out);
    } else {
      std::fill(out, out + width_, Acc(0));
    }
    for (size_t l = 0; l < used_.size(); ++l) {
      if (!used_[l]) continue;
      for (int64_t j = 0; j < width_; ++j) out[j] += level_[l * width_ + j];
    }
  }

 private:
  int64_t width_;
  int base_;
  std::vector<Acc> level_;
  std::vector<bool> used_;
};

int levels_for(int64_t blocks) {
  int levels = 1;
  while ((int64_t{1} << (levels - 1)) < blocks) ++levels;
  return levels;
}

// Blocks [b0, b1) of a [len, width] column block through a counter of their own, finished into out.
template <typename Acc, typename Term, typename T>
void column_sum(const T* x, int64_t len, int64_t stride, int64_t width, int64_t b0, int64_t b1, Acc* out) {
  BlockCounter<Acc> counter(levels_for(b1 - b0), 0, width);
  std::vector<Acc> blk(static_cast<size_t>(width));
  for (int64_t b = b0; b < b1; ++b) {
    std::fill(blk.begin(), blk.end(), Acc(0));
    const int64_t r_end = std::min(len, (b + 1) * kBlockRows);
    for (int64_t r = b * kBlockRows; r < r_end; ++r) {
      const T* row = x + r * stride;
      for (int64_t j = 0; j < width; ++j) blk[j] += Term::template term<Acc>(row[j]);
    }
    counter.push(blk.data());
  }
  counter.finish(nullptr, out);
}

// Rows per group of sum_columns' row split: 2^s blocks of 64, s the smallest with at least 16K
// elements per group (so that a task amortises its share of the pool's wake-up) and at most 64
// groups (which bounds the partial sums kept). A function of the shape alone: the groups, not the
// thread count, decide the order of the additions.
// The width group_log2 is given for a sum_columns task: the tasks' width when groups were
// introduced (sum_columns' tasks are wider now; the groups stay, as they set the order of the
// additions, which tests/kernels/reduce_test.cc checks against a serial reference).
constexpr int64_t kGroupWidth = 256;

int group_log2(int64_t blocks, int64_t width) {
  constexpr int64_t kMinGroupElements = 16384, kMaxGroups = 64;
  int s = 0;
  while ((kBlockRows << s) * width < kMinGroupElements || ((blocks + (int64_t{1} << s) - 1) >> s) > kMaxGroups) ++s;
  return s;
}

// The sum of each column's terms, handed to store(o * inner + column, sum).
template <typename Term, typename T, typename Store>
void sum_columns(const T* x, int64_t outer, int64_t len, int64_t inner, Store store_one) {
  using Acc = acc_t<T>;
  // Up to 2,048 columns per task (the block and level buffers, a few of at most 8 KiB, stay in L2):
  // each task reads its rows nearly whole, one stream the hardware prefetcher follows. In tasks of
  // 256 columns a row of a bias gradient [B * T, 1536] was read in 1 KiB pieces 6 KiB apart, a new
  // page every piece, and ran at 4-7 GB/s. Which columns share a task changes no column's order of
  // additions, so no bit. benchmarks/column_sum_bench --threads 2 (rows from memory), Intel Xeon
  // (Sapphire Rapids class), 3 alternating rounds, 2026-12-06 ~14:35-14:40 UTC, load 5.9-6.3,
  // median us, 256 / 2,048 columns: 4096x384 461-842 / 328-627, 4096x1152 2,165-5,585 /
  // 988-1,888, 4096x1536 3,527-7,136 / 1,360-2,551, 16384x384 4,051-4,163 / 2,246-2,502,
  // 16384x1152 15,111-20,950 / 7,529-16,480, 16384x1536 19,513-38,127 / 13,549-17,578; 45 of 48
  // cells faster over 8 rounds in all (AVX2 included: docs/benchmarks.md, branch w384).
  constexpr int64_t kWidth = 2048;
  const int64_t col_tasks = (inner + kWidth - 1) / kWidth;
  const int64_t task_width = std::min(inner, kWidth);  // the widest task's columns
  const int64_t blocks = (len + kBlockRows - 1) / kBlockRows;
  // The rows are split too, in groups of 2^s blocks: a linear layer's bias gradient sums 768 rows
  // of 128 columns (the char GPT's), one column task, which ran on one thread while the others
  // waited. Group g's blocks go through a counter of their own; a whole group ends as one sum at
  // level s, and those sums go through a counter from level s in group order, finished from the
  // last (partial) group's own finished sum: the same additions, in the same order, as one
  // counter over all the blocks, so the result does not change by a bit.
  const int s = group_log2(blocks, std::min<int64_t>(inner, kGroupWidth));
  const int64_t group_blocks = int64_t{1} << s;
  const int64_t groups = std::max<int64_t>(1, (blocks + group_blocks - 1) / group_blocks);  // 1 when len is 0
  auto store = [&](const Acc* acc, int64_t first, int64_t width) {
    for (int64_t j = 0; j < width; ++j) store_one(first + j, acc[j]);
  };
  const int64_t tasks = outer * col_tasks * groups;
  const int64_t grain = std::max<int64_t>(
      1, kGrainElements / std::max<int64_t>(1, std::min(len, group_blocks * kBlockRows) * task_width));
  if (groups == 1) {
    parallel_for(tasks, grain, [&](int64_t b, int64_t e) {
      std::vector<Acc> acc(static_cast<size_t>(task_width));
      for (int64_t task = b; task < e; ++task) {
        const int64_t o = task / col_tasks, c0 = (task % col_tasks) * kWidth, width = std::min(kWidth, inner - c0);
        column_sum<Acc, Term>(x + o * len * inner + c0, len, inner, width, 0, blocks, acc.data());
        store(acc.data(), o * inner + c0, width);
      }
    });
    return;
  }
  // Task (o, c, g) writes its group's sum at partial[task * task_width].
  std::vector<Acc> partial(static_cast<size_t>(tasks * task_width));
  parallel_for(tasks, grain, [&](int64_t b, int64_t e) {
    for (int64_t task = b; task < e; ++task) {
      const int64_t g = task % groups, oc = task / groups;
      const int64_t o = oc / col_tasks, c0 = (oc % col_tasks) * kWidth, width = std::min(kWidth, inner - c0);
      column_sum<Acc, Term>(x + o * len * inner + c0, len, inner, width, g * group_blocks,
                      std::min(blocks, (g + 1) * group_blocks), partial.data() + task * task_width);
    }
  });
  const bool last_partial = blocks % group_blocks != 0;
  // Adding up the groups: `groups` rows of at most kWidth per column task, at least ~1,024 rows' worth
  // per piece (these run only for many outer slices; the GPT's bias gradients have one task).
  parallel_for(outer * col_tasks, std::max<int64_t>(1, 1024 / groups), [&](int64_t b, int64_t e) {
    std::vector<Acc> acc(static_cast<size_t>(task_width));
    for (int64_t oc = b; oc < e; ++oc) {
      const int64_t o = oc / col_tasks, c0 = (oc % col_tasks) * kWidth, width = std::min(kWidth, inner - c0);
      Acc* sums = partial.data() + oc * groups * task_width;
      const int64_t whole = last_partial ? groups - 1 : groups;
      BlockCounter<Acc> counter(s + levels_for(whole), s, width);
      for (int64_t g = 0; g < whole; ++g) counter.push(sums + g * task_width);
      counter.finish(last_partial ? sums + whole * task_width : nullptr, acc.data());
      store(acc.data(), o * inner + c0, width);
    }
  });
}

struct Moments {
  int64_t n = 0;
  double mean = 0, m2 = 0;
};

// Chan et al.'s pairwise update: merges the moments of two disjoint pieces.
Moments merge(const Moments& a, const Moments& b) {
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  Moments r;
  r.n = a.n + b.n;
  double delta = b.mean - a.mean;
  r.mean = a.mean + delta * static_cast<double>(b.n) / static_cast<double>(r.n);
  r.m2 = a.m2 + b.m2 + delta * delta * static_cast<double>(a.n) * static_cast<double>(b.n) / static_cast<double>(r.n);
  return r;
}

template <typename T>
Moments moments(const T* x, int64_t n) {
  Moments m;
  m.n = n;
  if (n == 0) return m;
  m.mean = pairwise_sum<double>(x, n) / static_cast<double>(n);
  // Second pass over the centred values; 8 accumulators as in pairwise_sum's leaves.
  double a[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) {
      double d = static_cast<double>(x[i + k]) - m.mean;
      a[k] += d * d;
    }
  }
  double tail = 0;
  for (; i < n; ++i) {
    double d = static_cast<double>(x[i]) - m.mean;
    tail += d * d;
  }
  m.m2 = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7])) + tail;
  return m;
}

template <typename T>
void var_rows(const T* x, T* y, int64_t rows, int64_t len, int64_t correction) {
  int64_t pieces = pieces_per_row(rows, len);
  std::vector<Moments> partial(rows * pieces);
  for_each_piece(rows, len, pieces, [&](int64_t row, int64_t begin, int64_t count, int64_t task) {
    partial[task] = moments(x + row * len + begin, count);
  });
  double denom = static_cast<double>(std::max<int64_t>(0, len - correction));
  for (int64_t r = 0; r < rows; ++r) {
    Moments m = partial[r * pieces];
    for (int64_t p = 1; p < pieces; ++p) m = merge(m, partial[r * pieces + p]);
    // An empty row has no mean: NaN, as in PyTorch.
    y[r] = static_cast<T>(len == 0 ? std::numeric_limits<double>::quiet_NaN() : m.m2 / denom);
  }
}

template <typename C, typename T>
void scan_extreme(const T* x, int64_t n, bool is_max, C& best, int64_t& best_i) {
  best = static_cast<C>(x[0]);
  best_i = 0;
  if (is_nan(best)) return;
  // !(v <= best) is v > best, or v is NaN: the first NaN is taken and ends the scan.
  if (is_max) {
    for (int64_t i = 1; i < n; ++i) {
      C v = static_cast<C>(x[i]);
      if (!(v <= best)) {
        best = v;
        best_i = i;
        if (is_nan(v)) return;
      }
    }
  } else {
    for (int64_t i = 1; i < n; ++i) {
      C v = static_cast<C>(x[i]);
      if (!(v >= best)) {
        best = v;
        best_i = i;
        if (is_nan(v)) return;
      }
    }
  }
}

template <typename T>
void max_min_rows(const T* x, T* values, int64_t* indices, int64_t rows, int64_t len, bool is_max) {
  using C = compute_t<T>;
  int64_t pieces = pieces_per_row(rows, len);
  // Not std::vector<C>: for bool that packs bits, and threads would race on shared words.
  std::unique_ptr<C[]> best(new C[rows * pieces]);
  std::vector<int64_t> best_i(rows * pieces);
  for_each_piece(rows, len, pieces, [&](int64_t row, int64_t begin, int64_t count, int64_t task) {
    scan_extreme<C>(x + row * len + begin, count, is_max, best[task], best_i[task]);
    best_i[task] += begin;
  });
  for (int64_t r = 0; r < rows; ++r) {
    C v = best[r * pieces];
    int64_t vi = best_i[r * pieces];
    // Pieces are in order and only a strictly better value replaces: the first occurrence wins.
    for (int64_t p = 1; p < pieces && !is_nan(v); ++p) {
      C c = best[r * pieces + p];
      bool take = is_max ? !(c <= v) : !(c >= v);
      if (take) {
        v = c;
        vi = best_i[r * pieces + p];
      }
    }
    if (values != nullptr) values[r] = static_cast<T>(v);
    if (indices != nullptr) indices[r] = vi;
  }
}

}  // namespace

}  // namespace colony::kernels::cpu

namespace colony::kernels {

using namespace cpu;  // NOLINT(build/namespaces): the helpers above

void Sum::cpu(DType x_dtype, const void* x, DType y_dtype, void* y, int64_t outer, int64_t len, int64_t inner,
              double scale) {
  COLONY_DISPATCH_ALL(x_dtype, "sum", [&] {
    using Y = sum_out_t<scalar_t>;
    check_sum_out<scalar_t>(x_dtype, y_dtype);
    using Acc = acc_t<scalar_t>;
    const auto* xp = static_cast<const scalar_t*>(x);
    auto* yp = static_cast<Y*>(y);
    auto store = [yp, scale](int64_t i, Acc acc) {
      if constexpr (std::is_floating_point_v<Acc>) {
        yp[i] = static_cast<Y>(static_cast<Acc>(static_cast<double>(acc) * scale));
      } else {
        yp[i] = static_cast<Y>(acc);
      }
    };
    if (inner == 1) {
      sum_rows<Plain>(xp, outer, len, store);
    } else {
      sum_columns<Plain>(xp, outer, len, inner, store);
    }
  });
}

void VectorNorm2::cpu(DType dtype, const void* x, void* y, int64_t outer, int64_t len, int64_t inner) {
  COLONY_DISPATCH_FLOATING(dtype, "vector_norm", [&] {
    using Acc = acc_t<scalar_t>;
    const auto* xp = static_cast<const scalar_t*>(x);
    auto* yp = static_cast<scalar_t*>(y);
    auto store = [yp](int64_t i, Acc sum_of_squares) {
      yp[i] = static_cast<scalar_t>(norm_from_sum_of_squares(sum_of_squares));
    };
    if (inner == 1) {
      sum_rows<Squared>(xp, outer, len, store);
    } else {
      sum_columns<Squared>(xp, outer, len, inner, store);
    }
  });
}

void Var::cpu(DType dtype, const void* x, void* y, int64_t rows, int64_t len, int64_t correction) {
  COLONY_DISPATCH_FLOATING(dtype, "var", [&] {
    var_rows(static_cast<const scalar_t*>(x), static_cast<scalar_t*>(y), rows, len, correction);
  });
}

void MaxMin::cpu(DType dtype, const void* x, void* values, int64_t* indices, int64_t rows, int64_t len, bool is_max) {
  if (len < 1) throw std::invalid_argument("max_min: rows must not be empty");
  COLONY_DISPATCH_ALL(dtype, is_max ? "max" : "min", [&] {
    max_min_rows(static_cast<const scalar_t*>(x), static_cast<scalar_t*>(values), indices, rows, len, is_max);
  });
}

}  // namespace colony::kernels
