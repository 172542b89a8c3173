// Indexing and joining. A bad index is an error naming the op, never an out-of-bounds access: CPU
// index values are checked here before the kernel runs (index_select, index_add: short 1-D
// indices) or by the CPU kernel as it reads them (gather, scatter_add, scatter: indices as large as
// the data, which a pass here would read twice more), CUDA kernels check each index on the device
// and report at the next synchronization (runtime/cuda/device_errors.h), so the step never waits
// for the host.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/common/index.h"
#include "ops/kernel_layout.h"
#include "ops/op_checks.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

std::string list_str(const std::vector<int64_t>& v) { return shape_str(v); }

void check_same_device(const Tensor& a, const Tensor& index, const char* op, const char* a_name = "input") {
  if (a.device() != index.device()) {
    throw std::invalid_argument(std::string(op) + ": " + a_name + " is on " + a.device().str() + " but index is on " +
                                index.device().str());
  }
}

// index as int64 (int32 is converted when allowed).
Tensor int64_index(const Tensor& index, const char* op, bool allow_int32) {
  if (index.dtype() == kInt64) return index;
  if (allow_int32 && index.dtype() == kInt32) return to(index, index.device(), kInt64);
  throw std::invalid_argument(std::string(op) + ": index must be int64" + (allow_int32 ? " or int32" : "") +
                              ", got " + dtype_name(index.dtype()));
}

void check_index_values(const Tensor& index, int64_t size, int64_t dim, const char* op) {
  if (index.numel() == 0 || !index.is_cpu()) return;
  int64_t lo = amin(index).item<int64_t>(), hi = amax(index).item<int64_t>();
  if (lo < 0 || hi >= size) {
    throw std::out_of_range(std::string(op) + ": index " + std::to_string(lo < 0 ? lo : hi) +
                            " is out of range for dimension " + std::to_string(dim) + " with size " +
                            std::to_string(size));
  }
}

int64_t prod(const Shape& s, int64_t begin, int64_t end) {
  int64_t p = 1;
  for (int64_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

kernels::StridedLayout contiguous_layout(const Shape& shape) {
  kernels::StridedLayout l;
  l.ndim = static_cast<int>(shape.size());
  Shape strides = contiguous_strides(shape);
  for (int d = 0; d < l.ndim; ++d) {
    l.sizes[d] = shape[d];
    l.strides[d] = strides[d];
  }
  return l;
}

}  // namespace

Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index) {
  const char* op = "index_select";
  check_same_device(t, index, op);
  // An N-D index selects its elements in order; its shape replaces dim's in the result.
  Tensor idx = contiguous(int64_index(index.dim() > 1 ? reshape(index, {index.numel()}) : index, op, true));
  Tensor x = contiguous(t.dim() == 0 ? reshape(t, {1}) : t);
  int64_t d = wrap_dim(dim, t.dim(), op);
  check_index_values(idx, x.size(d), d, op);
  Shape out_shape = x.sizes();
  out_shape[d] = idx.numel();
  Tensor out = empty(out_shape, TensorOptions(t.dtype()).device(t.device()));
  int64_t outer = prod(x.sizes(), 0, d), inner = prod(x.sizes(), d + 1, x.dim());
  if (out.numel() > 0) {
    run_kernel<kernels::IndexSelect>(t.device(), t.element_size(), x.data_ptr_raw(), out.data_ptr_raw(), outer,
                                     x.size(d), inner, idx.data_ptr<int64_t>(), idx.numel());
  }
  // A 0-d input gives the index's shape (each selected element is the scalar).
  if (t.dim() == 0) return reshape(out, index.sizes());
  if (index.dim() <= 1) return out;
  Shape shape(t.sizes().begin(), t.sizes().begin() + d);
  shape.insert(shape.end(), index.sizes().begin(), index.sizes().end());
  shape.insert(shape.end(), t.sizes().begin() + d + 1, t.sizes().end());
  return reshape(out, shape);
}

