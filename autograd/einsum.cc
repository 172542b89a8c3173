// einsum and tensordot, composed of the differentiable views (permute, reshape, unsqueeze, diagonal),
// sum, mul and bmm, as PyTorch composes them (aten/src/ATen/native/Linear.cpp), so their
// gradients come from those ops. einsum follows torch's algorithm step for step: parse, align every
// operand to one permuted layout (output dims, then the dims to sum out), take diagonals for
// repeated subscripts, then contract the operands left to right (torch's order without opt_einsum),
// each pair as one bmm (sumproduct_pair) after summing out the dims only one of them has.
#include <algorithm>
#include <cctype>
#include <deque>
#include <numeric>
#include <stdexcept>
#include <string>

#include "autograd/ops.h"

namespace colony {
namespace {

// Subscripts: 'A'..'Z' are 0..25, 'a'..'z' 26..51 (so sorting them sorts the letters as ASCII does,
// which is the order of an implicit output); the ellipsis is 52.
constexpr int kLetters = 26;
constexpr int kLabels = 2 * kLetters;
constexpr int kEllipsis = kLabels;

int subscript_of(char label) {
  return std::isupper(static_cast<unsigned char>(label)) ? label - 'A' : label - 'a' + kLetters;
}

char label_of(int subscript) {
  return static_cast<char>(subscript < kLetters ? 'A' + subscript : 'a' + (subscript - kLetters));
}

[[noreturn]] void einsum_error(const std::string& what) { throw std::invalid_argument("einsum(): " + what); }

// a [B, n, k] @ b [B, k, m]. The GEMM kernels take floating dtypes only; integer operands (which
// torch's CPU bmm and mm take) are multiplied by broadcasting, [B, n, k, 1] * [B, 1, k, m], and
// summed over k (n*k*m products held at once: fine for the small integer contractions this serves),
// then cast back to the operands' dtype as bmm would give it. Both operands must have one dtype,
// as torch's bmm requires; bool has no product in torch either.
Tensor batched_product(const Tensor& a, const Tensor& b, const char* op) {
  if (a.dtype() != b.dtype()) {
    throw std::invalid_argument(std::string(op) + ": the operands of a contraction must have one dtype (torch's bmm " +
                                "requires it), got " + dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()) +
                                "; convert them first");
  }
  if (is_floating(a.dtype())) return bmm(a, b);
  if (a.dtype() == kBool) {
    throw std::invalid_argument(std::string(op) + ": contracting bool operands is not supported (torch's bmm has " +
                                "no bool kernel); convert them to an integer or floating dtype first");
  }
  Tensor products = mul(unsqueeze(a, 3), unsqueeze(b, 1));
  return to(sum(products, {2}), a.device(), a.dtype());
}

// Moves dim `from` of t to `position` (torch.movedim for one dim), through permute.
Tensor move_dim(const Tensor& t, int64_t from, int64_t position) {
  std::vector<int64_t> order;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d != from) order.push_back(d);
  }
  order.insert(order.begin() + position, from);
  return permute(t, order);
}

