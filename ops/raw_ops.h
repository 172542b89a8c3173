// The raw ops (namespace colony::raw): one front function per op that checks devices, dtypes and
// shapes (and says what is wrong in words), allocates the result, and dispatches to kernels::cpu or
// kernels::cuda. Nothing here records autograd history, which is what the name says: a call to
// raw::relu(x) is never differentiable. Users call the differentiable API of autograd/ops.h
// (colony::relu), which wraps these.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "kernels/common/elementwise_functors.h"
#include "kernels/common/index.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

namespace colony::raw {

// ---------- creation (ops/factory.cc) ----------
Tensor empty(const Shape& shape, const TensorOptions& opts = {});
Tensor empty_strided(const Shape& shape, const Shape& strides, const TensorOptions& opts = {});
Tensor zeros(const Shape& shape, const TensorOptions& opts = {});
Tensor ones(const Shape& shape, const TensorOptions& opts = {});
Tensor full(const Shape& shape, double value, const TensorOptions& opts = {});
Tensor empty_like(const Tensor& t);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, double value);
Tensor scalar_tensor(double value, const TensorOptions& opts = {});
// [start, end) with step; int64 when all arguments are whole numbers and opts has no float dtype
// request, like torch.arange (pass a dtype in opts to choose).
Tensor arange(double start, double end, double step = 1.0, std::optional<TensorOptions> opts = {});
Tensor arange(double end, std::optional<TensorOptions> opts = {});
Tensor linspace(double start, double end, int64_t steps, const TensorOptions& opts = {});
Tensor eye(int64_t n, int64_t m = -1, const TensorOptions& opts = {});
// Copies the values; shape defaults to 1-D; dtype defaults to T's (int is int32).
template <typename T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape = {}, std::optional<TensorOptions> opts = {});
Tensor tensor(std::initializer_list<double> values, const TensorOptions& opts = {});
Tensor tensor(std::initializer_list<std::initializer_list<double>> rows, const TensorOptions& opts = {});
// Wraps existing memory without copying; `deleter` runs when the last view dies.
Tensor from_blob(void* data, const Shape& shape, DType dtype, Device device = kCPU,
                 std::function<void(void*)> deleter = {});
Tensor from_blob(void* data, const Shape& shape, const Shape& strides, DType dtype, Device device = kCPU,
                 std::function<void(void*)> deleter = {});

// ---------- window functions (ops/window_ops.cc) ----------
// torch.hann_window, hamming_window, blackman_window, bartlett_window and kaiser_window: 1-D, of
// window_length values, in opts' dtype (floating only) on its device. periodic = true gives the
// first window_length values of the symmetric window of window_length + 1 (for spectral analysis).
// Composed of arange and elementwise ops in the dtype, in ATen's order, so the values round as
// PyTorch's; kaiser computes in float32 for 16-bit dtypes, as ATen's kernel. (A 16-bit window can
// differ from torch's CPU one by a rounding step where a scalar is added: Colony's elementwise ops
// add the float32 scalar, torch's rounds it to the dtype first: blackman's 0.42.) A length of 0 gives an
// empty tensor, 1 gives [1]. opts.requires_grad is not applied here (colony:: does it).
Tensor hamming_window(int64_t window_length, bool periodic, double alpha, double beta, const TensorOptions& opts);
Tensor hann_window(int64_t window_length, bool periodic, const TensorOptions& opts);
Tensor blackman_window(int64_t window_length, bool periodic, const TensorOptions& opts);
Tensor bartlett_window(int64_t window_length, bool periodic, const TensorOptions& opts);
Tensor kaiser_window(int64_t window_length, bool periodic, double beta, const TensorOptions& opts);

// ---------- random (ops/random_ops.cc); gen = nullptr uses the default generator ----------
Tensor rand(const Shape& shape, const TensorOptions& opts = {}, Generator* gen = nullptr);
Tensor randn(const Shape& shape, const TensorOptions& opts = {}, Generator* gen = nullptr);
// Integers uniformly in [low, high); int64 by default.
Tensor randint(int64_t low, int64_t high, const Shape& shape, const TensorOptions& opts = TensorOptions(kInt64),
               Generator* gen = nullptr);