Tensor gather(const Tensor& t, int64_t dim, const Tensor& index) {
  const char* op = "gather";
  check_same_device(t, index, op);
  Tensor idx = int64_index(index, op, false);
  Tensor x = t;
  if (x.dim() == 0) x = reshape(x, {1});
  if (idx.dim() == 0) idx = reshape(idx, {1});
  if (idx.dim() != x.dim()) {
    throw std::invalid_argument(std::string(op) + ": index " + shape_str(index.sizes()) +
                                " must have as many dimensions as the input " + shape_str(t.sizes()));
  }
  int64_t d = wrap_dim(dim, x.dim(), op);
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i != d && idx.size(i) > x.size(i)) {
      throw std::invalid_argument(std::string(op) + ": index shape " + shape_str(index.sizes()) +
                                  " is larger than input shape " + shape_str(t.sizes()) + " in dimension " +
                                  std::to_string(i) + " (only dimension " + std::to_string(d) + " may be larger)");
    }
  }
  // The CPU kernel checks the index values as it reads them (kernels/cpu/index.cc).
  Tensor out = empty(idx.sizes(), TensorOptions(t.dtype()).device(t.device()));
  if (out.numel() > 0) {
    kernels::StridedLayout xl = kernel_layout(x, op), il = kernel_layout(idx, op);
    run_kernel<kernels::Gather>(t.device(), t.element_size(), x.data_ptr_raw(), xl, static_cast<int>(d),
                                idx.data_ptr<int64_t>(), il, out.data_ptr_raw());
  }
  return reshape(out, index.sizes());
}

Tensor scatter_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src) {
  const char* op = "scatter_add";
  check_same_device(src, index, op, "src");
  Tensor idx = int64_index(index, op, false);
  Tensor s = src;
  Shape out_shape = shape.empty() ? Shape{1} : shape;
  if (s.dim() == 0) s = reshape(s, {1});
  if (idx.dim() == 0) idx = reshape(idx, {1});
  const int64_t nd = static_cast<int64_t>(out_shape.size());
  if (idx.dim() != nd || s.dim() != nd) {
    throw std::invalid_argument(std::string(op) + ": index " + shape_str(index.sizes()) + ", src " +
                                shape_str(src.sizes()) + " and output " + shape_str(shape) +
                                " must have the same number of dimensions");
  }
  int64_t d = wrap_dim(dim, nd, op);
  for (int64_t i = 0; i < nd; ++i) {
    if (idx.size(i) > s.size(i) || (i != d && idx.size(i) > out_shape[i])) {
      throw std::invalid_argument(std::string(op) + ": index shape " + shape_str(index.sizes()) +
                                  " must be no larger than src " + shape_str(src.sizes()) +
                                  " in every dimension and no larger than output " + shape_str(shape) +
                                  " except in dimension " + std::to_string(d));
    }
  }
  // The CPU kernel checks the index values as it reads them (kernels/cpu/index.cc).
  Tensor out = zeros(out_shape, TensorOptions(src.dtype()).device(src.device()));
  if (idx.numel() > 0) {
    kernels::StridedLayout ol = contiguous_layout(out_shape), il = kernel_layout(idx, op), sl = kernel_layout(s, op);
    run_kernel<kernels::ScatterAdd>(src.device(), src.dtype(), out.data_ptr_raw(), ol, static_cast<int>(d),
                                    idx.data_ptr<int64_t>(), il, s.data_ptr_raw(), sl);
  }
  return shape.empty() ? reshape(out, {}) : out;
}

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, ScatterOp reduce) {
  const char* op = "scatter";
  check_defined(self, op, "input tensor");
  check_defined(index, op, "index tensor");
  check_defined(src, op, "src tensor");
  check_same_device(self, index, op);
  check_same_device(src, index, op, "src");
  if (index.dtype() != kInt64) {
    throw std::invalid_argument(std::string(op) + ": expected an int64 index, got " + dtype_name(index.dtype()));
  }
  if (src.dtype() != self.dtype()) {
    throw std::invalid_argument(std::string(op) + ": expected src of the input's dtype " + dtype_name(self.dtype()) +
                                ", got " + dtype_name(src.dtype()));
  }
  Tensor x = self.dim() == 0 ? reshape(self, {1}) : self;
  Tensor idx = index.dim() == 0 ? reshape(index, {1}) : index;
  Tensor s = src.dim() == 0 ? reshape(src, {1}) : src;
  const int64_t nd = x.dim();
  if (idx.dim() != nd || s.dim() != nd) {
    throw std::invalid_argument(std::string(op) + ": index " + shape_str(index.sizes()) + ", src " +
                                shape_str(src.sizes()) + " and input " + shape_str(self.sizes()) +
                                " must have the same number of dimensions");
  }
  const int64_t d = wrap_dim(dim, nd, op);
  for (int64_t i = 0; i < nd; ++i) {
    if (idx.size(i) > s.size(i) || (i != d && idx.size(i) > x.size(i))) {
      throw std::invalid_argument(std::string(op) + ": index shape " + shape_str(index.sizes()) +
                                  " must be no larger than src " + shape_str(src.sizes()) +
                                  " in every dimension and no larger than the input " + shape_str(self.sizes()) +
                                  " except in dimension " + std::to_string(d));
    }
  }
  // The CPU kernel checks the index values as it reads them (kernels/cpu/index.cc).
  Tensor out = clone(x);
  if (idx.numel() > 0) {
    kernels::StridedLayout ol = contiguous_layout(out.sizes()), il = kernel_layout(idx, op), sl = kernel_layout(s, op);
    run_kernel<kernels::ScatterReduce>(self.device(), reduce, self.dtype(), out.data_ptr_raw(), ol,
                                       static_cast<int>(d), idx.data_ptr<int64_t>(), il, s.data_ptr_raw(), sl);
  }
  return self.dim() == 0 ? reshape(out, {}) : out;
}

