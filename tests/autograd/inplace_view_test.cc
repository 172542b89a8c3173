// The in-place view members (autograd/inplace_view.cc): t_, transpose_, swapdims_, swapaxes_,
// squeeze_, unsqueeze_, as_strided_, and torch.as_strided beside them. Each gives self the sizes,
// strides and offset of the out-of-place view on the same storage and bumps the version; through a
// tensor inside the graph the gradient equals the out-of-place view's (float64, and a
// finite-difference check), with the view's backward as self's grad_fn; views of views and bases
// with views keep their gradients; refusals with torch's words. The expected gradients of the
// view-tracking cases are torch 2.15's (the script in each comment's last line).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::strided_input;
using testing::throws_with;
using testing::values;
using In = const std::vector<Tensor>&;

struct Member {
  std::string name;
  Shape shape;
  std::function<void(Tensor&)> inplace;                 // self.op_(...)
  std::function<Tensor(const Tensor&)> outplace;        // op(self, ...)
  std::string grad_fn;                                  // self's grad_fn after the write
};

std::vector<Member> members() {
  return {
      {"t_", {2, 3}, [](Tensor& s) { s.t_(); }, [](const Tensor& s) { return s.t(); }, "TransposeBackward"},
      {"t_ 1-D", {4}, [](Tensor& s) { s.t_(); }, [](const Tensor& s) { return s.t(); }, "TBackward"},
      {"transpose_", {2, 3, 4}, [](Tensor& s) { s.transpose_(0, 2); },
       [](const Tensor& s) { return s.transpose(0, 2); }, "TransposeBackward"},
      {"transpose_ negative", {2, 3, 4}, [](Tensor& s) { s.transpose_(-1, 1); },
       [](const Tensor& s) { return s.transpose(-1, 1); }, "TransposeBackward"},
      {"swapdims_", {2, 3, 4}, [](Tensor& s) { s.swapdims_(0, 1); },
       [](const Tensor& s) { return s.swapdims(0, 1); }, "TransposeBackward"},
      {"swapaxes_", {2, 3, 4}, [](Tensor& s) { s.swapaxes_(2, 0); },
       [](const Tensor& s) { return s.swapaxes(2, 0); }, "TransposeBackward"},
      {"squeeze_", {2, 1, 3, 1}, [](Tensor& s) { s.squeeze_(); }, [](const Tensor& s) { return s.squeeze(); },
       "SqueezeBackward"},
      {"squeeze_(dim)", {2, 1, 3, 1}, [](Tensor& s) { s.squeeze_(-1); },
       [](const Tensor& s) { return s.squeeze(-1); }, "SqueezeBackward"},
      // Squeezing a dim whose size is not 1 changes nothing, as torch's (still recorded and counted).
      {"squeeze_(non-1 dim)", {2, 1, 3}, [](Tensor& s) { s.squeeze_(2); },
       [](const Tensor& s) { return s.squeeze(2); }, "SqueezeBackward"},
      {"unsqueeze_", {2, 3}, [](Tensor& s) { s.unsqueeze_(1); }, [](const Tensor& s) { return s.unsqueeze(1); },
       "UnsqueezeBackward"},
      {"unsqueeze_ last", {2, 3}, [](Tensor& s) { s.unsqueeze_(-1); },
       [](const Tensor& s) { return s.unsqueeze(-1); }, "UnsqueezeBackward"},
      {"unsqueeze_ 0-D", {}, [](Tensor& s) { s.unsqueeze_(0); }, [](const Tensor& s) { return s.unsqueeze(0); },
       "UnsqueezeBackward"},
      {"as_strided_", {2, 3}, [](Tensor& s) { s.as_strided_({2, 2}, {1, 2}, 1); },
       [](const Tensor& s) { return s.as_strided({2, 2}, {1, 2}, 1); }, "AsStridedBackward"},
      {"as_strided_ own offset", {2, 3}, [](Tensor& s) { s.as_strided_({3}, {2}); },
       [](const Tensor& s) { return s.as_strided({3}, {2}); }, "AsStridedBackward"},
      // Elements shared by several outputs: their gradients sum.
      {"as_strided_ overlapping", {6}, [](Tensor& s) { s.as_strided_({3, 2}, {1, 1}, 1); },
       [](const Tensor& s) { return s.as_strided({3, 2}, {1, 1}, 1); }, "AsStridedBackward"},
  };
}

