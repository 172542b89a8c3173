// The CPU strided loop (kernels/cpu/strided_loop.h) and dim coalescing (kernels/common/multi_layout.h)
// against a naive walk that computes every offset with StridedLayout::offset_of.
#include "kernels/cpu/strided_loop.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/common/multi_layout.h"
#include "kernels/common/half.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels {
namespace {

StridedLayout make_layout(std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  StridedLayout l;
  l.ndim = static_cast<int>(sizes.size());
  for (int d = 0; d < l.ndim; ++d) {
    l.sizes[d] = sizes[d];
    l.strides[d] = strides[d];
  }
  return l;
}

StridedLayout dense(std::vector<int64_t> sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= sizes[i];
  }
  return make_layout(sizes, strides);
}

TEST(MultiLayout, DenseOperandsCoalesceToOneDim) {
  StridedLayout a = dense({2, 3, 4});
  MultiLayout<2> m = make_multi_layout<2>({&a, &a});
  EXPECT_EQ(m.ndim, 1);
  EXPECT_EQ(m.sizes[0], 24);
  EXPECT_TRUE(m.contiguous);
}

TEST(MultiLayout, BroadcastAndTransposeKeepTheirDims) {
  StridedLayout out = dense({3, 4});
  StridedLayout row = make_layout({3, 4}, {0, 1});  // [4] broadcast over 3 rows
  MultiLayout<2> m = make_multi_layout<2>({&out, &row});
  EXPECT_EQ(m.ndim, 2);
  EXPECT_FALSE(m.contiguous);
  int64_t off[2];
  m.offsets(6, off);  // row 1, column 2
  EXPECT_EQ(off[0], 6);
  EXPECT_EQ(off[1], 2);
  StridedLayout t = make_layout({3, 4}, {1, 3});  // a transposed [4, 3]
  MultiLayout<2> mt = make_multi_layout<2>({&out, &t});
  mt.offsets(5, off);  // (1, 1)
  EXPECT_EQ(off[1], 4);
}

TEST(MultiLayout, SizeOneDimsAndScalars) {
  StridedLayout a = make_layout({1, 5, 1}, {99, 1, 42});
  MultiLayout<1> m = make_multi_layout<1>({&a});
  EXPECT_EQ(m.ndim, 1);
  EXPECT_TRUE(m.contiguous);
  StridedLayout s = make_layout({}, {});
  MultiLayout<1> ms = make_multi_layout<1>({&s});
  EXPECT_EQ(ms.numel, 1);
  EXPECT_TRUE(ms.contiguous);
}

// out (strided or dense) = a + 10 * b for strided/broadcast inputs, on sizes that cross the parallel
// grain so that chunks start in the middle of rows.
void check_against_naive(const std::vector<int64_t>& sizes, const StridedLayout& la, const StridedLayout& lb,
                         const StridedLayout& lout, int64_t a_span, int64_t b_span, int64_t out_span) {
  std::vector<float> a(a_span), b(b_span), out(out_span, -1.0f);
  for (int64_t i = 0; i < a_span; ++i) a[i] = static_cast<float>(i % 1000);
  for (int64_t i = 0; i < b_span; ++i) b[i] = static_cast<float>(i % 777);
  cpu::binary(BinaryOp::Add, DType::Float32, a.data(), la, b.data(), lb, out.data(), lout, 10.0);
  int64_t n = lout.numel();
  for (int64_t i = 0; i < n; ++i) {
    float want = a[la.offset_of(i)] + 10.0f * b[lb.offset_of(i)];
    ASSERT_EQ(out[lout.offset_of(i)], want) << "element " << i;
  }
  (void)sizes;
}

class StridedLoopThreads : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = cpu::num_threads();
    cpu::set_num_threads(4);  // several chunks even on a 2-core machine
  }
  void TearDown() override { cpu::set_num_threads(saved_); }
  int saved_ = 1;
};

TEST_F(StridedLoopThreads, DenseLargeTensor) {
  StridedLayout l = dense({3, 70001});
  check_against_naive({3, 70001}, l, l, l, 3 * 70001, 3 * 70001, 3 * 70001);
}