// (left * right).sum(sum_dims, keepdim = true) as one bmm: left and right have the same number of
// dims, broadcasting where one of them has size 1. The dims split into lro (in both and kept), lo
// (left only), ro (right only) and the summed ones; left becomes [lro, lo, sum], right
// [lro, sum, ro], and the product [lro, lo, ro] is laid back into the original order of dims.
// Summed dims that only one side has are summed on that side first. (torch's sumproduct_pair.)
Tensor sumproduct_pair(Tensor left, Tensor right, const std::vector<int64_t>& sum_dims) {
  if (sum_dims.empty()) return mul(left, right);
  const int64_t ndim = left.dim();
  std::vector<bool> summed(ndim, false);
  for (int64_t d : sum_dims) summed[d] = true;
  std::vector<int64_t> lro, lo, ro;
  int64_t lro_size = 1, lo_size = 1, ro_size = 1, sum_size = 1;
  for (int64_t d = 0; d < ndim; ++d) {
    const bool in_left = left.size(d) != 1, in_right = right.size(d) != 1;
    if (summed[d]) {
      if (in_left && in_right) {
        sum_size *= left.size(d);
      } else if (in_left) {
        left = sum(left, {d}, true);
      } else if (in_right) {
        right = sum(right, {d}, true);
      }
    } else if (in_left && in_right) {
      lro.push_back(d);
      lro_size *= left.size(d);
    } else if (in_left) {
      lo.push_back(d);
      lo_size *= left.size(d);
    } else {
      ro.push_back(d);
      ro_size *= right.size(d);
    }
  }
  // The product's dims in the order lro, lo, summed (size 1 now), ro, and their sizes.
  std::vector<int64_t> out_order(lro);
  out_order.insert(out_order.end(), lo.begin(), lo.end());
  out_order.insert(out_order.end(), sum_dims.begin(), sum_dims.end());
  out_order.insert(out_order.end(), ro.begin(), ro.end());
  Shape out_size;
  for (int64_t d : lro) out_size.push_back(left.size(d));
  for (int64_t d : lo) out_size.push_back(left.size(d));
  out_size.insert(out_size.end(), sum_dims.size(), 1);
  for (int64_t d : ro) out_size.push_back(right.size(d));

  std::vector<int64_t> left_order(lro);
  left_order.insert(left_order.end(), lo.begin(), lo.end());
  left_order.insert(left_order.end(), sum_dims.begin(), sum_dims.end());
  left_order.insert(left_order.end(), ro.begin(), ro.end());
  std::vector<int64_t> right_order(lro);
  right_order.insert(right_order.end(), sum_dims.begin(), sum_dims.end());
  right_order.insert(right_order.end(), ro.begin(), ro.end());
  right_order.insert(right_order.end(), lo.begin(), lo.end());
  std::vector<int64_t> inverse(ndim);
  for (int64_t i = 0; i < ndim; ++i) inverse[out_order[i]] = i;

  const Tensor a = reshape(permute(left, left_order), {lro_size, lo_size, sum_size});
  const Tensor b = reshape(permute(right, right_order), {lro_size, sum_size, ro_size});
  return permute(reshape(batched_product(a, b, "einsum()"), out_size), inverse);
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  if (operands.empty()) einsum_error("must provide at least one operand");
  const size_t num_ops = operands.size();

  // ---- parse each operand's subscripts ----
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::vector<int>> op_labels(num_ops);
  bool ellipsis_seen = false;
  size_t curr = 0;
  for (size_t i = 0; i < lhs.size(); ++i) {
    const char c = lhs[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (ellipsis_seen) {
        einsum_error("found '.' for operand " + std::to_string(curr) + " for which an ellipsis was already found");
      }
      if (!(i + 2 < lhs.size() && lhs[i + 1] == '.' && lhs[i + 2] == '.')) {
        einsum_error("found '.' for operand " + std::to_string(curr) + " that is not part of any ellipsis");
      }
      i += 2;
      op_labels[curr].push_back(kEllipsis);
      ellipsis_seen = true;
    } else if (c == ',') {
      if (++curr >= num_ops) {
        einsum_error("fewer operands were provided than specified in the equation (" + std::to_string(num_ops) +
                     " given)");
      }
      ellipsis_seen = false;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      op_labels[curr].push_back(subscript_of(c));
    } else {
      einsum_error("invalid subscript given at index " + std::to_string(i) + " in the equation string, subscripts " +
                   "must be in [a-zA-Z] (got '" + std::string(1, c) + "')");
    }
  }
  if (curr != num_ops - 1) {
    einsum_error("more operands were provided than specified in the equation (" + std::to_string(num_ops) +
                 " given, the equation has " + std::to_string(curr + 1) + ")");
  }

  // ---- how often each letter appears, and how many dims the widest ellipsis covers ----
  std::vector<int64_t> label_count(kLabels, 0);
  int64_t ell_num_dim = 0;
  for (size_t i = 0; i < num_ops; ++i) {
    const int64_t ndim = operands[i].dim();
    int64_t nlabels = static_cast<int64_t>(op_labels[i].size());
    bool has_ellipsis = false;
    for (int s : op_labels[i]) {
      if (s == kEllipsis) {
        --nlabels;
        has_ellipsis = true;
        ell_num_dim = std::max(ell_num_dim, ndim - nlabels);
      } else {
        ++label_count[s];
      }
    }
    if (has_ellipsis ? nlabels > ndim : nlabels != ndim) {
      einsum_error("the number of subscripts in the equation (" + std::to_string(nlabels) + ") " +
                   (has_ellipsis ? "is more than the number of dimensions ("
                                 : "does not match the number of dimensions (") +
                   std::to_string(ndim) + ") for operand " + std::to_string(i) +
                   (has_ellipsis ? "" : " and no ellipsis was given") + ", of shape " +
                   shape_str(operands[i].sizes()));
    }
  }

  // ---- the common layout: output dims first (perm_index < out_num_dim), then the dims to sum ----
  std::vector<int64_t> label_perm_index(kLabels, -1);
  int64_t perm_index = 0, ell_index = 0;
  bool ell_in_output = false;
  if (arrow == std::string::npos) {
    // Implicit output: the ellipsis dims, then the letters that appear once, sorted.
    perm_index = ell_num_dim;
    ell_in_output = true;
    for (int s = 0; s < kLabels; ++s) {
      if (label_count[s] == 1) label_perm_index[s] = perm_index++;
    }
  } else {
    const std::string rhs = equation.substr(arrow + 2);
    for (size_t i = 0; i < rhs.size(); ++i) {
      const char c = rhs[i];
      if (c == ' ') continue;
      if (c == '.') {
        if (ell_in_output) einsum_error("found '.' for output but an ellipsis (...) was already found");
        if (!(i + 2 < rhs.size() && rhs[i + 1] == '.' && rhs[i + 2] == '.')) {
          einsum_error("found '.' for output that is not part of any ellipsis (...)");
        }
        i += 2;
        ell_index = perm_index;
        perm_index += ell_num_dim;
        ell_in_output = true;
      } else if (std::isalpha(static_cast<unsigned char>(c))) {
        const int s = subscript_of(c);
        if (label_count[s] == 0) {
          einsum_error(std::string("output subscript ") + c + " does not appear in the equation for any input operand");
        }
        if (label_perm_index[s] != -1) {
          einsum_error(std::string("output subscript ") + c + " appears more than once in the output");
        }
        label_perm_index[s] = perm_index++;
      } else {
        einsum_error("invalid subscript given at index " + std::to_string(lhs.size() + 2 + i) +
                     " in the equation string, subscripts must be in [a-zA-Z] (got '" + std::string(1, c) + "')");
      }
    }
  }
  const int64_t out_num_dim = perm_index;
  if (!ell_in_output) {  // the ellipsis dims are summed out
    ell_index = perm_index;
    perm_index += ell_num_dim;
  }
  for (int s = 0; s < kLabels; ++s) {
    if (label_count[s] > 0 && label_perm_index[s] == -1) label_perm_index[s] = perm_index++;
  }

  // ---- each operand: check sizes, take diagonals, add missing dims as size 1, permute to the layout.
  // dim_counts[d]: how many operands have a size other than 1 in dim d (a dim can be summed out
  // when only the operands being contracted still have it).
  std::vector<int64_t> label_size(kLabels, 1), ell_sizes(ell_num_dim, 1);
  std::vector<int64_t> dim_counts(perm_index, 0);
  std::deque<Tensor> ops;
  for (size_t i = 0; i < num_ops; ++i) {
    Tensor op = operands[i];
    std::vector<int64_t> permutation(perm_index, -1);
    int64_t dim = 0;
    for (int s : op_labels[i]) {
      if (s == kEllipsis) {
        // The ellipsis' dims align with the widest ellipsis' last dims, as broadcasting aligns them.
        const int64_t covered = operands[i].dim() - (static_cast<int64_t>(op_labels[i].size()) - 1);
        for (int64_t j = ell_num_dim - covered; j < ell_num_dim; ++j) {
          if (op.size(dim) != 1) {
            if (ell_sizes[j] != 1 && ell_sizes[j] != op.size(dim)) {
              einsum_error("dimension " + std::to_string(j) + " covered by ellipsis in operand " + std::to_string(i) +
                           " has size " + std::to_string(op.size(dim)) +
                           " which does not broadcast with previously seen ellipsis with size " +
                           std::to_string(ell_sizes[j]) + " for the respective dimension");
            }
            ell_sizes[j] = op.size(dim);
            ++dim_counts[ell_index + j];
          }
          permutation[ell_index + j] = dim++;
        }
      } else if (permutation[label_perm_index[s]] == -1) {
        if (op.size(dim) != 1) {
          if (label_size[s] != 1 && label_size[s] != op.size(dim)) {
            einsum_error(std::string("subscript ") + label_of(s) + " has size " + std::to_string(op.size(dim)) +
                         " for operand " + std::to_string(i) + " which does not broadcast with previously seen size " +
                         std::to_string(label_size[s]));
          }
          label_size[s] = op.size(dim);
          ++dim_counts[label_perm_index[s]];
        }
        permutation[label_perm_index[s]] = dim++;
      } else {
        // A repeated subscript: the diagonal of the two dims, put where the first one was.
        const int64_t prev_dim = permutation[label_perm_index[s]];
        if (op.size(dim) != op.size(prev_dim)) {
          einsum_error(std::string("subscript ") + label_of(s) + " is repeated for operand " + std::to_string(i) +
                       " but the sizes don't match, " + std::to_string(op.size(dim)) +
                       " != " + std::to_string(op.size(prev_dim)));
        }
        op = move_dim(diagonal(op, 0, prev_dim, dim), op.dim() - 2, prev_dim);
      }
    }
    for (int64_t& p : permutation) {
      if (p == -1) {
        op = unsqueeze(op, dim);
        p = dim++;
      }
    }
    ops.push_back(permute(op, permutation));
  }

  // ---- contract left to right ----
  while (ops.size() > 1) {
    Tensor a = ops[0], b = ops[1];
    ops.pop_front();
    ops.pop_front();
    std::vector<int64_t> sum_dims, a_dims_to_sum, b_dims_to_sum;
    for (int64_t d = out_num_dim; d < perm_index; ++d) {
      if (a.size(d) != 1 && b.size(d) != 1) {
        if (--dim_counts[d] == 1) {  // no later operand has it: sum it in this product
          sum_dims.push_back(d);
          dim_counts[d] = 0;
        }
      } else if (dim_counts[d] == 1) {  // only one of the two has it: sum it out first
        if (a.size(d) != 1) {
          a_dims_to_sum.push_back(d);
          dim_counts[d] = 0;
        } else if (b.size(d) != 1) {
          b_dims_to_sum.push_back(d);
          dim_counts[d] = 0;
        }
      }
    }
    if (!a_dims_to_sum.empty()) a = sum(a, a_dims_to_sum, true);
    if (!b_dims_to_sum.empty()) b = sum(b, b_dims_to_sum, true);
    ops.push_front(sumproduct_pair(a, b, sum_dims));
  }

  // ---- the summed dims: size 1 already after a contraction, still to sum for a single operand ----
  if (perm_index > out_num_dim) {
    if (num_ops > 1) {
      Shape sizes(ops[0].sizes().begin(), ops[0].sizes().begin() + out_num_dim);
      return reshape(ops[0], sizes);
    }
    std::vector<int64_t> dims(perm_index - out_num_dim);
    std::iota(dims.begin(), dims.end(), out_num_dim);
    return sum(ops[0], dims);
  }
  return ops[0];
}