// A float64 tensor inside the graph (2 * leaf), and the leaf.
Tensor in_graph(const Tensor& leaf) { return leaf * 2.0; }

// Fixed weights for a loss over a tensor of `shape`, so each element's gradient differs.
Tensor weights(const Shape& shape) {
  std::vector<double> w(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < w.size(); ++i) w[i] = 1.0 + 0.5 * static_cast<double>(i);
  return raw::from_vector(w, shape, kFloat64);
}

TEST(InplaceView, EqualsTheOutOfPlaceViewOnTheSameStorage) {
  for (const Member& m : members()) {
    SCOPED_TRACE(m.name);
    Tensor x = raw::arange(0, static_cast<double>(std::max<int64_t>(shape_numel(m.shape), 1)), 1, kFloat32);
    x = raw::reshape(x, m.shape);
    Tensor other_handle = x;  // the same TensorImpl: sees the change, as in torch
    Tensor want = m.outplace(x);
    const void* data = x.data_ptr_raw();
    const Storage storage = x.storage();
    const uint32_t version = x.version();
    m.inplace(x);
    EXPECT_EQ(x.sizes(), want.sizes());
    EXPECT_EQ(x.strides(), want.strides());
    EXPECT_EQ(x.storage_offset(), want.storage_offset());
    EXPECT_EQ(values(x), values(want));
    EXPECT_TRUE(x.storage() == storage);
    EXPECT_EQ(other_handle.sizes(), want.sizes());
    EXPECT_EQ(x.version(), version + 1);
    if (want.storage_offset() == 0) {
      EXPECT_EQ(x.data_ptr_raw(), data);
    }
  }
}

TEST(InplaceView, GradientThroughATensorInTheGraphEqualsTheOutOfPlaceView) {
  for (const Member& m : members()) {
    SCOPED_TRACE(m.name);
    Tensor a = input(m.shape), b = input(m.shape);
    Tensor y = in_graph(a);
    m.inplace(y);
    ASSERT_TRUE(y.grad_fn());
    EXPECT_EQ(y.grad_fn()->name(), m.grad_fn);
    (y * weights(y.sizes())).sum().backward();
    Tensor z = m.outplace(in_graph(b));
    (z * weights(z.sizes())).sum().backward();
    EXPECT_EQ(values(a.grad()), values(b.grad()));
    // Finite differences, dense and strided leaves.
    auto f = [&](In in) {
      Tensor s = in[0] * 1.0;
      m.inplace(s);
      return s;
    };
    EXPECT_TRUE(gradcheck(f, {input(m.shape)}));
    if (!m.shape.empty()) {
      EXPECT_TRUE(gradcheck(f, {strided_input(m.shape)}));
    }
  }
}

TEST(InplaceView, LaterInPlaceMathSeesTheNewGeometry) {
  // y.t_().mul_(w): w broadcast over the transposed shape; the gradient reaches the leaf transposed back.
  Tensor a = input({2, 3});
  Tensor w = raw::from_vector<double>({1, 2, 3, 4, 5, 6}, {3, 2}, kFloat64);
  EXPECT_TRUE(gradcheck(
      [&](In in) {
        Tensor y = in[0] * 1.0;
        y.t_().mul_(w);
        y.unsqueeze_(0).squeeze_(0);
        return y;
      },
      {a}));
}

TEST(InplaceView, VersionCounter) {
  // Saved before the change, refused after it, as torch's (the version moved).
  Tensor y = in_graph(input({2, 3}));
  Tensor s = y.sin();
  y.t_();
  EXPECT_TRUE(throws_with([&] { s.sum().backward(); }, "modified by an inplace operation"));
  // Views share the counter.
  Tensor x = raw::zeros({2, 3});
  Tensor v = raw::narrow(x, 1, 0, 2);
  const uint32_t before = v.version();
  x.unsqueeze_(0);
  EXPECT_EQ(v.version(), before + 1);
  v.squeeze_(0);
  EXPECT_EQ(x.version(), before + 2);
}