Tensor randperm(int64_t n, const TensorOptions& opts = TensorOptions(kInt64), Generator* gen = nullptr);
// Each element 1 with probability p (the input's values, a tensor of probabilities).
Tensor bernoulli(const Tensor& p, Generator* gen = nullptr);
void uniform_(Tensor& t, double from, double to, Generator* gen = nullptr);
void normal_(Tensor& t, double mean, double std, Generator* gen = nullptr);
void bernoulli_(Tensor& t, double p, Generator* gen = nullptr);
// torch's in-place fills, each a transform of 53-bit uniforms (or normals) from the same Philox
// stream, computed in float64 and rounded once into t's dtype: exponential (-log(1 - u) / lambd,
// lambd > 0), Cauchy (median + sigma tan(pi (u - 1/2)), sigma > 0) and log-normal (exp(mean + std z),
// std > 0) floating only; geometric (the trials up to the first success, p in (0, 1)) any dtype but
// bool; random_ the integers of [from, to) (to - 1 and from within the dtype; without bounds
// [0, 2^digits] for floating dtypes, [0, max] for integral ones), as torch's random_.
void exponential_(Tensor& t, double lambd, Generator* gen = nullptr);
void cauchy_(Tensor& t, double median, double sigma, Generator* gen = nullptr);
void log_normal_(Tensor& t, double mean, double std, Generator* gen = nullptr);
void geometric_(Tensor& t, double p, Generator* gen = nullptr);
void random_(Tensor& t, std::optional<double> from, std::optional<double> to, Generator* gen = nullptr);
// num_samples category indices (int64) per row of 1-D or 2-D non-negative weights, which need not
// sum to 1; without replacement, zero-weight categories come only after all others. Reads three
// numbers of the weights on the host to check them (a synchronization on CUDA).
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false, Generator* gen = nullptr);

// ---------- views (ops/view_ops.cc): share storage, no kernels ----------
Tensor as_strided(const Tensor& t, const Shape& sizes, const Shape& strides, int64_t offset);
Tensor view(const Tensor& t, const Shape& shape);
Tensor reshape(const Tensor& t, const Shape& shape);
Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& t, const std::vector<int64_t>& dims);
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);
Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor squeeze(const Tensor& t);
Tensor squeeze(const Tensor& t, int64_t dim);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor expand(const Tensor& t, const Shape& shape);
// torch.diagonal: the elements t[..., i, ..., i + offset, ...] of dims dim1 and dim2 (offset > 0
// above the main diagonal, < 0 below), those two dims removed and the diagonal appended last.
Tensor diagonal(const Tensor& t, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
// Tensor::unfold (torch's sliding-window view): dim replaced by the (size(dim) - size) / step + 1
// windows and a last dim of `size` holding each window's elements (strides: step * stride(dim),
// then stride(dim)); a 0-D tensor is read as [1]. torch's checks: "maximum size for tensor at
// dimension 0 is 10 but size is 11", "step is 0 but must be > 0", "size is -1 but must be >= 0".
Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step);
Tensor alias(const Tensor& t);  // a new handle to the same view (detach uses it)
// Shape with one -1 inferred; throws "view: shape [..] is invalid for input of size N".
Shape infer_size(const Shape& shape, int64_t numel, const char* op);

// ---------- copies and conversion (ops/copy.cc) ----------
// dst[...] = src broadcast to dst's shape, converting dtype; any devices.
void copy_(Tensor& dst, const Tensor& src);
Tensor contiguous(const Tensor& t);  // t itself when already contiguous
Tensor clone(const Tensor& t);       // always a new contiguous tensor
Tensor to(const Tensor& t, Device device, DType dtype, bool non_blocking = false);  // t itself if same
Tensor pin_memory(const Tensor& t);
void fill_(Tensor& t, double value);

