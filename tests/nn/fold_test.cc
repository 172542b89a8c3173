// F::unfold / F::fold (im2col / col2im: ops/fold_ops.cc, kernels/common/fold.h), nn::Unfold /
// nn::Fold (nn/fold.h) and Tensor::unfold (the sliding-window view, autograd/views.cc): values and
// gradients against torch in float64 and float32 (tests/nn/fold_golden.py writes fold_golden.h),
// float64 gradchecks, the adjoint identity, torch's refusals, printing, and CUDA against the CPU.
#include "nn/fold.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "nn/functional.h"
#include "tests/autograd/gradcheck.h"
#include "tests/golden_check.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/nn/fold_golden.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

namespace F = functional;
using colony::testing::throws_with;
using In = std::vector<Tensor>;
using testing::golden::Op;

struct Window {
  const char* name;
  Int2 image, kernel, dilation, padding, stride;
};

// fold_golden.py's WINDOWS: the image size is the input's last two dims.
const std::vector<Window> kWindows = {
    {"k23", {5, 6}, {2, 3}, 1, 0, 1},
    {"k3_pad1", {5, 4}, 3, 1, 1, 1},
    {"dilation", {7, 6}, {3, 2}, {2, 3}, 0, 1},
    {"dilation_pad_stride", {7, 8}, {2, 3}, {2, 1}, {1, 2}, {2, 3}},
    {"stride_gt_kernel", {7, 9}, 2, 1, 1, 3},
    {"stride_gt_kernel_k1", {5, 7}, {1, 2}, 1, 0, {3, 4}},
    {"unbatched", {5, 4}, 3, 1, {1, 0}, {1, 2}},
    {"big_pad", {3, 2}, 2, 2, 3, 2},
};

F::UnfoldFuncOptions unfold_options(const Window& w) {
  return F::UnfoldFuncOptions(w.kernel).dilation(w.dilation).padding(w.padding).stride(w.stride);
}
F::FoldFuncOptions fold_options(const Window& w) {
  return F::FoldFuncOptions(w.image, w.kernel).dilation(w.dilation).padding(w.padding).stride(w.stride);
}

std::map<std::string, Op> calls() {
  std::map<std::string, Op> c;
  for (const Window& w : kWindows) {
    c[std::string("unfold_") + w.name] = [w](const In& x, Device) { return F::unfold(x[0], unfold_options(w)); };
    c[std::string("fold_") + w.name] = [w](const In& x, Device) { return F::fold(x[0], fold_options(w)); };
  }
  c["view_overlap"] = [](const In& x, Device) { return x[0].unfold(1, 3, 1); };
  c["view_step2"] = [](const In& x, Device) { return x[0].unfold(1, 4, 2); };
  c["view_gaps"] = [](const In& x, Device) { return x[0].unfold(0, 2, 3); };
  c["view_negative_dim"] = [](const In& x, Device) { return x[0].unfold(-1, 6, 1); };
  std::map<std::string, Op> all = c;
  for (const auto& [name, op] : c) all[name + "_f32"] = op;
  return all;
}

TEST(Fold, MatchesTorch) {
  const auto ops = calls();
  for (const auto& c : testing::fold_golden::kCases) EXPECT_TRUE(testing::golden::matches(c, ops, kCPU));
}

TEST(Fold, Gradcheck) {
  using colony::testing::gradcheck;
  for (const Window& w : kWindows) {
    const bool batched = std::string(w.name) != "unbatched";
    Shape image = batched ? Shape{2, 2, w.image.h, w.image.w} : Shape{2, w.image.h, w.image.w};
    const Tensor x = colony::testing::input(image);
    EXPECT_TRUE(gradcheck([&](const In& in) { return F::unfold(in[0], unfold_options(w)); }, {x})) << w.name;
    const Tensor cols = colony::testing::input(raw::im2col(x, w.kernel, w.dilation, w.padding, w.stride).sizes());
    EXPECT_TRUE(gradcheck([&](const In& in) { return F::fold(in[0], fold_options(w)); }, {cols})) << w.name;
  }
}

// <unfold(x), c> == <x, fold(c)>: each is the other's transpose, also in float32 on many planes
// (the CPU kernels split planes among threads).
TEST(Fold, UnfoldAndFoldAreAdjoint) {
  for (const Window& w : kWindows) {
    Generator gen(11);
    const Tensor x = raw::randn({3, 5, w.image.h, w.image.w}, TensorOptions(kFloat64), &gen);
    const Tensor u = F::unfold(x, unfold_options(w));
    const Tensor c = raw::randn(u.sizes(), TensorOptions(kFloat64), &gen);
    const double lhs = raw::sum(raw::mul(u, c)).item<double>();
    const double rhs = raw::sum(raw::mul(x, F::fold(c, fold_options(w)))).item<double>();
    EXPECT_NEAR(lhs, rhs, 1e-9 * (1 + std::abs(lhs))) << w.name;
  }
}