TEST(InplaceView, Refusals) {
  Tensor leaf = input({2, 3});
  const std::string leaf_msg = "a leaf Variable that requires grad is being used in an in-place operation.";
  EXPECT_TRUE(throws_with([&] { leaf.t_(); }, "t_: " + leaf_msg));
  EXPECT_TRUE(throws_with([&] { leaf.unsqueeze_(0); }, "unsqueeze_: " + leaf_msg));
  EXPECT_TRUE(throws_with([&] { leaf.squeeze_(); }, leaf_msg));
  EXPECT_TRUE(throws_with([&] { leaf.transpose_(0, 1); }, leaf_msg));
  EXPECT_TRUE(throws_with([&] { leaf.as_strided_({2}, {1}); }, leaf_msg));
  EXPECT_TRUE(throws_with([&] { leaf.select(0, 0).unsqueeze_(0); },
                          "a view of a leaf Variable that requires grad is being used in an in-place operation."));
  EXPECT_TRUE(throws_with([&] { in_graph(leaf).split(1)[0].t_(); }, "returns multiple views"));
  EXPECT_EQ(leaf.sizes(), (Shape{2, 3}));
  {
    NoGradGuard no_grad;  // parameters are reshaped so
    Tensor p = input({2, 3});
    p.t_();
    EXPECT_EQ(p.sizes(), (Shape{3, 2}));
    EXPECT_TRUE(p.is_leaf());
  }
  // Dims, in Colony's words for a dim out of range (torch: "Dimension out of range").
  Tensor x = raw::zeros({2, 3});
  EXPECT_TRUE(throws_with([&] { x.transpose_(0, 2); }, "transpose_: dim 2 out of range for a 2-D tensor"));
  EXPECT_TRUE(throws_with([&] { x.swapdims_(-3, 0); }, "transpose_: dim -3 out of range"));
  EXPECT_TRUE(throws_with([&] { x.unsqueeze_(4); }, "unsqueeze_: dim 4 out of range for a 3-D tensor"));
  EXPECT_TRUE(throws_with([&] { x.squeeze_(2); }, "squeeze_: dim 2 out of range"));
  Tensor scalar = raw::scalar_tensor(1.0);  // a 0-D tensor takes dims 0 and -1, as torch's
  scalar.transpose_(0, -1).squeeze_(-1).t_();
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_TRUE(throws_with([&] { scalar.squeeze_(5); }, "squeeze_: dim 5 out of range for a 0-D tensor"));
  EXPECT_TRUE(throws_with([&] { scalar.transpose_(0, 1); }, "transpose_: dim 1 out of range"));
  EXPECT_TRUE(throws_with([&] { raw::zeros({2, 3, 4}).t_(); },
                          "t_() expects a tensor with <= 2 dimensions, but self is 3D"));
  // as_strided's checks, torch's words.
  Tensor s = raw::zeros({3});
  const uint32_t s_version = s.version();
  EXPECT_TRUE(throws_with([&] { s.as_strided_({2}, {1}, 5); },
                          "setStorage: sizes [2], strides [1], storage offset 5, and itemsize 4 requiring a storage "
                          "size of 28 are out of bounds for storage of size 12"));
  EXPECT_TRUE(throws_with([&] { s.as_strided_({2}, {1}, -1); }, "Tensor: invalid storage offset -1"));
  EXPECT_TRUE(throws_with([&] { s.as_strided_({2}, {-1}); },
                          "Negative strides are not supported at the moment, got strides: [-1]"));
  EXPECT_TRUE(throws_with([&] { s.as_strided_({2, 3}, {1}); }, "mismatch in length of strides and shape"));
  // A refused change leaves self as it was.
  EXPECT_EQ(x.sizes(), (Shape{2, 3}));
  EXPECT_EQ(s.sizes(), (Shape{3}));
  EXPECT_EQ(s.version(), s_version);
}

