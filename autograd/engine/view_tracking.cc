#include "autograd/engine/view_tracking.h"

#include <memory>
#include <vector>

#include "autograd/engine/function_node.h"
#include "ops/raw_ops.h"

namespace colony::autograd {
namespace {

// A zero-filled buffer big enough for `base` (its elements at the same positions as in the base's
// storage), with `like`'s dtype and device.
Tensor zero_buffer(const Geometry& base, const Tensor& like) {
  int64_t extent = base.offset + 1;
  for (size_t d = 0; d < base.sizes.size(); ++d) {
    if (base.sizes[d] == 0) return raw::zeros({0}, TensorOptions(like.dtype()).device(like.device()));
    extent += (base.sizes[d] - 1) * base.strides[d];
  }
  return raw::zeros({extent}, TensorOptions(like.dtype()).device(like.device()));
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
    Tensor buffer = zero_buffer(base_, grads[0]);
    Tensor window = strided(buffer, view_);
    raw::copy_(window, grads[0]);
    return {strided(buffer, base_)};
  }

 private:
  Geometry base_, view_;
};

}  // namespace

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