TEST(Fold, FloatingDtypesAndNonContiguousInput) {
  const Tensor x = raw::randn({2, 3, 6, 5}, TensorOptions(kFloat32));
  const Tensor expect = F::unfold(x, F::UnfoldFuncOptions(2).stride(2));
  for (DType dt : {kFloat16, kBFloat16}) {
    const Tensor y = F::unfold(raw::to(x, kCPU, dt), F::UnfoldFuncOptions(2).stride(2));
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_TRUE(colony::testing::all_close(raw::to(y, kCPU, kFloat32), raw::to(raw::to(expect, kCPU, dt), kCPU, kFloat32), 0, 0));
    const Tensor f = F::fold(y, F::FoldFuncOptions({6, 5}, 2).stride(2));
    EXPECT_EQ(f.dtype(), dt);
  }
  // A transposed (non-contiguous) input reads as its values.
  const Tensor xt = raw::transpose(raw::randn({2, 3, 5, 6}, TensorOptions(kFloat64)), 2, 3);
  EXPECT_TRUE(colony::testing::all_close(F::unfold(xt, F::UnfoldFuncOptions(3).padding(1)),
                                         F::unfold(raw::contiguous(xt), F::UnfoldFuncOptions(3).padding(1)), 0, 0));
  EXPECT_EQ(F::unfold(raw::zeros({0, 2, 4, 4}, TensorOptions(kFloat32)), F::UnfoldFuncOptions(2)).sizes(),
            (Shape{0, 8, 9}));
  EXPECT_EQ(F::fold(raw::zeros({0, 12, 4}, TensorOptions(kFloat32)), F::FoldFuncOptions(3, 2)).sizes(),
            (Shape{0, 3, 3, 3}));
}