// A view made in place of a view: b = 2 l; v = b.select(0, 1); v.unsqueeze_(0); v.mul_(3); loss
// sum(b * [1..6]). torch: l.grad = [2, 4, 6, 24, 30, 36].
TEST(InplaceView, ViewOfAView) {
  Tensor l = raw::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}, kFloat64).requires_grad_();
  Tensor b = l * 2.0;
  Tensor v = b.select(0, 1);
  v.unsqueeze_(0);
  EXPECT_EQ(v.grad_fn()->name(), "UnsqueezeBackward");
  v.mul_(3.0);
  EXPECT_EQ(values(b), (std::vector<double>{2, 4, 6, 24, 30, 36}));
  (b * raw::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}, kFloat64)).sum().backward();
  EXPECT_EQ(values(l.grad()), (std::vector<double>{2, 4, 6, 24, 30, 36}));

  // A view transposed in place, then written through: b = 2 l; v = b[:, 0:2]; v.t_();
  // v.mul_([[1, 2], [3, 4]]); loss sum(b * [1..6]). torch: [2, 12, 6, 16, 40, 12].
  Tensor l3 = raw::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}, kFloat64).requires_grad_();
  Tensor b3 = l3 * 2.0;
  Tensor v3 = b3.narrow(1, 0, 2);
  v3.t_().mul_(raw::from_vector<double>({1, 2, 3, 4}, {2, 2}, kFloat64));
  (b3 * raw::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}, kFloat64)).sum().backward();
  EXPECT_EQ(values(l3.grad()), (std::vector<double>{2, 12, 6, 16, 40, 12}));
}

// A base transposed in place under a view of it, then written: b = 2 l; v = b[:, 1]; b.t_();
// b.mul_([[1, 2], [3, 4], [5, 6]]); loss sum(v * [5, 7]). torch: v = [12, 40], l.grad =
// [0, 30, 0, 0, 56, 0].
TEST(InplaceView, BaseChangedUnderItsView) {
  Tensor l = raw::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}, kFloat64).requires_grad_();
  Tensor b = l * 2.0;
  Tensor v = b.select(1, 1);
  b.t_();
  b.mul_(raw::from_vector<double>({1, 2, 3, 4, 5, 6}, {3, 2}, kFloat64));
  EXPECT_EQ(values(v), (std::vector<double>{12, 40}));
  (v * raw::from_vector<double>({5, 7}, {2}, kFloat64)).sum().backward();
  EXPECT_EQ(values(l.grad()), (std::vector<double>{0, 30, 0, 0, 56, 0}));
}

// as_strided_ moves a view onto storage its base does not cover: buf = [10..17]; bb = buf[2:6]
// (detached) multiplied in place by w; v = bb[0:2]; v.as_strided_([4], [1], 0); loss
// sum(v * [1, 10, 100, 1000]). torch: v = [10, 11, 24, 39], w.grad = [1200, 13000, 0, 0].
TEST(InplaceView, AsStridedPastTheBase) {
  Tensor w = raw::from_vector<double>({2, 3, 4, 5}, {4}, kFloat64).requires_grad_();
  Tensor buf = raw::from_vector<double>({10, 11, 12, 13, 14, 15, 16, 17}, {8}, kFloat64);
  Tensor bb = raw::narrow(buf, 0, 2, 4).detach();
  bb.mul_(w);
  Tensor v = bb.narrow(0, 0, 2);
  v.as_strided_({4}, {1}, 0);
  EXPECT_EQ(values(v), (std::vector<double>{10, 11, 24, 39}));
  (v * raw::from_vector<double>({1, 10, 100, 1000}, {4}, kFloat64)).sum().backward();
  EXPECT_EQ(values(w.grad()), (std::vector<double>{1200, 13000, 0, 0}));
  // Written through, then the base's gradient: the write's node receives the view's elements of
  // the base's gradient, nothing where the view leaves the base. (torch 2.15 refuses this backward:
  // its CopySlices places the view at offset 0 - 2 in the base, "invalid storage offset -2"; these
  // are the values by hand.)
  Tensor w2 = raw::from_vector<double>({2, 3, 4, 5}, {4}, kFloat64).requires_grad_();
  Tensor c = raw::from_vector<double>({1, 2, 3, 4}, {4}, kFloat64).requires_grad_();
  Tensor buf2 = raw::from_vector<double>({10, 11, 12, 13, 14, 15, 16, 17}, {8}, kFloat64);
  Tensor bb2 = raw::narrow(buf2, 0, 2, 4).detach();
  bb2.mul_(w2);
  Tensor v2 = bb2.narrow(0, 0, 2);
  v2.as_strided_({4}, {1}, 0);
  v2.mul_(c);
  (bb2 * raw::from_vector<double>({1, 10, 100, 1000}, {4}, kFloat64)).sum().backward();
  // bb2 = [24 * 3, 39 * 4, 14 * 4, 15 * 5]: w2's gradient 12 * 3, 130 * 4, 1400, 15000; c's
  // [0, 0, 24 * 1, 39 * 10].
  EXPECT_EQ(values(w2.grad()), (std::vector<double>{36, 520, 1400, 15000}));
  EXPECT_EQ(values(c.grad()), (std::vector<double>{0, 0, 24, 390}));
}