TEST_F(StridedLoopThreads, TransposedAndBroadcastInputs) {
  // out [301, 517]; a is a transposed [517, 301]; b is a [517] row broadcast over rows.
  StridedLayout out = dense({301, 517});
  StridedLayout a = make_layout({301, 517}, {1, 301});
  StridedLayout b = make_layout({301, 517}, {0, 1});
  check_against_naive({301, 517}, a, b, out, 301 * 517, 517, 301 * 517);
}

TEST_F(StridedLoopThreads, StridedOutputAndColumnBroadcast) {
  // out: every other column of a [97, 2 * 811] buffer; b: a [97, 1] column broadcast along rows.
  StridedLayout out = make_layout({97, 811}, {2 * 811, 2});
  StridedLayout a = dense({97, 811});
  StridedLayout b = make_layout({97, 811}, {1, 0});
  check_against_naive({97, 811}, a, b, out, 97 * 811, 97, 97 * 2 * 811);
}

TEST_F(StridedLoopThreads, FourDimsWithMiddleBroadcast) {
  // [N, C, H, W] + [1, C, 1, 1] (a per-channel bias), with H*W = 35 so runs are short.
  StridedLayout out = dense({40, 33, 5, 7});
  StridedLayout bias = make_layout({40, 33, 5, 7}, {0, 1, 0, 0});
  check_against_naive({40, 33, 5, 7}, out, bias, out, 40 * 33 * 35, 33, 40 * 33 * 35);
}

TEST_F(StridedLoopThreads, TransposedUnaryAndCopyWalkTiles) {
  // out [203, 77] dense; a is a transposed [77, 203]: the tiled path, with partial edge tiles.
  const int64_t rows = 203, cols = 77;
  std::vector<float> a(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) a[i] = static_cast<float>(i) - 5000.0f;
  StridedLayout out = dense({rows, cols});
  StridedLayout at = make_layout({rows, cols}, {1, rows});
  std::vector<float> neg(rows * cols);
  cpu::unary(UnaryOp::Neg, DType::Float32, a.data(), at, neg.data(), out);
  std::vector<Half> half(rows * cols);
  cpu::copy(DType::Float32, a.data(), at, DType::Float16, half.data(), out);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      float src = a[c * rows + r];
      ASSERT_EQ(neg[r * cols + c], -src) << r << ", " << c;
      ASSERT_EQ(half[r * cols + c].bits, Half(src).bits) << r << ", " << c;
    }
  }
}

// A same-dtype copy of a transposed 2-D walk of 4- or 8-byte words goes by register blocks
// (kernels/cpu/transpose_copy.h): 8 x 8 (4 x 4 for 8-byte words) in 16 x 16 (8 x 8) tiles inside
// 128 x 128 blocks, edges that fill no tile one element at a time. Checked bit for bit (a NaN's
// payload, -0) against the naive walk for each dtype the path takes and for float16, which keeps
// map1's scalar tiles; with sizes on and off the tile and block multiples, a destination whose
// rows are padded and a source that is a slice of a wider matrix.
template <typename W>
void check_transpose_copy(DType dtype, int64_t rows, int64_t cols, int64_t dst_pad, int64_t src_pad) {
  // dst [rows, cols] with row stride cols + dst_pad; src element (r, c) at c * (rows + src_pad) + r.
  const int64_t src_row = rows + src_pad, dst_row = cols + dst_pad;
  std::vector<W> src(cols * src_row), dst(rows * dst_row, W(0x5a));
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<W>(i * 2654435761u + 12345u);
  cpu::copy(dtype, src.data(), make_layout({rows, cols}, {1, src_row}), dtype, dst.data(),
            make_layout({rows, cols}, {dst_row, 1}));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) ASSERT_EQ(dst[r * dst_row + c], src[c * src_row + r]) << r << ", " << c;
    for (int64_t c = cols; c < dst_row; ++c) ASSERT_EQ(dst[r * dst_row + c], W(0x5a)) << "padding " << r << ", " << c;
  }
}