Tensor index_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = zeros(shape, TensorOptions(src.dtype()).device(src.device()));
  return index_add_(out, dim, index, src);
}

Tensor& index_add_(Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  const char* op = "index_add";
  if (index.dim() > 1) {
    throw std::invalid_argument(std::string(op) + ": index must be 0-D or 1-D, got shape " + shape_str(index.sizes()));
  }
  check_same_device(src, index, op, "src");
  if (!out.is_contiguous() || out.device() != src.device() || out.dtype() != src.dtype()) {
    throw std::invalid_argument(std::string(op) + "_: expected a contiguous output of src's dtype and device, got " +
                                dtype_name(out.dtype()) + " on " + out.device().str() +
                                (out.is_contiguous() ? "" : " (not contiguous)") + " for src " +
                                dtype_name(src.dtype()) + " on " + src.device().str());
  }
  Tensor idx = contiguous(int64_index(index, op, true));
  const Shape& shape = out.sizes();
  Shape out_shape = shape.empty() ? Shape{1} : shape;
  int64_t d = wrap_dim(dim, static_cast<int64_t>(shape.size()), op);
  Shape expected = out_shape;
  expected[d] = idx.numel();
  Tensor s = src.dim() == 0 ? reshape(src, {1}) : src;
  if (s.sizes() != expected) {
    throw std::invalid_argument(std::string(op) + ": src has shape " + shape_str(src.sizes()) + ", expected " +
                                shape_str(expected) + " (the output shape " + shape_str(shape) + " with dimension " +
                                std::to_string(d) + " of index's length " + std::to_string(idx.numel()) + ")");
  }
  check_index_values(idx, out_shape[d], d, op);
  s = contiguous(s);
  int64_t outer = prod(out_shape, 0, d), inner = prod(out_shape, d + 1, static_cast<int64_t>(out_shape.size()));
  if (s.numel() > 0) {
    run_kernel<kernels::IndexAdd>(src.device(), src.dtype(), out.data_ptr_raw(), s.data_ptr_raw(), outer, out_shape[d],
                                  inner, idx.data_ptr<int64_t>(), idx.numel());
  }
  return out;
}

