// The shape and math ops of autograd/compose_shape.cc and compose_math.cc: torch's functions of the
// same names, composed of other differentiable ops, so their gradients come from those. Included by
// autograd/ops.h; users include that (or colony.h).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace colony {

// ---------- shapes (autograd/compose_shape.cc) ----------
// torch.tile: repeat with too few reps padded by ones in front.
Tensor tile(const Tensor& t, const Shape& dims);
// torch.broadcast_to (an expand view; -1 keeps a size), broadcast_tensors (each expanded to the
// common shape) and broadcast_shapes.
Tensor broadcast_to(const Tensor& t, const Shape& shape);
std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors);
Shape broadcast_shapes(const std::vector<Shape>& shapes);
// torch.swapaxes / swapdims: transpose under numpy's names.
Tensor swapaxes(const Tensor& t, int64_t axis0, int64_t axis1);
Tensor swapdims(const Tensor& t, int64_t dim0, int64_t dim1);
// torch.tensor_split: `sections` pieces (the first size % sections one element longer), or pieces
// cut at `indices` (Python slice rules: negative from the end, clamped, possibly empty). Views.
std::vector<Tensor> tensor_split(const Tensor& t, int64_t sections, int64_t dim = 0);
std::vector<Tensor> tensor_split(const Tensor& t, const std::vector<int64_t>& indices, int64_t dim = 0);
// torch.hsplit (dim 1, or 0 for 1-D), vsplit (dim 0, >= 2-D), dsplit (dim 2, >= 3-D): an int must
// divide the dim.
std::vector<Tensor> hsplit(const Tensor& t, int64_t sections);
std::vector<Tensor> hsplit(const Tensor& t, const std::vector<int64_t>& indices);
std::vector<Tensor> vsplit(const Tensor& t, int64_t sections);
std::vector<Tensor> vsplit(const Tensor& t, const std::vector<int64_t>& indices);
std::vector<Tensor> dsplit(const Tensor& t, int64_t sections);
std::vector<Tensor> dsplit(const Tensor& t, const std::vector<int64_t>& indices);
// torch.atleast_1d/2d/3d ([n] -> [1, n] -> [1, n, 1]; [m, n] -> [m, n, 1]), views.
Tensor atleast_1d(const Tensor& t);
Tensor atleast_2d(const Tensor& t);
Tensor atleast_3d(const Tensor& t);
// torch.hstack (1-D end to end, else dim 1), vstack/row_stack (as 2-D, dim 0), dstack (as 3-D,
// dim 2), column_stack (0-D and 1-D as columns [n, 1], then dim 1).
Tensor hstack(const std::vector<Tensor>& tensors);
Tensor vstack(const std::vector<Tensor>& tensors);
Tensor row_stack(const std::vector<Tensor>& tensors);
Tensor dstack(const std::vector<Tensor>& tensors);
Tensor column_stack(const std::vector<Tensor>& tensors);
// torch.fliplr (dim 1, >= 2-D) and flipud (dim 0, >= 1-D).
Tensor fliplr(const Tensor& t);
Tensor flipud(const Tensor& t);
// torch.rot90: k quarter turns from dims[0] towards dims[1] (negative k turns back).
Tensor rot90(const Tensor& t, int64_t k = 1, const std::vector<int64_t>& dims = {0, 1});
// torch.take_along_dim: gather along dim after broadcasting t and the int64 indices in the other
// dims; without dim, of the flattened tensors.
Tensor take_along_dim(const Tensor& t, const Tensor& indices, std::optional<int64_t> dim = std::nullopt);
// torch.argwhere: nonzero's [count, dims] int64 positions.
Tensor argwhere(const Tensor& t);
// torch.diag_embed: t's last dim on the offset diagonal of the (dim1, dim2) planes of a new tensor
// with one more dim.
Tensor diag_embed(const Tensor& t, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
// torch.cartesian_prod of 1-D tensors: [product of sizes, count] rows in lexicographic order (one
// tensor: itself).
Tensor cartesian_prod(const std::vector<Tensor>& tensors);
// torch.combinations of a 1-D tensor: every r-element combination as a row, in itertools' order
// (with_replacement: elements may repeat); r = 0 gives an empty 1-D tensor.
Tensor combinations(const Tensor& t, int64_t r = 2, bool with_replacement = false);
// torch.msort: sorted along dim 0.
Tensor msort(const Tensor& t);
// torch.tril_indices / triu_indices: the [2, count] (row, col) positions of the lower (col - row <=
// offset) or upper (col - row >= offset) triangle of a row x col matrix, row-major; int64 or int32.
Tensor tril_indices(int64_t row, int64_t col, int64_t offset = 0, const TensorOptions& opts = TensorOptions(kInt64));
Tensor triu_indices(int64_t row, int64_t col, int64_t offset = 0, const TensorOptions& opts = TensorOptions(kInt64));

// ---------- math (autograd/compose_math.cc) ----------
// torch.isclose: |a - b| <= atol + rtol |b| between finite values, or equal (infinities of one
// sign), or both NaN with equal_nan; bool, never differentiable. a and b must share a dtype.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
// torch.diff: the n-th forward difference along dim after prepend/append are joined on (xor for
// bool); n at or beyond the length gives an empty dim.
Tensor diff(const Tensor& t, int64_t n = 1, int64_t dim = -1, const Tensor& prepend = Tensor(),
            const Tensor& append = Tensor());
// torch.aminmax: (amin, amax) over all elements or one dim; refuses an empty reduction.
std::pair<Tensor, Tensor> aminmax(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// torch.std_mean / var_mean: (std or var, mean) with std/var's arguments.
std::pair<Tensor, Tensor> std_mean(const Tensor& t, const std::vector<int64_t>& dims = {}, bool unbiased = true,
                                   bool keepdim = false);
std::pair<Tensor, Tensor> var_mean(const Tensor& t, const std::vector<int64_t>& dims = {}, bool unbiased = true,
                                   bool keepdim = false);
// torch.kron: the Kronecker product (ranks padded with leading ones).
Tensor kron(const Tensor& a, const Tensor& b);
// torch.cdist: p-norm distances between the rows of x1 [..., P, M] and x2 [..., R, M] -> [..., P, R]
// (batch dims broadcast). p = 2 with more than 25 rows on either side (or compute_mode
// "use_mm_for_euclid_dist") uses torch's matrix-product form, sqrt(max(|a|^2 + |b|^2 - 2 a.b, 1e-30));
// otherwise every pair's difference is formed ([..., P, R, M] memory). Gradients as torch's: 0 at a
// zero distance, the whole gradient to each coordinate tied at the largest for p = inf.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0,
             const std::string& compute_mode = "use_mm_for_euclid_dist_if_necessary");
// torch.pdist: the p-norm distance of every pair of rows i < j of t [N, M], row-major: [N (N - 1) / 2].
Tensor pdist(const Tensor& t, double p = 2.0);
// torch.dot / vdot (1-D, same size and dtype), inner (over the last dims; a 0-D side multiplies),
// mv (matrix [n, m] times vector [m]).
Tensor dot(const Tensor& a, const Tensor& b);
Tensor vdot(const Tensor& a, const Tensor& b);
Tensor inner(const Tensor& a, const Tensor& b);
Tensor mv(const Tensor& mat, const Tensor& vec);
// torch.sgn (sign, for real tensors), signbit (bool: the sign bit, so -0.0 and -NaN too), heaviside
// (0 below zero, values at zero, 1 above; input and values share a dtype; not differentiable, as
// torch's backward refuses it).
Tensor sgn(const Tensor& t);
Tensor signbit(const Tensor& t);
Tensor heaviside(const Tensor& input, const Tensor& values);
// torch.float_power: pow computed in float64.
Tensor float_power(const Tensor& a, const Tensor& b);
Tensor float_power(const Tensor& a, double exponent);
Tensor float_power(double base, const Tensor& exponent);
// torch.trapezoid / cumulative_trapezoid: the trapezoidal rule along dim with spacing dx or sample
// points x (1-D along dim, or broadcasting with y); integers integrate in float32.
Tensor trapezoid(const Tensor& y, double dx = 1.0, int64_t dim = -1);
Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);
Tensor cumulative_trapezoid(const Tensor& y, double dx = 1.0, int64_t dim = -1);
Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);
// torch.cov: the covariance of the rows (variables) of input over its columns (observations), with
// integer fweights and floating aweights per observation, numpy's normalization; corrcoef: Pearson's
// coefficients from it, clipped to [-1, 1].
Tensor cov(const Tensor& input, int64_t correction = 1, const Tensor& fweights = Tensor(),
           const Tensor& aweights = Tensor());