TEST_F(StridedLoopThreads, SameDtypeTransposeCopyByRegisterBlocks) {
  struct Shape2 {
    int64_t rows, cols, dst_pad, src_pad;
  };
  // Tails of every size below a tile on both sides; exact tiles; several 128-blocks with a partial
  // one; padded rows on either side.
  const Shape2 shapes[] = {{203, 77, 0, 0}, {64, 48, 0, 0}, {300, 260, 0, 0}, {33, 129, 3, 0},
                           {130, 40, 0, 5}, {47, 53, 1, 7}};
  for (const Shape2& s : shapes) {
    SCOPED_TRACE(::testing::Message() << s.rows << " x " << s.cols << " pads " << s.dst_pad << ", " << s.src_pad);
    check_transpose_copy<uint32_t>(DType::Float32, s.rows, s.cols, s.dst_pad, s.src_pad);
    check_transpose_copy<uint32_t>(DType::Int32, s.rows, s.cols, s.dst_pad, s.src_pad);
    check_transpose_copy<uint64_t>(DType::Float64, s.rows, s.cols, s.dst_pad, s.src_pad);
    check_transpose_copy<uint64_t>(DType::Int64, s.rows, s.cols, s.dst_pad, s.src_pad);
    check_transpose_copy<uint16_t>(DType::Float16, s.rows, s.cols, s.dst_pad, s.src_pad);
  }
}

TEST_F(StridedLoopThreads, UnaryAndCopyOfAnInnerBroadcast) {
  // contiguous(expand(column)), a reduction's gradient: a is a [301, 1] column (NaN, -0 and +-inf
  // among its values) broadcast over rows of 1027 (not a multiple of any vector width; the chunks of
  // 4 threads start mid-row). Dense outputs take the one-value-per-run path; an output that writes
  // every other column falls back to the strided loop.
  const int64_t rows = 301, cols = 1027;
  std::vector<float> a(rows);
  for (int64_t r = 0; r < rows; ++r) a[r] = static_cast<float>(r) * 0.5f - 70.0f;
  a[3] = std::numeric_limits<float>::quiet_NaN();
  a[4] = -0.0f;
  a[5] = std::numeric_limits<float>::infinity();
  a[6] = -std::numeric_limits<float>::infinity();
  const StridedLayout column = make_layout({rows, cols}, {1, 0});
  const StridedLayout out = dense({rows, cols});
  const StridedLayout every_other = make_layout({rows, cols}, {2 * cols, 2});
  std::vector<float> neg(rows * cols), copied(2 * rows * cols, 7.0f);
  std::vector<Half> half(rows * cols);
  cpu::unary(UnaryOp::Neg, DType::Float32, a.data(), column, neg.data(), out);
  cpu::copy(DType::Float32, a.data(), column, DType::Float16, half.data(), out);
  cpu::copy(DType::Float32, a.data(), column, DType::Float32, copied.data(), every_other);
  auto same = [](float x, float y) {  // bitwise, so NaN matches NaN and -0 does not match +0
    uint32_t bx, by;
    std::memcpy(&bx, &x, 4);
    std::memcpy(&by, &y, 4);
    return bx == by;
  };
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      ASSERT_TRUE(same(neg[r * cols + c], -a[r])) << r << ", " << c;
      ASSERT_EQ(half[r * cols + c].bits, Half(a[r]).bits) << r << ", " << c;
      ASSERT_TRUE(same(copied[r * 2 * cols + 2 * c], a[r])) << r << ", " << c;
      ASSERT_EQ(copied[r * 2 * cols + 2 * c + 1], 7.0f) << r << ", " << c;
    }
  }
}

TEST(StridedLoop, EmptyTensorRunsNothing) {
  StridedLayout l = dense({0, 5});
  float x = 1.0f;
  cpu::binary(BinaryOp::Mul, DType::Float32, &x, l, &x, l, &x, l, 1.0);
  EXPECT_EQ(x, 1.0f);
}

}  // namespace
}  // namespace colony::kernels