Tensor one_hot(const Tensor& labels, int64_t num_classes) {
  const char* op = "one_hot";
  if (labels.dtype() != kInt64) {
    throw std::invalid_argument(std::string(op) + ": expected int64 class indices, got " + dtype_name(labels.dtype()));
  }
  if (num_classes < -1) {
    throw std::invalid_argument(std::string(op) + ": num_classes must be -1 (infer) or >= 0, got " +
                                std::to_string(num_classes));
  }
  if (labels.numel() > 0) {
    int64_t lo = amin(labels).item<int64_t>(), hi = amax(labels).item<int64_t>();
    if (lo < 0) throw std::out_of_range(std::string(op) + ": class values must be non-negative, got " + std::to_string(lo));
    if (num_classes == -1) num_classes = hi + 1;
    if (hi >= num_classes) {
      throw std::out_of_range(std::string(op) + ": class value " + std::to_string(hi) +
                              " is out of range for num_classes " + std::to_string(num_classes));
    }
  } else if (num_classes == -1) {
    throw std::invalid_argument(std::string(op) + ": cannot infer the number of classes from an empty tensor; "
                                "pass num_classes");
  }
  Shape out_shape = labels.sizes();
  out_shape.push_back(num_classes);
  Tensor out = zeros(out_shape, TensorOptions(kInt64).device(labels.device()));
  if (labels.numel() == 0 || num_classes == 0) return out;
  Tensor l = contiguous(labels);
  run_kernel<kernels::OneHot>(l.device(), l.data_ptr<int64_t>(), l.numel(), num_classes, out.data_ptr<int64_t>());
  return out;
}

Tensor nonzero(const Tensor& t) {
  check_defined(t, "nonzero");
  // The test on the tensor's device, then one bool per element read on the host.
  Tensor flags = to(contiguous(binary(BinaryOp::Ne, t, 0.0)), kCPU, kBool);
  const bool* f = flags.data_ptr<bool>();
  const int64_t n = t.numel(), dims = t.dim();
  std::vector<int64_t> coords;
  std::vector<int64_t> at(dims, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (f[i]) coords.insert(coords.end(), at.begin(), at.end());
    for (int64_t d = dims - 1; d >= 0; --d) {  // the next row-major coordinate
      if (++at[d] < t.size(d)) break;
      at[d] = 0;
    }
  }
  const int64_t count = dims == 0 ? (n == 1 && f[0] ? 1 : 0) : static_cast<int64_t>(coords.size()) / dims;
  Tensor out = from_vector(coords, {count, dims});
  return t.device() == kCPU ? out : to(out, t.device(), kInt64);
}

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  const char* op = "cat";
  if (tensors.empty()) throw std::invalid_argument("cat: expected a non-empty list of tensors");
  // As in PyTorch, 1-D tensors of size 0 are skipped whatever the others' shapes (legacy behaviour
  // that code building a result by concatenating onto an empty tensor relies on).
  auto skipped = [](const Tensor& t) { return t.dim() == 1 && t.size(0) == 0; };
  DType dtype = tensors[0].dtype();
  int64_t ref = -1;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.dim() == 0) {
      throw std::invalid_argument("cat: zero-dimensional tensor (at position " + std::to_string(i) +
                                  ") cannot be concatenated");
    }
    if (t.device() != tensors[0].device()) {
      throw std::invalid_argument("cat: expected all tensors on the same device, got " + tensors[0].device().str() +
                                  " (tensor 0) and " + t.device().str() + " (tensor " + std::to_string(i) + ")");
    }
    dtype = promote_types(dtype, t.dtype());
    if (ref < 0 && !skipped(t)) ref = static_cast<int64_t>(i);
  }
  if (ref < 0) return empty({0}, TensorOptions(dtype).device(tensors[0].device()));
  const Tensor& first = tensors[ref];
  int64_t d = wrap_dim(dim, first.dim(), op);
  Shape out_shape = first.sizes();
  out_shape[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped(t)) continue;
    bool match = t.dim() == first.dim();
    for (int64_t k = 0; match && k < t.dim(); ++k) match = k == d || t.size(k) == first.size(k);
    if (!match) {
      throw std::invalid_argument("cat: sizes of tensors must match except in dimension " + std::to_string(d) +
                                  ": tensor " + std::to_string(ref) + " has shape " + shape_str(first.sizes()) +
                                  " and tensor " + std::to_string(i) + " has shape " + shape_str(t.sizes()));
    }
    out_shape[d] += t.size(d);
  }
  Tensor out = empty(out_shape, TensorOptions(dtype).device(first.device()));
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (skipped(t)) continue;
    Tensor slot = narrow(out, d, offset, t.size(d));
    copy_(slot, t);
    offset += t.size(d);
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) throw std::invalid_argument("stack: expected a non-empty list of tensors");
  for (size_t i = 1; i < tensors.size(); ++i) {
    if (tensors[i].sizes() != tensors[0].sizes()) {
      throw std::invalid_argument("stack: expects each tensor to be equal size, but got " +
                                  shape_str(tensors[0].sizes()) + " at entry 0 and " + shape_str(tensors[i].sizes()) +
                                  " at entry " + std::to_string(i));
    }
  }
  int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> expanded;
  expanded.reserve(tensors.size());
  for (const Tensor& t : tensors) expanded.push_back(unsqueeze(t, d));
  return cat(expanded, d);
}

