// Tensor: a cheap, shared handle to a strided view of a Storage, plus its autograd metadata.
//
// Layering: this header belongs to tensor/ and knows nothing of the ops or of autograd's graph
// types. Members that compute are declared here, so that code reads as in PyTorch, and defined in
// the layer that computes them; their sections say where:
//  - "defined in ops/...": item() (ops/copy.cc), str() and operator<< (ops/print.cc), and the raw
//    in-place writes (ops/tensor_inplace.cc), on the raw front functions of ops/raw_ops.h;
//  - "defined in autograd/...": the user-facing op API (autograd/tensor_methods.cc,
//    autograd/tensor_hooks.cc, ...), which calls those raw functions and records a graph node.
// The //tensor target provides neither: a program calling them links //ops or //autograd
// (tensor/BUILD). Code in tensor/ calls none of them.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "runtime/device.h"
#include "tensor/dtype.h"
#include "tensor/shape.h"
#include "tensor/storage.h"

namespace colony {

class Stream;

namespace autograd {
struct Node;
}

class Tensor;
struct AutogradMeta;

namespace indexing {
class TensorIndex;
}

class TensorImpl {
 public:
  TensorImpl(Storage storage, Shape sizes, Shape strides, int64_t offset, DType dtype);
  ~TensorImpl();

  Storage storage;
  Shape sizes;
  Shape strides;     // in elements
  int64_t offset;    // in elements
  DType dtype;
  std::unique_ptr<AutogradMeta> autograd;  // created on first use
};

// Options for factory functions: zeros({2, 3}, kFloat64), ones({4}, Device("cuda:0")),
// empty({8}, TensorOptions().dtype(kInt64).requires_grad(false)).
struct TensorOptions {
  TensorOptions() = default;
  TensorOptions(DType t) : dtype_(t) {}                      // NOLINT
  TensorOptions(Device d) : device_(d) {}                    // NOLINT
  TensorOptions(DeviceType d) : device_(Device(d)) {}        // NOLINT
  TensorOptions& dtype(DType t) { dtype_ = t; return *this; }
  TensorOptions& device(Device d) { device_ = d; return *this; }
  TensorOptions& requires_grad(bool r) { requires_grad_ = r; return *this; }
  TensorOptions& pinned_memory(bool p) { pinned_ = p; return *this; }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  bool requires_grad() const { return requires_grad_; }
  bool pinned_memory() const { return pinned_; }