// ---------- elementwise (ops/elementwise_ops.cc) ----------
// Binary ops broadcast and promote dtypes (promote_types); scalar operands keep the tensor's
// dtype, except an integral tensor with a non-integral scalar, which gives float32.
// The ops and their attributes are the lists of kernels/common/elementwise_functors.h.
using kernels::ActivationGrad;
using kernels::BinaryOp;
using kernels::ScatterOp;
using kernels::GeluApproximate;
using kernels::UnaryAttrs;
using kernels::UnaryOp;

// The dtype two operands promote to (torch.result_type): a zero-dim tensor decides only when of a
// higher category (bool < integral < floating) than the other; a scalar as the paragraph above.
DType result_type(const Tensor& a, const Tensor& b);
DType scalar_result_type(DType t, double s);

Tensor unary(UnaryOp op, const Tensor& t, const UnaryAttrs& attrs = {});
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
Tensor binary(BinaryOp op, const Tensor& a, double b);
Tensor binary(BinaryOp op, double a, const Tensor& b);
// In place: a op= b, b broadcast to a's shape, result cast to a's dtype.
void binary_(BinaryOp op, Tensor& a, const Tensor& b);
void binary_(BinaryOp op, Tensor& a, double b);

inline Tensor neg(const Tensor& t) { return unary(UnaryOp::Neg, t); }
inline Tensor abs(const Tensor& t) { return unary(UnaryOp::Abs, t); }
inline Tensor exp(const Tensor& t) { return unary(UnaryOp::Exp, t); }
inline Tensor log(const Tensor& t) { return unary(UnaryOp::Log, t); }
inline Tensor sqrt(const Tensor& t) { return unary(UnaryOp::Sqrt, t); }
inline Tensor rsqrt(const Tensor& t) { return unary(UnaryOp::Rsqrt, t); }
inline Tensor relu(const Tensor& t) { return unary(UnaryOp::Relu, t); }
inline Tensor sigmoid(const Tensor& t) { return unary(UnaryOp::Sigmoid, t); }
inline Tensor tanh(const Tensor& t) { return unary(UnaryOp::Tanh, t); }
inline Tensor erf(const Tensor& t) { return unary(UnaryOp::Erf, t); }
inline Tensor add(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Add, a, b); }
inline Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }
inline Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
inline Tensor div(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Div, a, b); }
inline Tensor add(const Tensor& a, double b) { return binary(BinaryOp::Add, a, b); }
inline Tensor mul(const Tensor& a, double b) { return binary(BinaryOp::Mul, a, b); }
inline Tensor pow(const Tensor& a, double b) { return binary(BinaryOp::Pow, a, b); }
inline Tensor pow(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Pow, a, b); }
inline Tensor maximum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Maximum, a, b); }
inline Tensor minimum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Minimum, a, b); }
// a + alpha * b
Tensor add(const Tensor& a, const Tensor& b, double alpha);
Tensor clamp(const Tensor& t, std::optional<double> min, std::optional<double> max);
// clamp's gradient in one pass: grad where min < x < max, 0 at the bounds, beyond them and at NaN
// (torch 2.15's). grad broadcasts to x's shape; both of one floating dtype.
Tensor clamp_backward(const Tensor& grad, const Tensor& x, std::optional<double> min, std::optional<double> max);
void clamp_(Tensor& t, std::optional<double> min, std::optional<double> max);
// cond ? a : b, all three broadcast; cond must be bool.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// t with value where mask (bool, broadcast with t) is true; value cast to t's dtype.
Tensor masked_fill(const Tensor& t, const Tensor& mask, double value);
// Gradients of the activations (COLONY_FOR_EACH_ACTIVATION), computed from the saved forward value
// the list names, by activation_grad_fn (one place for the math, shared with the CUDA kernels).
Tensor activation_backward(ActivationGrad op, const Tensor& grad, const Tensor& saved, const UnaryAttrs& attrs = {});
// The same written over grad (contiguous), for a caller that owns grad and is done with it.
void activation_backward_(ActivationGrad op, const Tensor& grad, const Tensor& saved, const UnaryAttrs& attrs = {});

