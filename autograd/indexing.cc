// Tensor::index and Tensor::index_put_, libtorch's spelling of Python's x[...] and x[...] = v.
// Both walk the indices once, building a view from the differentiable view ops (select, slice,
// unsqueeze), so the view's gradient and in-place writes through it are those of autograd/views.cc
// and autograd/inplace.cc; an index tensor then gathers (index) or scatters (index_put_) along its
// dim of that view. A bool mask is its true positions in the dims it covers, flattened into one.
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {
namespace indexing {

TensorIndex::TensorIndex(const char* s) : kind_(Kind::Ellipsis) {
  if (s == nullptr || std::string(s) != "...") {
    throw std::invalid_argument(std::string("TensorIndex: the only string index is \"...\" (Ellipsis), got \"") +
                                (s ? s : "(null)") + "\"");
  }
}

}  // namespace indexing

namespace {

using indexing::TensorIndex;
using Kind = TensorIndex::Kind;

// The view the basic indices make, and the index tensor (if any) with the dim of `view` it acts on.
struct Walked {
  Tensor view;
  Tensor index;  // int64, negative positions already wrapped; undefined when there is none
  int64_t index_dim = -1;
  Shape index_shape;  // the index tensor's own shape (its dims replace index_dim in a gather)
};

// A bool mask over dims [d, d + mask.dim()) of `cur`: those dims flattened into one (a view when
// `for_write`, so that writes reach the tensor) and the int64 positions of the mask's true
// elements in it, which then act as an index tensor along dim d, as torch's x[mask] does.
Tensor flatten_for_mask(Tensor& cur, int64_t d, const Tensor& mask, int64_t source, bool for_write, const char* op) {
  const int64_t km = mask.dim();
  for (int64_t j = 0; j < km; ++j) {
    if (mask.size(j) != cur.size(d + j)) {
      throw std::out_of_range("The shape of the mask " + shape_str(mask.sizes()) + " at index " + std::to_string(j) +
                              " does not match the shape of the indexed tensor " + shape_str(cur.sizes()) +
                              " at index " + std::to_string(d + j) + " (" + op + ", the mask starting at dimension " +
                              std::to_string(source) + ")");
    }
  }
  if (km > 1) {
    Shape flat(cur.sizes().begin(), cur.sizes().begin() + d);
    int64_t n = 1;
    bool viewable = true;
    for (int64_t j = 0; j < km; ++j) {
      n *= cur.size(d + j);
      if (j + 1 < km && cur.size(d + j + 1) != 1 && cur.size(d + j) != 1 &&
          cur.stride(d + j) != cur.stride(d + j + 1) * cur.size(d + j + 1)) {
        viewable = false;
      }
    }
    flat.push_back(n);
    flat.insert(flat.end(), cur.sizes().begin() + d + km, cur.sizes().end());
    if (for_write && !viewable) {
      throw std::invalid_argument(std::string(op) + ": a " + std::to_string(km) +
                                  "-d bool mask over dimensions whose elements are not laid out as one (a transposed "
                                  "or sliced view) is not supported; make the tensor contiguous first");
    }
    cur = for_write ? colony::view(cur, flat) : colony::reshape(cur, flat);
  }
  Tensor m = mask.device() == cur.device() ? mask : raw::to(mask, cur.device(), kBool);
  return raw::reshape(raw::nonzero(raw::reshape(m, {mask.numel()})), {-1});
}

Walked walk(const Tensor& self, std::initializer_list<TensorIndex> indices, const char* op, bool for_write) {
  // Dims the indices consume: integers, slices and index tensors one each, a bool mask as many as
  // it has; None and Ellipsis none.
  int64_t consumed = 0, ellipses = 0, tensors = 0;
  for (const TensorIndex& i : indices) {
    if (i.kind() == Kind::Tensor && i.tensor().defined() && i.tensor().dtype() == kBool) {
      if (i.tensor().dim() == 0) {
        throw std::invalid_argument(std::string(op) + ": a 0-d bool index is not supported (index with a 1-d mask)");
      }
      consumed += i.tensor().dim();
    } else if (i.kind() == Kind::Integer || i.kind() == Kind::Slice || i.kind() == Kind::Tensor) {
      ++consumed;
    }
    if (i.kind() == Kind::Ellipsis) ++ellipses;
    if (i.kind() == Kind::Tensor) ++tensors;
  }
  if (ellipses > 1) throw std::invalid_argument(std::string(op) + ": an index can only have a single ellipsis ('...')");
  if (tensors > 1) {
    throw std::invalid_argument(std::string(op) + ": got " + std::to_string(tensors) +
                                " index tensors; one is supported (use index_select or gather for the rest)");
  }
  if (consumed > self.dim()) {
    throw std::out_of_range(std::string(op) + ": too many indices for a tensor of dimension " +
                            std::to_string(self.dim()) + " (got " + std::to_string(consumed) + ")");
  }
  Walked w;
  Tensor cur = self;
  int64_t d = 0;         // the dim of `cur` the next index acts on
  int64_t source = 0;    // the same dim numbered in self, for errors
  for (const TensorIndex& i : indices) {
    switch (i.kind()) {
      case Kind::Integer: {
        const int64_t size = cur.size(d), v = i.integer();
        if (v < -size || v >= size) {
          throw std::out_of_range(std::string(op) + ": index " + std::to_string(v) + " is out of range for dimension " +
                                  std::to_string(source) + " with size " + std::to_string(size) + " (expected " +
                                  std::to_string(-size) + " <= index < " + std::to_string(size) + ")");
        }
        cur = colony::select(cur, d, v);
        ++source;
        break;
      }
      case Kind::Slice: {
        const indexing::Slice& s = i.slice();
        const int64_t step = s.step.value_or(1);
        if (step <= 0) {
          throw std::invalid_argument(std::string(op) + ": slice step must be positive, got " + std::to_string(step) +
                                      " for dimension " + std::to_string(source));
        }
        const int64_t size = cur.size(d);
        cur = colony::slice(cur, d, s.start.value_or(0), s.stop.value_or(size), step);
        ++d;
        ++source;
        break;
      }
      case Kind::None:
        cur = colony::unsqueeze(cur, d);
        ++d;
        break;
      case Kind::Ellipsis:
        d += self.dim() - consumed;
        source += self.dim() - consumed;
        break;
      case Kind::Tensor: {
        Tensor idx = i.tensor();
        if (!idx.defined()) throw std::invalid_argument(std::string(op) + ": the index tensor is undefined");
        int64_t mask_dims = 0;  // > 0: a bool mask, now its true positions in the flattened dims
        if (idx.dtype() == kBool) {
          mask_dims = idx.dim();
          idx = flatten_for_mask(cur, d, idx, source, for_write, op);
        }
        if (idx.dtype() != kInt64 && idx.dtype() != kInt32) {
          throw std::invalid_argument(std::string(op) + ": index tensors must be int64, int32 or bool, got " +
                                      dtype_name(idx.dtype()));
        }
        if (idx.device() != self.device()) idx = raw::to(idx, self.device(), kInt64);
        const int64_t size = cur.size(d);
        idx = raw::to(idx, idx.device(), kInt64);
        // Python's negative positions count from the end; anything else out of range is named here.
        if (idx.numel() > 0 && idx.is_cpu()) {
          const int64_t lo = raw::amin(idx).item<int64_t>(), hi = raw::amax(idx).item<int64_t>();
          if (lo < -size || hi >= size) {
            throw std::out_of_range(std::string(op) + ": index " + std::to_string(lo < -size ? lo : hi) +
                                    " is out of range for dimension " + std::to_string(source) + " with size " +
                                    std::to_string(size) + " (expected " + std::to_string(-size) +
                                    " <= index < " + std::to_string(size) + ")");
          }
        }
        if (idx.numel() > 0) {
          idx = raw::where(raw::binary(raw::BinaryOp::Lt, idx, 0.0), raw::add(idx, static_cast<double>(size)), idx);
        }
        w.index = idx;
        w.index_dim = d;
        w.index_shape = idx.sizes();
        ++d;
        source += mask_dims > 0 ? mask_dims : 1;
        break;
      }
    }
  }
  w.view = cur;
  return w;
}

// `view` with the index tensor's rows gathered: view.shape[:k] + index.shape + view.shape[k+1:].
Tensor gather_rows(const Walked& w) {
  Tensor out = colony::index_select(w.view, w.index_dim, w.index);
  // A 0-d index tensor removes its dim, as an integer would.
  return w.index_shape.empty() ? colony::squeeze(out, w.index_dim) : out;
}

}  // namespace

Tensor Tensor::index(std::initializer_list<indexing::TensorIndex> indices) const {
  Walked w = walk(*this, indices, "index", /*for_write=*/false);
  return w.index.defined() ? gather_rows(w) : w.view;
}

Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value) {
  return index_put_(indices, value, /*accumulate=*/false);
}

Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value, bool accumulate) {
  const char* op = "index_put_";
  if (!value.defined()) throw std::invalid_argument("index_put_: the value tensor is undefined");
  Walked w = walk(*this, indices, op, /*for_write=*/true);
  Tensor& target = w.view;
  // The shape the indices select, which value must broadcast to.
  Shape selected = target.sizes();
  if (w.index.defined()) {
    selected.erase(selected.begin() + w.index_dim);
    selected.insert(selected.begin() + w.index_dim, w.index_shape.begin(), w.index_shape.end());
  }
  // value broadcasts to `selected` (never the other way): each of its trailing dims is 1 or equal.
  const Shape& vs = value.sizes();
  bool fits = vs.size() <= selected.size();
  for (size_t i = 0; fits && i < vs.size(); ++i) {
    const int64_t have = vs[vs.size() - 1 - i], want = selected[selected.size() - 1 - i];
    fits = have == 1 || have == want;
  }
  if (!fits) {
    throw std::invalid_argument("index_put_: value of shape " + shape_str(value.sizes()) +
                                " cannot be broadcast to the indexed shape " + shape_str(selected));
  }
  Tensor v = value.device() == device() ? value : colony::to(value, device(), value.dtype());
  const Tensor true_cond = raw::scalar_tensor(1.0, TensorOptions(kBool).device(device()));
  if (!w.index.defined()) {
    if (accumulate) {  // every element of the view adds the value
      autograd::detail::record_inplace(
          target, op, {&v}, false, [&] { raw::binary_(raw::BinaryOp::Add, target, v); },
          [&](const Tensor& s) { return colony::add(s, colony::to(v, s.device(), s.dtype())); });
      return *this;
    }
    // Slice assignment: every element of the view takes the value. where(true, v, s) keeps s in
    // the graph (its gradient there is zero) while the result is v broadcast to s's shape.
    autograd::detail::record_inplace(
        target, op, {&v}, false, [&] { raw::copy_(target, v); },
        [&](const Tensor& s) { return colony::where(true_cond, colony::to(v, s.device(), s.dtype()), s); });
    return *this;
  }
  // An index tensor along dim k of the view: rows index[j] take value's j-th slice. The value,
  // broadcast and with the index's dims flattened into one, is index_add-ed into zeros; a mask of
  // the rows written picks that over the view's old rows.
  const int64_t k = w.index_dim, m = w.index.numel();
  Tensor flat_index = raw::reshape(w.index, {m});
  Shape rows_shape = target.sizes();
  rows_shape[k] = m;
  Shape mask_shape(static_cast<size_t>(target.dim()), 1);
  mask_shape[k] = target.size(k);
  // (Only assignment needs the mask; accumulate adds zero rows where nothing is written.)
  Tensor mask;
  if (!accumulate) {
    Tensor written =
        raw::index_add({target.size(k)}, 0, flat_index, raw::ones({m}, TensorOptions(kInt64).device(device())));
    mask = raw::reshape(raw::binary(raw::BinaryOp::Gt, written, 0.0), mask_shape);
  }
  const Shape full = target.sizes();
  // Without accumulate, a row the index names twice takes the value of its last occurrence, as
  // torch's CPU index_put_ (a serial loop) leaves it: each row's last position j is its maximum
  // (scatter_reduce), and only the rows of those positions are added, so none is ever summed.
  Tensor last_rows;  // bool, broadcastable to rows_shape; undefined with accumulate
  if (!accumulate && m > 1) {
    const TensorOptions i64 = TensorOptions(kInt64).device(device());
    Tensor positions = raw::arange(0, static_cast<double>(m), 1, i64);
    Tensor last = raw::scatter_reduce(raw::full({target.size(k)}, -1.0, i64), 0, flat_index, positions, raw::ScatterOp::Max);
    Shape keep_shape(static_cast<size_t>(target.dim()), 1);
    keep_shape[k] = m;
    last_rows = raw::reshape(raw::binary(raw::BinaryOp::Eq, raw::index_select(last, 0, flat_index), positions), keep_shape);
  }
  // accumulate: the index_add-ed rows (duplicates summed) are added to the view's old rows.
  auto scatter = [&, k](const Tensor& s, bool differentiable) {
    if (differentiable) {
      Tensor rows = colony::reshape(colony::expand(colony::to(v, s.device(), s.dtype()), selected), rows_shape);
      if (last_rows.defined()) rows = colony::where(last_rows, rows, 0.0);
      Tensor added = colony::index_add(full, k, flat_index, rows);
      return accumulate ? colony::add(s, added) : colony::where(mask, added, s);
    }
    Tensor rows = raw::reshape(raw::expand(raw::to(v, s.device(), s.dtype()), selected), rows_shape);
    if (last_rows.defined()) rows = raw::where(last_rows, rows, raw::zeros({}, TensorOptions(rows.dtype()).device(rows.device())));
    Tensor added = raw::index_add(full, k, flat_index, rows);
    return accumulate ? raw::add(s, added) : raw::where(mask, added, s);
  };
  // Nothing to record: accumulate adds the rows into the target in place, each element's additions
  // in index order (old + v[0] + v[1] for a repeated index, torch's CPU order), one pass over the
  // rows written where the out-of-place scatter took four over the whole target; a strided target
  // is added into a contiguous copy, written back.
  const auto raw_write = [&] {
    if (accumulate) {
      Tensor rows = raw::reshape(raw::expand(raw::to(v, target.device(), target.dtype()), selected), rows_shape);
      if (target.is_contiguous()) {
        raw::index_add_(target, k, flat_index, rows);
      } else {
        Tensor dense = raw::contiguous(target);
        raw::copy_(target, raw::index_add_(dense, k, flat_index, rows));
      }
      return;
    }
    raw::copy_(target, scatter(target, false));
  };
  autograd::detail::record_inplace(target, op, {&v}, false, raw_write,
                                   [&](const Tensor& s) { return scatter(s, true); });
  return *this;
}

Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, double value) {
  return index_put_(indices, raw::scalar_tensor(value, TensorOptions(dtype()).device(device())));
}

}  // namespace colony