// An expanded view whose history is derived again after its base is written: the gradients of
// its elements sharing a base element sum. z = 1 * x; e = z.expand(3, 6); z.mul_(2); loss
// sum(e * arange(18)). torch: x.grad = [36, 42, 48, 54, 60, 66].
TEST(InplaceView, ExpandedViewDerivedAgainSums) {
  Tensor x = raw::from_vector<double>({1, 2, 3, 4, 5, 6}, {6}, kFloat64).requires_grad_();
  Tensor z = x * 1.0;
  Tensor e = z.expand({3, 6});
  z.mul_(2.0);
  (e * raw::reshape(raw::arange(0, 18, 1, TensorOptions(kFloat64)), {3, 6})).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{36, 42, 48, 54, 60, 66}));
}

TEST(InplaceView, AsStridedGradient) {
  // torch: x = arange(1, 7); (x * 1).as_strided([3, 2], [1, 1], 1) weighted by arange(1, 7):
  // x.grad = [0, 1, 5, 9, 6, 0].
  Tensor x = raw::from_vector<double>({1, 2, 3, 4, 5, 6}, {6}, kFloat64).requires_grad_();
  Tensor y = (x * 1.0).as_strided({3, 2}, {1, 1}, 1);
  (y * raw::from_vector<double>({1, 2, 3, 4, 5, 6}, {3, 2}, kFloat64)).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 1, 5, 9, 6, 0}));
  // An expanded input: each position's gradient shared among the elements reading it.
  EXPECT_TRUE(gradcheck([](In in) { return in[0].expand({2, 3}).as_strided({2, 2}, {1, 1}, 0); }, {input({3})}));
}

// The same members on a CUDA tensor: geometry, values and the leaf's gradient equal the CPU's
// (as_strided's backward and the expanded view's derived history run index_add / index_select there).
TEST(InplaceView, MatchesTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const Member& m : members()) {
    SCOPED_TRACE(m.name);
    Tensor cpu_leaf = input(m.shape);
    Tensor cuda_leaf = raw::to(cpu_leaf.detach(), Device::cuda(0), kFloat64).requires_grad_();
    Tensor y_cpu = in_graph(cpu_leaf), y_cuda = in_graph(cuda_leaf);
    m.inplace(y_cpu);
    m.inplace(y_cuda);
    EXPECT_EQ(y_cuda.sizes(), y_cpu.sizes());
    EXPECT_EQ(y_cuda.strides(), y_cpu.strides());
    EXPECT_EQ(values(y_cuda), values(y_cpu));
    (y_cpu * weights(y_cpu.sizes())).sum().backward();
    (y_cuda * raw::to(weights(y_cuda.sizes()), Device::cuda(0), kFloat64)).sum().backward();
    EXPECT_EQ(values(cuda_leaf.grad()), values(cpu_leaf.grad()));
  }
  Tensor x = raw::from_vector<double>({1, 2, 3, 4, 5, 6}, {6}, TensorOptions(kFloat64).device(Device::cuda(0)));
  x.requires_grad_();
  Tensor z = x * 1.0;
  Tensor e = z.expand({3, 6});
  z.mul_(2.0);
  (e * raw::reshape(raw::arange(0, 18, 1, TensorOptions(kFloat64).device(Device::cuda(0))), {3, 6})).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{36, 42, 48, 54, 60, 66}));
}

}  // namespace
}  // namespace colony