// ---------- reductions (ops/reduce_ops.cc) ----------
// dims empty = all dims. Integral/bool inputs sum to int64, like PyTorch.
Tensor sum(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Variance with Bessel's correction when unbiased.
Tensor var(const Tensor& t, const std::vector<int64_t>& dims = {}, bool unbiased = true, bool keepdim = false);
// The 2-norm over dims, sqrt(sum(t^2)) with t read once (floating dtypes; the result in t's dtype).
Tensor vector_norm2(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amax(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// values and int64 indices (first occurrence of the extreme value)
std::pair<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& t, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& t, int64_t dim, bool keepdim = false);
// Sums `t` down to `shape` (the reverse of broadcasting); used by broadcasting ops' backward.
Tensor sum_to(const Tensor& t, const Shape& shape);

// ---------- linear algebra (ops/linalg_ops.cc) ----------
Tensor mm(const Tensor& a, const Tensor& b);    // [n,k] x [k,m]
Tensor bmm(const Tensor& a, const Tensor& b);   // [B,n,k] x [B,k,m]
Tensor matmul(const Tensor& a, const Tensor& b);  // torch.matmul rules (1-D, 2-D, batched, broadcast)
// out = beta * out + alpha * op(a) @ op(b) into an existing contiguous [n,m] tensor.
void addmm_(Tensor& out, const Tensor& a, const Tensor& b, double beta, double alpha);
// bias + a @ b with a 1-D bias [m] added to every row of the [n,m] product (torch.addmm(bias, a, b)),
// a linear layer's forward, all of one dtype and device: float32 and float64 as mm followed by
// adding the bias, to the bit, the CPU's large products adding it as they store (kernels/common/
// gemm.h, GemmBias); 16-bit types on the CPU round a @ b + bias once, as PyTorch's CPU linear gives
// it, a native bfloat16 product adding the bias in its output pass (kernels/cpu/gemm.h:
// gemm_bf16_bias), otherwise the bias rows copied into the output and the product added with beta = 1.
Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b);

// ---------- softmax family (ops/softmax_ops.cc) ----------
Tensor softmax(const Tensor& t, int64_t dim);
Tensor log_softmax(const Tensor& t, int64_t dim);
// grad_in = y * (g - sum(g * y, dim))
Tensor softmax_backward(const Tensor& grad, const Tensor& output, int64_t dim);
// grad_in = g - exp(y) * sum(g, dim)
Tensor log_softmax_backward(const Tensor& grad, const Tensor& output, int64_t dim);

// ---------- indexing and joining (ops/index_ops.cc) ----------
// index: int64/int32 of any shape; the result has t.shape[:dim] + index.shape + t.shape[dim+1:].
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index);
// out[i][j] = t[index[i][j]][j] for dim 0, etc.; index has t's rank.
Tensor gather(const Tensor& t, int64_t dim, const Tensor& index);
// out = zeros(shape) with out[index] += src along dim (gather's adjoint).
Tensor scatter_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src);
// A copy of self with each element src[p] combined into self[p with coordinate dim replaced by
// index[p]] (torch's scatter and scatter_reduce rules: index int64 with self's rank, no larger than
// src in any dim nor than self outside dim; src of self's dtype): Assign (of duplicates one wins),
// Sum, Prod, Max or Min (NaN wins).
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, ScatterOp reduce);
// The adjoint of index_select: zeros(shape) with rows of src added at index.
Tensor index_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src);
// The same added into out's own values in place: out[..., index[j], ...] += src[..., j, ...], each
// element's additions in index order (old + src[0] + src[1] + ... bit for bit, as torch's CPU
// index_add_ and index_put_ with accumulate; CUDA adds with atomics). out must be contiguous, of
// src's dtype and device; src has out's shape with dim of index's length.
Tensor& index_add_(Tensor& out, int64_t dim, const Tensor& index, const Tensor& src);
// int64 [..., num_classes]; num_classes = -1 uses max + 1.
Tensor one_hot(const Tensor& labels, int64_t num_classes = -1);
// torch.nonzero: int64 [n, t.dim()], the coordinates of the n nonzero elements (NaN is nonzero) in
// row-major order. The size depends on the values, so a CUDA tensor is read back to the host (a
// synchronization, as PyTorch's).
Tensor nonzero(const Tensor& t);
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& t, const std::vector<int64_t>& sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim = 0);