Tensor tensordot(const Tensor& a, const Tensor& b, const std::vector<int64_t>& dims_a,
                 const std::vector<int64_t>& dims_b) {
  if (dims_a.size() != dims_b.size()) {
    throw std::invalid_argument("tensordot: both dimension lists should have same length, got " +
                                shape_str(dims_a) + " and " + shape_str(dims_b));
  }
  if (a.dtype() != b.dtype()) {
    throw std::invalid_argument(std::string("tensordot: both inputs should have same dtype, got ") + dtype_name(a.dtype()) +
                                " and " + dtype_name(b.dtype()));
  }
  const std::vector<int64_t> da = wrap_dims(dims_a, a.dim(), "tensordot");
  const std::vector<int64_t> db = wrap_dims(dims_b, b.dim(), "tensordot");
  // (wrap_dims refuses a dim named twice.)
  std::vector<bool> contracted_a(a.dim(), false), contracted_b(b.dim(), false);
  for (int64_t d : da) contracted_a[d] = true;
  for (int64_t d : db) contracted_b[d] = true;
  // A contracted dim of size 1 on one side broadcasts: the other side's dim is summed at once.
  Tensor ta = a, tb = b;
  int64_t contracted_size = 1;
  for (size_t i = 0; i < da.size(); ++i) {
    const int64_t sa = a.size(da[i]), sb = b.size(db[i]);
    if (sb == 1) {
      ta = sum(ta, {da[i]}, true);
    } else if (sa == 1) {
      tb = sum(tb, {db[i]}, true);
    } else if (sa != sb) {
      throw std::invalid_argument("tensordot: contracted dimensions need to match, but first has size " +
                                  std::to_string(sa) + " in dim " + std::to_string(dims_a[i]) +
                                  " and second has size " + std::to_string(sb) + " in dim " +
                                  std::to_string(dims_b[i]));
    } else {
      contracted_size *= sa;
    }
  }
  // a's free dims then its contracted ones, b's contracted ones (in the same order) then its free
  // ones: one [free_a, contracted] @ [contracted, free_b] product.
  std::vector<int64_t> order_a, order_b(db);
  Shape out_shape;
  int64_t free_a = 1, free_b = 1;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (contracted_a[d]) continue;
    order_a.push_back(d);
    free_a *= ta.size(d);
    out_shape.push_back(ta.size(d));
  }
  order_a.insert(order_a.end(), da.begin(), da.end());
  for (int64_t d = 0; d < b.dim(); ++d) {
    if (contracted_b[d]) continue;
    order_b.push_back(d);
    free_b *= tb.size(d);
    out_shape.push_back(tb.size(d));
  }
  const Tensor lhs = reshape(permute(ta, order_a), {1, free_a, contracted_size});
  const Tensor rhs = reshape(permute(tb, order_b), {1, contracted_size, free_b});
  return reshape(batched_product(lhs, rhs, "tensordot"), out_shape);
}

Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims) {
  if (dims < 0) throw std::invalid_argument("tensordot: expects dims >= 0, but got dims=" + std::to_string(dims));
  if (dims > std::min(a.dim(), b.dim())) {
    throw std::invalid_argument("tensordot: expects dims <= the number of dimensions of both inputs (" +
                                std::to_string(a.dim()) + " and " + std::to_string(b.dim()) + "), but got dims=" +
                                std::to_string(dims));
  }
  std::vector<int64_t> dims_a(dims), dims_b(dims);
  std::iota(dims_a.begin(), dims_a.end(), -dims);  // the last `dims` of a
  std::iota(dims_b.begin(), dims_b.end(), 0);      // the first `dims` of b
  return tensordot(a, b, dims_a, dims_b);
}

}  // namespace colony
