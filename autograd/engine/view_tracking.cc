#include "autograd/engine/view_tracking.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "autograd/engine/function_node.h"
#include "ops/raw_ops.h"

namespace colony::autograd {
namespace {

// Whether no two elements of `g` share a storage position: with the dims of more than one element
// sorted by stride, each stride steps past everything the smaller ones reach (torch's
// is_non_overlapping_and_dense test without the density).
bool non_overlapping(const Geometry& g) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size)
  for (size_t d = 0; d < g.sizes.size(); ++d) {
    if (g.sizes[d] == 0) return true;
    if (g.sizes[d] > 1) dims.emplace_back(g.strides[d], g.sizes[d]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t reach = 0;  // how far past its first element the dims so far reach
  for (const auto& [stride, size] : dims) {
    if (stride <= reach) return false;
    reach += (size - 1) * stride;
  }
  return true;
}

// The storage positions of a geometry's elements, in the row-major order of its sizes.
std::vector<int64_t> positions(const Geometry& g) {
  std::vector<int64_t> out(static_cast<size_t>(shape_numel(g.sizes)));
  std::vector<int64_t> index(g.sizes.size(), 0);
  int64_t pos = g.offset;
  for (int64_t& p : out) {
    p = pos;
    for (int64_t d = static_cast<int64_t>(g.sizes.size()) - 1; d >= 0; --d) {
      if (++index[d] < g.sizes[d]) {
        pos += g.strides[d];
        break;
      }
      pos -= (g.sizes[d] - 1) * g.strides[d];
      index[d] = 0;
    }
  }
  return out;
}

// `buffer`'s storage seen with geometry `g` (an as_strided view).
Tensor strided(const Tensor& buffer, const Geometry& g) {
  return Tensor(std::make_shared<TensorImpl>(buffer.storage(), g.sizes, g.strides, g.offset, buffer.dtype()));
}

// grad_fn of a view derived from its base's history: the view's gradient written into a zero
// gradient of the base at the view's elements (as_strided's backward).
class AsStridedBackward : public Node {
 public:
  AsStridedBackward(Geometry base, Geometry view) : base_(std::move(base)), view_(std::move(view)) {}
  std::string name() const override { return "AsStridedBackward"; }
  std::vector<Tensor> apply(std::vector<Tensor> grads) override {
    // Distinct elements in the view and in the base (every view op's views): the gradient written
    // into a zero buffer at the view's positions and read at the base's (those outside the base,
    // where as_strided_ may move a view, dropped). Otherwise (an expanded view or base) the general
    // form, which sums what the view's positions share and shares it among the base's.
    if (!non_overlapping(view_) || !non_overlapping(base_)) return {as_strided_backward(grads[0], base_, view_)};
    const int64_t end = std::max(base_.end(), view_.end());
    Tensor buffer = raw::zeros({end}, TensorOptions(grads[0].dtype()).device(grads[0].device()));
    Tensor window = strided(buffer, view_);
    raw::copy_(window, grads[0]);
    return {strided(buffer, base_)};
  }

 private:
  Geometry base_, view_;
};

}  // namespace

Tensor as_strided_backward(const Tensor& grad, const Geometry& in, const Geometry& out) {
  const std::vector<int64_t> at_in = positions(in), at_out = positions(out);
  const TensorOptions like = TensorOptions(grad.dtype()).device(grad.device());
  if (at_in.empty() || at_out.empty()) return raw::zeros(in.sizes, like);
  const int64_t extent = 1 + std::max(*std::max_element(at_in.begin(), at_in.end()),
                                      *std::max_element(at_out.begin(), at_out.end()));
  const TensorOptions index_opts = TensorOptions(kInt64).device(grad.device());
  const int64_t n_in = static_cast<int64_t>(at_in.size()), n_out = static_cast<int64_t>(at_out.size());
  Tensor storage_grad = raw::index_add({extent}, 0, raw::from_vector(at_out, {n_out}, index_opts),
                                       raw::reshape(grad, {n_out}));
  Tensor in_grad = raw::index_select(storage_grad, 0, raw::from_vector(at_in, {n_in}, index_opts));
  if (!non_overlapping(in)) {
    std::vector<double> count(static_cast<size_t>(extent), 0.0), shared(at_in.size());
    for (int64_t p : at_in) count[static_cast<size_t>(p)] += 1.0;
    for (size_t i = 0; i < at_in.size(); ++i) shared[i] = count[static_cast<size_t>(at_in[i])];
    in_grad = raw::binary(raw::BinaryOp::Div, in_grad, raw::from_vector(shared, {n_in}, like));
  }
  return raw::reshape(in_grad, in.sizes);
}

void mark_view(const Tensor& base, const Tensor& view, bool multi_output) {
  if (!GradMode::is_enabled() || !view.defined() || !(view.storage() == base.storage())) return;
  const Tensor& root = view_base_of(base).defined() ? view_base_of(base) : base;
  AutogradMeta& meta = AutogradMetaAccess::get(view);
  meta.view_base = root;
  meta.view_version = view.version();
  meta.multi_output_view = multi_output || (AutogradMetaAccess::has(base) && AutogradMetaAccess::get(base).multi_output_view);
}

const Tensor& view_base_of(const Tensor& t) {
  static const Tensor none;
  if (!AutogradMetaAccess::has(t)) return none;
  return AutogradMetaAccess::get(t).view_base;
}

void refresh_view(const Tensor& t) {
  if (!AutogradMetaAccess::has(t)) return;
  AutogradMeta& meta = AutogradMetaAccess::get(t);
  if (!meta.view_base.defined() || meta.view_version == t.version()) return;
  derive_view_history(t);
}

void derive_view_history(const Tensor& t) {
  AutogradMeta& meta = AutogradMetaAccess::get(t);
  meta.view_version = t.version();
  const Tensor& base = meta.view_base;
  if (!base.requires_grad()) {
    meta.grad_fn = nullptr;
    return;
  }
  auto node = std::make_shared<AsStridedBackward>(Geometry::of(base), Geometry::of(t));
  node->next_edges.push_back(gradient_edge(base));
  node->outputs.push_back(TensorMeta::of(t));
  meta.grad_fn = node;
  meta.output_nr = 0;
}

}  // namespace colony::autograd