Tensor corrcoef(const Tensor& input);
// torch.clamp_min / clamp_max: clamp with one bound.
Tensor clamp_min(const Tensor& t, double min);
Tensor clamp_max(const Tensor& t, double max);

// ---------- more of torch's compositions (autograd/compose_more.cc) ----------
// torch.isin: whether each element of `elements` equals some element of test_elements (promoted
// together; NaN equals nothing), or not with invert. Every pair is compared (memory elements x
// test_elements, not torch's sort for large inputs); assume_unique only lets torch go faster.
Tensor isin(const Tensor& elements, const Tensor& test_elements, bool assume_unique = false, bool invert = false);
// torch.block_diag: the tensors (0-D as 1x1, 1-D as one row, 2-D) along the diagonal of a zero matrix,
// in their promoted dtype; no tensors give a [1, 0] tensor, as torch.
Tensor block_diag(const std::vector<Tensor>& tensors);
// torch.diagflat: the flattened input on the offset diagonal of a square matrix.
Tensor diagflat(const Tensor& t, int64_t offset = 0);
// torch.dist is the member a.dist(b, p) (tensor/tensor.h): the name colony::dist is the
// distributed namespace's, so a free function of that name cannot exist beside it.
// torch.renorm: each slice along dim whose p-norm exceeds maxnorm scaled to norm maxnorm (by
// maxnorm / (norm + 1e-7), torch's factor); floating, at least 2-D, p > 0, maxnorm >= 0.
Tensor renorm(const Tensor& t, double p, int64_t dim, double maxnorm);
// torch.logdet: log det A of square matrices (batched): NaN where det < 0, -inf where it is 0;
// the gradient is slogdet's.
Tensor logdet(const Tensor& A);
// torch.nuclear_norm: the sum of singular values over the last two dims (or dims),
// linalg::matrix_norm(A, "nuc").
Tensor nuclear_norm(const Tensor& A, bool keepdim = false);
Tensor nuclear_norm(const Tensor& A, const std::vector<int64_t>& dims, bool keepdim = false);
// torch.unravel_index: the coordinates in `shape` of flat integer indices, one int64 tensor per
// dimension, each of the indices' shape; out-of-range and negative indices wrap as Python's % and //
// (torch's arithmetic, which checks no range).
std::vector<Tensor> unravel_index(const Tensor& indices, const Shape& shape);

}  // namespace colony
