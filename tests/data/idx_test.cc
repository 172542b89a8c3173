#include "data/idx.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/data/data_test_util.h"
#include "tests/test_util.h"

namespace colony::data {
namespace {

namespace fs = std::filesystem;
using colony::testing::throws_with;
using namespace colony::data::testing;

TEST(Idx, ReadsTheHeadersShape) {
  const fs::path dir = scratch_dir("idx_shape");
  write_bytes(dir / "a", idx_file({2, 3}, {1, 2, 3, 4, 5, 6}));
  Tensor t = read_idx_ubyte((dir / "a").string(), 2);
  EXPECT_EQ(t.sizes(), (Shape{2, 3}));
  EXPECT_EQ(t.data_ptr<uint8_t>()[5], 6);
}

// (2^32-1)^2 * 16 wraps around int64 to a negative count that passed the size check unchecked.
TEST(Idx, ShapeWhoseProductOverflowsIsNamed) {
  const fs::path dir = scratch_dir("idx_overflow");
  write_bytes(dir / "a", idx_file({0xFFFFFFFFu, 0xFFFFFFFFu, 16}, {1, 2, 3}));
  EXPECT_TRUE(throws_with([&] { read_idx_ubyte((dir / "a").string(), 3); },
                          "read_idx: " + (dir / "a").string() +
                              " claims an implausible shape [4294967295, 4294967295, 16] (more than 2^40 bytes)"));
}

// No element, but sizes whose product (the tensor's strides) overflows int64: refused like the above,
// not a signed overflow when the tensor is made (idx_fuzz's input).
TEST(Idx, EmptyShapeWhoseOtherSizesOverflowIsNamed) {
  const fs::path dir = scratch_dir("idx_zero_overflow");
  write_bytes(dir / "a", idx_file({0xFFFFFF7Fu, 0, 0xB3300000u}, {}));
  EXPECT_TRUE(throws_with([&] { read_idx_ubyte((dir / "a").string(), 3); },
                          " claims an implausible shape [4294967167, 0, 3006267392]"));
}

// A 20-byte file claiming 2^36 bytes is reported as truncated (read in pieces, nothing allocated up front).
TEST(Idx, TinyFileClaimingAHugeShapeIsTruncated) {
  const fs::path dir = scratch_dir("idx_tiny");
  write_bytes(dir / "a", idx_file({65536, 65536, 16}, {1, 2, 3}));
  EXPECT_TRUE(throws_with([&] { read_idx_ubyte((dir / "a").string(), 3); },
                          "promises [65536, 65536, 16] = 68719476736 bytes of data, found 3"));
}

}  // namespace
}  // namespace colony::data