 private:
  DType dtype_ = DType::Float32;
  Device device_ = Device(DeviceType::CPU);
  bool requires_grad_ = false;
  bool pinned_ = false;
};

using TensorHook = std::function<std::optional<Tensor>(const Tensor& grad)>;
using PostAccumulateGradHook = std::function<void(Tensor& leaf)>;

// The in-place elementwise members, one row each: X(member, function, derivative). self.member()
// (or member(other)) writes colony::function(self[, other]) into self, recorded by autograd/inplace.cc.
// `derivative` says what the out-of-place op's backward needs of self's value before the write, as
// torch's derivatives.yaml writes the formula: reads_self (a copy of it is kept: sin, log, mul's
// other), not_self (nothing, or the result: exp, sqrt, floor), zero (a zero gradient, torch's
// EqBackward for the comparisons) or not_implemented (a backward through it throws, as torch's).
#define COLONY_FOR_EACH_INPLACE_UNARY(X) \
  X(abs_, abs, reads_self)               \
  X(absolute_, abs, reads_self)          \
  X(negative_, neg, not_self)            \
  X(exp_, exp, not_self)                 \
  X(exp2_, exp2, not_self)               \
  X(expm1_, expm1, not_self)             \
  X(log_, log, reads_self)               \
  X(log2_, log2, reads_self)             \
  X(log10_, log10, reads_self)           \
  X(log1p_, log1p, reads_self)           \
  X(sqrt_, sqrt, not_self)               \
  X(rsqrt_, rsqrt, not_self)             \
  X(square_, square, reads_self)         \
  X(reciprocal_, reciprocal, not_self)   \
  X(relu_, relu, not_self)               \
  X(sigmoid_, sigmoid, not_self)         \
  X(tanh_, tanh, not_self)               \
  X(sin_, sin, reads_self)               \
  X(cos_, cos, reads_self)               \
  X(tan_, tan, not_self)                 \
  X(asin_, asin, reads_self)             \
  X(arcsin_, asin, reads_self)           \
  X(acos_, acos, reads_self)             \
  X(arccos_, acos, reads_self)           \
  X(atan_, atan, reads_self)             \
  X(arctan_, atan, reads_self)           \
  X(sinh_, sinh, reads_self)             \
  X(cosh_, cosh, reads_self)             \
  X(asinh_, asinh, reads_self)           \
  X(arcsinh_, asinh, reads_self)         \
  X(acosh_, acosh, reads_self)           \
  X(arccosh_, acosh, reads_self)         \
  X(atanh_, atanh, reads_self)           \
  X(arctanh_, atanh, reads_self)         \
  X(floor_, floor, not_self)             \
  X(ceil_, ceil, not_self)               \
  X(round_, round, not_self)             \
  X(trunc_, trunc, not_self)             \
  X(fix_, fix, not_self)                 \
  X(frac_, frac, not_self)               \
  X(sign_, sign, not_self)               \
  X(sgn_, sgn, not_self)                 \
  X(erf_, erf, reads_self)               \
  X(erfc_, erfc, reads_self)             \
  X(erfinv_, erfinv, not_self)           \
  X(lgamma_, lgamma, reads_self)         \
  X(digamma_, digamma, reads_self)       \
  X(i0_, i0, reads_self)                 \
  X(sinc_, sinc, reads_self)             \
  X(deg2rad_, deg2rad, not_self)         \
  X(rad2deg_, rad2deg, not_self)         \
  X(logical_not_, logical_not, not_self) \
  X(bitwise_not_, bitwise_not, not_self)

// self.member(other) with a tensor other (broadcast to self's shape).
#define COLONY_FOR_EACH_INPLACE_BINARY(X)      \
  X(atan2_, atan2, reads_self)                 \
  X(fmod_, fmod, reads_self)                   \
  X(remainder_, remainder, reads_self)         \
  X(floor_divide_, floor_divide, not_self)     \
  X(hypot_, hypot, reads_self)                 \
  X(copysign_, copysign, reads_self)           \
  X(xlogy_, xlogy, reads_self)                 \
  X(ldexp_, ldexp, reads_self)                 \
  X(gcd_, gcd, not_self)                       \
  X(lcm_, lcm, not_self)                       \
  X(heaviside_, heaviside, not_implemented)    \
  X(logical_and_, logical_and, not_self)       \
  X(logical_or_, logical_or, not_self)         \
  X(logical_xor_, logical_xor, not_self)       \
  X(bitwise_and_, bitwise_and, not_self)       \
  X(bitwise_or_, bitwise_or, not_self)         \
  X(bitwise_xor_, bitwise_xor, not_self)       \
  X(bitwise_left_shift_, bitwise_left_shift, not_self)   \
  X(bitwise_right_shift_, bitwise_right_shift, not_self) \
  X(nextafter_, nextafter, not_self)           \
  X(eq_, eq, zero)                             \
  X(ne_, ne, zero)                             \
  X(lt_, lt, zero)                             \
  X(le_, le, zero)                             \
  X(gt_, gt, zero)                             \
  X(ge_, ge, zero)

// self.member(other) with a number, where torch takes a Scalar.
#define COLONY_FOR_EACH_INPLACE_SCALAR(X)  \
  X(fmod_, fmod, not_self)                 \
  X(remainder_, remainder, not_self)       \
  X(floor_divide_, floor_divide, not_self) \
  X(copysign_, copysign, reads_self)       \
  X(xlogy_, xlogy, reads_self)             \
  X(bitwise_left_shift_, bitwise_left_shift, not_self)   \
  X(bitwise_right_shift_, bitwise_right_shift, not_self) \
  X(eq_, eq, zero)                         \
  X(ne_, ne, zero)                         \
  X(lt_, lt, zero)                         \
  X(le_, le, zero)                         \
  X(gt_, gt, zero)                         \
  X(ge_, ge, zero)

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  // True when both handles name the same TensorImpl (not equal values).
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  // ---- metadata (tensor/) ----
  const Shape& sizes() const;
  const Shape& shape() const { return sizes(); }
  int64_t size(int64_t dim) const;  // negative dims count from the end
  const Shape& strides() const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const;
  int64_t numel() const;
  int64_t storage_offset() const;
  DType dtype() const;
  Device device() const;
  bool is_cuda() const { return device().is_cuda(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_floating_point() const { return is_floating(dtype()); }
  // Whether the dtype holds negative values (torch.is_signed): the floating dtypes, int32, int64.
  bool is_signed() const { return is_floating(dtype()) || dtype() == DType::Int32 || dtype() == DType::Int64; }
  bool is_same_size(const Tensor& other) const { return sizes() == other.sizes(); }
  bool is_contiguous() const;
  int64_t element_size() const { return colony::element_size(dtype()); }
  int64_t nbytes() const { return numel() * element_size(); }
  const Storage& storage() const;
  uint32_t version() const;
  // Raw pointer to the first element (storage data + offset).
  void* data_ptr_raw() const;
  // Typed pointer; throws when T does not match dtype().
  template <typename T> T* data_ptr() const;
  // The single element of a one-element tensor, converted to T (copies from the GPU). Defined in
  // ops/copy.cc.
  template <typename T> T item() const;
  double item() const { return item<double>(); }
  // Whether the one element of a one-element tensor is nonzero (NaN is); torch's refusal otherwise
  // ("Boolean value of Tensor with more than one value is ambiguous"). Defined in ops/copy.cc.
  bool is_nonzero() const;
  std::string str() const;  // the operator<< text (defined in ops/print.cc)
  bool is_pinned() const;   // host memory the GPU can read asynchronously (pin_memory())
  // Tells the caching allocator that work queued on `stream` (not the stream the memory was
  // allocated on) uses this tensor's memory: when the tensor dies, the memory is reused only after
  // that work is done (torch.Tensor.record_stream). For CUDA tensors the stream must be on the
  // tensor's device; for pinned host tensors any CUDA stream (an asynchronous copy's); ordinary
  // host memory is never read asynchronously, so nothing is recorded, and neither is memory no
  // caching allocator owns (from_blob): its owner decides when it is freed.
  void record_stream(const Stream& stream) const;

  // ---- raw in-place writes (defined in ops/tensor_inplace.cc): bump the version; not recorded by autograd, so refused
  // while grad mode is on on any tensor that requires grad (ops/inplace_check.h) ----
  Tensor& copy_(const Tensor& src);  // broadcasts src, converts dtype, crosses devices
  Tensor& fill_(double value);
  Tensor& zero_();
  Tensor& uniform_(double from = 0.0, double to = 1.0);
  Tensor& normal_(double mean = 0.0, double std = 1.0);
  Tensor& bernoulli_(double p);
  Tensor& exponential_(double lambd = 1.0);
  Tensor& cauchy_(double median = 0.0, double sigma = 1.0);
  Tensor& log_normal_(double mean = 1.0, double std = 2.0);
  Tensor& geometric_(double p);
  Tensor& random_(int64_t from, std::optional<int64_t> to);  // [from, to); to = nullopt: as random_()
  Tensor& random_(int64_t to);                                // [0, to)
  Tensor& random_();                                          // [0, 2^digits] or [0, max] (raw::random_)
  // torch's resize_: these sizes from the same storage offset, contiguous strides (kept when the
  // sizes are unchanged). The storage keeps its bytes when it is big enough (shrinking, or the same
  // count); otherwise it grows in place (every tensor sharing it sees the new memory, the old values
  // copied, the new ones uninitialized). Refused on a tensor that requires grad, grad mode or not
  // ("cannot resize variables that require grad"), and when the storage must grow but is external
  // memory (from_blob: "Trying to resize storage that is not resizable"). Not recorded by autograd.
  Tensor& resize_(const Shape& sizes);
  Tensor& resize_as_(const Tensor& other) { return resize_(other.sizes()); }

  // ---- autograd metadata (tensor/) ----
  bool requires_grad() const;
  Tensor& requires_grad_(bool requires_grad = true);
  bool is_leaf() const;
  // The accumulated gradient of a leaf (undefined until a backward reaches it).
  Tensor grad() const;
  Tensor& mutable_grad();  // the .grad() slot itself (assignable, like PyTorch)
  void set_grad(const Tensor& g);
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  int64_t output_nr() const;

  // ---- autograd (defined in autograd/tensor_hooks.cc) ----
  // Backward from this tensor. Without `gradient` the tensor must hold one element. retain_graph
  // defaults to create_graph; create_graph records the gradients' own graph (autograd::backward).
  void backward(const Tensor& gradient = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  Tensor detach() const;                  // shares storage, no history
  void retain_grad() const;               // keep .grad() on a non-leaf
  // The hook sees the gradient w.r.t. this tensor and may return a replacement. Returns a handle
  // for remove_hook.
  int register_hook(TensorHook hook) const;
  void remove_hook(int handle) const;
  // Runs after the gradient has been accumulated into this leaf's .grad() (DDP's readiness signal).
  int register_post_accumulate_grad_hook(PostAccumulateGradHook hook) const;

  // ---- differentiable views and conversions (defined in autograd/tensor_methods.cc) ----
  Tensor view(const Shape& shape) const;       // one -1 allowed; needs compatible strides
  Tensor reshape(const Shape& shape) const;    // a view when possible, else a copy
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;                            // 2-D transpose
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  // libtorch's t[i]: select(0, i), a view (negative i counts from the end); t[index] with an int64,
  // int32 or bool tensor is t.index({index}) (defined in autograd/tensor_methods.cc).
  Tensor operator[](int64_t index) const;
  Tensor operator[](const Tensor& index) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor expand(const Shape& shape) const;     // -1 keeps a size
  Tensor expand_as(const Tensor& other) const { return expand(other.sizes()); }
  // torch.as_strided: these sizes and strides over the storage, from storage_offset (nullopt: this
  // tensor's); may reach storage elements this tensor does not cover.
  Tensor as_strided(const Shape& size, const Shape& stride, std::optional<int64_t> storage_offset = std::nullopt) const;
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor to(Device device, bool non_blocking = false) const;
  Tensor to(DType dtype) const;
  Tensor to(Device device, DType dtype, bool non_blocking = false) const;
  Tensor cpu() const { return to(kCPU); }
  Tensor cuda(int index = 0) const { return to(Device::cuda(index)); }
  Tensor pin_memory() const;                   // a copy in pinned host memory

  // ---- differentiable math (defined in autograd/tensor_methods.cc) ----
  Tensor neg() const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor pow(double exponent) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor clamp(std::optional<double> min, std::optional<double> max) const;
  Tensor relu() const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor erf() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor log1p() const;
  Tensor expm1() const;
  Tensor square() const;
  Tensor reciprocal() const;
  Tensor sign() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;
  Tensor round(int64_t decimals) const;  // torch.round(x, decimals=...)
  Tensor trunc() const;
  Tensor fix() const;
  Tensor frac() const;
  Tensor tan() const;
  Tensor asin() const;
  Tensor acos() const;
  Tensor atan() const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor asinh() const;
  Tensor acosh() const;
  Tensor atanh() const;
  Tensor log2() const;
  Tensor log10() const;
  Tensor exp2() const;
  Tensor erfc() const;
  Tensor erfinv() const;
  Tensor lgamma() const;
  Tensor digamma() const;
  Tensor polygamma(int64_t n) const;  // torch's x.polygamma(n): polygamma(n, x)
  Tensor logit(std::optional<double> eps = std::nullopt) const;
  Tensor sinc() const;
  Tensor i0() const;
  Tensor atan2(const Tensor& other) const;
  Tensor fmod(const Tensor& other) const;
  Tensor fmod(double other) const;
  Tensor remainder(const Tensor& other) const;
  Tensor remainder(double other) const;
  Tensor floor_divide(const Tensor& other) const;
  Tensor floor_divide(double other) const;
  Tensor hypot(const Tensor& other) const;
  Tensor copysign(const Tensor& other) const;
  Tensor copysign(double other) const;
  Tensor xlogy(const Tensor& other) const;
  Tensor xlogy(double other) const;
  Tensor logaddexp(const Tensor& other) const;
  Tensor logaddexp2(const Tensor& other) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor masked_fill(const Tensor& mask, double value) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;  // value 0-D, as torch's
  Tensor cumsum(int64_t dim) const;
  Tensor cumprod(int64_t dim) const;
  std::pair<Tensor, Tensor> cummax(int64_t dim) const;  // values, int64 indices
  std::pair<Tensor, Tensor> cummin(int64_t dim) const;
  Tensor logcumsumexp(int64_t dim) const;
  Tensor prod() const;
  Tensor prod(int64_t dim, bool keepdim = false) const;
  // Order statistics (autograd/order_stats.cc): values differentiable, int64 indices not.
  Tensor median() const;
  std::pair<Tensor, Tensor> median(int64_t dim, bool keepdim = false) const;
  Tensor nanmedian() const;
  std::pair<Tensor, Tensor> nanmedian(int64_t dim, bool keepdim = false) const;
  std::pair<Tensor, Tensor> kthvalue(int64_t k, int64_t dim = -1, bool keepdim = false) const;
  Tensor quantile(double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                  const std::string& interpolation = "linear") const;
  Tensor quantile(const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                  const std::string& interpolation = "linear") const;
  Tensor nanquantile(double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                     const std::string& interpolation = "linear") const;
  Tensor nanquantile(const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                     const std::string& interpolation = "linear") const;
  Tensor nansum(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Tensor nanmean(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  // scatter and friends (autograd/scatter.cc), bincount and histc (autograd/unique.cc)
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int64_t dim, const Tensor& index, double value) const;
  Tensor scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                        bool include_self = true) const;
  Tensor index_fill(int64_t dim, const Tensor& index, double value) const;
  Tensor index_fill(int64_t dim, const Tensor& index, const Tensor& value) const;  // value 0-D
  Tensor index_copy(int64_t dim, const Tensor& index, const Tensor& source) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source, double alpha = 1.0) const;
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;
  Tensor bincount(const Tensor& weights = Tensor(), int64_t minlength = 0) const;
  Tensor histc(int64_t bins = 100, double min = 0, double max = 0) const;
  std::pair<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;  // values, int64 indices
  std::pair<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  Tensor sum() const;
  Tensor sum(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(const std::vector<int64_t>& dims, bool keepdim = false) const;
  // dims empty (the default): every element, torch's x.var() / x.std().
  Tensor var(const std::vector<int64_t>& dims = {}, bool unbiased = true, bool keepdim = false) const;
  Tensor std(const std::vector<int64_t>& dims = {}, bool unbiased = true, bool keepdim = false) const;
  Tensor norm(double p = 2.0, const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  // torch.dist / Tensor.dist: the p-norm of *this - other (broadcast), p as linalg::vector_norm
  // takes it (0, inf, -inf too); float32 under autocast (autograd/compose_more.cc). A member only:
  // colony::dist is the distributed namespace.
  Tensor dist(const Tensor& other, double p = 2.0) const;
  Tensor max() const;
  Tensor min() const;
  std::pair<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;  // values, indices
  std::pair<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor amax(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Tensor amin(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Tensor logsumexp(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor argmax(int64_t dim, bool keepdim = false) const;                 // not differentiable
  Tensor argmin(int64_t dim, bool keepdim = false) const;                 // not differentiable
  // torch's argmax() / argmin() with dim=None: the position in the flattened tensor (0-d int64;
  // the first of equal values).
  Tensor argmax() const;
  Tensor argmin() const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;       // not differentiable
  // bool results, not differentiable
  Tensor any(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Tensor all(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor bmm(const Tensor& other) const;
  Tensor outer(const Tensor& other) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor nonzero() const;
  Tensor masked_select(const Tensor& mask) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split_with_sizes(const std::vector<int64_t>& sizes, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  Tensor repeat(const Shape& repeats) const;
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt) const;
  Tensor flip(const std::vector<int64_t>& dims) const;
  Tensor roll(const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims = {}) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor movedim(int64_t source, int64_t destination) const;
  Tensor unflatten(int64_t dim, const Shape& sizes) const;
  Tensor view_as(const Tensor& other) const { return view(other.sizes()); }
  Tensor type_as(const Tensor& other) const { return to(other.dtype()); }
  Tensor lerp(const Tensor& end, double weight) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor addcmul(const Tensor& tensor1, const Tensor& tensor2, double value = 1.0) const;
  Tensor addcdiv(const Tensor& tensor1, const Tensor& tensor2, double value = 1.0) const;
  Tensor nan_to_num(std::optional<double> nan = 0.0, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt) const;
  Tensor count_nonzero(const std::vector<int64_t>& dims = {}) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  // torch's Tensor.unfold: the windows of `size` elements `step` apart along dim, a view whose
  // last dim is the window (autograd/views.cc; not F::unfold, which is im2col).
  Tensor unfold(int64_t dim, int64_t size, int64_t step) const;
  Tensor diag(int64_t diagonal = 0) const;
  Tensor trace() const;
  Tensor logical_not() const;
  Tensor logical_and(const Tensor& other) const;
  Tensor logical_or(const Tensor& other) const;
  Tensor logical_xor(const Tensor& other) const;
  Tensor bitwise_left_shift(const Tensor& other) const;
  Tensor bitwise_left_shift(double other) const;
  Tensor bitwise_right_shift(const Tensor& other) const;
  Tensor bitwise_right_shift(double other) const;
  Tensor nextafter(const Tensor& other) const;
  std::pair<Tensor, Tensor> frexp() const;  // mantissa, int32 exponent
  // The composed ops of autograd/composed_ops.h as members (defined in autograd/composed_methods.cc).
  Tensor tile(const Shape& dims) const;
  Tensor broadcast_to(const Shape& shape) const;
  Tensor reshape_as(const Tensor& other) const { return reshape(other.sizes()); }
  Tensor swapaxes(int64_t axis0, int64_t axis1) const { return transpose(axis0, axis1); }
  Tensor swapdims(int64_t dim0, int64_t dim1) const { return transpose(dim0, dim1); }
  std::vector<Tensor> tensor_split(int64_t sections, int64_t dim = 0) const;
  std::vector<Tensor> tensor_split(const std::vector<int64_t>& indices, int64_t dim = 0) const;
  Tensor fliplr() const;
  Tensor flipud() const;
  Tensor rot90(int64_t k = 1, const std::vector<int64_t>& dims = {0, 1}) const;
  Tensor take_along_dim(const Tensor& indices, std::optional<int64_t> dim = std::nullopt) const;
  Tensor argwhere() const;
  Tensor diag_embed(int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1) const;
  Tensor msort() const;
  Tensor isclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  Tensor diff(int64_t n = 1, int64_t dim = -1, const Tensor& prepend = Tensor(), const Tensor& append = Tensor()) const;
  std::pair<Tensor, Tensor> aminmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor kron(const Tensor& other) const;
  Tensor dot(const Tensor& other) const;
  Tensor vdot(const Tensor& other) const;
  Tensor inner(const Tensor& other) const;
  Tensor mv(const Tensor& vec) const;
  Tensor addmm(const Tensor& mat1, const Tensor& mat2, double beta = 1.0, double alpha = 1.0) const;
  Tensor addmv(const Tensor& mat, const Tensor& vec, double beta = 1.0, double alpha = 1.0) const;
  Tensor addr(const Tensor& vec1, const Tensor& vec2, double beta = 1.0, double alpha = 1.0) const;
  Tensor baddbmm(const Tensor& batch1, const Tensor& batch2, double beta = 1.0, double alpha = 1.0) const;
  Tensor addbmm(const Tensor& batch1, const Tensor& batch2, double beta = 1.0, double alpha = 1.0) const;
  Tensor sgn() const;
  Tensor signbit() const;
  Tensor heaviside(const Tensor& values) const;
  Tensor float_power(const Tensor& exponent) const;
  Tensor float_power(double exponent) const;
  Tensor clamp_min(double min) const;
  Tensor clamp_max(double max) const;
  Tensor cov(int64_t correction = 1, const Tensor& fweights = Tensor(), const Tensor& aweights = Tensor()) const;
  Tensor corrcoef() const;
  // New tensors with this one's dtype and device (torch's new_* members).
  Tensor new_zeros(const Shape& shape) const;
  Tensor new_ones(const Shape& shape) const;
  Tensor new_full(const Shape& shape, double value) const;
  Tensor new_empty(const Shape& shape) const;

  // ---- indexing as libtorch writes it (defined in autograd/indexing.cc) ----
  // using namespace colony::indexing;  x.index({0, Slice(1, None), None, Ellipsis, idx})
  // Integers select (negative count from the end), Slice(start, stop, step) narrows with Python's
  // bounds (clamped, step > 0), None inserts a dim of size 1, Ellipsis stands for the dims not
  // named, and one int64/int32 index tensor gathers along its dim (its shape replaces the dim's);
  // a bool mask (x.index({x > 0})) covers as many dims as it has and selects its true elements,
  // as torch's x[mask]. Without an index tensor the result is a view; with one, a copy.
  // Differentiable either way.
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  // x[indices] = value (value broadcast to the indexed shape and cast to x's dtype), recorded by
  // autograd as the in-place ops below are. With an index tensor, a row it names twice keeps the
  // last write, as torch's CPU result (torch leaves which write wins unspecified); only that write
  // receives a gradient.
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value);
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, double value);
  // accumulate = true adds value into the indexed elements (duplicates of an index each add), as
  // torch's index_put_(indices, values, accumulate=True).
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value, bool accumulate);

  // ---- in-place scatter and indexing (defined in autograd/scatter_inplace.cc) ----
  // torch's members, recorded by autograd as the in-place math below; the results are those of the
  // out-of-place ops (colony::scatter, scatter_reduce, index_fill, index_copy, index_add,
  // masked_fill, masked_scatter), written into this tensor, whose shape they must keep.
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor& scatter_(int64_t dim, const Tensor& index, double value);
  // reduce "add" or "multiply" (scatter_reduce's "sum" and "prod" with include_self); no gradient,
  // as torch's: refused when one would be recorded.
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce);
  Tensor& scatter_(int64_t dim, const Tensor& index, double value, const std::string& reduce);
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor& scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                          bool include_self = true);
  Tensor& index_fill_(int64_t dim, const Tensor& index, double value);
  Tensor& index_fill_(int64_t dim, const Tensor& index, const Tensor& value);  // value 0-D
  Tensor& index_copy_(int64_t dim, const Tensor& index, const Tensor& source);
  Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& source, double alpha = 1.0);
  Tensor& masked_fill_(const Tensor& mask, double value);
  Tensor& masked_fill_(const Tensor& mask, const Tensor& value);  // value 0-D
  Tensor& masked_scatter_(const Tensor& mask, const Tensor& source);

  // ---- in-place views (defined in autograd/inplace_view.cc) ----
  // This tensor takes the sizes, strides and offset of the out-of-place view of itself (x.t_() is
  // x = x.t() on the same handle: every copy of the handle sees it; views of it keep theirs) and
  // bumps the version counter, as torch's. Recorded as torch records them: the view's backward
  // (TransposeBackward, SqueezeBackward, ...) becomes this tensor's history, on top of the old one.
  // Refused on a leaf that requires grad and on a view of one, while grad mode is on.
  Tensor& t_();                                  // <= 2-D
  Tensor& transpose_(int64_t dim0, int64_t dim1);
  Tensor& swapdims_(int64_t dim0, int64_t dim1) { return transpose_(dim0, dim1); }
  Tensor& swapaxes_(int64_t axis0, int64_t axis1) { return transpose_(axis0, axis1); }
  Tensor& squeeze_();                            // every dim of size 1
  Tensor& squeeze_(int64_t dim);                 // a no-op (still recorded) when that dim's size is not 1
  Tensor& unsqueeze_(int64_t dim);
  Tensor& as_strided_(const Shape& size, const Shape& stride, std::optional<int64_t> storage_offset = std::nullopt);

  // ---- differentiable in-place math (defined in autograd/inplace.cc) ----
  // Recorded as in PyTorch: the write rebases this tensor's history (through a view, its base's)
  // onto a new node. Refused on a leaf that requires grad, and on a view of one, while grad mode is
  // on (write into parameters under NoGradGuard).
  Tensor& add_(const Tensor& other, double alpha = 1.0);
  Tensor& add_(double value);
  Tensor& sub_(const Tensor& other, double alpha = 1.0);
  Tensor& sub_(double value);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(double value);
  Tensor& div_(const Tensor& other);
  Tensor& div_(double value);
  Tensor& pow_(double exponent);
  Tensor& clamp_(std::optional<double> min, std::optional<double> max);
  Tensor& clamp_min_(double min) { return clamp_(min, std::nullopt); }
  Tensor& clamp_max_(double max) { return clamp_(std::nullopt, max); }
  Tensor& neg_();
  // The in-place forms of the elementwise ops, one row each (COLONY_FOR_EACH_INPLACE_* below):
  // self.sin_() writes colony::sin(self) into self, with the out-of-place op's values, dtype
  // promotion and derivative. A result self's dtype cannot hold is refused as in PyTorch
  // (int64.sin_(): "result type Float can't be cast to the desired output type Long").
#define COLONY_DECLARE_INPLACE_UNARY(member, fn, derivative) Tensor& member();
  COLONY_FOR_EACH_INPLACE_UNARY(COLONY_DECLARE_INPLACE_UNARY)
#undef COLONY_DECLARE_INPLACE_UNARY
#define COLONY_DECLARE_INPLACE_BINARY(member, fn, derivative) Tensor& member(const Tensor& other);
  COLONY_FOR_EACH_INPLACE_BINARY(COLONY_DECLARE_INPLACE_BINARY)
#undef COLONY_DECLARE_INPLACE_BINARY
#define COLONY_DECLARE_INPLACE_SCALAR(member, fn, derivative) Tensor& member(double other);
  COLONY_FOR_EACH_INPLACE_SCALAR(COLONY_DECLARE_INPLACE_SCALAR)
#undef COLONY_DECLARE_INPLACE_SCALAR
  Tensor& pow_(const Tensor& exponent);
  // torch.float_power_: self must be float64 (the result's dtype), else refused as torch's.
  Tensor& float_power_(const Tensor& exponent);
  Tensor& float_power_(double exponent);
  Tensor& logit_(std::optional<double> eps = std::nullopt);
  Tensor& polygamma_(int64_t n);  // torch's x.polygamma_(n): polygamma(n, x) written into x
  Tensor& nan_to_num_(std::optional<double> nan = 0.0, std::optional<double> posinf = std::nullopt,
                      std::optional<double> neginf = std::nullopt);
  Tensor& lerp_(const Tensor& end, double weight);
  Tensor& lerp_(const Tensor& end, const Tensor& weight);
  Tensor& addcmul_(const Tensor& tensor1, const Tensor& tensor2, double value = 1.0);
  Tensor& addcdiv_(const Tensor& tensor1, const Tensor& tensor2, double value = 1.0);
  Tensor& cumsum_(int64_t dim);
  Tensor& cumprod_(int64_t dim);
  Tensor& tril_(int64_t diagonal = 0);
  Tensor& triu_(int64_t diagonal = 0);
  // torch's fill_diagonal_: the main diagonal of a 2-D tensor, or of an N-D one whose dims are all
  // equal, set to value; with wrap, a tall matrix's diagonal starts again every cols + 1 rows.
  Tensor& fill_diagonal_(double value, bool wrap = false);
  // torch's aliases.
  Tensor& clip_(std::optional<double> min, std::optional<double> max) { return clamp_(min, max); }
  Tensor& multiply_(const Tensor& other) { return mul_(other); }
  Tensor& multiply_(double other) { return mul_(other); }
  Tensor& divide_(const Tensor& other) { return div_(other); }
  Tensor& divide_(double other) { return div_(other); }
  // torch's rounding_mode: "trunc" or "floor" (colony::div(a, b, rounding_mode)); nullopt is div_.
  Tensor& div_(const Tensor& other, const std::optional<std::string>& rounding_mode);
  Tensor& div_(double other, const std::optional<std::string>& rounding_mode);
  Tensor& divide_(const Tensor& other, const std::optional<std::string>& rounding_mode) { return div_(other, rounding_mode); }
  Tensor& divide_(double other, const std::optional<std::string>& rounding_mode) { return div_(other, rounding_mode); }
  Tensor& round_(int64_t decimals);  // torch's round_(decimals=...)
  Tensor& true_divide_(const Tensor& other) { return div_(other); }
  Tensor& true_divide_(double other) { return div_(other); }
  Tensor& subtract_(const Tensor& other, double alpha = 1.0) { return sub_(other, alpha); }
  Tensor& subtract_(double other) { return sub_(other); }
  Tensor& arctan2_(const Tensor& other) { return atan2_(other); }
  Tensor& greater_(const Tensor& other) { return gt_(other); }
  Tensor& greater_(double other) { return gt_(other); }
  Tensor& greater_equal_(const Tensor& other) { return ge_(other); }
  Tensor& greater_equal_(double other) { return ge_(other); }
  Tensor& less_(const Tensor& other) { return lt_(other); }
  Tensor& less_(double other) { return lt_(other); }
  Tensor& less_equal_(const Tensor& other) { return le_(other); }
  Tensor& less_equal_(double other) { return le_(other); }
  Tensor& not_equal_(const Tensor& other) { return ne_(other); }
  Tensor& not_equal_(double other) { return ne_(other); }
  // The same as the member functions, spelt as operators: x += y records like x.add_(y).
  Tensor& operator+=(const Tensor& other) { return add_(other); }
  Tensor& operator-=(const Tensor& other) { return sub_(other); }
  Tensor& operator*=(const Tensor& other) { return mul_(other); }
  Tensor& operator/=(const Tensor& other) { return div_(other); }
  Tensor& operator+=(double v) { return add_(v); }
  Tensor& operator-=(double v) { return sub_(v); }
  Tensor& operator*=(double v) { return mul_(v); }
  Tensor& operator/=(double v) { return div_(v); }

 private:
  AutogradMeta& meta() const;
  std::shared_ptr<TensorImpl> impl_;
  friend struct AutogradMetaAccess;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);  // defined in ops/print.cc

// The index types of Tensor::index, named as libtorch's torch::indexing names them.
namespace indexing {

// Python's start:stop:step; an absent bound is the dim's start or end, an absent step 1.
struct Slice {
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,  // NOLINT
        std::optional<int64_t> step = std::nullopt)
      : start(start), stop(stop), step(step) {}
  std::optional<int64_t> start, stop, step;
};

struct EllipsisIndexType {};
inline constexpr EllipsisIndexType Ellipsis{};
// A new dim of size 1 as an index; an absent bound as a Slice argument: Slice(None, 3).
inline constexpr std::nullopt_t None = std::nullopt;

class TensorIndex {
 public:
  enum class Kind { Integer, Slice, None, Ellipsis, Tensor };
  TensorIndex(int64_t i) : kind_(Kind::Integer), integer_(i) {}  // NOLINT: implicit, as in libtorch
  TensorIndex(int i) : TensorIndex(static_cast<int64_t>(i)) {}  // NOLINT
  TensorIndex(bool) = delete;  // a bool is not a position (PyTorch reads it as a mask, which Colony does not)
  TensorIndex(Slice s) : kind_(Kind::Slice), slice_(s) {}  // NOLINT
  TensorIndex(std::nullopt_t) : kind_(Kind::None) {}  // NOLINT
  TensorIndex(EllipsisIndexType) : kind_(Kind::Ellipsis) {}  // NOLINT
  TensorIndex(const char* s);  // NOLINT: "..." as libtorch accepts it; anything else throws
  TensorIndex(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}  // NOLINT

  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  const indexing::Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  indexing::Slice slice_;
  Tensor tensor_;
};

}  // namespace indexing

// Autograd state of one tensor. Lives here so Tensor can hold it; only autograd/ interprets it.
struct AutogradMeta {
  bool requires_grad = false;
  bool retains_grad = false;
  Tensor grad;  // undefined until a backward reaches this leaf
  std::shared_ptr<autograd::Node> grad_fn;  // null for leaves
  int64_t output_nr = 0;
  std::weak_ptr<autograd::Node> grad_accumulator;  // leaves: the AccumulateGrad node, reused
  std::vector<std::pair<int, TensorHook>> hooks;
  std::vector<std::pair<int, PostAccumulateGradHook>> post_accumulate_hooks;
  int next_hook_id = 0;
  // Differentiable views (autograd/views.cc, with grad mode on): the tensor viewed (the root: a view
  // of a view names the first base), so an in-place write through the view rebases the base's
  // history; the storage version at which grad_fn was last derived from the base's history (a write
  // to the base since makes autograd derive it again); and whether the view is one of several
  // outputs (split, chunk), through which in-place writes are refused as in PyTorch.
  Tensor view_base;
  uint32_t view_version = 0;
  bool multi_output_view = false;
};

// Lets autograd/ reach a tensor's metadata without making it public API.
struct AutogradMetaAccess {
  static AutogradMeta& get(const Tensor& t) { return t.meta(); }
  static bool has(const Tensor& t) { return t.impl() && t.impl()->autograd != nullptr; }
};

}  // namespace colony