std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim) {
  if (t.dim() == 0) throw std::invalid_argument("split: expected a tensor with at least 1 dimension, got a 0-D tensor");
  int64_t d = wrap_dim(dim, t.dim(), "split");
  int64_t size = t.size(d);
  if (split_size < 0) throw std::invalid_argument("split: split_size must be non-negative, got " + std::to_string(split_size));
  if (split_size == 0 && size != 0) {
    throw std::invalid_argument("split: split_size can only be 0 if dimension " + std::to_string(d) +
                                " has size 0, but it has size " + std::to_string(size));
  }
  int64_t pieces = split_size == 0 ? 1 : std::max<int64_t>(1, (size + split_size - 1) / split_size);
  std::vector<Tensor> out;
  out.reserve(pieces);
  for (int64_t i = 0; i < pieces; ++i) {
    int64_t start = i * split_size;
    out.push_back(narrow(t, d, start, std::min(split_size, size - start)));
  }
  return out;
}

std::vector<Tensor> split_with_sizes(const Tensor& t, const std::vector<int64_t>& sizes, int64_t dim) {
  if (t.dim() == 0) {
    throw std::invalid_argument("split_with_sizes: expected a tensor with at least 1 dimension, got a 0-D tensor");
  }
  int64_t d = wrap_dim(dim, t.dim(), "split_with_sizes");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) throw std::invalid_argument("split_with_sizes: split sizes must be non-negative, got " + list_str(sizes));
    total += s;
  }
  if (total != t.size(d)) {
    throw std::invalid_argument("split_with_sizes: split sizes " + list_str(sizes) + " must sum to " +
                                std::to_string(t.size(d)) + ", the size of dimension " + std::to_string(d) + " of " +
                                shape_str(t.sizes()) + " (they sum to " + std::to_string(total) + ")");
  }
  std::vector<Tensor> out;
  out.reserve(sizes.size());
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(narrow(t, d, start, s));
    start += s;
  }
  return out;
}

std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim) {
  if (t.dim() == 0) throw std::invalid_argument("chunk: expected a tensor with at least 1 dimension, got a 0-D tensor");
  if (chunks <= 0) throw std::invalid_argument("chunk: chunks must be greater than 0, got " + std::to_string(chunks));
  int64_t d = wrap_dim(dim, t.dim(), "chunk");
  int64_t size = t.size(d);
  int64_t split_size = (size + chunks - 1) / chunks;
  // An empty dim gives `chunks` empty pieces, as in PyTorch.
  if (split_size == 0) return split_with_sizes(t, std::vector<int64_t>(chunks, 0), d);
  return split(t, split_size, d);
}

}  // namespace colony::raw