// ---------- triangles, scans, sorting ----------
// The lower (tril) or upper (triu) triangle of the last two dims, the rest zero; diagonal 0 is the
// main diagonal, positive above it, negative below (ops/triangle_ops.cc).
Tensor tril(const Tensor& t, int64_t diagonal = 0);
Tensor triu(const Tensor& t, int64_t diagonal = 0);
// Inclusive prefix sums along dim; integral and bool inputs sum to int64 (ops/cumsum_ops.cc).
// reverse: the sums from the end, y_i = sum_{j >= i} x_j, added in flip(cumsum(flip(x)))'s order.
Tensor cumsum(const Tensor& t, int64_t dim, bool reverse = false);
// The running product (integral and bool inputs multiply in int64), maximum and minimum (values of
// t's dtype and the int64 position each came from: the last of equal values, NaN once seen, as
// torch's), and log-sum-exp (floating inputs) along dim (ops/scan_ops.cc).
Tensor cumprod(const Tensor& t, int64_t dim);
std::pair<Tensor, Tensor> cummax(const Tensor& t, int64_t dim);
std::pair<Tensor, Tensor> cummin(const Tensor& t, int64_t dim);
Tensor logcumsumexp(const Tensor& t, int64_t dim);
// The gradient of cumprod(input, dim) for grad (input's shape): exact with zeros in the input.
Tensor cumprod_backward(const Tensor& grad, const Tensor& input, int64_t dim);
// Stable sort along dim: values and int64 positions; NaN sorts as the largest value, -0 equal to
// +0 (ops/sort_ops.cc).
std::pair<Tensor, Tensor> sort(const Tensor& t, int64_t dim = -1, bool descending = false);
// The k largest (or smallest) along dim, in sorted order whatever `sorted` says (which PyTorch
// allows); 0 <= k <= size.
std::pair<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
// torch.mode along dim, no gradient (ops/mode_ops.cc): the most frequent value of each row (of
// equally frequent ones the smallest; NaN equals nothing) and the int64 position of its last
// occurrence. dim must have a non-zero size.
std::pair<Tensor, Tensor> mode(const Tensor& t, int64_t dim = -1, bool keepdim = false);
// torch.median, nanmedian and kthvalue along dim, no gradient (ops/select_ops.cc): the selected
// value of each row and its int64 position, by an O(n) selection per row (kernels/common/select.h
// says which element is named among equal values, as torch's CPU names it); 0-d inputs are a row
// of one. Refuse bool inputs, and a reduction dim of size 0 (other dims may be empty).
std::pair<Tensor, Tensor> median(const Tensor& t, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> nanmedian(const Tensor& t, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, int64_t dim = -1, bool keepdim = false);
// median (nanmedian when ignore_nan) by a stable sort of each row: the path a CUDA median takes for
// fewer than 1024 rows (one thread per row would leave the GPU idle); on any device, so the CPU
// tests it against the selection. Same values and indices.
std::pair<Tensor, Tensor> median_by_sort(const Tensor& t, int64_t dim, bool keepdim, bool ignore_nan);
// torch.searchsorted (ops/search_ops.cc): for each value, its position in its row of sorted_sequence
// (1-D: one row for all values; N-D: the values' leading dims are the sequence's), the first
// boundary >= value (right: > value), through `sorter` (int64, the sequence's shape) when defined;
// both promoted to result_type, int64 positions (int32 when out_int32) of values' shape. A binary
// search per value, torch's (a NaN value lands after every boundary).
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32 = false, bool right = false,
                    const Tensor& sorter = Tensor());

// ---------- comparison helpers ----------
// True when shapes match and every element is within atol + rtol * |b| (NaNs equal when equal_nan).
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
bool equal(const Tensor& a, const Tensor& b);  // same shape and exactly the same values

}  // namespace colony::raw