TEST(Fold, RefusesWhatTorchRefuses) {
  const Tensor x = raw::zeros({2, 3, 4, 4}, TensorOptions(kFloat32));
  auto unfold = [](const Tensor& t, F::UnfoldFuncOptions o) { return [=] { F::unfold(t, o); }; };
  auto fold = [](const Tensor& t, F::FoldFuncOptions o) { return [=] { F::fold(t, o); }; };
  EXPECT_TRUE(throws_with(unfold(raw::zeros({1, 2, 3, 4, 5}, TensorOptions(kFloat32)), 2),
                          "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                          "dimensions for input, but got: [1, 2, 3, 4, 5]"));
  EXPECT_TRUE(throws_with(unfold(raw::zeros({2, 0, 4, 4}, TensorOptions(kFloat32)), 2), "but got: [2, 0, 4, 4]"));
  EXPECT_TRUE(throws_with(unfold(x, 0), "kernel size should be greater than zero, but got kernel_height: 0 kernel_width: 0"));
  EXPECT_TRUE(throws_with(unfold(x, F::UnfoldFuncOptions(2).stride(0)),
                          "stride should be greater than zero, but got stride_height: 0 stride_width: 0"));
  EXPECT_TRUE(throws_with(unfold(x, F::UnfoldFuncOptions(2).dilation(0)),
                          "dilation should be greater than zero, but got dilation_height: 0 dilation_width: 0"));
  EXPECT_TRUE(throws_with(unfold(x, F::UnfoldFuncOptions(2).padding(-1)),
                          "padding should be non-negative, but got pad_height: -1 pad_width: -1"));
  EXPECT_TRUE(throws_with(unfold(x, F::UnfoldFuncOptions({2, 3}).dilation(2)),
                          "Given input with spatial size (4, 4), kernel_size=(2, 3), dilation=(2, 2), padding=(0, 0), "
                          "calculated shape of the array of sliding blocks as (2, 0), but its components must be at "
                          "least one."));
  EXPECT_TRUE(throws_with(unfold(raw::zeros({2, 3, 4, 4}, TensorOptions(kInt64)), 2), "expected a floating point input"));

  EXPECT_TRUE(throws_with(fold(raw::zeros({12}, TensorOptions(kFloat32)), F::FoldFuncOptions(3, 2)),
                          "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                          "dimensions for input, but got: [12]"));
  EXPECT_TRUE(throws_with(fold(raw::zeros({2, 11, 4}, TensorOptions(kFloat32)), F::FoldFuncOptions(3, 2)),
                          "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
                          "input.size(1)=11 and kernel_size=(2, 2)."));
  EXPECT_TRUE(throws_with(fold(raw::zeros({2, 12, 5}, TensorOptions(kFloat32)), F::FoldFuncOptions(3, 2)),
                          "Given output_size=(3, 3), kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), "
                          "stride=(1, 1), expected size of input's dimension 2 to match the calculated number of "
                          "sliding blocks 2 * 2 = 4, but got input.size(2)=5."));
  EXPECT_TRUE(throws_with(fold(raw::zeros({2, 12, 4}, TensorOptions(kFloat32)), F::FoldFuncOptions({0, 3}, 2)),
                          "sliding blocks -1 * 2 = -2"));
  EXPECT_TRUE(throws_with(fold(raw::zeros({2, 12, 4}, TensorOptions(kFloat32)), F::FoldFuncOptions(3, 2).stride(0)),
                          "stride should be greater than zero"));
}

TEST(Fold, Modules) {
  EXPECT_EQ(Unfold(UnfoldOptions(2)).repr(), "Unfold(kernel_size=2, dilation=1, padding=0, stride=1)");
  EXPECT_EQ(Unfold(UnfoldOptions({2, 3}).dilation(2).padding({1, 0}).stride(3)).repr(),
            "Unfold(kernel_size=(2, 3), dilation=2, padding=(1, 0), stride=3)");
  EXPECT_EQ(Fold(FoldOptions({4, 5}, 2)).repr(), "Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)");
  const Tensor x = raw::randn({2, 3, 5, 6}, TensorOptions(kFloat64));
  Unfold unfold(UnfoldOptions(3).padding(1));
  Fold fold(FoldOptions({5, 6}, 3).padding(1));
  EXPECT_TRUE(colony::testing::all_close(unfold.forward(x), F::unfold(x, F::UnfoldFuncOptions(3).padding(1)), 0, 0));
  // fold(unfold(x)) multiplies each pixel by the number of blocks that cover it.
  const Tensor counts = fold.forward(unfold.forward(raw::ones_like(x)));
  EXPECT_TRUE(colony::testing::all_close(fold.forward(unfold.forward(x)), raw::mul(x, counts), 1e-12, 1e-12));
}

TEST(TensorUnfold, ViewAndRefusals) {
  Tensor x = raw::arange(0, 10, 1, TensorOptions(kFloat64));
  const Tensor v = x.unfold(0, 3, 2);
  EXPECT_EQ(v.sizes(), (Shape{4, 3}));
  EXPECT_EQ(v.strides(), (Shape{2, 1}));
  EXPECT_EQ(v.data_ptr_raw(), x.data_ptr_raw());  // a view
  EXPECT_EQ(colony::testing::values(v), (std::vector<double>{0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7, 8}));
  EXPECT_EQ(raw::full({}, 3.0, TensorOptions(kFloat64)).unfold(0, 1, 1).sizes(), (Shape{1}));
  EXPECT_EQ(raw::zeros({3, 0}, TensorOptions(kFloat64)).unfold(1, 0, 2).sizes(), (Shape{3, 1, 0}));
  EXPECT_TRUE(throws_with([&] { x.unfold(0, 11, 1); }, "maximum size for tensor at dimension 0 is 10 but size is 11"));
  EXPECT_TRUE(throws_with([&] { x.unfold(0, 3, 0); }, "step is 0 but must be > 0"));
  EXPECT_TRUE(throws_with([&] { x.unfold(0, -1, 1); }, "size is -1 but must be >= 0"));
  EXPECT_TRUE(throws_with([&] { x.unfold(1, 2, 1); }, "unfold"));

  using colony::testing::gradcheck;
  const Tensor t = colony::testing::input({3, 8, 2});
  for (auto [size, step] : std::vector<std::pair<int64_t, int64_t>>{{3, 1}, {3, 2}, {2, 3}, {8, 1}}) {
    EXPECT_TRUE(gradcheck([size = size, step = step](const In& in) { return in[0].unfold(1, size, step); }, {t}))
        << size << " " << step;
  }
  // In-place writes through the view reach the base, as any view's.
  Tensor base = raw::zeros({6}, TensorOptions(kFloat64));
  Tensor win = base.unfold(0, 2, 2);
  win.fill_(1.0);
  EXPECT_EQ(colony::testing::values(base), (std::vector<double>{1, 1, 1, 1, 1, 1}));
}

TEST(Fold, OnCudaMatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const auto ops = calls();
  for (const auto& c : testing::fold_golden::kCases) EXPECT_TRUE(testing::golden::matches(c, ops, Device::cuda(0)));
}

TEST(Fold, ModulesOnCudaMatchTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Tensor x = raw::randn({4, 16, 13, 11}, TensorOptions(kFloat32));
  testing::expect_cuda_module_matches_cpu(
      [] { return std::make_shared<Unfold>(UnfoldOptions({3, 2}).dilation({2, 1}).padding(1).stride({2, 3})); }, x);
  const Tensor cols = F::unfold(x, F::UnfoldFuncOptions(3).padding(1).stride(2));
  testing::expect_cuda_module_matches_cpu(
      [] { return std::make_shared<Fold>(FoldOptions({13, 11}, 3).padding(1).stride(2)); }, cols);
  // 16-bit inputs on the device: fold sums in float32.
  for (DType dt : {kFloat16, kBFloat16}) {
    const Tensor c = raw::to(cols, kCPU, dt);
    const Tensor gpu = F::fold(raw::to(c, Device::cuda(0), dt), F::FoldFuncOptions({13, 11}, 3).padding(1).stride(2));
    const Tensor cpu = F::fold(c, F::FoldFuncOptions({13, 11}, 3).padding(1).stride(2));
    EXPECT_TRUE(colony::testing::all_close(raw::to(gpu, kCPU, kFloat32), raw::to(cpu, kCPU, kFloat32), 1e-2, 1e-2));
  }
}

}  // namespace
}  // namespace colony::nn
